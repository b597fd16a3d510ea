"""What a worker takes from a job: data naming the work, never behaviour, checked before anything is done.

Anyone who reaches the Temporal server can start a workflow on a worker's task queue, so a job is untrusted input.
It names the task, its repository, the tasks it needs, a held gate's answer and the run's budget. The agent, the
mode and the budget's ceiling are the worker's own (``settings.Behaviour``) or the committed pipeline's. A job may
still say which agent and mode its submitter asked for: the worker refuses it when they are not its own, so a
submitter never gets, without a word, a run other than the one asked for, and an attacker gets nothing.

A job failing a check is refused whole, before any clone, git command or child; the message names the field and
the rule. Every path made from a job is checked to stay inside the worker's work folder (`within`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.errors import TaskError
from specd.executors.temporal.ids import KEY_RULE, is_key, workflow_id
from specd.executors.temporal.settings import Behaviour
from specd.tasks.task import check_name

DATA = ("task", "key", "needs", "after", "dependants", "next", "answer", "budget", "heartbeat_timeout", "search",
        "head")
ASKED = ("agent", "mode")  # what the submitter asked for: compared with the worker's own, never obeyed
ANSWERS = ("approve", "reject", "skip")
SHOWN = 60  # characters of a refused value quoted back: enough to recognise it, never a flood in the logs
REFUSED = "JobRefused"  # the type of the ApplicationError a refusal travels as, for the workflow to tell it apart
BUDGET_RULE = 'the run\'s budget, {"total": USD, "base": {TASK: USD}}, with numbers of 0 or more'


class JobRefused(Exception):
    """A job the worker cannot verify: nothing was cloned, run or touched for it."""


@dataclass(frozen=True)
class Job:
    """A verified job: all the worker ever takes from one."""

    task: str
    key: str
    needs: tuple[str, ...] = ()
    answer: tuple[str, str, str] | None = None  # a held gate's (verb, note, who sent it: "" when unsaid)
    budget: dict[str, Any] | None = None  # the run's --max-cost; it can only lower what the worker allows
    answer_id: str = ""  # the workflow's id of that answer: applied once, however many attempts carry it
    head: str = ""  # the commit the task's last step pushed, as its result said: where the branch should be now

    @property
    def here(self) -> str:
        """The task among every repository's on a worker: its slot, parked run and runs are kept by it."""
        return f"{self.key}/{self.task}"


def verify(raw: Any, own: Behaviour) -> Job:
    if not isinstance(raw, dict):
        raise JobRefused(f"a job is an object of named fields, not {type(raw).__name__}")
    for name in raw:
        if name not in DATA + ASKED:
            raise JobRefused(f"field {_shown(name)}: not something a job carries (only {', '.join(DATA + ASKED)}); "
                             "how a task runs comes from the worker's own settings and the committed pipeline")
    task = _task("task", raw.get("task"))
    key = raw.get("key")
    if not is_key(key):
        raise JobRefused(f"field key: {_shown(key)} is not a repository key: {KEY_RULE}")
    needs = tuple(_task(f"needs[{i}]", need) for i, need in enumerate(_list("needs", raw.get("needs"))))
    if raw.get("after") is not None:
        _task("after", raw["after"])
    for field in ("dependants", "next"):
        for i, other in enumerate(_list(field, raw.get(field))):
            _workflow(f"{field}[{i}]", other, str(key))
    _seconds("heartbeat_timeout", raw.get("heartbeat_timeout"))
    if raw.get("search") not in (None, True, False):
        raise JobRefused(f"field search: {_shown(raw['search'])} is not true or false")
    _asked_agent(raw.get("agent"), own.agent)
    _asked_mode(raw.get("mode"), own.mode)
    given = _answer(raw.get("answer"))
    return Job(task, str(key), needs, given[:3] if given else None, _budget(raw.get("budget")),
               given[3] if given else "", _head(raw.get("head")))


def within(workdir: Path, *parts: str) -> Path:
    """``workdir/parts`` resolved (a symlink counts where it leads), refused unless strictly inside workdir."""
    root = workdir.resolve()
    path = root.joinpath(*parts).resolve()
    if path == root or not path.is_relative_to(root):
        raise JobRefused(f"{'/'.join(parts)} resolves outside this worker's work folder: a job's task and key name "
                         "a folder inside it, through no symlink")
    return path


def _task(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise JobRefused(f"field {field}: {_shown(value)} is not a task name (a string)")
    try:
        check_name(value)  # the one rule for task names, as `specd new` and every verb apply it
    except TaskError as exc:
        raise JobRefused(f"field {field}: " + exc.message.replace(repr(value), _shown(value), 1)) from None
    return value


def _head(value: Any) -> str:
    """A commit id, or "": only ever compared with the clone's own HEAD (never given to git), so a wrong one can at
    most skip a look at the remote, and the step's push, which expects what the remote held, is then refused."""
    if value is None:
        return ""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value):
        raise JobRefused(f"field head: {_shown(value)} is not a commit id (40 or 64 lowercase hex digits)")
    return value


def _list(field: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise JobRefused(f"field {field}: {_shown(value)} is not a list")
    return value


def _workflow(field: str, value: Any, key: str) -> None:
    prefix = workflow_id(key, "")
    if not isinstance(value, str) or not value.startswith(prefix):
        raise JobRefused(f"field {field}: {_shown(value)} is not the workflow of a task of this repository "
                         f"({prefix}TASK)")
    _task(field, value[len(prefix):])


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _seconds(field: str, value: Any) -> None:
    if value is not None and not (_number(value) and value > 0):
        raise JobRefused(f"field {field}: {_shown(value)} is not a number of seconds above 0")


def _asked_agent(asked: Any, own: str | None) -> None:
    if asked is None or asked == own:
        return
    # The worker's own agent is not named: its spec may hold what only the worker's operator should see.
    raise JobRefused(f"field agent: this job asks for agent {_shown(asked)}; a worker runs the agent it was started "
                     "with (`specd worker --agent`), else the run's or the committed pipeline's, never a job's. "
                     "Submit without --agent, or to workers started with that agent")


def _asked_mode(asked: Any, own: str | None) -> None:
    if asked is None or asked == own:
        return
    mine = f"--{own}" if own else "no mode flag (the run's mode, else the committed pipeline's)"
    raise JobRefused(f"field mode: this job asks for mode {_shown(asked)}, and this worker runs with {mine}; a "
                     "worker's mode is its own (`specd worker --auto/--semi-auto/--interactive`), never a job's. "
                     "Submit without a mode flag, or to workers started with that mode")


def _answer(value: Any) -> tuple[str, str, str, str] | None:
    if value is None:
        return None
    note, by, ident = (value.get(name) if isinstance(value, dict) else None for name in ("note", "by", "id"))
    if not isinstance(value, dict) or value.get("answer") not in ANSWERS \
            or set(value) - {"answer", "note", "by", "id"} or not isinstance(note or "", str) \
            or not all(isinstance(text or "", str) and len(text or "") <= 200 for text in (by, ident)):
        raise JobRefused(f"field answer: {_shown(value)} is not a gate's answer, "
                         '{"answer": "approve" | "reject" | "skip", "note": TEXT, "by": WHO, "id": ID}')
    return str(value["answer"]), str(note or ""), str(by or ""), str(ident or "")


def _budget(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"total", "base"} or not _usd(value["total"]) \
            or not isinstance(value["base"], dict):
        raise JobRefused(f"field budget: {_shown(value)} is not {BUDGET_RULE}")
    base: dict[str, float] = {}
    for name, spent in value["base"].items():
        if not _usd(spent):
            raise JobRefused(f"field budget.base: {_shown(spent)} is not {BUDGET_RULE}")
        base[_task("budget.base", name)] = float(spent)
    return {"total": float(value["total"]), "base": base}


def _usd(value: Any) -> bool:
    return _number(value) and value >= 0


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"
