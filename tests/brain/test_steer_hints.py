"""Every resume hint specd prints runs as it is, pasted into a shell, and the run proceeds.

The first run names its agent with --agent; no hint needs it again (the
harness removes ANTHROPIC_API_KEY, so a forgotten agent would fail loudly).
"""

from __future__ import annotations

import signal
from typing import Any

from brain_harness import Harness, printed_hint

from specd.errors import EXIT_INTERRUPTED


def three(h: Harness, **b: Any) -> None:
    h.workflow("work.md", outcomes=("done", "again", "escalate"))
    h.pipeline({"main": [{"name": "a", "workflow": "work.md"}, {"name": "b", "workflow": "work.md", **b},
                         {"name": "c", "workflow": "work.md"}]})
    h.new("t")


def follow(h: Harness, stderr: str, expect_code: int = 0) -> str:
    hint = printed_hint(stderr)
    assert "--agent" not in hint
    result = h.run_hint(hint)
    assert result.returncode == expect_code, f"{hint}:\n{result.stderr}"
    return hint


def test_gate_hint(h: Harness) -> None:
    three(h, pause_in_semi_auto=True)
    first = h.cont("t", "--semi-auto")
    assert first.returncode == 3, first.stderr

    hint = follow(h, first.stderr)

    assert hint == "specd continue t --approve"
    assert h.log() == ["step a", "step b", "step c"]


def test_escalation_hint(h: Harness) -> None:
    three(h, outcomes={"escalate": "stop"})
    h.cues(**{"step:b": {"outcomes": ["escalate"]}})
    first = h.cont("t")
    assert first.returncode == 3, first.stderr
    assert h.status("t")["waiting"]["kind"] == "outcome"

    follow(h, first.stderr)

    assert h.log() == ["step a", "step b", "step c"]


def test_held_refusal_hint(h: Harness) -> None:
    three(h, outcomes={"escalate": "stop"})
    h.cues(**{"step:b": {"outcomes": ["escalate"]}})
    assert h.cont("t").returncode == 3
    held = h.specd("continue", "t")
    assert held.returncode == 3

    follow(h, held.stderr)

    assert h.log() == ["step a", "step b", "step c"]


def test_budget_hint(h: Harness) -> None:
    three(h)
    h.cues(**{"step:a": {"cost": 0.6}, "step:b": {"cost": 0.6}})
    first = h.specd("continue", "t", "--auto", "--agent", h.agent_spec(), "--max-cost", "1")
    assert first.returncode == 3, first.stderr
    assert h.status("t")["waiting"]["kind"] == "budget"

    hint = follow(h, first.stderr)

    assert "--max-cost" in hint
    assert h.log() == ["step a", "step b", "step c"]


def test_max_visits_hint_and_message(h: Harness) -> None:
    three(h, max_visits=1, outcomes={"again": "repeat"})
    h.cues(**{"step:b": {"outcomes": ["again", "done"]}})
    first = h.cont("t")
    assert first.returncode == 3, first.stderr
    assert "`specd approve t` allows 1 more visits" in first.stderr

    follow(h, first.stderr)

    assert h.log() == ["step a", "step b", "step b", "step c"]


def test_blocked_hint(h: Harness) -> None:
    three(h)
    h.cues(**{"step:b": {"exit": 4}})
    first = h.cont("t")
    assert first.returncode == 1, first.stderr
    h.cues()

    follow(h, first.stderr)

    assert h.log() == ["step a", "step b", "step b", "step c"]


def test_interrupted_hint(h: Harness) -> None:
    three(h)
    h.cues(**{"step:b": {"hold": "never"}})
    proc = h.start("t")
    h.wait_held("b", proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT_INTERRUPTED, err
    h.cues()

    follow(h, err)

    assert h.log() == ["step a", "step b", "step b", "step c"]
