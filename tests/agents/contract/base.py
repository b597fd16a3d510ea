"""The backend-neutral harness of the contract suite: what the model does, and what the fake API saw.

``tests/agents/test_backend_contract.py`` runs one set of tests against every entry of ``BACKENDS``
(``tests/agents/contract/__init__.py``). Each test builds a project, scripts the model with the neutral
actions below, runs the real ``specd`` CLI as a subprocess with the backend's environment, and asserts on
specd's records and on what the backend's fake API received. A backend joins the suite by adding a module
here (``tests/agents/contract/<name>.py``) whose ``BACKEND`` is a class satisfying ``Backend``: the
registry finds it by itself, so adding a backend touches no shared file.

The actions, one per model reply (one request to the fake API, one reply from it):

- ``Write(path, text)``: the model writes a file (path relative to the project root) with the backend's own
  file tool (anthropic's ``write_file``, Claude Code's ``Write``, Codex's ``apply_patch`` or shell...).
- ``Shell(command)``: the model runs a command with the backend's own shell tool, from the project root.
- ``Finish(outcome, summary, output=None)``: the model ends the step the way the backend reports an outcome
  (``complete_step``, ``StructuredOutput``, a final JSON message...); ``output`` is the typed output when the
  step declares ``output:``. A step's actions always end with a ``Finish``.

``script(turns)`` takes one list of actions per agent invocation (a step, or a hook run as its own turn),
in the order specd will run them; the fake answers each request with the next action of the current
invocation. A backend's harness may answer requests of its own (a title, a quota probe, a token count) by
itself; it must not consume an action for them. A request that finds no action left is answered with an
error so a short script fails fast.

What a harness reports back:

- ``requests()``: the bodies of the model requests the fake API received, in order (only those that took
  an action); ``text(body)`` joins every text of a body's conversation (system, user, tool results), so a
  test can look for specd's prompt header (``# specd step: NAME``) in it;
- ``usages()``: per model request that took an action, what the fake reported, as ``Usage`` (fresh input,
  output, cache read and cache write tokens), so a test can sum a step's tokens;
- ``resumes_sessions``: True when an inline hook continues the step's conversation (its first request
  carries the step's prompt), False when the backend runs the hook as a separate invocation;
- ``own_folders``: folders the backend's CLI makes for itself in the jail's fresh /tmp or HOME (Claude Code's
  ``/tmp/claude-<uid>``), which the jail inventory (``test_backend_inventory.py``) does not count as leaks.

The inventory test keeps HOME the host's fake one (full of planted keys), overriding ``env()``'s: a CLI that
needs a config folder should be given it by its own variable, or get it from specd's per-task copy.

Setup: ``start(tmp_path)`` starts the fake server (and makes any per-test home or config it needs under
``tmp_path``); ``stop()`` stops it. The project under test is always ``tmp_path / "proj"`` (a harness may
need its absolute path, as Claude Code's ``Write`` does). ``env()`` is what to add to specd's environment
(base URL, a dummy key, the CLI's path variable, a throwaway HOME); ``SCRUB`` lists the variables of the
machine a test removes first. ``agent(**extra)`` is the pipeline's ``agent:`` block for the backend, with
a price where the backend needs one for a budget (``extra`` is merged in: budgets, ``sandbox``...).
``require()`` skips the test (or fails it under CI) when the backend's CLI or SDK is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# Variables of the machine that would point a backend elsewhere or log it in for real.
SCRUB = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
         "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CLAUDECODE", "CLAUDE_CODE_USE_BEDROCK",
         "CLAUDE_CODE_USE_VERTEX", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME", "GEMINI_API_KEY",
         "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_APPLICATION_CREDENTIALS")


@dataclass(frozen=True)
class Write:
    path: str
    text: str


@dataclass(frozen=True)
class Shell:
    command: str


@dataclass(frozen=True)
class Finish:
    outcome: str = "done"
    summary: str = "finished"
    output: Any = None


Action = Write | Shell | Finish


@dataclass(frozen=True)
class Usage:
    """One model request's tokens as the fake API reported them, in the neutral split specd records."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class Backend(Protocol):
    name: str
    resumes_sessions: bool
    own_folders: tuple[str, ...]

    def require(self) -> None: ...

    def start(self, tmp_path: Path) -> None: ...

    def stop(self) -> None: ...

    def env(self) -> dict[str, str]: ...

    def agent(self, **extra: Any) -> dict[str, Any]: ...

    def script(self, turns: list[list[Action]]) -> None: ...

    def requests(self) -> list[dict[str, Any]]: ...

    def text(self, body: dict[str, Any]) -> str: ...

    def usages(self) -> list[Usage]: ...


class Turns:
    """The script, shared by the harnesses: one action per model request, invocation after invocation.

    ``take()`` returns the next action, or None when the script is spent. Since every invocation ends with a
    ``Finish``, the request after one opens the next list; the lists only keep the test readable.
    """

    def __init__(self) -> None:
        self.turns: list[list[Action]] = []
        self.current: list[Action] = []

    def load(self, turns: list[list[Action]]) -> None:
        self.turns = [list(turn) for turn in turns]
        self.current = []

    def take(self) -> Action | None:
        if not self.current and self.turns:
            self.current = self.turns.pop(0)
        return self.current.pop(0) if self.current else None


def strings(value: Any) -> str:
    """Every string inside ``value`` (nested lists and dicts), one a line: a request's whole text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(strings(item) for item in value.values())
    if isinstance(value, list | tuple):
        return "\n".join(strings(item) for item in value)
    return ""
