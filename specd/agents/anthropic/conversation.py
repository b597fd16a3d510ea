"""A step's conversation, kept client-side: starting, resuming, continuing, handing off.

A saved conversation is ``open`` while its step runs and ``closed`` once
``complete_step`` was called. Opening one decides what the next call sees:
- none saved: a fresh first turn (task files + workflow);
- open, for the same workflow: a resume after a failure or interruption;
- closed, or open for another workflow: an inline hook (or the step after one)
  continuing the same context, so the new workflow is added as a user turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from specd.agents.anthropic import context
from specd.agents.base import AgentRequest

INTERRUPTED = "Not run: the step was interrupted before this tool finished. Check its effect and redo it if needed."
RESUMED = (
    "(specd) This step was interrupted and is now resumed (attempt {attempt}). "
    "Continue where you left off, and finish with complete_step."
)
HANDOFF_REQUEST = (
    "(specd) This conversation is close to the model's context window and will be replaced by a fresh one. "
    "Do not call tools now. Write a handoff note for your successor: the goal, what is done (files "
    "written or changed), what remains, decisions made and anything that failed. Be specific and brief."
)
HANDED_OFF = (
    "<handoff_note>\n{note}\n</handoff_note>\n"
    "(specd) An earlier conversation for this step ran out of context window; the note above is its "
    "summary. Continue the step from there, and finish with complete_step."
)


@dataclass
class Conversation:
    request: AgentRequest
    messages: list[dict[str, Any]] = field(default_factory=list)
    status: str = "open"
    handoffs: int = 0
    context_tokens: int = 0
    resumed: bool = False

    @classmethod
    def open(cls, request: AgentRequest, saved: dict[str, Any] | None) -> Conversation:
        if saved is None or not saved.get("messages"):
            return cls(request, [{"role": "user", "content": context.first_turn(request)}])
        conv = cls(request, list(saved["messages"]), "open", int(saved.get("handoffs", 0)),
                   int(saved.get("context_tokens", 0)))
        conv.close_dangling_tools()
        same_work = saved.get("workflow") == str(request.workflow) and saved.get("kind") == request.kind
        if saved.get("status") == "open" and same_work:
            conv.resumed = True
            conv.add_user([{"type": "text", "text": RESUMED.format(attempt=request.attempt)}])
        else:
            text = f"{context.step_header(request)}\n<workflow>\n{request.prompt}\n</workflow>"
            conv.add_user([{"type": "text", "text": text}])
        return conv

    def snapshot(self) -> dict[str, Any]:
        return {
            "version": 1,
            "task": self.request.task,
            "step": self.request.step,
            "kind": self.request.kind,
            "workflow": str(self.request.workflow),
            "status": self.status,
            "handoffs": self.handoffs,
            "context_tokens": self.context_tokens,
            "messages": self.messages,
        }

    def add_user(self, blocks: list[dict[str, Any]]) -> None:
        # Tool results and the text after them must share one user message.
        if self.messages and self.messages[-1]["role"] == "user":
            last = self.messages[-1]
            content = last["content"]
            last["content"] = ([{"type": "text", "text": content}] if isinstance(content, str) else list(content))
            last["content"] += blocks
        else:
            self.messages.append({"role": "user", "content": blocks})

    def add_assistant(self, content: list[dict[str, Any]]) -> None:
        self.messages.append({"role": "assistant", "content": content})

    def close_dangling_tools(self) -> None:
        """Every tool_use needs a tool_result: answer the ones an interruption left open."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return
        uses = [b for b in self.messages[-1]["content"] if b.get("type") == "tool_use"]
        if uses:
            self.add_user([{"type": "tool_result", "tool_use_id": b["id"], "content": INTERRUPTED,
                            "is_error": True} for b in uses])
        else:
            self.add_user([{"type": "text", "text": "Continue."}])

    def hand_off(self, note: str) -> None:
        """Start over with the step's first turn plus the note that summarises the old conversation."""
        # Files are re-read: the old conversation may have changed them since the step began.
        first = context.first_turn(self.request)
        text = HANDED_OFF.format(note=note.strip() or "(the model wrote no note)")
        self.messages = [{"role": "user", "content": [*first, {"type": "text", "text": text}]}]
        self.handoffs += 1
        self.context_tokens = 0
