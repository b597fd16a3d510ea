"""The ``anthropic`` backend: a Messages API tool loop with sandboxed tools.

Importing this package does not import the ``anthropic`` SDK; that happens on
the first API call, so only runs that choose this backend pay for it.
"""

from __future__ import annotations

from specd.agents.anthropic.agent import AnthropicAgent

__all__ = ["AnthropicAgent"]
