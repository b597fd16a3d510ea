"""What `specd status TASK` printed, kept with a mark of every input it came from, so asking again is a read.

Working a task's status out loads and checks the pipeline (YAML, jsonschema, every workflow file), decodes the
run state and its history and replays the cursor: most of the command's start-up. While none of its inputs has
changed the answer is the same, so the printed text (plain, --json and the warnings) is kept in
``.specd/.cache/status/<task>.json`` (git-ignored) and printed again while every mark still holds.

The inputs, each marked by its stat (change and modification times, size, inode, mode; None when absent):
- every file and folder in the task's folder (a file added or removed changes its folder's times), except
  transcripts, which only a live run writes; a live run (its lock's owner file) is never kept;
- where else the task could live (tasks/, features/, a `specd run` worktree) and paths the caller adds;
- the pipeline files, config.json, the project's workflows/ and hooks/, and specd's built-in folders;
- digested, the environment, the project's ``.env*`` files and the values this process added to redaction:
  what redaction masks depends on them.
The marks are taken before the answer is worked out, and it is kept only when no input changed in the last
0.1 s: an edit while it was worked out, or within one tick of the file clock, is never hidden. The folder is
readable by its owner only, since the digest covers secret values too. Imports stay few: a hit is meant to
cost little more than starting Python and click.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from specd import __version__

if TYPE_CHECKING:
    from pathlib import Path

    from specd.pipeline.model import PipelineConfig
    from specd.tasks.project import Project

FOLDER = "status"  # in .specd/.cache/
RACY_NS = 100_000_000  # 0.1 s: far more than a tick of the file clock
MAX_PATHS = 5_000  # a folder this big would cost more to check than to read
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


def _tree(folder: str, out: list[str]) -> bool:
    """Append every folder and file under ``folder`` (itself included); False when it cannot be watched whole."""
    out.append(folder)
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_symlink() and entry.is_dir():
                    return False  # a linked folder's own changes do not show in this tree's times
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIPPED and not _tree(entry.path, out):
                        return False
                else:
                    out.append(entry.path)
    except OSError:
        return False
    return len(out) <= MAX_PATHS


def inputs(project: Project, task: str, extra: Iterable[Path] = ()) -> Inputs | None:
    """The marks of everything ``status TASK`` reads, taken now (before the answer is worked out); None when the
    answer cannot be kept (no such task, a live or killed run, a folder too big or linked)."""
    if not _plain(task):
        return None  # not a task name (the command reports it): nothing to look at
    settled = time.time_ns() - RACY_NS
    env = environment(str(project.root))
    homes = [str(folder / task) for folder in (project.tasks_dir, project.features_dir)]
    paths = [f"{home}/config.json" for home in homes]
    found = [home for home, config in zip(homes, paths, strict=True) if os.path.isfile(config)]  # noqa: PTH113
    if len(found) != 1 or os.path.lexists(f"{found[0]}/.run.lock.owner") or not _tree(found[0], paths):
        return None
    paths.append(str(project.specd_dir / "worktrees" / task / ".specd" / "tasks" / task / "config.json"))
    paths.append(str(project.specd_dir / "homes" / f"{task}.json"))  # a new home moves where status reads from
    if not shared(project, paths):
        return None
    paths += [str(path) for path in extra]
    return settled, env, [(path, mark(path)) for path in paths]


def shared(project: Project, paths: list[str]) -> bool:
    """Append the inputs every status answer shares: the pipeline files, config.json, the project's workflows
    and hooks, and specd's built-in folders; False when a folder cannot be watched whole."""
    from specd.resources import builtin, builtin_dir

    paths += [str(project.specd_dir / name) for name in ("pipeline.json", "pipeline.yaml", "pipeline.yml",
                                                          "config.json")]
    for folder in (project.workflows_dir, project.hooks_dir):
        if not folder.is_dir():
            paths.append(str(folder))
        elif not _tree(str(folder), paths):
            return False
    paths.append(str(builtin("pipelines", "default.json")))
    paths += [str(builtin_dir(kind)) for kind in ("workflows", "hooks", "templates")]
    return True


def remember(project: Project, task: str, before: Inputs, config: PipelineConfig | None,
             texts: dict[str, Any]) -> None:
    """Keep ``texts`` for ``task`` if its inputs were already settled when ``before`` was taken."""
    settled, env, marks = before
    if config is None or not named_plainly(config) or not settled_marks(marks, settled):
        return  # a broken pipeline, a workflow named by a path (not watched here), or an input just changed
    keep(project, f"{task}.json", {"version": __version__, "env": env, "marks": marks, "texts": texts})


def settled_marks(marks: list[tuple[str, Mark]], settled: int) -> bool:
    """Whether no input changed after ``settled`` (else it could change again within the same tick, unseen)."""
    return not any(m is not None and max(m[0], m[1]) >= settled for _, m in marks)


def keep(project: Project, name: str, memo: dict[str, Any] | list[Any]) -> None:
    """Write ``memo`` as ``name`` in the memo folder, unless redaction would change a byte of it. A list is
    written an item a line (JSON text holds no raw line break)."""
    from specd.redact import redact
    from specd.state import atomic
    from specd.tasks.status_cache import suspect

    text = "\n".join(map(json.dumps, memo)) if isinstance(memo, list) else json.dumps(memo)
    if suspect(text) and redact(text) != text:  # the quick look first: a listing's memo is megabytes
        return  # the writer would mask part of it, and a hit must print exactly what a miss does
    path = project.specd_dir / ".cache" / FOLDER / name
    try:
        atomic.make_folder(path.parent)
        path.parent.chmod(0o700)  # the digest hashes secret values with the rest: for this user's eyes only
        atomic.write_text(path, text, durable=False, checked=True)  # a cache: no fsync; redaction passed
    except OSError:
        pass  # a read-only checkout works the answer out every time


def project_root(given: str | None) -> str:
    """The project's root as ``find_project`` finds it (``--project``, else the nearest folder above holding
    .specd/, else here), with os.path: a kept answer is printed without importing pathlib."""
    if given is not None:
        return os.path.realpath(os.path.expanduser(given))  # noqa: PTH111
    here = folder = os.path.realpath(os.getcwd())  # noqa: PTH109
    while not os.path.isdir(os.path.join(folder, ".specd")):  # noqa: PTH112, PTH118
        if os.path.dirname(folder) == folder:  # noqa: PTH120
            return here
        folder = os.path.dirname(folder)  # noqa: PTH120
    return folder


def lookup(root: str, task: str) -> dict[str, Any] | None:
    """The texts kept for ``task`` in the project at ``root``, if every input is as it was; else None."""
    if not _plain(task):
        return None  # not a task name: no file of ours to read
    try:
        with open(f"{root}/.specd/.cache/{FOLDER}/{task}.json", "rb") as file:  # noqa: PTH123 - no pathlib here
            data = json.loads(file.read())
        texts = data["texts"]
        shaped = isinstance(texts["out"], str) and isinstance(texts["json"], str) and all(
            isinstance(line, str) for line in texts["err"])
        if data["version"] != __version__ or not shaped:
            return None
        if any(mark(path) != kept for path, kept in data["marks"]) or data["env"] != environment(root):
            return None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # missing, damaged or of another shape: worked out afresh
    return {"out": texts["out"], "json": texts["json"], "err": list(texts["err"])}


def _plain(task: str) -> bool:
    """A name that stays inside the folder it is joined to (task names are checked in full elsewhere)."""
    return bool(task) and "/" not in task and "\\" not in task and "\0" not in task and not task.startswith(".")


def named_plainly(config: PipelineConfig) -> bool:
    """Every workflow is named by file name (looked up in the watched folders), none by a path."""
    names = [spec.workflow for spec in config.hooks.values() if spec is not None]
    for steps in config.pipelines.values():
        for step in steps:
            names += [step.workflow, *(spec.workflow for spec in step.hooks.values() if spec is not None)]
    return not any(name and ("/" in name or "\\" in name) for name in names)
