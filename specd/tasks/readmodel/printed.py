"""What `specd status TASK` and a piped, --json or terminal `specd status` printed, kept while nothing it came from
changed. A terminal's table, drawn by rich, is kept as it was drawn, with the terminal's size (``drawn``).

Even with every row in ``rows``, a listing still loaded the pipeline, worked the task graph out and laid the
table out again; `status TASK` loaded the pipeline, decoded the whole run state and replayed the cursor. While
their inputs are unchanged the text is the same, so it is kept in the store (``store``: tables ``answers``
and ``printed``) and printed again while one rule holds (``holds``): every path mark (``inputs``) and every
folder signature (``signature``) it was kept with is as it is now, the environment digest is the same, and it
was kept by this specd. For an answer the marks are its task's whole tree and the shared inputs; for the
listing, the shared inputs, the folders tasks live in (tasks/, features/, worktrees/, homes/: a folder made,
removed or renamed there moves their times), each home record (one edited in place moves only its own), each
row's folder signature (a task that lives in a worktree: its folder there, and when it is unfinished, the shared
inputs of that worktree, which its plan follows), and each folder there that is no row's (a config.json made in it
moves its times; a task's copy here while it lives in a worktree, where a run started by mistake makes its row an
error; a worktree's own folder). A row the store could not keep (a live run, a broken task), or an
input changed in the last moment, and nothing is kept.

Lookups import no more than ``json``, ``sqlite3`` and ``inputs``: a kept answer costs little more than starting
Python and click. A text redaction would change is never kept: a hit prints exactly what a miss does.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from specd import __version__
from specd.tasks.readmodel import drawn, inputs, store

if TYPE_CHECKING:
    from specd.pipeline.model import PipelineConfig
    from specd.tasks.project import Project

# The folder signatures hold Python's hash of ints (``signature``).
VERSION = f"{__version__} {sys.hexversion}"
# "out" (plain), "json" (or None), "err" (the warnings' lines), and "drawn" (or None): the table a terminal showed,
# as [``screen()`` then, its text with rich's styles]
Texts = dict[str, Any]
FORMS = ("out", "json", "drawn")  # each a column of its own in ``answers`` and ``printed``


def parents(project: Project) -> list[str]:
    """The folders tasks live in: tasks/, features/ and worktrees/; and homes/, which says which of them."""
    return [str(folder) for folder in (project.tasks_dir, project.features_dir, project.specd_dir / "worktrees",
                                       project.specd_dir / "homes")]


def listing_inputs(project: Project) -> inputs.Inputs | None:
    """The marks of what every row shares, taken before the listing is worked out."""
    settled = time.time_ns() - inputs.RACY_NS
    paths = parents(project)
    if not inputs.shared(project, paths):
        return None
    marks = [(path, inputs.mark(path)) for path in paths]
    try:  # after homes/ own mark: a record made since moves it. Each record: one edited in place moves only its own
        with os.scandir(project.specd_dir / "homes") as entries:
            records = sorted(entry.path for entry in entries if entry.name.endswith(".json"))
    except OSError:
        records = []
    return settled, inputs.environment(str(project.root)), marks + [(path, inputs.mark(path)) for path in records]


def remember_answer(project: Project, task: str, before: inputs.Inputs, config: PipelineConfig | None,
                    texts: Texts) -> None:
    """Keep ``texts`` for ``task`` if its inputs were already settled when ``before`` was taken."""
    settled, env, marks = before
    if config is None or not inputs.named_plainly(config) or not inputs.settled_marks(marks, settled):
        return  # a broken pipeline, a workflow named by a path (not watched here), or an input just changed
    texts = _with_kept(project, ("SELECT head, err, out, json, drawn FROM answers WHERE task = ?", (task,)), env,
                       marks, None, texts)
    _keep(project, "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)", task, env, marks, texts)


def remember_listing(project: Project, before: inputs.Inputs | None, config: PipelineConfig | None,
                     kept: list[Any], texts: Texts) -> None:
    """Keep ``texts`` when ``kept`` (``rows.listing``'s ``keep``: each row's folder and signature) covers every
    row and nothing it came from changed in the last moment; otherwise forget what was kept."""
    if before is None or config is None or not inputs.named_plainly(config) or None in kept:
        forget_listing(project)
        return
    settled, env, marks = before
    folders = {folder for folder, _ in kept}
    others = []  # folders there that are not tasks: one that gains a config.json becomes one
    here = dict(marks)
    for parent in parents(project):
        if here.get(parent) is None:
            continue
        try:
            with os.scandir(parent) as entries:
                found = [e.path for e in entries if e.path not in folders and e.is_dir()]
        except OSError:
            found = None
        if found is None:
            forget_listing(project)
            return
        others += found
    trees = _worktree_inputs(project, kept)
    if trees is None:
        forget_listing(project)
        return
    marks = marks + [(path, inputs.mark(path)) for path in [*others, *trees]]
    if not inputs.settled_marks(marks, settled):
        forget_listing(project)
        return
    from specd.tasks.readmodel.signature import pack

    packed = pack(kept, str(project.root))
    if packed is None:
        forget_listing(project)
        return
    texts = _with_kept(project, ("SELECT head, err, out, json, drawn, folders FROM printed", ()), env, marks, packed,
                       texts)
    _keep(project, "INSERT OR REPLACE INTO printed VALUES (0, ?, ?, ?, ?, ?, ?)", None, env, marks, texts, packed)


def _with_kept(project: Project, query: tuple[str, tuple[str, ...]], env: str, marks: list[Any],
               packed: bytes | None, texts: Texts) -> Texts:
    """``texts`` with the forms it lacks (its JSON, its drawing) taken from what is kept now (``query``), when that
    was kept with the very same marks (and folder signatures, ``packed``): the same inputs, so each form still
    holds. A terminal and a script that take turns then both keep theirs."""
    found = store.read_one(str(project.specd_dir / ".cache"), *query)
    if found is None or (packed is not None and found[5] != packed):
        return texts
    try:
        head, err = json.loads(found[0]), json.loads(found[1])
        if head != json.loads(json.dumps({"version": VERSION, "env": env, "marks": marks})) or err != texts["err"]:
            return texts
        old = {"json": found[3], "drawn": None if found[4] is None else json.loads(found[4])}
        return {**texts, **{form: old[form] for form in old if texts.get(form) is None and old[form] is not None}}
    except (ValueError, KeyError, TypeError, RecursionError):
        return texts


def _worktree_inputs(project: Project, kept: list[Any]) -> list[str] | None:
    """The shared inputs of each worktree holding a row kept with its plan (its folder's signature deep): the plan
    there follows that worktree's own pipeline, workflows and hooks. None when one cannot be watched whole."""
    from pathlib import Path

    from specd.tasks.project import Project
    from specd.tasks.readmodel.signature import DEEP

    prefix = f"{project.specd_dir / 'worktrees'}/"
    paths: list[str] = []
    for tree in sorted({folder.rsplit("/", 3)[0] for folder, sig in kept if folder.startswith(prefix) and
                        sig[1] & DEEP}):
        if not inputs.shared(Project(Path(tree)), paths):
            return None
    return paths


def forget_listing(project: Project) -> None:
    """Forget the printed listing: a listing that cannot be kept makes the next lookup a miss at once."""
    db = store.connect(str(project.specd_dir / ".cache"), make=False)
    if db is not None:
        store.write(db, [("DELETE FROM printed", ())])
        db.close()


def _keep(project: Project, sql: str, task: str | None, env: str, marks: list[Any], texts: Texts,
          folders: bytes | None = None) -> None:
    """Write what was printed, unless redaction would change a byte of it."""
    from specd.redact import redact
    from specd.tasks.readmodel.redaction import suspect

    head = json.dumps({"version": VERSION, "env": env, "marks": marks})
    body = json.dumps(texts)
    if suspect(body) and redact(body) != body:  # the quick look first: a listing's text is megabytes
        return  # the writer would mask part of it, and a hit must print exactly what a miss does
    cache = project.specd_dir / ".cache"
    if not project.specd_dir.is_dir():
        return
    from specd.state import atomic

    drawn = texts.get("drawn")
    forms = (json.dumps(texts["err"]), texts["out"], texts["json"], None if drawn is None else json.dumps(drawn))
    with contextlib.suppress(OSError):
        atomic.make_folder(cache)
        db = store.connect(str(cache))
        if db is not None:
            params = (head, *forms) if folders is None else (head, folders, *forms)
            store.write(db, [(sql, (task, *params) if task is not None else params)])
            db.close()


def answer(root: str, task: str, form: str = "out") -> Texts | None:
    """What was kept for ``task`` in the project at ``root`` in ``form`` (``FORMS``), with the warnings' lines
    (``err``), if every input is as it was; else None (also when that form was not kept)."""
    if not inputs.plain(task) or form not in FORMS:
        return None  # not a task name: nothing kept for it
    found = store.read_one(f"{root}/.specd/.cache", f"SELECT head, err, {form} FROM answers WHERE task = ?", (task,))
    return None if found is None else holds(root, found[0], None, found[1], form, found[2])


def listing(root: str, form: str = "out") -> Texts | None:
    """The printed listing in ``form``, with the warnings' lines (``err``), if every mark still holds."""
    if form not in FORMS:
        return None
    found = store.read_one(f"{root}/.specd/.cache", f"SELECT head, err, {form}, folders FROM printed", ())
    return None if found is None else holds(root, found[0], found[3], found[1], form, found[2])


def holds(root: str, head: Any, folders: Any, err: Any, form: str, value: Any) -> Texts | None:
    """The one freshness rule: ``value``, the form asked for (each is a column of its own: a lookup reads only the
    one it prints), when every path mark and folder signature kept with it holds now and the environment is the
    same; None when anything differs, that form was not kept, or it was kept in another shape."""
    try:
        data = json.loads(head)
        if data["version"] != VERSION or any(inputs.mark(path) != kept for path, kept in data["marks"]):
            return None
        if not isinstance(value, str):
            return None  # not kept in this form
        shown: Any = value
        if form == "drawn":
            shown = json.loads(value)
            if not (type(shown) is list and len(shown) == 2 and all(isinstance(part, str) for part in shown)
                    and drawn.styles_only(shown[1])):
                return None
        lines = json.loads(err)
        if type(lines) is not list or not all(isinstance(line, str) for line in lines):
            return None
        if folders is not None:
            from specd.tasks.readmodel.signature import all_still

            if not all_still(folders, root):
                return None
        if data["env"] != inputs.environment(root):
            return None
    except (ValueError, KeyError, TypeError, RecursionError, AttributeError):
        return None  # damaged or of another shape: worked out afresh
    return {"err": lines, form: shown}
