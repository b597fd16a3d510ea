"""`specd status TASK` in a terminal: a bar of time and one of cost per step; piped output is unchanged."""

from __future__ import annotations

import os
import subprocess

from brain_harness import Harness

AGENT = """cmd:sleep $( [ "$SPECD_STEP" = slow ] && echo 1.5 || echo 0.1 ); \
printf '{"outcome": "done", "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": %s}}' \
$( [ "$SPECD_STEP" = dear ] && echo 0.9 || echo 0.01 ) > "$SPECD_RESULT\""""


def _in_a_terminal(h: Harness, *args: str) -> str:
    """Run specd with stdout on a pseudo-terminal, as a person at a shell sees it."""
    leader, follower = os.openpty()
    env = {**h.env, "COLUMNS": "200", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    done = subprocess.run(h.argv(*args), stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE,
                          env=env, cwd=h.root, timeout=120, check=False)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode("utf-8", "replace")


def _cells(text: str, step: str) -> str:
    return next(line for line in text.splitlines() if f" {step} " in line)


def test_each_step_gets_a_time_bar_and_a_cost_bar_in_a_terminal_only(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": n, "workflow": "w.md"} for n in ("quick", "slow", "dear")]})
    h.new("t")
    assert h.specd("continue", "t", "--auto", "--agent", AGENT).returncode == 0
    shown = _in_a_terminal(h, "status", "t")
    assert "took" in shown
    # the slow step's time bar is the full one, the dear step's cost bar is the full one
    slow, dear, quick = _cells(shown, "slow"), _cells(shown, "dear"), _cells(shown, "quick")
    assert slow.count("█") > quick.count("█")
    assert dear.count("█") > quick.count("█")
    piped = h.specd("status", "t")
    assert piped.returncode == 0
    assert "took" not in piped.stdout
    assert "█" not in piped.stdout
