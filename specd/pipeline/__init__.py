"""Pipeline files: load → version gate → schema → semantic checks → frozen records."""

from __future__ import annotations

from specd.pipeline.load import load_pipeline, load_pipeline_file
from specd.pipeline.model import HookSpec, PipelineConfig, Step

__all__ = ["HookSpec", "PipelineConfig", "Step", "load_pipeline", "load_pipeline_file"]
