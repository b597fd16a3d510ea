"""`specd logs -f` follows the agent's own output while it runs, through the real CLI and a real `cmd:` agent."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path

from brain_harness import Harness, wait_until

DEADLINE = 30.0  # generous: the test proves the line comes while the agent runs, not how fast (bench/ does)
# Waits for .harness/speak, prints one line, then waits for .harness/go (each for at most a minute).
AGENT = ("cmd:i=0; while [ ! -e .harness/speak ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; "
         "echo 'hello from the agent'; echo 'no newline yet' | tr -d '\\n'; "
         "while [ ! -e .harness/go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done")


def _one_step(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "work", "workflow": "work.md"}]})
    h.new("t")


def _start(h: Harness, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(h.argv(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=h.env, cwd=h.root, start_new_session=True)
    h.children.append(proc)
    return proc


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The process's stdout lines as they come (None at its end), read in a thread so a wait can time out."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _until(lines: queue.Queue[str | None], wanted: str, seen: list[str]) -> bool:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        if line is None:
            return False
        seen.append(line)
        if wanted in line:
            return True
    return False


def _drain(lines: queue.Queue[str | None], seen: list[str]) -> None:
    while (line := lines.get(timeout=DEADLINE)) is not None:
        seen.append(line)


def _running(h: Harness) -> bool:
    return bool(h.status("t").get("running"))


def _following(h: Harness, agent: str) -> tuple[subprocess.Popen[str], subprocess.Popen[str],
                                                queue.Queue[str | None], list[str]]:
    """A one-step task run by ``agent``, and `specd logs -f` following it from its step's start: (the run, the
    follower, the follower's lines as they come, the lines seen so far)."""
    _one_step(h)
    run = _start(h, "continue", "t", "--auto", "--agent", agent)
    assert wait_until(lambda: _running(h), deadline=DEADLINE)
    follower = _start(h, "logs", "t", "-f")
    lines, seen = _lines(follower), []
    assert _until(lines, "▶ work (attempt 1)", seen), seen
    return run, follower, lines, seen


def test_logs_follow_shows_a_line_the_agent_prints_while_it_still_runs(h: Harness) -> None:
    run, follower, lines, seen = _following(h, AGENT)

    (h.root / ".harness" / "speak").touch()  # the agent prints only now, after the follower is watching

    assert _until(lines, "│ hello from the agent", seen), seen
    assert run.poll() is None
    assert follower.poll() is None
    live = h.status("t")["running"]
    assert live["transcript"].endswith("-work.log")  # status --json names the transcript being written
    assert live["session_id"] is None  # a `cmd:` agent has no session

    (h.root / ".harness" / "go").touch()
    assert follower.wait(timeout=DEADLINE) == 0
    _drain(lines, seen)
    assert seen.count("  │ hello from the agent") == 1  # printed once, not again when the step ended
    ending = seen[seen.index("  │ no newline yet"):]  # the last line, without its newline, when the step ended
    assert ending[1].startswith("  └ work transcript: ")
    assert ending[1].endswith("-work.log")
    assert "✔ work → done" in ending[2]
    assert seen[-1].endswith("run finished: COMPLETE")
    assert run.wait(timeout=DEADLINE) == 0


def test_logs_follow_json_gives_output_records_and_a_step_filter_keeps_its_own(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "first", "workflow": "work.md", "hooks": {"post": {"run": "echo post-hook-said"}}},
                         {"name": "work", "workflow": "work.md"}]})
    h.new("t")
    speak = "echo \"step $SPECD_STEP speaks\"; "
    run = _start(h, "continue", "t", "--auto", "--agent", AGENT.replace("echo 'hello", speak + "echo 'hello"))
    assert wait_until(lambda: _running(h), deadline=DEADLINE)
    everything = _start(h, "logs", "t", "-f", "--json")
    only = _start(h, "logs", "t", "-f", "--step", "first")
    lines, seen, own = _lines(everything), [], []
    assert _until(lines, '"step_started"', seen), seen
    only_lines = _lines(only)
    assert _until(only_lines, "▶ first", own), own
    (h.root / ".harness" / "speak").touch()
    (h.root / ".harness" / "go").touch()

    assert everything.wait(timeout=DEADLINE) == 0
    _drain(lines, seen)
    records = [json.loads(line) for line in seen]
    said = [r["text"] for r in records if r.get("kind") == "output"]
    assert said == ["step first speaks", "hello from the agent", "no newline yet", "post-hook-said",
                    "step work speaks", "hello from the agent", "no newline yet"]
    ended = [r["step"] for r in records if r.get("kind") == "transcript"]
    assert ended == ["first", "first-post-hook", "work"]
    assert all(Path(r["path"]).is_file() for r in records if r.get("kind") == "transcript")
    assert records[-1]["ok"] is True
    assert records[-1]["error"] is None

    assert only.wait(timeout=DEADLINE) == 0
    _drain(only_lines, own)
    text = "\n".join(own)
    assert "step first speaks" in text
    assert "post-hook-said" in text
    assert "step work speaks" not in text
    assert run.wait(timeout=DEADLINE) == 0


def test_logs_says_which_journal_lines_it_could_not_read_and_follow_skips_them(h: Harness) -> None:
    _one_step(h)
    assert h.specd("continue", "t", "--auto", "--agent", "cmd:true").returncode == 0
    journal = h.task_dir("t") / "events.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]  # torn, as a crash mid-write leaves it
    journal.write_text("\n".join([*lines, "42", "[1, 2]", ""]), encoding="utf-8")  # JSON, yet no event

    shown = h.specd("logs", "t")
    followed = h.specd("logs", "t", "-f")  # the run has ended: what is there, then it stops

    assert shown.returncode == 0, shown.stderr
    assert f"events.jsonl: lines 2, {len(lines) + 1}, {len(lines) + 2} are no whole event" in shown.stderr
    assert "run finished: COMPLETE" in shown.stdout
    assert followed.returncode == 0, followed.stderr
    assert "Traceback" not in followed.stderr
    assert "run finished: COMPLETE" in followed.stdout


def test_logs_follow_masks_the_values_of_a_env_made_after_it_started(h: Harness) -> None:
    value = "zq7plainvalue42"  # no token shape: only a file naming it makes it a secret
    agent = AGENT.replace("echo 'hello from the agent'; ",
                          f"echo 'first {value}'; j=0; while [ ! -e .harness/again ] && [ $j -lt 1200 ]; do "
                          f"sleep 0.05; j=$((j+1)); done; echo 'again {value}'; ")
    run, follower, lines, seen = _following(h, agent)
    (h.root / ".harness" / "speak").touch()
    assert _until(lines, "│ first", seen), seen
    assert seen[-1] == f"  │ first {value}"  # no file names it yet: shown as printed

    (h.root / ".env").write_text(f"MADE_BY_THE_STEP={value}\n", encoding="utf-8")
    time.sleep(1.2)  # past the follower's once-a-second look for secret files
    (h.root / ".harness" / "again").touch()
    assert _until(lines, "│ again", seen), seen
    assert seen[-1] == "  │ again [REDACTED]"
    (h.root / ".harness" / "go").touch()
    assert follower.wait(timeout=DEADLINE) == 0
    _drain(lines, seen)
    assert value not in "\n".join(seen[seen.index("  │ again [REDACTED]"):])  # nor in the transcript shown at the end
    assert run.wait(timeout=DEADLINE) == 0
