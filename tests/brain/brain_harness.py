"""The harness that drives the real `specd` CLI with a real command agent.

The agent is a small Python script written into ``tmp_path/harness``. Each
call appends ``$SPECD_KIND $SPECD_STEP $SPECD_PHASE`` (plus ``@<workflow>`` for
hooks) to ``log.txt``, records everything it saw in ``calls.jsonl``, then acts
on ``cues.json``, which the test may rewrite between runs. A cue is looked up by
``kind:step:phase``, then ``kind:step``; it may hold:

- ``outcomes``: a list reported on successive calls (the last one repeats);
- ``mkdir``: a folder to create inside the task folder;
- ``hold``: a file name; the agent writes ``held-<step>.json`` (its pid and
  process group) and waits until that file appears in the harness folder;
- ``exit``: a non-zero exit status;
- ``cost``: the cost in USD the agent reports for the call;
- ``summary``: the summary it reports (by default ``<its log line> -> <outcome>``);
- ``report``: more fields of its report; ``raw``: the text it writes as its report instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import forked
import pytest

AGENT = r'''
import json, os, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    kind = os.environ.get("SPECD_KIND", "")
    step = os.environ.get("SPECD_STEP", "")
    phase = os.environ.get("SPECD_PHASE", "")
    workflow = os.environ.get("SPECD_WORKFLOW", "")
    prompt = sys.stdin.read()
    task_dir = Path(os.environ.get("SPECD_TASK_DIR", "."))
    try:
        config = json.loads((task_dir / "config.json").read_text())
    except (OSError, ValueError):
        config = None
    line = " ".join(part for part in (kind, step, phase) if part)
    if kind == "hook":
        line += " @" + Path(workflow).stem
    record = {"line": line, "cwd": os.getcwd(), "prompt": prompt, "config": config,
              "env": {k: v for k, v in os.environ.items() if k.startswith("SPECD_")},
              "result_dir_exists": Path(os.environ.get("SPECD_RESULT", "/nonexistent/x")).parent.is_dir()}
    with open(HERE / "calls.jsonl", "a") as handle:
        handle.write(json.dumps(record) + "\n")
    with open(HERE / "log.txt", "a") as handle:
        handle.write(line + "\n")

    cues_path = HERE / "cues.json"
    cues = json.loads(cues_path.read_text()) if cues_path.exists() else {}
    key = next((k for k in (f"{kind}:{step}:{phase}", f"{kind}:{step}") if k in cues), None)
    rule = cues.get(key, {}) if key else {}
    counts_path = HERE / "counts.json"
    counts = json.loads(counts_path.read_text()) if counts_path.exists() else {}
    seen = counts.get(key or line, 0)
    counts[key or line] = seen + 1
    counts_path.write_text(json.dumps(counts))

    if "mkdir" in rule:
        (task_dir / rule["mkdir"]).mkdir(parents=True, exist_ok=True)
    if "hold" in rule:
        marker = HERE / f"held-{step}.json"
        tmp = marker.with_suffix(".tmp")
        # pid and pgid mean nothing outside specd's jail (a PID namespace); the run's owner mark does.
        tmp.write_text(json.dumps({"pid": os.getpid(), "pgid": os.getpgid(0),
                                   "mark": "SPECD_OWNER=" + os.environ.get("SPECD_OWNER", "")}))
        os.replace(tmp, marker)
        deadline = time.monotonic() + 30
        while not (HERE / rule["hold"]).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    if "exit" in rule:
        print(f"agent: failing on cue with status {rule['exit']}")
        sys.exit(rule["exit"])
    outcomes = rule.get("outcomes") or ["done"]
    outcome = outcomes[min(seen, len(outcomes) - 1)]
    result = os.environ.get("SPECD_RESULT")
    if result:
        report = {"outcome": outcome, "summary": rule.get("summary", f"{line} -> {outcome}")}
        if "cost" in rule:
            report["usage"] = {"cost_usd": rule["cost"]}
        report.update(rule.get("report", {}))
        Path(result).write_text(rule.get("raw", json.dumps(report)))


main()
'''

WORKFLOW = "---\ndescription: {description}\noutcomes: {outcomes}\n---\n\n# {title}\n\n{body}\n"
RUN_TIMEOUT = 60.0  # per specd invocation; a hang fails the test instead of the suite


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "proj"
        # Inside the project: a `run:` hook's jail has a private /tmp, and the project is all it may write.
        self.dir = self.root / ".harness"
        (self.root / ".specd").mkdir(parents=True)
        self.dir.mkdir()
        self.agent = self.dir / "agent.py"
        self.agent.write_text(AGENT, encoding="utf-8")
        self.log_path = self.dir / "log.txt"
        self.env = {**os.environ, "SPECD_HEARTBEAT_SECONDS": "0.2", "COLUMNS": "1000", "NO_COLOR": "1",
                    "TERM": "dumb"}
        self.env.pop("ANTHROPIC_API_KEY", None)
        self.children: list[subprocess.Popen[str]] = []

    # --- project files -------------------------------------------------------------------------
    def pipeline(self, pipelines: dict[str, Any], **top: Any) -> None:
        data = {"schema_version": "1.0", **top, "pipelines": pipelines}
        (self.root / ".specd" / "pipeline.json").write_text(json.dumps(data, indent=2), encoding="utf-8")

    def workflow(self, name: str, *, outcomes: tuple[str, ...] = ("done",), description: str = "",
                 body: str = "Do the work of this step.", folder: str = "workflows", extra: str = "") -> Path:
        path = self.root / ".specd" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = WORKFLOW.format(description=description or f"the {name} workflow", outcomes=json.dumps(list(outcomes)),
                               title=name, body=body)
        if extra:
            text = text.replace("---\n\n", f"{extra}\n---\n\n", 1)
        path.write_text(text, encoding="utf-8")
        return path

    def hook(self, name: str, body: str = "Check something around the step.") -> Path:
        return self.workflow(name, folder="hooks", body=body)

    def cues(self, **rules: dict[str, Any]) -> None:
        """``cues(**{"step:review": {"outcomes": ["revise", "approve"]}})``; also resets call counts."""
        (self.dir / "cues.json").write_text(json.dumps(rules), encoding="utf-8")
        (self.dir / "counts.json").unlink(missing_ok=True)

    def append_log(self, text: str) -> str:
        """A shell snippet for `run:` hooks that appends ``text`` to the agent's log."""
        return f"echo {shlex.quote(text)} >> {shlex.quote(str(self.log_path))}"

    # --- running specd -------------------------------------------------------------------------
    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "specd", "--project", str(self.root), *args]

    def agent_spec(self) -> str:
        return f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(self.agent))}"

    def specd(self, *args: str, input: str | None = None, timeout: float = RUN_TIMEOUT,
              cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return forked.run(self.argv(*args), input=input, env=self.env, cwd=cwd or self.root, timeout=timeout)

    def new(self, task: str) -> None:
        result = self.specd("new", task)
        assert result.returncode == 0, result.stderr

    def cont(self, task: str, mode: str = "--auto", input: str | None = None) -> subprocess.CompletedProcess[str]:
        return self.specd("continue", task, mode, "--agent", self.agent_spec(), input=input)

    def start(self, task: str, mode: str = "--auto") -> subprocess.Popen[str]:
        """`specd continue` in the background, in its own session so a signal reaches it alone."""
        proc = subprocess.Popen(self.argv("continue", task, mode, "--agent", self.agent_spec()),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env, cwd=self.root, start_new_session=True)
        self.children.append(proc)
        return proc

    def run_hint(self, text: str) -> subprocess.CompletedProcess[str]:
        """Run a hint specd printed exactly as a user pasting it would: a shell in the project, `specd` on PATH."""
        bin_dir = self.dir / "bin"
        if not bin_dir.exists():
            bin_dir.mkdir()
            shim = bin_dir / "specd"
            shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m specd \"$@\"\n", encoding="utf-8")
            shim.chmod(0o755)
        env = {**self.env, "PATH": f"{bin_dir}{os.pathsep}{self.env.get('PATH', '')}"}
        return subprocess.run(text, shell=True, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                              cwd=self.root, timeout=RUN_TIMEOUT, check=False)

    def status(self, task: str) -> dict[str, Any]:
        result = self.specd("status", task, "--json")
        assert result.returncode == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    # --- reading what happened -----------------------------------------------------------------
    def log(self) -> list[str]:
        if not self.log_path.exists():
            return []
        return self.log_path.read_text(encoding="utf-8").splitlines()

    def reset_log(self) -> None:
        self.log_path.unlink(missing_ok=True)
        (self.dir / "calls.jsonl").unlink(missing_ok=True)

    def calls(self) -> list[dict[str, Any]]:
        path = self.dir / "calls.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def task_dir(self, task: str) -> Path:
        return self.root / ".specd" / "tasks" / task

    def config(self, task: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.task_dir(task) / "config.json").read_text(encoding="utf-8"))
        return data

    def wait_held(self, step: str, proc: subprocess.Popen[str] | None = None,
                  deadline: float = 30.0) -> dict[str, int]:
        """Wait for the agent's marker saying it is holding inside ``step``; returns its pid and pgid."""
        marker = self.dir / f"held-{step}.json"
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if marker.exists():
                data: dict[str, int] = json.loads(marker.read_text(encoding="utf-8"))
                return data
            if proc is not None and proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"specd ended (code {proc.returncode}) before the agent held in {step}:\n{err}")
            time.sleep(0.05)
        pytest.fail(f"the agent never reached {step} within {deadline} s")

    def release(self, name: str) -> None:
        (self.dir / name).write_text("go", encoding="utf-8")

    def cleanup(self) -> None:
        for proc in self.children:
            if proc.poll() is None:
                kill_group(proc.pid)
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
                proc.communicate(timeout=10)
        for marker in self.dir.glob("held-*.json"):
            with contextlib.suppress(OSError, ValueError, KeyError):
                kill_group(json.loads(marker.read_text(encoding="utf-8"))["pgid"])


def printed_hint(stderr: str) -> str:
    """The `next: specd ...` command specd printed at the end of a run or when it refused to run."""
    found = re.findall(r"next: (specd [^\n]*?)(?:\s{3}\(see: .*)?$", stderr, flags=re.MULTILINE)
    assert found, f"no `next:` hint in:\n{stderr}"
    return str(found[-1]).strip()


def kill_group(pgid: int) -> None:
    # An agent in specd's jail reads its group inside a PID namespace (1, 2...): not a group out here, and
    # killpg(1) would be kill(-1), every process we may signal. The jail's processes die with specd anyway.
    if pgid <= 1:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def held_alive(held: dict[str, Any]) -> bool:
    """Is the agent that wrote a held-*.json marker (or anything it started) still running?"""
    return bool(marked_alive(held["mark"])) if held.get("mark", "=") != "SPECD_OWNER=" else group_alive(held["pgid"])


def marked_alive(marker: str) -> list[int]:
    """Live processes whose environment holds ``marker`` (``NAME=value``): found from outside any jail."""
    wanted = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if wanted in environ and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def wait_until(check: Callable[[], bool], deadline: float = 20.0) -> bool:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.05)
    return check()
