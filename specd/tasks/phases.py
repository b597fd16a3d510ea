"""A task's phases, from ROADMAP.md and the ``phases/phase-NN[.M]/`` (or older ``plans/``) folders.

Decimal fix phases sort as numbers (02 < 02.1 < 02.10 < 03) and are re-read
after every step, because revise adds them while the run goes on.

ROADMAP.md's structure (``### Phase N: Name`` headings, ``- [x] **Phase N: …**``
task-list items, ``**Status:** Complete`` lines under a phase heading) comes
from markdown-it-py's token stream (``specd.tasks.markdown``, which keeps each
file's result, so `specd status` over thousands of tasks parses only what
changed). Phase numbers are compared as digit strings, never ``int()``-ed, so a
roadmap saying ``### Phase 99999…`` cannot blow up or slow down a read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from specd.system.lazyre import lazy
from specd.tasks import markdown

NUMBER = r"(\d+(?:\.\d+)?)"
# The words of a `## Phase N: Name` heading (levels 2 to 4) and of a `- [x] **Phase N: Name** — text` item.
HEADING = lazy(r"Phase\s+" + NUMBER + r"\s*(?:[:.\-–—]\s*(.*?))?\s*", re.IGNORECASE)
ITEM = lazy(r"(?:\*\*)?Phase\s+" + NUMBER + r"\s*[:.\-–—]?\s*([^*—]*)", re.IGNORECASE)
# `**Status:** Complete`, `Status: completed`, `- Status: done` under a phase heading.
STATUS = lazy(r"\s*(?:\*\*)?Status:?(?:\*\*)?:?\s*(?:\*\*)?\s*(\w+)", re.IGNORECASE)
DONE_WORDS = {"complete", "completed", "done", "approved"}
FOLDER = lazy(r"^phase-(\d+(?:\.\d+)?)$")
PHASE_FOLDERS = ("phases", "plans")  # specdacular's older tasks keep phase plans under plans/


@dataclass(frozen=True)
class Phase:
    id: str  # normalised: "02", "02.1"
    name: str
    done: bool = False

    @property
    def key(self) -> tuple[int, str, int, str]:
        return sort_key(self.id)

    @property
    def major(self) -> str:
        return self.id.partition(".")[0]


def _digits(raw: str) -> str:
    return raw.lstrip("0") or "0"


def normalise(raw: str) -> str:
    major, _, minor = str(raw).strip().partition(".")
    return _digits(major).zfill(2) + (f".{_digits(minor)}" if minor else "")


def sort_key(phase_id: str) -> tuple[int, str, int, str]:
    """Numeric order on digit strings: a longer number is larger; no phase has a minor part below -1."""
    major, _, minor = phase_id.partition(".")
    major, minor_digits = _digits(major), _digits(minor) if minor else ""
    return len(major), major, (len(minor_digits) if minor else -1), minor_digits


def discover(task_dir: Path) -> list[Phase]:
    """Every phase the roadmap or the folders name, in order (each call reads the files afresh)."""
    found: dict[str, Phase] = {}
    rows = markdown.outline(task_dir / "ROADMAP.md", "phases",
                            lambda blocks: [[p.id, p.name, p.done] for p in _from_roadmap(blocks)])
    for phase in (Phase(*row) for row in rows or []):
        old = found.get(phase.id)
        found[phase.id] = Phase(phase.id, (old.name if old and old.name else phase.name),
                                phase.done or bool(old and old.done))
    for folder in PHASE_FOLDERS:
        root = task_dir / folder
        if root.is_dir():
            for sub in root.iterdir():
                match = FOLDER.match(sub.name)
                if match and sub.is_dir():
                    pid = normalise(match.group(1))
                    found.setdefault(pid, Phase(pid, ""))
    return sorted(found.values(), key=lambda p: p.key)


def _from_roadmap(blocks: list[markdown.Block]) -> list[Phase]:
    phases: list[Phase] = []
    section: tuple[int, int] | None = None  # (heading level, index in phases) a Status line applies to
    for block in blocks:
        if block.kind == "heading":
            if 2 <= block.level <= 4 and (heading := HEADING.fullmatch(block.text)):
                phases.append(Phase(normalise(heading.group(1)), (heading.group(2) or "").strip()))
                section = (block.level, len(phases) - 1)
            elif section and block.level <= section[0]:
                section = None
        elif block.checked is not None and (item := ITEM.match(block.text)):
            phases.append(Phase(normalise(item.group(1)), item.group(2).strip(), block.checked))
        elif (block.checked is None and section and (status := STATUS.match(block.text))
              and status.group(1).lower() in DONE_WORDS):
            old = phases[section[1]]
            phases[section[1]] = Phase(old.id, old.name, True)
    return phases


def phase_dir(task_dir: Path, phase_id: str) -> Path:
    """Where a phase's files live: ``phases/phase-NN`` (or an older ``plans/phase-NN`` that exists)."""
    for folder in PHASE_FOLDERS:
        root = task_dir / folder
        if root.is_dir():
            for sub in root.iterdir():
                match = FOLDER.match(sub.name)
                if match and normalise(match.group(1)) == phase_id and sub.is_dir():
                    return sub
    return task_dir / "phases" / f"phase-{phase_id}"


def has_plan(task_dir: Path, phase_id: str) -> bool:
    """specdacular writes ``PLAN.md``; its older tasks wrote ``01-PLAN.md``, ``02-PLAN.md``…"""
    folder = phase_dir(task_dir, phase_id)
    return folder.is_dir() and any(p.name.upper().endswith("PLAN.MD") for p in folder.iterdir())


def next_phase(task_dir: Path, after: str | None) -> Phase | None:
    """The first phase after ``after`` (or the first of all) not marked done, reading the files afresh.

    A phase ROADMAP.md marks done (``- [x]`` or a ``Status: complete`` line) is never run again.
    """
    for phase in discover(task_dir):
        if (after is None or phase.key > sort_key(after)) and not phase.done:
            return phase
    return None
