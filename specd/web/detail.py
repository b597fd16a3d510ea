"""One task for the dashboard: where it stands, its steps, events, checkpoints, and one step's transcript and diff.

Everything returned has passed through ``redact``: a secret an agent printed into a transcript, an event or a
commit never reaches a page, whatever was written to disk before the secret was known.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from specd.engine.answers import FILES
from specd.errors import SpecdError
from specd.executors.results import current_status
from specd.git import hidden, recovery, shown
from specd.git.repo import GitFailed, Repo
from specd.pipeline.model import PipelineConfig
from specd.redact import redact, redact_obj
from specd.state import rounds as check_rounds
from specd.state.checkpoint import who
from specd.state.lock import TaskLock
from specd.state.store import StateStore
from specd.system.envfiles import maybe_secret
from specd.system.ownfiles import NotOwnFile, read_regular
from specd.tasks import home, logs
from specd.tasks.project import Project
from specd.tasks.secrets import load_file_secrets
from specd.tasks.status import pipeline_or_problem, task_status
from specd.web import attempts, rows, svg

SHOWN_EVENTS = 300
MAX_TEXT = 400_000  # characters of a transcript or diff shown on a page; the rest is one `specd logs` away


def task_page(project: Project, folder: Path, task: str) -> dict[str, Any]:
    config, broken = pipeline_or_problem(project)
    view = task_status(project, task, config, broken=broken)
    store = StateStore(folder, task)
    state = store.load()
    history = state.history if state else []
    journal = store.journal.read()
    events = journal[-SHOWN_EVENTS:]
    steps = [step_row(i, h) for i, h in enumerate(history)]
    running = TaskLock(folder, task).is_held()
    tried = [attempt_row(a) for a in attempts.unfinished(journal, folder, running)]
    row = rows.display(view)
    data = {
        "task": task, "view": view, "row": row, "steps": merged(steps, tried), "running": running,
        "events": [logs.line(e) for e in events], "offset": _size(store.journal.path),
        "checkpoints": [{**c, "who": who(c)} for c in reversed(state.checkpoints)] if state else [],
        # a cluster keeps its last full reason as last_note; the page's table says it as the reason
        "clusters": [{**c, "reason": c.get("last_note") or ""} for c in state.failure_clusters] if state else [],
        "position": _position(view), "broken": broken,
        "pipeline_svg": svg.pipeline(_shape(config), _position(view), _done(history)) if config else "",
        "timeline_svg": svg.timeline(steps), "cost_svg": svg.cost(steps),
        "documents": sorted(p.name for p in folder.glob("*.md") if p.is_file()),
        "held": view.get("status") == "WAITING_FOR_HUMAN",
        "held_files": held_files(view),
        "unmet": [n for n in row["needs"] if _status_of(project, n) != "COMPLETE"],
        "steps_known": sorted({s.name for steps_ in config.pipelines.values() for s in steps_}) if config else [],
    }
    return dict(redact_obj(data))


def held_files(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The files a wait holds for a person to look at (a secret in them, or hidden from git), with why."""
    wait = (view.get("waiting") or {}) if view.get("status") == "WAITING_FOR_HUMAN" else {}
    return [{"path": f.get("path"), "holds": f.get("holds")} for f in wait.get("files") or ()] \
        if wait.get("kind") in FILES else []


def held_file(project: Project, folder: Path, task: str, path: str) -> str | None:
    """What a held file holds, as a person on the page looks at it before approving (redacted, cut as a transcript
    is), or None when the task's wait does not hold ``path`` (nothing else of the tree is served)."""
    state = StateStore(folder, task).load()
    wait = (state.waiting or {}) if state is not None and state.status == "WAITING_FOR_HUMAN" else {}
    held = next((f for f in wait.get("files") or () if f.get("path") == path), None) \
        if wait.get("kind") in FILES else None
    if held is None:
        return None
    if Path(path).is_absolute() or ".." in Path(path).parts:  # a run state pushed by another machine says so
        return None
    full = project.root / path
    try:
        data = read_regular(full, MAX_TEXT, head=True)
    except OSError as exc:  # never through a link, nor a FIFO: a person looks at those in a terminal
        if isinstance(exc, FileNotFoundError) and held.get("seen"):  # a task on Temporal: on its worker
            return redact(f"(not in this tree: as the step left it where it ran, its first {hidden.EXCERPT} bytes "
                          f"at most)\n\n{held['seen']}")
        what = "a link" if full.is_symlink() else "a folder of held files" if full.is_dir() else "not a plain file"
        return (f"({path} is {what}: look at it in a terminal)" if isinstance(exc, NotOwnFile) else
                f"({path} cannot be read here: {exc.strerror or exc}; a task on Temporal keeps it on its worker)")
    if maybe_secret(full.name):  # a secret file the page may not have known at its start: its values masked too
        load_file_secrets(full)
    return redact(data.decode("utf-8", errors="replace"))


def _status_of(project: Project, task: str) -> str:
    try:
        return current_status(home.main_of(project), task)
    except SpecdError:
        return "ERROR"


def step_row(index: int, row: dict[str, Any]) -> dict[str, Any]:
    usage = row.get("usage") or {}
    start, end = rows.seconds(row.get("started_at")), rows.seconds(row.get("finished_at"))
    span = end - start if start is not None and end is not None else 0.0
    return {"n": index, "ended": str(row.get("finished_at") or ""), "step": row.get("step"),
            "phase": row.get("phase") or "", "kind": row.get("kind"),
            "hook": row.get("hook") or "", "outcome": row.get("outcome"), "summary": row.get("summary") or "",
            "seconds": max(0.0, span), "took": rows.duration(span), "attempt": row.get("attempt") or 1,
            "tokens": sum(int(v or 0) for k, v in usage.items() if k.endswith("tokens")),
            "cost": float(usage.get("cost_usd") or 0), "superseded": bool(row.get("superseded")),
            "transcript": bool(row.get("transcript")), "group": _group(row)}


def _group(row: dict[str, Any]) -> str:
    """A parallel group's rows (issue 30): a member names its group; the group lists its members' outcomes."""
    if row.get("group"):
        return f"in {row['group']}"
    members = row.get("members")
    return "of " + ", ".join(f"{k}: {v}" for k, v in members.items()) if isinstance(members, dict) else ""


def attempt_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row of the steps table for an attempt the history has no row for (``attempts.unfinished``)."""
    start, end = rows.seconds(row.get("started_at")), rows.seconds(row.get("finished_at"))
    span = end - start if start is not None and end is not None else 0.0
    return {"n": None, "step": row["step"], "phase": row["phase"], "kind": "step", "hook": "",
            "outcome": row["outcome"], "summary": row["reason"], "seconds": max(0.0, span),
            "took": rows.duration(span) if end is not None else "", "attempt": row["attempt"], "tokens": 0,
            "cost": 0.0, "superseded": False, "transcript": row["transcript"],
            "ended": str(row.get("finished_at") or ("~" if row["outcome"] == "running" else row.get("started_at")))}


def merged(steps: list[dict[str, Any]], tried: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history's rows and the unfinished attempts in the order they ended, the running one last (the
    history's ``started_at`` is its visit's start, shared by every attempt; a stable sort keeps the history's
    own order within a second)."""
    return sorted([*steps, *tried], key=lambda s: s["ended"])


def step_page(project: Project, folder: Path, task: str, index: int) -> dict[str, Any] | None:
    state = StateStore(folder, task).load()
    if state is None or not 0 <= index < len(state.history):
        return None
    row = state.history[index]
    transcript = ""
    for found, path in logs.transcripts(folder, state, None):
        if found is row:
            transcript = _read(path)
    if row.get("kind") == check_rounds.KIND:  # a round of checks keeps each command's output in its row
        transcript = rounds_text(row)
    return dict(redact_obj({"task": task, "step": step_row(index, row), "transcript": transcript,
                            "diff": _diff(project, task, row)}))


def rounds_text(row: dict[str, Any]) -> str:
    """Each check of a round as its command, its result and the end of its output."""
    said = [f"$ {c.get('run')}\n({'passed' if c.get('ok') else check_rounds.why(c)}, {c.get('seconds')} s)\n"
            f"{c.get('output') or '(no output)'}" for c in row.get("checks") or ()]
    return redact("\n\n".join(said))


def _read(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_TEXT + 1)
    except OSError as exc:
        return f"(transcript unreadable: {exc.strerror})"
    return redact(text[:MAX_TEXT] + ("\n… (cut; `specd logs` shows all of it)" if len(text) > MAX_TEXT else ""))


def _diff(project: Project, task: str, row: dict[str, Any]) -> str:
    """The step's commit (its subject is fixed by specd.git.recorder): of a step visited more than once, the one this
    visit made, the first made once it ended (a commit follows its step's end, by the same machine's clock)."""
    repo = Repo.open(project.root)
    if repo is None or row.get("kind") != "step":
        return ""
    named = recovery.subjects(task, row.get("step"), row.get("phase"))
    try:
        # --grep matches a part of any line: "plan complete" starts "plan complete (phase 1)", the default
        # pipeline's per-phase plan; so git narrows and the subject is compared whole
        listed = repo.run("log", "--format=%H %ct %s", "--fixed-strings", f"--grep=docs({task}): {row.get('step')} ",
                          "HEAD").splitlines()
        ours = [(commit, int(when)) for commit, when, said in (line.split(" ", 2) for line in listed if
                                                                  line.count(" ") >= 2) if said in named]
        # a step visited again (review, revise, review): the first of its commits made once this visit ended
        ended = rows.seconds(row.get("finished_at"))
        since = [commit for commit, when in ours if ended is not None and when >= int(ended)]
        found = since[-1] if since else ours[0][0] if ours else ""
        if not found:
            return ""
        text = shown.review(repo, found)  # text that .gitattributes marks binary shown as text
    except GitFailed:
        return ""
    return redact(text[:MAX_TEXT])


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _position(view: dict[str, Any]) -> dict[str, Any]:
    nxt = view.get("next") or {}
    return {"pipeline": nxt.get("pipeline"), "step": nxt.get("step"), "phase": nxt.get("phase"),
            "status": view.get("status")}


def _shape(config: PipelineConfig) -> dict[str, list[tuple[str, str | None, bool]]]:
    """Each pipeline's steps as (name, the pipeline it calls, enabled), main first."""
    names = ["main", *sorted(p for p in config.pipelines if p != "main")]
    return {p: [(s.name, s.pipeline, s.enabled) for s in config.steps(p)] for p in names if p in config.pipelines}


def _done(history: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(str(h.get("pipeline")), str(h.get("step"))) for h in history
            if h.get("kind") == "step" and not h.get("superseded")}
