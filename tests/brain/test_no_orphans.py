"""No agent outlives specd: `kill -9` of a real `specd continue` mid-step, then resume.

The agent appends ``start <label> <attempt>`` and ``end <label> <attempt>`` to a
ledger. The slow one also writes a marker and sleeps; the test kills specd the
moment the marker appears (so the kill lands at a known point), resumes, and
reads the ledger: the killed attempt must never write again, so nothing of it
appears after attempt 2 starts, and its processes are gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from brain_harness import Harness, marked_alive, wait_until

from specd.system import jail as jails

LEDGER_AGENT = r'''
import json, os, subprocess, sys, time
from pathlib import Path

if os.environ.get("SPECD_KIND") == "step":
    sys.stdin.read()
ledger = Path(os.environ["LEDGER"])
label = sys.argv[1] if len(sys.argv) > 1 else os.environ["SPECD_STEP"]
attempt = 1 + sum(1 for line in ledger.read_text().splitlines() if line.startswith(f"start {label} ")) \
    if ledger.exists() else 1
with ledger.open("a") as out:
    out.write(f"start {label} {attempt}\n")
if label == os.environ["SLOW"] and attempt == 1:
    late = None
    if os.environ.get("VARIANT") == "grandchild":
        # A helper of the agent's own that would finish the work later; it is not specd's direct child.
        late = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(60); "
                                 "open(sys.argv[1], 'a').write('late write of the killed attempt\\n')", str(ledger)])
    marker = Path(os.environ["MARKER"])
    pids = [os.getpid()] + ([late.pid] if late else [])
    marker.with_suffix(".tmp").write_text(json.dumps({"pids": pids, "pgid": os.getpgid(0)}))
    os.replace(marker.with_suffix(".tmp"), marker)
    time.sleep(60)
with ledger.open("a") as out:
    out.write(f"end {label} {attempt}\n")
'''

def needs_bwrap() -> None:
    if not jails.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")


# variant -> (agent command suffix, pre hook on the slow step, label that is slow)
VARIANTS = {
    "agent": ("", None, "slow"),  # the agent is specd's direct child: it dies with specd
    "shell": ("; true", None, "slow"),  # the shell cannot exec: the agent is a grandchild
    "grandchild": ("", None, "slow"),  # the agent's own helper outlives the agent
    "hook": ("", "hook", "hook"),  # a `run:` hook is killed mid-way instead of the agent
}


@pytest.mark.parametrize("jail", ["bubblewrap", "none"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_kill_9_mid_step_leaves_nothing_running_and_attempts_never_overlap(h: Harness, tmp_path: Path,
                                                                         variant: str, jail: str) -> None:
    suffix, hook_label, slow = VARIANTS[variant]
    if jail == "bubblewrap":
        needs_bwrap()
    else:
        h.env["SPECD_BWRAP"] = "/bin/false"  # a bwrap that cannot start a jail: the fallback is in force
    # In the project: the only place a jailed `run:` hook may write (its /tmp is private).
    script = h.dir / "ledger_agent.py"
    script.write_text(LEDGER_AGENT, encoding="utf-8")
    ledger, marker = h.dir / "ledger.txt", h.dir / "marker.json"
    mark = f"LEDGER={ledger}"  # in the environment of the agent and everything it started, jailed or not
    run = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    h.workflow("w.md")
    slow_step: dict[str, object] = {"name": "slow", "workflow": "w.md"}
    if hook_label:
        slow_step["hooks"] = {"pre": {"run": f"{run} {hook_label}", "env_allow": []}}
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, slow_step, {"name": "c", "workflow": "w.md"}]})
    h.new("t")
    h.env.update(LEDGER=str(ledger), MARKER=str(marker), SLOW=slow, VARIANT=variant)
    argv = h.argv("continue", "t", "--auto", "--agent", f"cmd:{run}{suffix}")

    first = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=h.env, cwd=h.root, start_new_session=True)
    h.children.append(first)
    assert wait_until(lambda: marker.exists() or first.poll() is not None, 60), "the slow part never started"
    assert first.poll() is None, first.communicate()
    os.kill(first.pid, signal.SIGKILL)  # specd alone: its children are in their own session
    first.wait(timeout=30)

    try:
        # The jail's PID namespace, or outside the jail the keeper (specd/system/keeper.py), dies with specd and
        # takes every descendant with it, at once: nothing is left for the next run to stop.
        assert wait_until(lambda: not marked_alive(mark), 10.0), f"a descendant outlived specd (jail: {jail})"
        second = h.specd("continue", "t", "--auto", "--agent", f"cmd:{run}{suffix}")
        assert second.returncode == 0, second.stderr
        assert h.status("t")["status"] == "COMPLETE"
        # The killed attempt's processes (helpers included) are gone: they can never write again.
        assert not marked_alive(mark)
        lines = ledger.read_text(encoding="utf-8").splitlines()
        # Attempt 1 of the slow part started and never wrote again; attempt 2 ran alone; all else ran once.
        interrupted = [f"start {slow} 1", f"start {slow} 2", f"end {slow} 2"]
        then = ["start slow 1", "end slow 1"] if hook_label else []
        assert lines == ["start a 1", "end a 1", *interrupted, *then, "start c 1", "end c 1"]
        said = second.stdout + second.stderr
        assert said.lstrip().startswith("note: jail: bubblewrap" if jail == "bubblewrap" else
                                        "warning: jail: none — /bin/false")
    finally:
        for pid in marked_alive(mark):  # without the fix, the old agent would linger past the test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_resume_stops_only_processes_marked_as_the_dead_runs(h: Harness, tmp_path: Path) -> None:
    """The owner file names groups; only a process carrying the dead run's token is ever signalled."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    unrelated = subprocess.Popen(sleeper, start_new_session=True)  # recorded group, no token: someone else's
    stray = subprocess.Popen(sleeper, start_new_session=True, env={**os.environ, "SPECD_OWNER": "dead-run"})
    try:
        owner = {"pid": 999999, "host": socket.gethostname(), "since": "x", "mark": "dead-run",
                 "children": [unrelated.pid]}
        (h.task_dir("t") / ".run.lock.owner").write_text(json.dumps(owner), encoding="utf-8")
        result = h.cont("t")
        assert result.returncode == 0, result.stderr
        assert stray.wait(timeout=30) in (-signal.SIGTERM, -signal.SIGKILL)
        assert unrelated.poll() is None, "a process without the run's token was signalled"
        assert "stopped 1 process" in result.stdout + result.stderr
    finally:
        for proc in (unrelated, stray):
            proc.kill()
            proc.wait()


def test_scratch_files_of_a_killed_run_are_swept_on_the_next_run(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    task_dir = h.task_dir("t")
    scratch = [task_dir / ".tmp-.pipeline-state.json.k3j2", task_dir / ".result-1a2b3c4d.json",
               task_dir / "transcripts" / "r1" / ".tmp-001-a.log.x9"]
    for path in scratch:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{half", encoding="utf-8")
    keep = task_dir / "notes-tmp.json"
    keep.write_text("mine", encoding="utf-8")
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    assert [p for p in scratch if p.exists()] == []
    assert keep.read_text(encoding="utf-8") == "mine"
    assert "removed 3 scratch file" in result.stdout + result.stderr


def test_a_secret_printed_before_a_kill_never_reaches_the_transcript(h: Harness, tmp_path: Path) -> None:
    """Output is redacted as it streams, so `kill -9` mid-step leaves no secret in the step's log."""
    marker = tmp_path / "printed"
    talker = tmp_path / "talker.py"
    talker.write_text("import os, sys, time\nsys.stdin.read()\n"
                      "print('the key is', os.environ['DEPLOY_API_TOKEN'], flush=True)\n"
                      f"open({str(marker)!r}, 'w').close()\ntime.sleep(60)\n", encoding="utf-8")
    h.workflow("w.md")
    # The agent is given the token on purpose (env_allow), and its marker lies beside the project.
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"env_allow": ["DEPLOY_API_TOKEN"]})
    h.new("t")
    h.env.update(DEPLOY_API_TOKEN="tok-4f7c9e2a8b1d6035", SPECD_JAIL_WRITE=str(tmp_path))
    argv = h.argv("continue", "t", "--auto", "--agent", f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(talker))}")
    run = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=h.env, cwd=h.root, start_new_session=True)
    h.children.append(run)
    assert wait_until(lambda: marker.exists() or run.poll() is not None, 60), "the agent never printed"

    def logged() -> bool:  # the line reaches the log through specd's pump, a moment after the agent printed it
        return any("the key is" in p.read_text(encoding="utf-8", errors="replace")
                   for p in (h.task_dir("t") / "transcripts").rglob("*.log"))

    assert wait_until(lambda: logged() or run.poll() is not None, 60), "the printed line never reached the log"
    os.kill(run.pid, signal.SIGKILL)
    run.wait(timeout=30)
    logs = list((h.task_dir("t") / "transcripts").rglob("*.log"))
    assert logs, "the step's output log is missing"
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)
    assert "the key is [REDACTED]" in text
    assert "tok-4f7c9e2a8b1d6035" not in text
