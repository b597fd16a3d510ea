"""Starting a task from MCP without running it inside the server: the control plane, else a background process.

An MCP request must answer in seconds, and a step can take an hour. So a start is handed on: to the project's
control plane (`specd ui`, `specd serve`) when one runs, asked over its JSON API exactly as the page's Run and
Continue buttons ask it; else to a `specd continue TASK` (or `specd run TASK`) started in its own session,
which outlives the MCP server and records everything in the task's journal as any run does.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

from specd.errors import UsageError
from specd.errors import said as printed_error
from specd.executors import claim
from specd.executors.child import EXIT_STATUS
from specd.executors.plane import READY, fix_for
from specd.tasks.locate import locate
from specd.tasks.project import Project
from specd.tasks.status import task_status

VERBS = ("continue", "run")
EARLY = 2.0  # seconds to see a background run refuse at once (bad input), as the plane waits for its child


def start(project: Project, task: str, verb: str) -> str:
    """Hand ``task`` on to be run; returns what was done, for the tool's result."""
    plane = claim.running(project)
    if plane is not None and plane.url:
        from specd.commands import remote  # the same request `specd approve --server URL` sends

        said, _ = remote.answer(plane.url, task, verb, "", project.root)
        return f"asked the control plane {plane.text()}: {said}"
    ready(project, task)
    return background(project, task, verb)


def ready(project: Project, task: str) -> None:
    """Refuse, with the fix, a start that would do nothing: the same rule the control plane's ``ask`` keeps."""
    view = task_status(locate(project, task), task, listing=True)
    status = str(view["status"])
    if view.get("running"):
        raise UsageError(f"task {task!r} is running already",
                         fix=f"follow it with the logs tool (or `specd logs {task} -f`)")
    if status not in READY and view.get("idle") is None:
        raise UsageError(f"task {task!r} is {status}, so there is nothing to run", fix=fix_for(task, status))


def background(project: Project, task: str, verb: str) -> str:
    """`specd continue TASK` (or `specd run TASK`) in a session of its own, with the run's saved agent and mode."""
    argv = [sys.executable, "-m", "specd", "--project", str(project.root), verb, task]
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(argv, cwd=project.root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=errors, start_new_session=True)
        try:
            code = proc.wait(timeout=EARLY)
        except subprocess.TimeoutExpired:
            return (f"no control plane runs for this project, so `specd {verb} {task}` was started in the background "
                    f"(pid {proc.pid}); follow it with the show_task and logs tools")
        errors.seek(0)
        printed = printed_error(errors.read().decode("utf-8", "replace"))
    if code == 2:
        raise UsageError(f"`specd {verb} {task}` refused: {printed or 'bad input'}",
                         fix=f"see `specd {verb} {task}` in a terminal")
    status = EXIT_STATUS.get(code, f"exit {code}")
    return f"no control plane runs, so `specd {verb} {task}` ran in the background and stopped at once: {status}"
