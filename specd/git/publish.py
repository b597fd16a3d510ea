"""Each commit of a Temporal worker's run pushed as it is made (SPECD_GIT_PUSH=<remote>), only while the run still
holds its task, and only as a fast-forward of what the remote was last seen to hold.

SPECD_LEASE names a file the worker's activity keeps for this run: the time (seconds since the epoch) until
which the run may push. The activity renews it while its heartbeats go out on time, and never again once one came
late (a frozen machine, a stalled worker): by then Temporal may have given the step to another worker. A run
whose lease has lapsed pushes nothing and stops (``LeaseLapsed``) before its next step; its local commits are
never pushed later either, since a worker's clone always starts again from the remote's branch.

The push names the commit it expects the remote branch to hold (the remote-tracking ref, as this clone's last
fetch or push left it), and pushes only a commit that descends from it: should another attempt have pushed in
between, the remote refuses, and nothing is overwritten. No push here ever forces.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from specd.errors import EXIT_INTERRUPTED, SpecdError
from specd.git.repo import GitFailed, Repo, git

LEASE = "SPECD_LEASE"


class LeaseLapsed(SpecdError):
    """This run no longer holds its task: another attempt may run the step. Exits as an interrupted run does,
    so the worker runs the step again from the remote's branch (here or elsewhere)."""

    exit_code = EXIT_INTERRUPTED


def expires(path: Path) -> float:
    """When the lease in ``path`` ends; 0 when it was given up, or cannot be read."""
    try:
        return float(path.read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        return 0.0


def check() -> None:
    """Raise LeaseLapsed when this process runs under a lease (SPECD_LEASE) that has ended."""
    path = os.environ.get(LEASE)
    if path and time.time() >= expires(Path(path)):
        raise LeaseLapsed("this run's lease on its task lapsed (its worker's heartbeats stopped, so Temporal may "
                          "have given the step to another worker): nothing more is pushed",
                          fix="nothing to do: the worker that holds the task now goes on from the remote's branch")


def push(repo: Repo, remote: str) -> None:
    """Push HEAD's branch to ``remote`` under the lease, as a fast-forward of the remote-tracking ref."""
    check()
    branch = repo.run("symbolic-ref", "--quiet", "--short", "HEAD").strip()
    seen = git(repo.top, "rev-parse", "--verify", "--quiet", f"refs/remotes/{remote}/{branch}").stdout.strip()
    if not seen:  # never fetched from there: a plain push, which git refuses unless it fast-forwards
        repo.run("push", "--quiet", "--no-verify", remote, f"HEAD:refs/heads/{branch}")
        return
    if git(repo.top, "merge-base", "--is-ancestor", seen, "HEAD").returncode != 0:
        raise GitFailed(["push", remote, branch], f"HEAD does not descend from {remote}/{branch} ({seen[:12]}): "
                        "only a fast-forward of what the remote held is pushed")
    repo.run("push", "--quiet", "--no-verify", f"--force-with-lease=refs/heads/{branch}:{seen}", remote,
             f"HEAD:refs/heads/{branch}")
