"""API fault torture (part of the torture suites; it lives here for the fake-server fixtures).

For every status the Messages API can answer, for an SSE error after the 200,
for a dropped and for a slow stream, each once and persistently, after one
good tool turn:
- transient faults are retried by ONE layer: a persistent one costs exactly
  1 + max_retries requests for that turn (counted at the fake server), never
  SDK attempts × specd attempts;
- non-transient ones are not retried;
- a turn that finally fails leaves the transcript and the open conversation on
  disk, and attempt 2 resumes from the good turn: nothing finished is lost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.base import AgentFailed

TRANSIENT_STATUSES = [408, 409, 429, 500, 502, 503, 504, 529]
FINAL_STATUSES = [400, 401, 403, 404, 413, 422]
FAULTS: dict[str, Callable[[], Any]] = {
    **{f"status {s}": (lambda s=s: fake.error(s)) for s in TRANSIENT_STATUSES + FINAL_STATUSES},
    "status 429 retry-after 2 s": lambda: fake.error(429, retry_after=2),
    "sse error after 200": lambda: fake.sse_error("overloaded_error"),
    "sse api_error after 200": lambda: fake.sse_error("api_error"),
    "dropped stream": lambda: fake.drop(after_events=3),
    "slow stream": lambda: fake.message("late", delay=1.0),
}
RETRIES = 2
SETTINGS = {"max_retries": RETRIES, "request_timeout": 0.25}


def settings(name: str) -> dict[str, Any]:
    """A short request timeout only where the fault is a slow answer (1 s late): elsewhere a loaded machine that
    answers a 400 after 0.25 s would make it a timeout, retried, and the test would see a success."""
    return SETTINGS if name == "slow stream" else {**SETTINGS, "request_timeout": 30.0}


def transient(name: str) -> bool:
    return not any(name == f"status {s}" for s in FINAL_STATUSES)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_one_fault_then_success(project: Any, server: Any, make_agent: Any, sleeps: Any, name: str) -> None:
    server.push(fake.message(fake.tool("read_file", path="src/app.py")), FAULTS[name](), fake.complete("approve"))
    if transient(name):
        result = make_agent(**settings(name)).run(project.request())
        assert result.outcome == "approve"
        assert len(server.requests) == 3
        assert len(sleeps) == 1
        if "retry-after 2 s" in name:
            assert sleeps == [2.0]  # the server's wait, honoured
    else:
        with pytest.raises(AgentFailed):
            make_agent(**settings(name)).run(project.request())
        assert len(server.requests) == 2  # not retried


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_persistent_fault_is_bounded_and_resumable(project: Any, server: Any, make_agent: Any, name: str) -> None:
    server.push(fake.message(fake.tool("read_file", path="src/app.py")))
    fault = FAULTS[name]
    server.responder = lambda body: fault()
    with pytest.raises(AgentFailed) as failure:
        make_agent(**settings(name)).run(project.request())
    failing_turn = len(server.requests) - 1
    assert failing_turn == (1 + RETRIES if transient(name) else 1)
    assert failure.value.transcript is not None
    assert failure.value.transcript.is_file()
    saved = json.loads((project.task_dir / "transcripts" / "run-1" / "review.conversation.json").read_text())
    assert saved["status"] == "open"

    server.responder = None
    server.push(fake.complete("approve", "resumed"))
    result = make_agent(**settings(name)).run(project.request(attempt=2))
    assert result.outcome == "approve"
    assert "def main()" in json.dumps(server.bodies[-1]["messages"])  # the good turn's result was kept
