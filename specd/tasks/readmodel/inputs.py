"""The marks of what a status answer is worked out from, and the one rule that says a kept answer still holds.

Working a task's status out loads and checks the pipeline (YAML, jsonschema, every workflow file), decodes the
run state and its history and replays the cursor: most of the command's start-up. While none of its inputs has
changed the answer is the same, so the read model keeps what was printed (``printed``) and the rows
(``rows``) with the marks of their inputs, and uses them while every mark still holds.

The inputs, each marked by its stat (change and modification times, size, inode, mode; None when absent):
- every file and folder in the task's folder (a file added or removed changes its folder's times), except
  transcripts, which only a live run writes; a live run (its lock's owner file) is never kept;
- where else the task could live (tasks/, features/, a `specd run` worktree) and paths the caller adds;
- the shared inputs (``shared``): the pipeline files, config.json, the project's workflows/ and hooks/, and
  specd's built-in folders;
- digested, the environment, the project's ``.env*`` files and the values this process added to redaction:
  what redaction masks depends on them.
The marks are taken before the answer is worked out, and it is kept only when no input changed in the last
0.1 s (``settled_marks``): an edit while it was worked out, or within one tick of the file clock, is never
hidden. Imports stay few: a kept answer is meant to cost little more than starting Python and click.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from specd.pipeline.model import PipelineConfig
    from specd.tasks.project import Project

RACY_NS = 100_000_000  # 0.1 s: far more than a tick of the file clock
MAX_PATHS = 5_000  # a folder this big would cost more to check than to read
DEEPEST = 64  # ``ownfiles.DEEPEST`` written out (a test keeps them equal): a listing does not import that module
SKIPPED = frozenset({"transcripts"})  # written during a run only, and one file more per step
VOLATILE = frozenset({"_", "PWD", "OLDPWD", "SHLVL", "COLUMNS", "LINES"})  # change per shell, never secrets
Mark = list[int] | None
Inputs = tuple[int, str, list[tuple[str, Mark]]]  # (settled before, environment digest, path marks)


def mark(path: str) -> Mark:
    try:
        st = os.stat(path)  # noqa: PTH116 - a str path: no Path object per input (hundreds per call)
    except (OSError, ValueError):
        return None
    return [st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode]


def environment(root: str) -> str:
    """A digest of the environment and of the ``.env*`` files at ``root``: equal digests mean the same secrets."""
    try:
        from _blake2 import blake2b  # hashlib would load OpenSSL first: 3 ms of a start-up worth 100
    except ImportError:  # pragma: no cover - not CPython
        from hashlib import blake2b
    digest = blake2b(digest_size=16)
    for name, value in sorted(os.environ.items()):
        if name not in VOLATILE or "://" in value:  # a URL may carry a password, whatever its name
            digest.update(f"{len(name)}:{name}={len(value)}:{value}\0".encode(errors="surrogateescape"))
    try:
        with os.scandir(root) as entries:
            found = sorted(e.path for e in entries if e.name.startswith(".env"))
    except OSError:
        found = []
    redaction = sys.modules.get("specd.redact")  # not imported yet: no value was added to it in this process
    added = sorted(redaction.added_secrets()) if redaction else []
    digest.update(json.dumps([[[path, mark(path)] for path in found], added]).encode(errors="surrogateescape"))
    return digest.hexdigest()


def tree(folder: str, out: list[str], depth: int = 0) -> bool:
    """Append every folder and file under ``folder`` (itself included), in name order; False when it cannot be
    watched whole (too big or too deep, unreadable, or a linked folder in it, whose own changes do not show in this
    tree's times)."""
    if depth > DEEPEST:
        return False
    out.append(folder)
    try:
        with os.scandir(folder) as entries:
            found = sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return False
    for entry in found:
        if entry.is_symlink() and entry.is_dir():
            return False
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in SKIPPED and not tree(entry.path, out, depth + 1):
                return False
        else:
            out.append(entry.path)
    return len(out) <= MAX_PATHS


def inputs(project: Project, task: str, extra: Iterable[Path] = ()) -> Inputs | None:
    """The marks of everything ``status TASK`` reads, taken now (before the answer is worked out); None when the
    answer cannot be kept (no such task, a live or killed run, a folder too big or linked)."""
    if not plain(task):
        return None  # not a task name (the command reports it): nothing to look at
    settled = time.time_ns() - RACY_NS
    env = environment(str(project.root))
    homes = [str(folder / task) for folder in (project.tasks_dir, project.features_dir)]
    paths = [f"{home}/config.json" for home in homes]
    found = [home for home, config in zip(homes, paths, strict=True) if os.path.isfile(config)]  # noqa: PTH113
    if len(found) != 1 or os.path.lexists(f"{found[0]}/.run.lock.owner") or not tree(found[0], paths):
        return None
    there = project.specd_dir / "worktrees" / task
    paths.append(f"{there}/.specd/tasks/{task}/config.json")
    lives_there = os.path.isfile(paths[-1])  # noqa: PTH113
    paths.append(str(project.specd_dir / "homes" / f"{task}.json"))  # a new home moves where status reads from
    if not shared(project, paths) or (lives_there and not _there(there, task, paths)):
        return None
    paths += [str(path) for path in extra]
    return settled, env, [(path, mark(path)) for path in paths]


def _there(worktree: Path, task: str, paths: list[str]) -> bool:
    """Append what an answer read from the task's worktree reads: its folder there, whole, and that worktree's own
    shared inputs; False when a run holds it there or it cannot be watched whole."""
    from specd.tasks.project import Project

    folder = f"{worktree}/.specd/tasks/{task}"
    return (not os.path.lexists(f"{folder}/.run.lock.owner") and tree(folder, paths)
            and shared(Project(worktree), paths))


def shared_marks(project: Project, config: PipelineConfig | None) -> tuple[str, int] | None:
    """The shared inputs' marks as JSON text (what an unfinished row's plan is kept under) and their newest
    change time; None when they cannot be watched whole, or the pipeline is broken or names a workflow by a
    path (not watched here)."""
    paths: list[str] = []
    if config is None or not named_plainly(config) or not shared(project, paths):
        return None
    marks = [(path, mark(path)) for path in paths]
    newest = max((max(m[0], m[1]) for _, m in marks if m is not None), default=0)
    return json.dumps(marks), newest


def shared(project: Project, paths: list[str]) -> bool:
    """Append the inputs every status answer shares: the pipeline files, config.json, the project's workflows
    and hooks, and specd's built-in folders; False when a folder cannot be watched whole."""
    from specd.resources import builtin, builtin_dir

    paths += [str(project.specd_dir / name) for name in ("pipeline.json", "pipeline.yaml", "pipeline.yml",
                                                          "config.json")]
    for folder in (project.workflows_dir, project.hooks_dir):
        if not folder.is_dir():
            paths.append(str(folder))
        elif not tree(str(folder), paths):
            return False
    paths.append(str(builtin("pipelines", "default.json")))
    paths += [str(builtin_dir(kind)) for kind in ("workflows", "hooks", "templates")]
    return True


def tree_marks(project: Project) -> tuple[int, int] | None:
    """A worktree's own shared inputs (``shared``: the plan of a task there follows its pipeline) as one int
    (Python's hash of their marks' ints, the same in every process) and their newest change time; None when
    they cannot be watched whole."""
    paths: list[str] = []
    if not shared(project, paths):
        return None
    values = [len(paths)]
    newest = 0
    for path in paths:
        got = mark(path) or [-1] * 5
        values += got
        newest = max(newest, got[0], got[1])
    return hash(tuple(values)), newest


def settled_marks(marks: list[tuple[str, Mark]], settled: int) -> bool:
    """Whether no input changed after ``settled`` (else it could change again within the same tick, unseen)."""
    return not any(m is not None and max(m[0], m[1]) >= settled for _, m in marks)


def project_root(given: str | None) -> str:
    """The project's root as ``find_project`` finds it (``--project``, else the nearest folder above holding
    .specd/ up to the repository's top, else here), with os.path: a kept answer is printed without importing
    pathlib."""
    if given is not None:
        return os.path.realpath(os.path.expanduser(given))  # noqa: PTH111
    here = folder = os.path.realpath(os.getcwd())  # noqa: PTH109
    while not os.path.isdir(os.path.join(folder, ".specd")):  # noqa: PTH112, PTH118
        if os.path.dirname(folder) == folder or os.path.lexists(os.path.join(folder, ".git")):  # noqa: PTH118, PTH120
            return here  # the top of the repository (or of the disk): a .specd/ above is another project's
        folder = os.path.dirname(folder)  # noqa: PTH120
    return folder


def plain(task: str) -> bool:
    """A name that stays inside the folder it is joined to (task names are checked in full elsewhere)."""
    return bool(task) and "/" not in task and "\\" not in task and "\0" not in task and not task.startswith(".")


def named_plainly(config: PipelineConfig) -> bool:
    """Every workflow is named by file name (looked up in the watched folders), none by a path."""
    names = [spec.workflow for spec in config.hooks.values() if spec is not None]
    for steps in config.pipelines.values():
        for step in steps:
            names += [step.workflow, *(spec.workflow for spec in step.hooks.values() if spec is not None)]
    return not any(name and ("/" in name or "\\" in name) for name in names)
