"""One git worktree per task run by ``specd run``: ``.specd/worktrees/<task>/`` on branch ``specd/<task>``.

The worktree is a full checkout, so the task's agent, hooks and step commits happen there and never in the
user's tree, index or branch. It starts from the user's current HEAD with every needed task's branch merged in.

The task folder: when the base commit does not hold ``.specd/tasks/<task>/`` (a task created with `specd new`
and not committed yet, the usual case), it is copied from the user's tree into the worktree and committed on the
task branch as the branch's first commit, so the run's step commits hold only step work. The pipeline file,
hooks and workflows come from your HEAD: what it changed of them since the task's branch forked is brought onto
the branch before each run (``steering``), so commit them to have tasks run under them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from specd.errors import UsageError
from specd.executors import steering
from specd.git.paths import QUIET
from specd.git.repo import git, identity
from specd.system import buildcaches
from specd.tasks import home
from specd.tasks.locate import locate
from specd.tasks.project import Project

FOLDER = home.WORKTREES
# Files specd writes beside a task's state that are never copied (locks, heartbeats, scratch results).
TRANSIENT = ("*.lock", "*.lock.owner", ".heartbeat", ".result-*.json", ".tmp-*", "transcripts",
             ".cancel-requested", ".git-baseline.json", ".git-pending.json")


@dataclass(frozen=True)
class Conflict(Exception):
    """Merging a needed task's branch conflicts; nothing was changed (the merge was aborted)."""

    task: str
    need: str
    files: tuple[str, ...]
    command: str

    def __str__(self) -> str:
        return (f"merging {branch(self.need)} into {branch(self.task)} conflicts in {', '.join(self.files)}; "
                f"see it with `{self.command}`, resolve and commit there, then `specd run {self.task}`")


class WorktreeError(Exception):
    """git refused to create or update a worktree; the message quotes git."""


# `git worktree add` reads every other worktree's record (is the branch checked out there?), so two at once in one
# repository break each other ("failed to read .git/worktrees/t7/commondir", a worktree half made): tasks made
# side by side (place.py) take turns here, and only here; the threads of one run on this lock, the runs of one
# repository (two `specd run` at once) on a flock beside the worktrees.
_adding = threading.Lock()
ADDING = home.ADDING
ADD_WAIT = 120.0  # seconds for another run's `worktree add` to finish: one git call, unless the disk hangs


def branch(task: str) -> str:
    return f"specd/{task}"


def root_of(project: Project) -> Path:
    return project.specd_dir / FOLDER


def path_of(project: Project, task: str) -> Path:
    return root_of(project) / task


def task_project(project: Project, task: str) -> Project:
    """Where ``task`` runs: the tree its home record names (a worktree, or the user's tree)."""
    return locate(project, task)


def check(project: Project) -> None:
    """`specd run` needs a repository with a commit to branch from; say so before anything starts."""
    if git(project.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").returncode != 0:
        inside = git(project.root, "rev-parse", "--git-dir").returncode == 0
        raise UsageError(f"{project.root} {'has no commit yet' if inside else 'is not in a git repository'}: "
                         "`specd run` puts each task in a git worktree branched from your HEAD",
                         fix="commit once (`git add -A && git commit -m initial`)" if inside else
                         "`git init`, commit once, then `specd run` again (or run one task: `specd continue TASK`)")


@contextlib.contextmanager
def turn(project: Project) -> Iterator[None]:
    """This thread's turn, among every process of the repository, to add (or remove) a worktree."""
    from filelock import FileLock, Timeout

    with _adding:
        _ignore(project)
        try:
            with FileLock(str(root_of(project) / ADDING), timeout=ADD_WAIT, thread_local=False):
                yield
        except Timeout:
            raise WorktreeError(f"another process kept {project.rel(root_of(project) / ADDING)} for {ADD_WAIT:g} s: "
                                "a `git worktree` call of another specd that hangs?") from None


def remove(project: Project, tree: Path) -> str | None:
    """Remove the worktree at ``tree`` (its branch stays), in the repository's turn, and the build folders specd
    kept for it outside it (``buildcaches``); None when it is gone, else why not (what git said, or another
    process that keeps the turn)."""
    try:
        with turn(project):  # a run adding a worktree meanwhile would read this one's record half gone
            removed = git(project.root, "worktree", "remove", "--force", str(tree))
    except WorktreeError as exc:
        return str(exc)
    if removed.returncode != 0:
        return (removed.stderr or removed.stdout).strip() or "git worktree remove failed"
    buildcaches.forget(tree, os.environ)
    return None


def prepare(project: Project, task: str, needs: tuple[str, ...]) -> Path:
    """The task's worktree, created (or reused on resume) with every need's branch merged in. Only for a task this
    process has (``taken.take``): nothing here guards the worktree itself against another process."""
    tree = path_of(project, task)
    _ignore(project)
    fresh = False  # a branch made now from your HEAD: it has nothing of your HEAD to follow yet
    if not (tree / ".git").exists():
        with turn(project):
            fresh = _add(project, task, tree)
    if not _checked_out(tree):  # outside the turn: the files of twenty worktrees are written side by side
        _run(tree, "reset", "--hard", "--quiet", "--no-recurse-submodules")  # what `worktree add` runs itself
    for need in needs:
        _merge(project, tree, task, need)
    _bring_task_folder(project, tree, task)
    said = None if fresh else steering.follow_head(project.root, tree, branch(task))  # what your HEAD changed
    if said:
        print(f"note: {said}", file=sys.stderr, flush=True)  # the run re-plans, and says what changed
    return tree


def _add(project: Project, task: str, tree: Path) -> bool:
    """The worktree on a new branch from HEAD, its files not written yet (see ``_checked_out``): one git call in
    the usual case, since the tasks of a run take turns here. Only when that is refused is the cause looked for:
    the branch is there already (a run killed after making it), or git still lists a worktree whose folder was
    deleted. True when the branch was made now, from HEAD."""
    add = ["worktree", "add", "--quiet", "--no-checkout"]
    if git(project.root, *add, "-b", branch(task), str(tree), "HEAD").returncode == 0:
        return True
    _run(project.root, "worktree", "prune")
    exists = git(project.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch(task)}").returncode == 0
    _run(project.root, *add, *([str(tree), branch(task)] if exists else ["-b", branch(task), str(tree), "HEAD"]))
    return not exists


def _checked_out(tree: Path) -> bool:
    """Whether the worktree's files were written. git keeps a worktree's index from its first checkout on, and
    `worktree add --no-checkout` makes none: a worktree without one was made and not checked out yet (a run
    killed in between, as a kill inside git's own `worktree add` could leave one before)."""
    try:
        pointer = (tree / ".git").read_text(encoding="utf-8").strip()
    except OSError:  # a folder, not a worktree's pointer file: not one specd made
        return True
    if not pointer.startswith("gitdir:"):
        return True
    return (tree / pointer.removeprefix("gitdir:").strip() / "index").exists()  # an absolute path stays one


def unlanded(project: Project, needs: tuple[str, ...]) -> list[str]:
    """The needs whose work is on their branch and not in the user's tree (its HEAD has not merged it)."""
    return [need for need in needs
            if git(project.root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch(need)}").returncode == 0
            and git(project.root, "merge-base", "--is-ancestor", branch(need), "HEAD").returncode != 0]


def _merge(project: Project, tree: Path, task: str, need: str) -> None:
    if git(tree, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch(need)}").returncode != 0:
        return  # the need finished in the user's own tree (`specd continue`): its work is on the base already
    if git(tree, "merge-base", "--is-ancestor", branch(need), "HEAD").returncode == 0:
        return  # merged before (a resumed run), or nothing new
    merged = git(tree, *identity(tree), "merge", "--no-edit", "--quiet", branch(need))
    if merged.returncode == 0:
        return
    files = tuple(git(tree, "diff", "--name-only", "--diff-filter=U").stdout.split())
    git(tree, "merge", "--abort")
    if not files:
        raise WorktreeError(f"`git merge {branch(need)}` in {project.rel(tree)} failed: "
                            f"{(merged.stderr or merged.stdout).strip()}")
    raise Conflict(task, need, files, f"git -C {project.rel(tree)} merge {branch(need)}")


def _bring_task_folder(project: Project, tree: Path, task: str) -> None:
    rel = project.tasks_dir.relative_to(project.root) / task
    source, target = project.root / rel, tree / rel
    if target.is_dir() or not source.is_dir():
        return
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*TRANSIENT))
    _run(tree, "add", "--", str(rel))
    # No automatic maintenance (a process of its own after the commit); the identity is asked for only when
    # git refuses to commit for want of one, which is when `identity` gives the fallback.
    commit = [*QUIET, "commit", "--quiet", "--no-verify", "-m", f"specd: task folder of {task}", "--", str(rel)]
    if git(tree, *commit).returncode != 0:
        _run(tree, *identity(tree), *commit)


def _ignore(project: Project) -> None:
    # Repositories set up before `specd run` existed have no `worktrees/` line in .specd/.gitignore.
    folder = root_of(project)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ".gitignore"
    if not marker.exists():
        marker.write_text("*\n", encoding="utf-8")



def _run(where: Path, *args: str) -> str:
    done = git(where, *args)
    if done.returncode != 0:
        raise WorktreeError(f"`git {' '.join(args)}` failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout
