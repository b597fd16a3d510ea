"""Where each task lives, recorded once in the main tree: ``.specd/homes/<task>.json``.

A task used to be found by guessing: `specd continue` ran it in the user's tree, `specd run` in a worktree, and
each verb looked for itself. A task answered in one place was then run again from its start in the other: two
copies, diverging, an answer lost. So the first run records the task's home (``main``: the main tree;
``worktree``: its path and branch; ``temporal``: the server's address and the workflow id) and every verb, the
page included, resolves the task through that record. A record also says which process runs the task now.

Records are never committed (``homes/`` is in ``.specd/.gitignore``): they describe this clone's trees.
A task from before the records existed is placed by what is on disk; found in both places, it is refused. A task
with no record and no run here that this clone submitted to Temporal (``submitted.py``) is its workflow's: its
history is on the branch its workers push, and a first run here would start it again from its first step.
Moving a task between this machine and Temporal is `specd run TASK --move` (``executors/temporal/move.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.state import atomic
from specd.state.model import now
from specd.system.ownfiles import walk
from specd.tasks import submitted
from specd.tasks.project import SPECD_DIR, Project

FOLDER = "homes"
WORKTREES = "worktrees"  # the folder `specd run` makes each task's worktree in (executors/worktrees.py)
ADDING = ".adding.lock"  # in that folder: held while a `specd run` adds a worktree (``worktrees.turn``)
KINDS = ("main", "worktree", "temporal")
STATE = ".pipeline-state.json"  # a run started in that tree (state/store.py's snapshot)
# Set by a control plane for the runs it starts (executors/claim.py): "<pid> <started>", which no later plane shares.
PLANE_ENV = "SPECD_CONTROL_PLANE"


@dataclass(frozen=True)
class Home:
    kind: str  # one of KINDS
    path: str = ""  # worktree: its folder, relative to the main tree's root
    branch: str = ""  # worktree: specd/<task>
    address: str = ""  # temporal: host:port of the server
    workflow_id: str = ""  # temporal
    pid: int | None = None  # the process running the task now, if any
    started: str = ""  # when that process took it
    plane: str = ""  # the control plane that started that process (``PLANE_ENV``), if one did


class TwoCopies(TaskError):
    """The task has a run in the main tree and a worktree of its own; picking one would lose the other."""


class WorktreeGone(TaskError):
    """The task's recorded worktree is not there (removed, or a kill came between the record and its making)."""


def main_of(project: Project) -> Project:
    """The main tree of ``project``: itself, or the tree holding it when it is a task's worktree."""
    root = project.root
    if root.parent.name == WORKTREES and root.parent.parent.name == SPECD_DIR:
        return Project(root.parents[2])
    return project


def worktree(task: str) -> Home:
    return Home("worktree", path=f"{SPECD_DIR}/{WORKTREES}/{task}", branch=f"specd/{task}")


def read(main: Project, task: str) -> Home | None:
    path = record(main, task)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise TaskError(f"{path}: cannot read where task {task!r} lives ({exc})",
                        fix=f"delete {path}; the next run records it again") from None
    names = {f for f in Home.__dataclass_fields__}
    if not isinstance(data, dict) or data.get("kind") not in KINDS or not set(data) <= names:
        raise TaskError(f"{path}: not a task home record (kind must be one of {', '.join(KINDS)})",
                        fix=f"delete {path}; the next run records it again")
    found = Home(**data)
    if found.kind == "worktree" and (found.path, found.branch) != (worktree(task).path, worktree(task).branch):
        # only specd's own folder for the task: a record naming another place would run the task there
        raise TaskError(f"{path}: task {task!r} is recorded in {found.path!r} on {found.branch!r}; specd puts a "
                        f"task's worktree only at {worktree(task).path} on {worktree(task).branch}",
                        fix=f"delete {path}; the next run records it again")
    return found


def infer(main: Project, task: str) -> Home | None:
    """A task with no record, placed by what is on disk: its worktree, a run in the main tree, or this clone's
    record of what it submitted to Temporal (None: it never ran anywhere)."""
    away = worktree(task)
    in_tree = (main.root / away.path / SPECD_DIR / "tasks" / task / "config.json").is_file()
    ran_here = (main.tasks_dir / task / STATE).is_file()
    if in_tree and ran_here:
        state = main.rel(main.tasks_dir / task / STATE)
        raise TwoCopies(
            f"task {task!r} exists twice: a run in the main tree ({state}) and its worktree {away.path} "
            f"(branch {away.branch}); specd will not pick one and lose the other",
            fix=f"keep the main tree's: `git worktree remove --force {away.path}` (branch {away.branch} stays); "
                f"or keep the worktree's: `rm {main.rel(main.tasks_dir / task)}/.pipeline-state.*` (the main "
                "tree's run); then run the command again")
    if in_tree:
        return away
    if ran_here:
        return Home("main")
    sent = submitted.where(main, task)  # its record deleted, or submitted by a specd from before homes
    return Home("temporal", address=str(sent.get("address") or ""), workflow_id=str(sent.get("workflow_id") or "")
                ) if sent else None


def current(main: Project, task: str) -> Home:
    """The recorded home, else the inferred one, else the main tree (where a task that never ran is)."""
    return read(main, task) or infer(main, task) or Home("main")


def project_of(main: Project, task: str, home: Home) -> Project:
    """The project a verb acts on for ``home``: the main tree, or the worktree (a full checkout)."""
    if home.kind != "worktree":
        return main  # temporal: the answers go by signal; here are the seeds and records
    tree = main.root / home.path
    if (tree / SPECD_DIR / "tasks" / task / "config.json").is_file():
        return Project(tree)
    if (tree / ".git").exists():
        return main  # the worktree was made but the task's folder not brought yet (a merge stopped it)
    if not _branch_made(main, home.branch) or _adding(tree.parent / ADDING):
        return main  # recorded, its worktree not made yet: `specd run` is placing it, from the main tree's copy
    raise WorktreeGone(f"task {task!r} lives in worktree {home.path} (recorded in {main.rel(record(main, task))}), "
                       "which is gone",
                       fix=f"`specd run {task}` makes it again from branch {home.branch}; or, to go on in the main "
                           f"tree instead, `git merge {home.branch}` and delete {main.rel(record(main, task))}")


def local(main: Project, task: str, home: Home) -> Home:
    """``home``, when this machine may run the task; a task on Temporal is its workflow's, not a second copy."""
    if home.kind == "temporal":
        said = main.rel(record(main, task))
        sent = submitted.path(main)
        where = (f"workflow {home.workflow_id} at {home.address}, recorded in {said}" if home.workflow_id else
                 f"submitted from this clone to {home.address or 'Temporal'}, as {main.rel(sent) if sent else 'git'} "
                 "says")
        raise TaskError(f"task {task!r} runs on Temporal ({where}); running it here too would make a second copy",
                        fix=f"answer it with `specd approve {task}` and follow it with `specd status {task}`; to run "
                            f"it here instead, `specd cancel {task}` (if its workflow still runs), then `specd run "
                            f"{task} --move`, which brings it here with every step its workers finished")
    return home


def settle(main: Project, task: str, default: Home) -> Home:
    """The task's home, recorded now if this is its first run (``default`` when nothing on disk says)."""
    with _locked(main):
        found = read(main, task)
        if found is None:
            found = infer(main, task) or default
            _write(main, task, found)
        return found


def move(main: Project, task: str, home: Home) -> None:
    """Record a new home on purpose (`specd land` brings a task's work back to the main tree)."""
    with _locked(main):
        _write(main, task, home)


def running(main: Project, task: str, pid: int | None, plane: str = "") -> None:
    """Note the process running the task (None: no process runs it now) and the control plane that started it."""
    if not record(main, task).is_file():
        return  # never homed here (a Temporal worker's clone, an engine test): nothing to note, nothing made
    with _locked(main):
        found = read(main, task)
        if found is not None and (pid is not None or found.pid == os.getpid()):
            _write(main, task, replace(found, pid=pid, started=now() if pid is not None else "",
                                       plane=plane if pid is not None else ""))


@contextlib.contextmanager
def runner(project: Project, task: str) -> Iterator[None]:
    """While this process holds the task's lock, its home record names it as the task's runner.
    Inside the lock, so a second run refused by the lock never overwrites the first one's pid."""
    main = main_of(project)
    plane = os.environ.pop(PLANE_ENV, "")  # not handed on: an agent's own `specd` is no plane's run
    with contextlib.suppress(OSError):  # a record this process cannot write (a read-only tree) must not stop it
        running(main, task, os.getpid(), plane)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, TaskError):
            running(main, task, None)


def edited_copy(main: Project, task: str, tree: Path) -> list[str]:
    """The files of ``task``'s folder in the main tree changed since its worktree ``tree`` was made, and unlike
    their copies there: a person's edits to the copy the task no longer reads (specd writes only the worktree's)."""
    try:
        made = (tree / ".git").stat().st_mtime  # written once, by `git worktree add`
    except OSError:
        return []
    for place in (main.tasks_dir / task, main.features_dir / task):
        if place.is_dir():
            every = sorted(Path(here) / name for here, dirs, names in walk(place) for name in [*dirs, *names])
            return [main.rel(path) for path in every if _edited(main, place, path, tree, made)]
    return []


def _edited(main: Project, place: Path, path: Path, tree: Path, made: float) -> bool:
    parts = path.relative_to(place).parts
    if "transcripts" in parts or any(part.startswith(".") for part in parts):
        return False  # run state and transcripts, never a person's edit
    theirs = tree / path.relative_to(main.root)
    try:
        return path.is_file() and path.stat().st_mtime > made and (
            not theirs.is_file() or theirs.read_bytes() != path.read_bytes())
    except OSError:
        return False


def _adding(lock: Path) -> bool:
    """Whether a `specd run` holds ``lock`` now, adding a worktree: `git worktree add -b` makes the branch before the
    worktree's folder, and a `status` in between took the task's worktree for one deleted."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # given back at the close below
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def _branch_made(main: Project, branch: str) -> bool:
    """Whether the main repository has ``branch`` (read from its files, no git process: `status` comes here). A
    repository whose files cannot say (the main tree is itself a linked worktree) counts as having it."""
    git_dir = main.root / ".git"
    if not git_dir.is_dir():
        return True
    if (git_dir / "refs" / "heads" / branch).is_file():
        return True
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return f" refs/heads/{branch}\n" in packed


def record(main: Project, task: str) -> Path:
    """The file that says where ``task`` lives (it may not exist)."""
    return main.specd_dir / FOLDER / f"{task}.json"


def folder(main: Project) -> Path:
    """``.specd/homes/``, made if need be with an ignore file of its own: records and locks are never committed."""
    found = main.specd_dir / FOLDER
    if not (found / ".gitignore").exists():  # projects set up before the records
        found.mkdir(parents=True, exist_ok=True)
        (found / ".gitignore").write_text("*\n", encoding="utf-8")
    return found


def _write(main: Project, task: str, home: Home) -> None:
    folder(main)
    atomic.write_json(record(main, task), asdict(home))


@contextlib.contextmanager
def _locked(main: Project) -> Iterator[None]:
    from filelock import FileLock  # here: only writers pay for it

    folder = main.specd_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / ".homes.lock"), timeout=30):
        yield
