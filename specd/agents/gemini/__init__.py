"""The Gemini CLI backend: the real ``gemini`` CLI, headless, with its stream-json events."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specd.agents.base import AgentContext
from specd.agents.gemini.agent import GeminiAgent
from specd.agents.gemini.check import ready_binary
from specd.agents.gemini.options import Options

__all__ = ["GeminiAgent", "make_gemini"]


def make_gemini(model: str | None, settings: Mapping[str, Any], ctx: AgentContext) -> GeminiAgent:
    """Check the CLI (PATH, version, credentials) once, before any step runs."""
    binary = ready_binary()
    options = Options.from_settings({**settings, "model": model} if model else settings)
    return GeminiAgent(binary, options, ctx)
