"""Faults on the way to Temporal are one clear line and an exit code, never a traceback; nothing pushed is lost.
And without temporalio, every Temporal command says how to install it while the rest of specd never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from executor_harness import TIMEOUT, Repo
from temporal_harness import DevServer, TemporalExecutor, free_port


def one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("specd: error: ")
    for word in words:
        assert word in first, first


def test_an_unreachable_server_a_wrong_namespace_and_a_bad_remote(repo: Repo, temporal_server: DevServer) -> None:
    repo.new("a")
    nowhere = repo.specd("run", "a", "--executor", "temporal", "--temporal", f"127.0.0.1:{free_port()}")
    one_line_error(nowhere, "cannot reach Temporal", "connection refused")
    wrong = repo.specd("run", "a", "--executor", "temporal", "--temporal", temporal_server.address,
                       "--namespace", "no-such-ns")
    one_line_error(wrong, "no namespace 'no-such-ns'")
    missing = repo.root.parent / "missing.git"
    unpushable = repo.specd("run", "a", "--executor", "temporal", "--temporal", temporal_server.address,
                            "--remote", str(missing))
    one_line_error(unpushable, "cannot read the shared remote")
    worker = repo.specd("worker", "--temporal", temporal_server.address, "--remote", str(missing))
    one_line_error(worker, "the worker cannot read the shared remote")
    as_json = repo.specd("worker", "--temporal", temporal_server.address, "--remote", str(missing), "--json")
    assert as_json.returncode == 2
    refused = json.loads(as_json.stdout.splitlines()[-1])  # --json: the refusal is an envelope on stdout too
    assert refused["ok"] is False
    assert "cannot read the shared remote" in refused["error"]["message"]
    nothing = repo.specd("run", "a", "--executor", "temporal")
    one_line_error(nothing, "needs to know where Temporal is")


def test_a_push_rejected_because_the_branch_moved_blocks_the_task_and_loses_nothing(
        repo: Repo, temporal_server: DevServer) -> None:
    repo.new("p")
    cluster = TemporalExecutor(repo, temporal_server, workers=1)
    try:
        (repo.dir / "hold-p-s2").write_text("")
        cluster.submit("p", "--auto")
        cluster.wait_held(["p-s2"])
        other = repo.root.parent / "someone-else"  # another clone moves the task branch meanwhile
        subprocess.run(["git", "clone", "-q", "-b", "specd/p", str(cluster.remote), str(other)], check=True,
                       env=repo.env)
        (other / "theirs.txt").write_text("someone else's work\n")
        repo.git("add", "theirs.txt", cwd=other)
        repo.git("commit", "-q", "-m", "their commit", cwd=other)
        repo.git("push", "-q", "origin", "specd/p", cwd=other)
        theirs = repo.git("rev-parse", "HEAD", cwd=other).strip()
        (repo.dir / "hold-p-s2").unlink()
        deadline = time.monotonic() + TIMEOUT
        while (run := workflow(repo, cluster))["running"]:
            assert time.monotonic() < deadline, run
            time.sleep(0.5)
        assert run["status"] == "BLOCKED", run
        assert "was rejected: the branch moved" in run["reason"]
        assert repo.git("rev-parse", "origin/specd/p").strip() == theirs  # what was pushed stays
    finally:
        cluster.close()


def workflow(repo: Repo, cluster: TemporalExecutor) -> dict[str, Any]:
    """The workflow's part of `specd status p --json`."""
    done = repo.specd("status", "p", "--json", *cluster.flags())
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["temporal"])


def test_without_temporalio_every_temporal_command_says_how_to_install_it(repo: Repo, tmp_path: Path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['temporalio'] = None\n", encoding="utf-8")
    env = {"PYTHONPATH": str(hide)}
    repo.new("a")
    for argv in (["run", "a", "--executor", "temporal", "--temporal", "127.0.0.1:7233"],
                 ["worker", "--temporal", "127.0.0.1:7233", "--remote", str(repo.root)],
                 ["approve", "a", "--temporal", "127.0.0.1:7233"],
                 ["status", "a", "--temporal", "127.0.0.1:7233"]):
        done = repo.specd(*argv, env=env)
        one_line_error(done, "temporalio")
        assert "pip install 'specd-workflow[temporal]'" in done.stderr
    plain = repo.specd("status", "a", env=env)  # no Temporal settings: nothing needs temporalio
    assert plain.returncode == 0, plain.stderr


def test_nothing_outside_the_temporal_executor_imports_temporalio() -> None:
    root = Path(__file__).resolve().parents[2] / "specd"
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "import temporalio" in text or "from temporalio" in text:
            assert path.parent == root / "executors" / "temporal", path
    probe = ("import sys, specd.cli, specd.commands.run, specd.commands.answer, specd.commands.control, "
             "specd.commands.status, specd.commands.temporal, specd.commands.worker, specd.executors.temporal, "
             "specd.executors.temporal.settings; assert 'temporalio' not in sys.modules, 'imported'")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr


def refused_envelope(repo: Repo, temporal_server: DevServer) -> Any:
    done = repo.specd("worker", "--temporal", temporal_server.address, "--remote", "/nowhere.git", "--json")
    assert done.returncode == 2
    return json.loads(done.stdout.splitlines()[-1])


def test_worker_json_says_each_line_as_an_object_and_ends_with_an_envelope(
        repo: Repo, temporal_server: DevServer, tmp_path: Path) -> None:
    import signal

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.root), str(remote)], check=True, capture_output=True)
    proc = subprocess.Popen([sys.executable, "-m", "specd", "worker", "--temporal", temporal_server.address,
                             "--remote", str(remote), "--workdir", str(tmp_path / "work"), "--task-queue",
                             "json-check", "--json"], cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())
    assert first["kind"] == "worker"
    assert "polling 'json-check'" in first["message"]
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "envelope.schema.json").read_text())
    from jsonschema import Draft202012Validator

    assert not list(Draft202012Validator(schema).iter_errors(lines[-1]))
    assert not list(Draft202012Validator(schema).iter_errors(refused_envelope(repo, temporal_server)))
    assert lines[-1]["ok"] is True
    assert lines[-1]["stopped"] is True


def test_the_listing_answers_when_the_server_of_a_submitted_task_is_gone(repo: Repo) -> None:
    """In the clone that submitted a task, `specd status` reads it from Temporal; with that server gone (or
    temporalio missing) the listing still answers, from this clone's copy, and says why."""
    from specd.executors.temporal import record
    from specd.executors.temporal.settings import Settings
    from specd.tasks.project import Project

    repo.new("a")
    record.save(Project(repo.root), Settings(address=f"127.0.0.1:{free_port()}"), ["a"])
    done = repo.specd("status")
    assert done.returncode == 0, done.stderr
    assert "a    NOT_STARTED" in done.stdout or "NOT_STARTED" in done.stdout.splitlines()[1]
    assert "cannot reach Temporal" in done.stderr
    assert "the rows of a show this clone's copy" in done.stderr
    asked = repo.specd("status", "--temporal", f"127.0.0.1:{free_port()}")  # asked for: refused, one line
    one_line_error(asked, "cannot reach Temporal")


def test_a_task_running_on_this_machine_is_not_copied_onto_temporal(tmp_path: Path,
                                                                     temporal_server: DevServer) -> None:
    """Started by `specd continue` (its home is the main tree), then `run --executor temporal`: refused with
    the way to move it (test_temporal_move.py follows it), and no workflow is started for it."""
    repo = Repo(tmp_path, pause="s2")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    repo.new("a")
    held = repo.specd("continue", "a", "--semi-auto", "--agent", repo.agent())
    assert held.returncode == 3, held.stderr  # s1 ran; the gate before s2 waits, in the main tree
    moved = repo.specd("run", "a", "--executor", "temporal", "--temporal", temporal_server.address,
                       "--task-queue", "nobody")
    one_line_error(moved, "already runs on this machine, in the main tree")
    assert "`specd run a --executor temporal --temporal " in moved.stderr
    assert " --task-queue nobody --move`" in moved.stderr
    shown = repo.specd("status", "a", "--temporal", temporal_server.address, "--json")
    assert json.loads(shown.stdout)["status"] == "WAITING_FOR_HUMAN"  # still the one copy, here
