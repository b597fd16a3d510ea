"""With a control plane running (`specd serve`), `specd mcp` hands every start to it, as the page's buttons do:
an answer is picked up by the plane, and continue_task and run_task ask it over its JSON API."""

from __future__ import annotations

import http.client
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from mcp_harness import SAFETY, Mcp, Project

from specd.executors import claim
from specd.tasks.project import Project as SpecdProject


def test_the_control_plane_runs_what_mcp_answers_and_asks_for(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.to_gate("waits")
    project.new("fresh")
    plane = subprocess.Popen([sys.executable, "-m", "specd", "serve", "--port", "0"], cwd=project.root,
                             env=project.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert plane.stdout is not None
        assert plane.stdout.readline().startswith("http://")  # serving: its record names the address
        with Mcp(project) as client:
            answered = client.ok("approve", task="waits", note="go")
            assert "control plane" in answered["next"], answered
            assert "serve" in answered["next"], answered
            asked = client.ok("continue_task", task="fresh")
            assert "asked the control plane" in asked["said"], asked
            client.until(lambda: client.status("waits") == "COMPLETE", "the plane runs the approved task")
            # the plane runs `fresh` in its own worktree, in the pipeline's interactive mode: a gate before s1
            client.until(lambda: client.status("fresh") in ("WAITING_FOR_HUMAN", "COMPLETE"), "the plane runs fresh")
            fresh = client.ok("show_task", task="fresh")
            # The plane says "running already" until it has reaped the run it started, a moment after the run
            # let go of the task; then its refusal says why there is nothing to run.
            said: list[str] = []

            def settled() -> bool:
                said.append(client.refused("continue_task", task="waits")[0])
                return "running already" not in said[-1]

            client.until(settled, "the plane has reaped the finished run")
            twice = said[-1]
            cancel = _post(project, "/api/tasks/waits/cancel")  # the API serves answers and asks, nothing else
    finally:
        plane.send_signal(signal.SIGINT)
        _, err = plane.communicate(timeout=SAFETY)
    assert project.ran("waits") == ["s1", "s2"]
    assert fresh["branch"] == "specd/fresh", fresh  # run in its own worktree, as the page's Run does
    assert "COMPLETE" in twice, twice
    assert "rerun" in twice, twice  # the plane's own refusal, with its fix
    assert cancel == 404
    assert "Traceback" not in err


def _post(project: Project, path: str) -> int:
    """The status of a POST to the control plane's API, with the token the user's state folder holds for it."""
    plane = claim.running(SpecdProject(project.root))
    assert plane is not None
    parts = urlsplit(plane.url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=SAFETY)
    connection.request("POST", path, body=b"{}", headers={
        "Authorization": f"Bearer {parts.query.removeprefix('token=')}", "Content-Type": "application/json"})
    return connection.getresponse().status
