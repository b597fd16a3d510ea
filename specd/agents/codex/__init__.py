"""The Codex backend: the real ``codex exec`` CLI, driven through its own flags and JSON events."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from specd.agents.base import AgentContext
from specd.agents.codex.agent import CodexAgent
from specd.agents.codex.check import ready_binary
from specd.agents.codex.options import Options

__all__ = ["CodexAgent", "make_codex"]


def make_codex(model: str | None, settings: Mapping[str, Any], ctx: AgentContext) -> CodexAgent:
    """Check the CLI (PATH, version, key) once, before any step runs. ``model`` (``--agent codex:<model>``)
    replaces the pipeline's; its ``price_per_mtok`` priced the pipeline's own model, so it goes with it."""
    if model and model != settings.get("model"):
        settings = {**{k: v for k, v in settings.items() if k != "price_per_mtok"}, "model": model}
    options = Options.from_settings(settings)
    return CodexAgent(ready_binary(options, os.environ), options, ctx)
