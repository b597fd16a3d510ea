"""`specd mcp` as a command: bad input is exit 2 with the fix (outside a project, without the SDK), and stdout
carries nothing but the protocol."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from mcp_harness import SAFETY, Project

WITHOUT_SDK = "import sys; sys.modules['mcp'] = None; from specd.cli import main; main(['mcp'])"


def test_outside_a_project_it_says_so(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "specd", "mcp"], cwd=tmp_path, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "not a specd project" in done.stderr, done.stderr
    assert "specd init" in done.stderr, done.stderr


def test_without_the_sdk_it_names_the_extra(tmp_path: Path) -> None:
    project = Project(tmp_path)
    done = subprocess.run([sys.executable, "-c", WITHOUT_SDK], cwd=project.root, capture_output=True, text=True,
                          env=project.env, stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "pip install 'specd-workflow[mcp]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_stdout_is_only_protocol_messages(tmp_path: Path) -> None:
    """A raw client: every line the server writes is one JSON-RPC message, warnings included (a task with a
    broken config.json makes the listing warn)."""
    project = Project(tmp_path)
    project.to_gate("waits")
    project.new("broken")
    (project.root / ".specd" / "tasks" / "broken" / "config.json").write_text("{not json", encoding="utf-8")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_tasks", "arguments": {}}},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "logs", "arguments": {"task": "waits"}}}]
    errors = (tmp_path / "stderr.txt").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "specd", "mcp"], cwd=project.root, env=project.env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors)
    net = threading.Timer(SAFETY, proc.kill)  # a server that never answers fails the test instead of hanging it
    net.start()
    try:
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines))
        proc.stdin.flush()
        out = "".join(proc.stdout.readline() for _ in range(3))  # stdin stays open until the answers are in
        proc.stdin.close()
        out += proc.stdout.read()  # to the end: the server exits once stdin closes
        proc.wait(timeout=SAFETY)
    finally:
        net.cancel()
        errors.close()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, (tmp_path / "stderr.txt").read_text())
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}  # a stray line fails here
    assert sorted(replies) == [1, 2, 3], done.stdout  # requests are served side by side: answers in any order
    listing = replies[2]["result"]["structuredContent"]
    assert {row["task"]: row["status"] for row in listing["tasks"]} == {"waits": "WAITING_FOR_HUMAN",
                                                                         "broken": "ERROR"}
    assert replies[3]["result"]["isError"] is False
    assert "Traceback" not in done.stderr, done.stderr
