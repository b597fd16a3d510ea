"""Pipeline files: load → version gate → schema → semantic checks → frozen records.

``load`` is imported on first use, so code that only needs the records (``model``)
does not pay for the loader's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from specd.pipeline.model import HookSpec, PipelineConfig, Step

if TYPE_CHECKING:
    from specd.pipeline.load import load_pipeline, load_pipeline_file

__all__ = ["HookSpec", "PipelineConfig", "Step", "load_pipeline", "load_pipeline_file"]


def __getattr__(name: str) -> Any:
    if name in ("load_pipeline", "load_pipeline_file"):
        from specd.pipeline import load

        return getattr(load, name)
    raise AttributeError(f"module 'specd.pipeline' has no attribute {name!r}")
