"""Moving a task between this machine and Temporal, on purpose: `specd run TASK --move`. One copy before the move
and one after, its history kept: no step it finished runs again.

To Temporal (`specd run TASK --executor temporal --move`): a task that lives in the main tree or in its worktree,
stopped (its lock is held for the move, so no run starts meanwhile), not ended, with its folder committed. The
commit that holds it (the main tree's HEAD, or its worktree's branch) is pushed as its branch, only as a fast
forward of what the remote's branch holds; its workflow goes on from the state there, and its home becomes the
workflow. A worktree is removed once its workflow runs (its branch stays), as landing does.

Here (`specd run TASK --move`): a task whose workflow ended (cancel it first). The branch its workers pushed is
fetched into specd/TASK (a branch of that name here must be part of it: nothing of this clone's is dropped) and
checked out in the task's worktree, which becomes its home. `specd continue` and `specd run` go on after its last
finished step; a task that ended CANCELLED stays CANCELLED, and `specd rerun TASK --from STEP` goes on from a step.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from dataclasses import dataclass

from specd.errors import TaskError
from specd.executors import worktrees
from specd.executors.temporal.ids import branch
from specd.executors.temporal.pushed import ref as fetched_ref
from specd.executors.temporal.seed import RemoteError, git_said
from specd.git.repo import git
from specd.state.lock import TaskLock
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.status import FINAL, task_status


@dataclass(frozen=True)
class Leaving:
    """A task on its way to Temporal: where it lived, and the commit to push (None: it never ran here, so its
    branch starts as any new task's does, from ``seed``)."""

    task: str
    home: home.Home
    commit: str | None


def leaving(project: Project, task: str, found: home.Home, hold: contextlib.ExitStack) -> Leaving:
    """Check that ``task`` (living here, at ``found``) may move to Temporal; its lock is held in ``hold`` from now
    on, so no run here starts before its home has moved."""
    tree = home.project_of(project, task, found)
    if found.kind == "worktree" and tree == project:
        raise TaskError(f"task {task!r} has no run in its worktree {found.path} yet (making it stopped half way)",
                        fix=f"`specd run {task}` makes it and runs it here; move it once it ran")
    folder = tree.tasks_dir / task
    hold.enter_context(TaskLock(folder, task))  # refused, naming the pid, while a run here holds it
    if not (folder / home.STATE).is_file() and found.kind == "main":
        return Leaving(task, found, None)  # never ran: its folder goes as `specd new` left it
    status = str(task_status(tree, task)["status"])
    if status in FINAL:
        raise TaskError(f"task {task!r} is {status} here, so there is nothing to move to Temporal", fix={
            "CANCELLED": f"`specd rerun {task} --from STEP` starts it again here; it can move once that run stops",
            "FAILED": f"`specd retry {task}` runs its failed step again here; it can move once that run stops",
        }.get(status, f"it is done: `specd land {task}` brings its work into your branch if it ran in its worktree"))
    where = folder.relative_to(tree.root).as_posix() if found.kind == "main" else "."
    changed = git(tree.root, "status", "--porcelain", "--untracked-files=all", "--", where)
    if changed.returncode != 0 or changed.stdout.strip():
        paths = [line[3:] for line in changed.stdout.splitlines()][:5] or [git_said(changed, "git status failed")]
        there = shlex.quote(str(found.path))
        inside, commit = ("", f"git add -A {where} && git commit -m 'notes of {task}'") if found.kind == "main" else \
            (f" in {found.path}", f"git -C {there} add -A && git -C {there} commit -m 'work of {task}'")
        raise TaskError(f"task {task!r} has changes{inside} that are not committed ({', '.join(paths)}); its "
                        "branch on Temporal would not hold them", fix=f"commit them (`{commit}`), then move it again")
    head = git(tree.root, "rev-parse", "--verify", "HEAD^{commit}")
    return Leaving(task, found, head.stdout.strip())


def push(project: Project, remote: str, going: Leaving) -> None:
    """The task's commit pushed as its branch: a fast forward of what the remote holds, or refused, naming it."""
    assert going.commit is not None
    name = branch(going.task)
    said = git(project.root, "ls-remote", "--heads", remote, f"refs/heads/{name}")
    there = said.stdout.split("\t", 1)[0].strip() if said.returncode == 0 else ""
    if there and there != going.commit and git(project.root, "merge-base", "--is-ancestor", there,
                                               going.commit).returncode != 0:
        raise RemoteError(f"{remote!r} has a branch {name} that task {going.task!r} here does not build on (another "
                          "copy of the task, run on Temporal before?); moving it would drop that one",
                          fix=f"look at it (`git fetch {remote} {name} && git log FETCH_HEAD`); if it is not wanted, "
                              f"`git push {remote} --delete {name}`, then move the task again")
    done = git(project.root, "push", "--quiet", "--no-verify", remote, f"{going.commit}:refs/heads/{name}")
    if done.returncode != 0:
        raise RemoteError(f"cannot push {name} to {remote!r}: {git_said(done, 'git push failed')}",
                          fix="check that this clone may push to the remote (`git push --dry-run "
                              f"{remote} HEAD:refs/heads/specd-check`), then move the task again")


def arrived(project: Project, going: Leaving, address: str, workflow: str) -> list[str]:
    """Its workflow runs: its home is the workflow now, and a worktree it lived in is removed (its branch stays)."""
    home.move(project, going.task, home.Home("temporal", address=address, workflow_id=workflow))
    if going.home.kind != "worktree":
        return []
    failed = worktrees.remove(project, project.root / going.home.path)
    return [f"warning: could not remove {going.home.path}: {failed}" if failed else
            f"removed its worktree {going.home.path} (branch {going.home.branch} stays)"]


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
