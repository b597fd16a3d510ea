"""The ``openai`` backend: the anthropic backend's tool loop over any OpenAI-compatible server.

OpenAI itself, a router such as OpenRouter, or a local model behind Ollama, vLLM, llama.cpp's server or
LM Studio: anything that serves ``/v1/chat/completions`` with tools. Importing this package does not
import the ``openai`` SDK; that happens on the first call, so only runs that choose this backend pay for it.
"""

from __future__ import annotations

from specd.agents.openai.agent import OpenAIAgent

__all__ = ["OpenAIAgent"]
