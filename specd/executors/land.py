"""`specd land TASK`: a COMPLETE task's branch comes back to the user's branch as one merge commit.

Nothing changes unless everything can: the user's tree must be clean in every path the merge touches, and
the merge must be clean (``git merge-tree --write-tree`` tries it without touching any tree). The task's
worktree is removed afterwards; its branch stays, so the work can always be found again.
"""

from __future__ import annotations

from pathlib import Path

from specd.errors import UsageError
from specd.executors import worktrees
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
    touched = set(_out(project.root, "diff", "--name-only", "--no-renames", f"HEAD...{name}").splitlines())
    stale = _stale_task_copy(project, task, touched)
    dirty = sorted((_dirty(project.root) & touched) - stale)
    if dirty:
        raise UsageError(f"your tree has changes in paths that landing {task!r} would touch: {', '.join(dirty)}",
                         fix="commit or stash them, then land again")
    tried = git(project.root, "merge-tree", "--write-tree", "--name-only", "HEAD", name)
    if tried.returncode != 0:
        files = [line for line in tried.stdout.split("\n\n")[0].splitlines()[1:] if line]
        raise UsageError(f"merging {name} into {base} would conflict in {', '.join(files) or 'some files'}",
                         fix=f"see it with `git merge-tree --write-tree HEAD {name}`; merge by hand, or "
                             f"resolve it on the task's branch")
    for path in stale:  # the task folder as `specd new` made it: the branch holds its continuation
        (project.root / path).unlink()
    merged = git(project.root, *identity(project.root), "merge", "--no-ff", "--no-edit", "--quiet",
                 "-m", f"Merge {name}: land task {task}", name)
    if merged.returncode != 0:
        raise UsageError(f"`git merge --no-ff {name}` failed: {(merged.stderr or merged.stdout).strip()}",
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


def _stale_task_copy(project: Project, task: str, touched: set[str]) -> set[str]:
    """Untracked files of the task's own folder that the branch brings too (they would block git merge)."""
    folder = f"{project.tasks_dir.relative_to(project.root).as_posix()}/{task}/"
    listed = _out(project.root, "ls-files", "--others", "--exclude-standard", "--", folder)
    return {path for path in listed.splitlines() if path in touched}


def _dirty(root: Path) -> set[str]:
    out = git(root, "status", "--porcelain", "-z", "--untracked-files=all").stdout
    paths: set[str] = set()
    entries = iter(out.split("\0"))
    for entry in entries:
        if not entry:
            continue
        paths.add(entry[3:])
        if entry[0] in "RC":
            paths.add(next(entries, ""))  # a rename names its source as the next entry
    return paths



def _out(root: Path, *args: str) -> str:
    return git(root, *args).stdout.strip()
