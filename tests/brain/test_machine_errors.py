"""Errors from the machine are reported, not thrown: a real full disk and a real read-only task folder.

The disk is a small tmpfs mounted under the project; the read-only folder is a
read-only bind mount (root ignores mode bits, so chmod would prove nothing).
Both need mount(2): the tests skip where it is not permitted, except in CI.
The agent holds inside step ``b`` while the test breaks the disk, so the failure
lands on specd's first write after that step, at a known point.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from brain_harness import RUN_TIMEOUT, Harness, wait_until

from specd.errors import machine_error
from specd.state.model import RunState
from specd.state.store import StateStore
from specd.system import machine

HOLD_AGENT = r'''
import os, sys, time
from pathlib import Path

if os.environ.get("SPECD_KIND") == "step":
    sys.stdin.read()
step = os.environ["SPECD_STEP"]
with open(os.environ["LEDGER"], "a") as out:
    out.write(step + "\n")
hold = Path(os.environ["HOLD"])
if step == "b" and not (hold / "released").exists():
    (hold / "holding").write_text(str(os.getpid()))
    deadline = time.monotonic() + 60
    while not (hold / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    (hold / "released").write_text("")
'''


def mount(*args: str) -> None:
    result = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    for _ in range(200):  # a writer open on the mount at that instant (specd's heartbeat) makes remount,ro busy
        if result.returncode == 0 or "busy" not in result.stderr or "remount,ro,bind" not in args:
            break
        time.sleep(0.05)
        result = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"mount {' '.join(args)} failed in CI: {result.stderr}")
        pytest.skip(f"mount is not permitted here: {result.stderr.strip()}")


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    made: list[Path] = []
    yield made
    for target in reversed(made):
        subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


@pytest.fixture
def setup(h: Harness, tmp_path: Path) -> Callable[[], tuple[Path, Path]]:
    def make() -> tuple[Path, Path]:
        agent = tmp_path / "hold_agent.py"
        agent.write_text(HOLD_AGENT, encoding="utf-8")
        hold, ledger = tmp_path / "hold", tmp_path / "ledger.txt"
        hold.mkdir()
        h.agent = agent
        h.env.update(LEDGER=str(ledger), HOLD=str(hold), SPECD_JAIL_WRITE=str(tmp_path))  # beside the project
        h.workflow("w.md")
        h.pipeline({"main": [{"name": n, "workflow": "w.md"} for n in ("a", "b", "c")]})
        return hold, ledger
    return make


def break_during_b(h: Harness, hold: Path, cause: Callable[[], None]) -> subprocess.CompletedProcess[str]:
    proc = h.start("t")
    assert wait_until(lambda: (hold / "holding").exists() or proc.poll() is not None, 60)
    assert proc.poll() is None, proc.communicate()
    cause()
    (hold / "go").write_text("go", encoding="utf-8")
    out, err = proc.communicate(timeout=RUN_TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_reported(result: subprocess.CompletedProcess[str], task_dir: Path, words: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert words in result.stderr
    assert f"specd: error: {task_dir}/" in result.stderr  # names the file it could not write
    assert "fix:" in result.stderr
    assert "specd continue t" in result.stderr


def assert_resumes_only_b(h: Harness, ledger: Path) -> None:
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    state = h.status("t")
    assert state["status"] == "COMPLETE"
    assert [e["step"] for e in state["history"] if e["kind"] == "step"] == ["a", "b", "c"]
    assert ledger.read_text(encoding="utf-8").splitlines() == ["a", "b", "b", "c"]  # only b ran again


def test_disk_full_gives_exit_1_naming_the_path_and_resumes_after_space_is_freed(
        h: Harness, setup: Callable[[], tuple[Path, Path]], mounts: list[Path]) -> None:
    hold, ledger = setup()
    tasks = h.root / ".specd" / "tasks"
    tasks.mkdir()
    mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(tasks))
    mounts.append(tasks)
    h.new("t")
    filler = tasks / ".filler"

    def fill() -> None:
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * 4096)
        finally:
            os.close(fd)

    result = break_during_b(h, hold, fill)
    assert_reported(result, h.task_dir("t"), "no space left on the device (ENOSPC)")
    view = h.status("t")  # the lock was released; status tells why the run stopped
    assert "ENOSPC" in f"{view.get('reason')} {view.get('status_note')}"
    filler.unlink()
    assert_resumes_only_b(h, ledger)


def test_read_only_task_folder_gives_exit_1_naming_the_path_and_resumes_once_writable(
        h: Harness, setup: Callable[[], tuple[Path, Path]], mounts: list[Path]) -> None:
    hold, ledger = setup()
    h.new("t")
    task_dir = h.task_dir("t")

    def read_only() -> None:
        mount("--bind", str(task_dir), str(task_dir))
        mounts.append(task_dir)
        mount("-o", "remount,ro,bind", str(task_dir))

    result = break_during_b(h, hold, read_only)
    assert_reported(result, task_dir, "the file system is read-only (EROFS)")
    view = h.status("t")
    assert view["status"] == "IN_PROGRESS"  # nothing could be written, so the state is the last good one
    assert "interrupted" in view["status_note"]
    subprocess.run(["umount", str(task_dir)], check=True)
    mounts.remove(task_dir)
    assert_resumes_only_b(h, ledger)


def test_unwritable_project_at_the_start_is_reported_not_thrown(h: Harness, mounts: list[Path]) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    task_dir = h.task_dir("t")
    mount("--bind", str(task_dir), str(task_dir))
    mounts.append(task_dir)
    mount("-o", "remount,ro,bind", str(task_dir))
    result = h.cont("t")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert f"{task_dir}/.run.lock" in result.stderr
    assert "read-only" in result.stderr


class FullDisk(StateStore):
    """A store on a disk that has just filled up: every state write fails, the journal still appends."""

    def save(self, state: RunState) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.json_path))


def test_when_the_state_cannot_be_written_status_explains_from_the_journal(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    task_dir = h.task_dir("t")
    StateStore(task_dir, "t").save(RunState(task="t", status="IN_PROGRESS"))
    cause = OSError(errno.ENOSPC, "No space left on device", str(task_dir / ".pipeline-state.json"))
    error = machine.stop_run(cause, FullDisk(task_dir, "t"), "t")
    assert error is not None
    assert error.exit_code == 1
    view = h.status("t")
    assert view["status"] == "IN_PROGRESS"
    assert view["status_note"].startswith("interrupted: ")
    assert "no space left on the device (ENOSPC)" in view["status_note"]
    assert "specd continue t" in view["status_note"]
    # Where the state can be written, the reason goes there instead, and the run is BLOCKED.
    assert machine.stop_run(cause, StateStore(task_dir, "t"), "t") is not None
    saved = StateStore(task_dir, "t").load()
    assert saved is not None
    assert saved.status == "BLOCKED"
    assert "ENOSPC" in saved.reason
    assert saved.waiting == {"kind": "machine"}


@pytest.mark.parametrize(("code", "words"), [(errno.EACCES, "permission denied"), (errno.EROFS, "read-only"),
                                             (errno.ENOSPC, "no space left"), (errno.EDQUOT, "quota")])
def test_machine_errors_name_the_path_and_the_fix(code: int, words: str) -> None:
    error = machine_error(OSError(code, os.strerror(code), "/data/proj/.specd/tasks/t/events.jsonl"))
    assert error is not None
    assert error.exit_code == 1
    assert error.message.startswith("/data/proj/.specd/tasks/t/events.jsonl: ")
    assert words in error.message
    assert "/data/proj/.specd/tasks/t" in (error.fix or "")


def test_a_command_in_the_fix_quotes_a_path_a_shell_would_split() -> None:
    full = machine_error(OSError(errno.ENOSPC, "No space", "/data/my proj/.specd/tasks/t/events.jsonl"))
    assert full is not None
    assert "holding /data/my proj/.specd/tasks/t (see `df -h '/data/my proj/.specd/tasks/t'`)" in (full.fix or "")
    folder = machine_error(OSError(errno.EISDIR, "Is a directory", "/data/my proj/x.json"))
    assert folder is not None
    assert "(`mv '/data/my proj/x.json' '/data/my proj/x.json.bak'`)" in (folder.fix or "")


def test_other_os_errors_are_not_disguised_as_machine_errors() -> None:
    assert machine_error(OSError(errno.ENOENT, "No such file", "/x")) is None
    assert machine_error(OSError(errno.EPERM, "Operation not permitted")) is None  # e.g. kill(), not a write


def test_a_disk_full_at_a_starting_commit_stops_the_run_before_the_agent_and_the_step_runs_once_later(
        h: Harness, setup: Callable[[], tuple[Path, Path]], mounts: list[Path]) -> None:
    hold, ledger = setup()
    (hold / "released").write_text("")  # no step holds here
    for argv in (["init", "-q"], ["config", "user.name", "T"], ["config", "user.email", "t@example.com"],
                 ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *argv], cwd=h.root, check=True, capture_output=True)
    h.new("t")
    objects = h.root / ".git" / "objects"
    kept = h.root.parent / "objects-before"
    shutil.copytree(objects, kept)
    mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(objects))
    mounts.append(objects)
    shutil.copytree(kept, objects, dirs_exist_ok=True)
    filler = objects / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, b"\0" * 4096)
    os.close(fd)
    result = h.cont("t")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "no space left on the device (ENOSPC)" in result.stderr
    assert not ledger.exists()  # no agent ran: its work would have been lost, and paid for twice
    assert h.status("t")["status"] == "BLOCKED"
    filler.unlink()
    again = h.cont("t")
    assert again.returncode == 0, again.stderr
    assert ledger.read_text(encoding="utf-8").splitlines() == ["a", "b", "c"]  # each step once
    subjects = subprocess.run(["git", "log", "--format=%s"], cwd=h.root, check=True, capture_output=True,
                              text=True).stdout
    assert subjects.splitlines().count("docs(t): a complete") == 1  # a's work, recorded once the disk had room
