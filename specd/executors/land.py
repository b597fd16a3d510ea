"""`specd land TASK`: a COMPLETE task's branch comes back to the user's branch as one merge commit.

Nothing changes unless everything can: the merge must be clean (``git merge-tree --write-tree`` tries it
without touching any tree), and no file of the user's may be in a path it writes: not a changed tracked
file, not an untracked one, and not an ignored one either, which `git merge` would overwrite without a
word (see ``specd.git.overwrite``). The task's worktree is removed afterwards; its branch stays, so the
work can always be found again.
"""

from __future__ import annotations

from pathlib import Path

from specd.errors import UsageError
from specd.executors import worktrees
from specd.git.overwrite import in_the_way, refusal
from specd.git.repo import git, identity
from specd.tasks import home
from specd.tasks.project import Project
from specd.tasks.status import task_status


def land(project: Project, task: str) -> list[str]:
    """Merge ``specd/<task>`` into the checked-out branch; the lines to report."""
    name = worktrees.branch(task)
    if git(project.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}").returncode != 0:
        raise UsageError(f"task {task!r} has no branch {name}", fix=f"run it first: `specd run {task}`")
    status = task_status(worktrees.task_project(project, task), task, listing=True)["status"]
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
    done = git(project.root, *identity(project.root), "merge", "--no-ff", "--no-edit", "--quiet",
               "-m", f"Merge {name}: land task {task}", name)
    if done.returncode != 0:
        raise UsageError(f"`git merge --no-ff {name}` failed: {(done.stderr or done.stdout).strip()}",
                         fix="see `git status`")
    report = [f"landed {task}: {name} merged into {base}"]
    home.move(project, task, home.Home("main"))  # its work is here now: the next verb finds it here, not there
    tree = worktrees.path_of(project, task)
    if (tree / ".git").exists():
        removed = git(project.root, "worktree", "remove", "--force", str(tree))
        report.append(f"removed its worktree {project.rel(tree)}" if removed.returncode == 0 else
                      f"warning: could not remove {project.rel(tree)}: {removed.stderr.strip()}")
    report.append(f"the branch {name} is kept")
    return report


def _stale_task_copy(project: Project, task: str, merged: str) -> set[str]:
    """Untracked files of the task's own folder that the branch brings too (they would block git merge)."""
    folder = f"{project.tasks_dir.relative_to(project.root).as_posix()}/{task}/"
    listed = git(project.root, "ls-files", "-z", "--full-name", "--others", "--exclude-standard", "--",
                 folder).stdout.split("\0")
    brought = git(project.root, "diff", "-z", "--name-only", "--no-renames", "HEAD", merged, "--", folder).stdout
    return set(listed) & set(brought.split("\0")) - {""}


def _out(root: Path, *args: str) -> str:
    return git(root, *args).stdout.strip()
