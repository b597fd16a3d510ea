"""`specd land TASK`: a COMPLETE task's branch comes back to the user's branch as one merge commit.

Nothing changes unless everything can: the merge must be clean (``git merge-tree --write-tree`` tries it
without touching any tree), and no file of the user's may be in a path it writes: not a changed tracked
file, not an untracked one, and not an ignored one either, which `git merge` would overwrite without a
word (see ``specd.git.overwrite``). The task's worktree is removed afterwards; its branch stays, so the
work can always be found again.

Landing is explicit: a task lands alone, and is refused while a task it needs has work not landed yet (its
branch holds theirs, so landing it would land them without a word); ``with_deps`` lands those first, in
order. A task already landed says so and merges nothing. The merge is made as a commit of the merged tree and
your tree moved to it (``read-tree -m -u``), so a change of yours at a path the merge does not write (a staged
file, say) stays as it is, where `git merge` would refuse.
"""

from __future__ import annotations

import json
from pathlib import Path

from specd.errors import UsageError
from specd.executors import worktrees
from specd.git.overwrite import in_the_way, refusal
from specd.git.repo import git, identity
from specd.tasks import graph as graphs
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.status import task_status


def land(project: Project, task: str, with_deps: bool = False) -> list[str]:
    """Merge ``specd/<task>`` (and, ``with_deps``, the unlanded tasks it needs first) into the checked-out
    branch; the lines to report."""
    name = worktrees.branch(task)
    for each in graphs.closure(graphs.load(project), [task]):
        _from_temporal(project, each)
    if not _has_branch(project, name):
        raise UsageError(f"task {task!r} has no branch {name}", fix=f"run it first: `specd run {task}`")
    if _landed(project, name):
        return [f"{task} is already landed: {name} is part of your branch; nothing merged",
                *_remove_worktree(project, task)]
    needs = [need for need in graphs.closure(graphs.load(project), [task])
             if need != task and _has_branch(project, worktrees.branch(need))
             and not _landed(project, worktrees.branch(need))]
    if needs and not with_deps:
        raise UsageError(f"task {task!r} needs {', '.join(needs)}, whose work is not landed yet; landing "
                         f"{task} would land {'it' if len(needs) == 1 else 'them'} too",
                         fix=f"land {'it' if len(needs) == 1 else 'them'} first (`specd land {needs[0]}`), or "
                             f"`specd land {task} --with-deps` lands {', '.join(needs)} and {task} in order")
    report = [line for need in needs for line in _land_one(project, need)]
    return report + _land_one(project, task)


def _land_one(project: Project, task: str) -> list[str]:
    name = worktrees.branch(task)
    status = (_branch_status(project, name, task) if _on_temporal(project, task)
              else task_status(worktrees.task_project(project, task), task, listing=True)["status"])
    if status != "COMPLETE":
        raise UsageError(f"task {task!r} is {status}, not COMPLETE; only finished work is landed",
                         fix=f"finish it: `specd run {task}` (see `specd status {task}`)")
    base = _out(project.root, "symbolic-ref", "--quiet", "--short", "HEAD")
    if not base:
        raise UsageError("your tree has no branch checked out (detached HEAD)", fix="`git switch <branch>` first")
    tried = git(project.root, "merge-tree", "--write-tree", "--name-only", "HEAD", name)
    if tried.returncode != 0:
        files = [line for line in tried.stdout.split("\n\n")[0].splitlines()[1:] if line]
        raise UsageError(f"merging {name} into {base} would conflict in {', '.join(files) or 'some files'}",
                         fix=f"see it with `git merge-tree --write-tree HEAD {name}`; merge by hand, or "
                             f"resolve it on the task's branch")
    merged = tried.stdout.split("\n", 1)[0].strip()  # the merged tree: what the merge would leave in your tree
    top = Path(_out(project.root, "rev-parse", "--show-toplevel"))  # git names paths from here
    stale = _stale_task_copy(project, task, merged)
    mine = in_the_way(top, merged, stale)
    if mine:
        raise UsageError(f"landing {task!r} would overwrite files of yours that are not committed: {refusal(mine)}",
                         fix="commit or stash your changes, and move each file git does not track (an ignored "
                             "one included) out of the way, then land again")
    for path in stale:  # the task folder as `specd new` made it: the branch holds its continuation
        (top / path).unlink()
    _merge(project, merged, name, f"Merge {name}: land task {task}")
    report = [f"landed {task}: {name} merged into {base}"]
    home.move(project, task, home.Home("main"))  # its work is here now: the next verb finds it here, not there
    return [*report, *_remove_worktree(project, task), f"the branch {name} is kept"]


def _merge(project: Project, merged: str, name: str, message: str) -> None:
    """The merge commit of ``merged`` (HEAD and ``name`` its parents), your tree and index moved to it path by
    path: what the merge does not write stays as you left it, staged or not."""
    old = _out(project.root, "rev-parse", "HEAD")
    made = git(project.root, *identity(project.root), "commit-tree", merged, "-p", old, "-p", name, "-m", message)
    moved = made if made.returncode != 0 else git(project.root, "read-tree", "-m", "-u", old, made.stdout.strip())
    if moved.returncode == 0:
        moved = git(project.root, "update-ref", "-m", message, "HEAD", made.stdout.strip(), old)
    if moved.returncode != 0:
        raise UsageError(f"merging {name} failed: {(moved.stderr or moved.stdout).strip()}", fix="see `git status`")


def _on_temporal(project: Project, task: str) -> bool:
    from specd.executors.temporal import record

    return record.on_temporal(project, task)


def _from_temporal(project: Project, task: str) -> None:
    """A task that lives on Temporal: its branch fetched from the remote its workers push to, into specd/<task>
    here, which it replaces (the workers' branch is the task's truth; this clone's copy never ran)."""
    if not _on_temporal(project, task):
        return
    from specd.executors.temporal import record

    remote, name = record.where(project, task).get("remote") or "origin", worktrees.branch(task)
    fetched = git(project.root, "fetch", "--quiet", remote, f"+refs/heads/{name}:refs/heads/{name}")
    if fetched.returncode != 0:
        raise UsageError(f"task {task!r} runs on Temporal, and its branch {name} could not be fetched from {remote}: "
                         f"{(fetched.stderr or fetched.stdout).strip()}",
                         fix=f"check that {remote} is reachable and that `specd status {task}` shows it COMPLETE")


def _branch_status(project: Project, name: str, task: str) -> str:
    """The status the run state on the task's branch holds (a task its workers ran: no copy here says it)."""
    folder = project.tasks_dir.relative_to(project.root).as_posix()
    shown = git(project.root, "show", f"{name}:{folder}/{task}/.pipeline-state.json")
    try:
        state = json.loads(shown.stdout) if shown.returncode == 0 else {}
    except (ValueError, RecursionError):
        state = {}
    return str(state.get("status") or "NOT_STARTED") if isinstance(state, dict) else "NOT_STARTED"


def _has_branch(project: Project, name: str) -> bool:
    return git(project.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}").returncode == 0


def _landed(project: Project, name: str) -> bool:
    """The task's branch is already part of the checked-out branch (landed before, or merged by hand)."""
    return git(project.root, "merge-base", "--is-ancestor", name, "HEAD").returncode == 0


def _remove_worktree(project: Project, task: str) -> list[str]:
    tree = worktrees.path_of(project, task)
    if not (tree / ".git").exists():
        return []
    failed = worktrees.remove(project, tree)
    return [f"warning: could not remove {project.rel(tree)}: {failed}" if failed else
            f"removed its worktree {project.rel(tree)}"]


def _stale_task_copy(project: Project, task: str, merged: str) -> set[str]:
    """Untracked files of the task's own folder that the branch brings too (they would block git merge)."""
    folder = f"{project.tasks_dir.relative_to(project.root).as_posix()}/{task}/"
    listed = git(project.root, "ls-files", "-z", "--full-name", "--others", "--exclude-standard", "--",
                 folder).stdout.split("\0")
    brought = git(project.root, "diff", "-z", "--name-only", "--no-renames", "HEAD", merged, "--", folder).stdout
    return set(listed) & set(brought.split("\0")) - {""}


def _out(root: Path, *args: str) -> str:
    return git(root, *args).stdout.strip()
