"""The zygote: runs forked from one warm process behave like `specd` started fresh."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest
from executor_harness import Repo

from specd.executors import warm


def test_a_forked_run_gets_its_own_cwd_stdout_stderr_and_exit_code(tmp_path: Path) -> None:
    zygote = warm.Zygote()
    try:
        with tempfile.TemporaryFile() as errors, pytest.raises(OSError, match="does not fit"):
            zygote.spawn(["--help"], tmp_path, errors, {"HUGE": "x" * (1 << 16)})  # the caller starts a fresh one
        with tempfile.TemporaryFile() as errors:
            ok = zygote.spawn(["--help"], tmp_path, errors)  # nothing of the refused request was sent
            assert b"Usage" in ok.stdout.read()
            assert ok.wait(60) == 0
        with tempfile.TemporaryFile() as errors:
            bad = zygote.spawn(["contineu"], tmp_path, errors)
            bad.stdout.read()
            assert bad.wait(60) == 2
            errors.seek(0)
            assert b"continue" in errors.read()  # click's "did you mean" went to the stderr we passed
        with tempfile.TemporaryFile() as errors:
            outside = zygote.spawn(["status"], tmp_path, errors)  # tmp_path holds no project: that is said
            outside.stdout.read()
            assert outside.wait(60) == 2
            errors.seek(0)
            assert b"specd init" in errors.read()
        assert ok.pid != bad.pid != outside.pid
    finally:
        zygote.close()
    assert zygote.proc.returncode == 0  # it ended when told, and was reaped


def test_a_run_given_an_environment_has_that_one_and_not_the_zygotes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """What a Temporal step's run is given (attempt.start): SPECD_STEPS stops it after one step, and a variable
    the zygote was started with but the request leaves out is gone."""
    repo = Repo(tmp_path, steps=("s1", "s2"))
    repo.new("z")
    monkeypatch.setenv("ZYGOTE_ONLY", "from the zygote")
    zygote = warm.Zygote()
    monkeypatch.delenv("ZYGOTE_ONLY")
    try:
        with tempfile.TemporaryFile() as errors:
            agent = "cmd:sh -c 'cat >/dev/null; echo \"${ZYGOTE_ONLY:-unset} $RUN_ONLY\" >> seen'"
            env = {**repo.env, "RUN_ONLY": "given", "SPECD_STEPS": "1"}
            run = zygote.spawn(["continue", "z", "--auto", "--agent", agent, "--json"], repo.root, errors, env)
            said = run.stdout.read().decode()
            assert run.wait(60) == 0, errors.seek(0) or errors.read()
        assert (repo.root / "seen").read_text() == "unset given\n"  # one step ran, with the run's environment
        assert '"IN_PROGRESS"' in said
    finally:
        zygote.close()


def test_runs_die_with_the_zygote(tmp_path: Path) -> None:
    repo = Repo(tmp_path, steps=("s1",))
    repo.new("z")
    zygote = warm.Zygote()
    try:
        with tempfile.TemporaryFile() as errors:
            agent = "cmd:sh -c 'cat >/dev/null; touch started; sleep 120'"
            run = zygote.spawn(["continue", "z", "--auto", "--agent", agent], repo.root, errors)
            deadline = time.monotonic() + 120
            while not (repo.root / "started").exists():
                assert run.returncode is None, errors.seek(0) or errors.read()
                assert time.monotonic() < deadline, "the step never started"
                time.sleep(0.05)
            os.kill(zygote.proc.pid, signal.SIGKILL)
            assert run.wait(60) == -9  # the listener saw the zygote go and ended its runs
            while _alive(run.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _alive(run.pid)  # the run really died with it (PDEATHSIG), mid-step
    finally:
        zygote.proc.wait()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


IMPORTS_AFTER = """
import sys, atexit
from specd.executors import zygote
zygote.preload()
before = set(sys.modules)
atexit.register(lambda: print("\\nimported after the fork:", *sorted(set(sys.modules) - before)))
import specd.cli
sys.argv = ["specd", *sys.argv[1:]]
specd.cli.main()
"""


def test_a_forked_run_imports_nothing_the_zygote_did_not(tmp_path: Path) -> None:
    """What a run imports after the fork, each of twenty forked runs imports again: the zygote's PRELOAD holds
    everything a `specd continue --json` with a command agent reaches, its end (the read model's row) included.
    The zygote's preload is run in a fresh process here, then the run, as the fork would."""
    import subprocess
    import sys

    repo = Repo(tmp_path)
    repo.new("t")
    done = subprocess.run([sys.executable, "-c", IMPORTS_AFTER, "continue", "t", "--auto", "--json", "--agent",
                           repo.agent()], cwd=repo.root, env=repo.env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert '"status": "COMPLETE"' in done.stdout
    after = done.stdout.rsplit("imported after the fork:", 1)[1].split()
    assert after == [], f"add these to zygote.PRELOAD: {after}"


def test_what_the_machine_may_change_is_handed_on_no_older_than_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """A control plane's zygote lives for days: its view of /etc (what only root may read, covered in every jail)
    is made again before a fork once it is FRESH seconds old; a burst of forks shares one walk."""
    import sys
    from functools import cache
    from types import ModuleType

    from specd.executors import zygote

    walks: list[int] = []
    fake = ModuleType("fake_etc")

    @cache
    def secrets() -> tuple[str, ...]:
        walks.append(1)
        return (f"view {len(walks)}",)

    fake.secrets = secrets  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_etc", fake)
    monkeypatch.setattr(zygote, "AGING", (("fake_etc", "secrets"),))
    now = 1000.0
    monkeypatch.setattr(zygote, "_made", now - zygote.FRESH)
    zygote.refresh(now)  # as the zygote starts
    assert secrets() == ("view 1",)
    for _ in range(20):  # twenty forks within a second: one walk
        now += 0.05
        zygote.refresh(now)
    assert len(walks) == 1
    now += zygote.FRESH  # a minute later, the next fork gets a fresh view
    zygote.refresh(now)
    assert secrets() == ("view 2",)
    assert len(walks) == 2


def test_the_zygote_makes_the_etc_view_its_runs_inherit() -> None:
    """Its preload walks /etc once, so a run forked from it finds the walk made and makes none of its own."""
    import subprocess
    import sys

    shown = subprocess.run([sys.executable, "-c", "from specd.executors import zygote; zygote.preload(); "
                            "from specd.system import binds; print(binds._etc_secrets.cache_info().currsize)"],
                           capture_output=True, text=True, check=True, timeout=120)
    assert shown.stdout.strip() == "1"


def test_runs_asked_for_at_once_from_many_threads_each_get_their_own_pid(tmp_path: Path) -> None:
    """The Temporal worker asks for runs from several threads at once. Each must get the pid of the run it asked
    for: that pid is what a stop (SIGTERM) and a parked run's wake (SIGUSR1) are sent to, and what its exit code
    is filed under. Here every other run fails (exit 2): a run handed another's pid reports the other's code."""
    import threading

    zygote = warm.Zygote()
    seen: list[tuple[bool, int | None, int]] = []
    try:
        for _ in range(4):
            gate = threading.Barrier(8)

            def one(number: int, gate: threading.Barrier = gate) -> None:
                with tempfile.TemporaryFile() as errors:
                    gate.wait()
                    run = zygote.spawn(["--help" if number % 2 else "contineu"], tmp_path, errors)
                    helped = b"Usage" in run.stdout.read()
                    seen.append((helped, run.wait(60), run.pid))

            threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        zygote.close()
    assert len(seen) == 32
    assert [code for helped, code, _ in seen] == [0 if helped else 2 for helped, _, _ in seen]
    assert len({pid for _, _, pid in seen}) == 32
