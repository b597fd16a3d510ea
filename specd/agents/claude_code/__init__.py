"""The Claude Code backend: the real ``claude`` CLI, driven through its own flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from specd.agents.base import AgentContext
from specd.agents.claude_code.agent import ClaudeCodeAgent
from specd.agents.claude_code.check import ready_binary
from specd.agents.claude_code.options import Options

__all__ = ["ClaudeCodeAgent", "make_claude_code"]


def make_claude_code(model: str | None, settings: Mapping[str, Any], ctx: AgentContext) -> ClaudeCodeAgent:
    """Check the CLI (PATH, version, credentials) once, before any step runs."""
    binary = ready_binary()
    options = Options.from_settings({**settings, "model": model} if model else settings)
    return ClaudeCodeAgent(binary, options, ctx)
