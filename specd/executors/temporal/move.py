"""Moving a task from Temporal to this machine, on purpose: `specd run TASK --move`. One copy before the move and
one after, its history kept: no step it finished runs again.

A task whose workflow ended (cancel it first): the branch its workers pushed is fetched into specd/TASK (a branch
of that name here must be part of it: nothing of this clone's is dropped) and checked out in the task's worktree,
which becomes its home. `specd continue` and `specd run` go on after its last finished step; a task that ended
CANCELLED stays CANCELLED, and `specd rerun TASK --from STEP` goes on from a step.
"""

from __future__ import annotations

import os

from specd.errors import TaskError
from specd.executors import worktrees
from specd.executors.temporal.ids import branch
from specd.executors.temporal.pushed import ref as fetched_ref
from specd.executors.temporal.seed import RemoteError, git_said
from specd.git.repo import git
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.status import task_status


def come_here(project: Project, task: str, remote: str) -> str:
    """The branch its workers pushed, fetched into specd/TASK and checked out in the task's worktree, its home from
    now on. The caller checked that its workflow no longer runs."""
    name, tree = branch(task), worktrees.path_of(project, task)
    if os.path.lexists(tree):
        raise TaskError(f"{project.rel(tree)} is in the way of task {task!r}'s worktree (left by a move that "
                        "stopped half way?)",
                        fix=f"`git worktree remove --force {project.rel(tree)}` (its branch {name} stays), then "
                            f"`specd run {task} --move` again")
    got = git(project.root, "fetch", "--quiet", remote, f"+refs/heads/{name}:{fetched_ref(task)}")
    if got.returncode != 0:
        raise RemoteError(f"cannot fetch {name} of task {task!r} from {remote!r}: {git_said(got, 'git fetch failed')}",
                          fix=f"check that {remote} is reachable and has {name} (`git ls-remote {remote} {name}`)")
    tip = git(project.root, "rev-parse", "--verify", fetched_ref(task)).stdout.strip()
    mine = git(project.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}").stdout.strip()
    if mine and git(project.root, "merge-base", "--is-ancestor", mine, tip).returncode != 0:
        raise TaskError(f"this clone's branch {name} holds commits that the branch task {task!r}'s workers pushed "
                        "does not; bringing theirs here would drop them",
                        fix=f"keep yours under another name (`git branch -m {name} {name}-mine`), then `specd run "
                            f"{task} --move` again")
    moved = git(project.root, "update-ref", "-m", f"specd: {task} moved here from Temporal", f"refs/heads/{name}",
                tip, mine)
    if moved.returncode != 0:
        raise TaskError(f"cannot point {name} at what its workers pushed: {git_said(moved, 'git update-ref failed')}",
                        fix=f"see `git branch --list {name}`, then `specd run {task} --move` again")
    try:
        worktrees.prepare(project, task, ())
    except worktrees.WorktreeError as exc:
        raise TaskError(f"cannot make task {task!r}'s worktree {project.rel(tree)}: {exc}",
                        fix=f"see `git worktree list`, then `specd run {task} --move` again") from None
    home.move(project, task, home.worktree(task))  # made: every verb finds it there from now on
    return (f"moved {task} here from Temporal: {name} as its workers pushed it to {remote}, in its worktree "
            f"{project.rel(tree)}; the steps it finished there do not run again{_then(Project(tree), task)}")


def _then(tree: Project, task: str) -> str:
    """What goes on with a task that ended there: the step a cancel stopped, or the failed one."""
    view = task_status(tree, task)
    if view["status"] == "FAILED":
        return f"; it ended FAILED there: `specd retry {task}` runs its failed step again"
    if view["status"] != "CANCELLED":
        return ""
    stopped = [row for row in view.get("checkpoints") or [] if row.get("answer") == "cancel" and row.get("step")]
    if not stopped:
        return f"; it ended CANCELLED there: `specd rerun {task} --from STEP` goes on from a step"
    step, phase = stopped[-1]["step"], stopped[-1].get("phase")
    return (f"; it ended CANCELLED at {step}: `specd rerun {task} --from {step}"
            f"{f' --phase {phase}' if phase else ''}` goes on from there")
