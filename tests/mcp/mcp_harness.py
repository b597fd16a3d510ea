"""The MCP tests' harness: a real project whose command agent writes a ledger, and a real `specd mcp` process
driven by the `mcp` SDK's own stdio client.

The SDK's client is async; ``Mcp`` keeps one session open in a blocking portal (anyio's bridge from plain code
to an event loop), so a test reads as the calls a person's MCP client makes, one after another.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "executors"))

from executor_harness import Repo  # noqa: E402

SAFETY = 180.0  # seconds: a net for a busy machine, never a timing a test checks


class Project(Repo):
    """Steps s1 and s2, a gate before s2 in semi-auto; the ledger agent is the pipeline's own agent, so a run the
    control plane or a background `specd continue` starts uses it too."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path, steps=("s1", "s2"), pause="s2")
        pipeline = self.root / ".specd" / "pipeline.json"
        data = json.loads(pipeline.read_text(encoding="utf-8"))
        data["agent"] = {"backend": "command", "command": self.agent().removeprefix("cmd:")}
        pipeline.write_text(json.dumps(data), encoding="utf-8")
        self.git("commit", "-q", "-am", "the ledger agent")

    def to_gate(self, task: str) -> None:
        self.new(task)
        done = self.specd("continue", task, "--semi-auto")
        assert done.returncode == 3, done.stdout + done.stderr

    def ran(self, task: str) -> list[str]:
        """The steps the agent ran for ``task`` in the main tree, in order."""
        path = self.root / f"ledger-{task}.txt"
        return [line.split()[1] for line in path.read_text().splitlines()] if path.exists() else []


@asynccontextmanager
async def _session(root: Path, env: dict[str, str], errors: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "specd", "mcp"], env=env, cwd=str(root))
    async with stdio_client(params, errlog=errors) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


class Mcp:
    """``with Mcp(project) as client:`` a `specd mcp` server in the project, and a session to it."""

    def __init__(self, project: Repo) -> None:
        self.project = project
        self.stderr = project.dir / "mcp-stderr.txt"

    def __enter__(self) -> Mcp:
        self._errors = self.stderr.open("a", encoding="utf-8")
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._session_cm = self.portal.wrap_async_context_manager(
            _session(self.project.root, self.project.env, self._errors))
        self.session = self._session_cm.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            self._session_cm.__exit__(kind, exc, tb)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._errors.close()

    def call(self, name: str, **args: Any) -> Any:
        return self.portal.call(self.session.call_tool, name, args)

    def ok(self, name: str, **args: Any) -> dict[str, Any]:
        """A call that must succeed: its structured content (the `--json` envelope)."""
        result = self.call(name, **args)
        assert not result.is_error, result.content[0].text
        data: dict[str, Any] = result.structured_content
        assert data["ok"] is True, data
        assert data["error"] is None, data
        return data

    def refused(self, name: str, **args: Any) -> tuple[str, dict[str, Any]]:
        """A call that must be a tool error: its text and its error envelope."""
        result = self.call(name, **args)
        assert result.is_error, result
        text: str = result.content[0].text
        data: dict[str, Any] = result.structured_content
        assert data["ok"] is False, data
        assert data["error"]["message"], data
        return text, data

    def status(self, task: str) -> str:
        """The task's status once no run holds it ("running" while one does, whatever it saved last)."""
        view = self.ok("show_task", task=task)
        return "running" if view.get("running") else str(view["status"])

    def until(self, check: Callable[[], bool], what: str) -> float:
        """Seconds until ``check()`` holds (printed by callers, never asserted); the deadline is a net."""
        start = time.monotonic()
        while not check():
            assert time.monotonic() - start < SAFETY, f"never: {what}"
            time.sleep(0.1)
        return time.monotonic() - start
