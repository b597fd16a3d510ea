"""A task's phases, from ROADMAP.md and the ``phases/phase-NN[.M]/`` folders.

Decimal fix phases sort as numbers (02 < 02.1 < 02.10 < 03) and are re-read
after every step, because revise adds them while the run goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

# ASCII digits, at most 6: "²" or a 5,000-digit number is not a phase number (int() would refuse it).
HEADING = re.compile(r"^Phase\s+([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*[:.\-–—]\s*(.*)$", re.IGNORECASE)
CHECKLIST = re.compile(r"^\[([ xX])\]\s+\*\*Phase\s+([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*[:.\-–—]?\s*(.*?)\*\*",
                       re.IGNORECASE)
FOLDER = re.compile(r"^phase-([0-9]{1,6}(?:\.[0-9]{1,6})?)$")


@dataclass(frozen=True)
class Phase:
    id: str  # normalised: "02", "02.1"
    name: str
    done: bool = False

    @property
    def key(self) -> tuple[int, int]:
        return sort_key(self.id)


def normalise(raw: str) -> str:
    major, _, minor = raw.partition(".")
    return f"{int(major):02d}" + (f".{int(minor)}" if minor else "")


def sort_key(phase_id: str) -> tuple[int, int]:
    major, _, minor = phase_id.partition(".")
    return int(major), (int(minor) if minor else -1)


def discover(task_dir: Path) -> list[Phase]:
    found: dict[str, Phase] = {}
    roadmap = task_dir / "ROADMAP.md"
    if roadmap.is_file():
        for phase in _from_roadmap(roadmap.read_text(encoding="utf-8", errors="replace")):
            old = found.get(phase.id)
            found[phase.id] = Phase(phase.id, (old.name if old and old.name else phase.name),
                                    phase.done or bool(old and old.done))
    folder = task_dir / "phases"
    if folder.is_dir():
        for sub in folder.iterdir():
            match = FOLDER.match(sub.name)
            if sub.is_dir() and match:
                pid = normalise(match.group(1))
                found.setdefault(pid, Phase(pid, ""))
    return sorted(found.values(), key=lambda p: p.key)


def _from_roadmap(text: str) -> list[Phase]:
    phases: list[Phase] = []
    tokens = MarkdownIt().parse(text)
    for i, token in enumerate(tokens):
        if token.type != "inline":
            continue
        before = tokens[i - 1] if i else None
        if before is not None and before.type == "heading_open" and before.tag in ("h2", "h3", "h4"):
            match = HEADING.match(token.content.strip())
            if match:
                phases.append(Phase(normalise(match.group(1)), match.group(2).strip()))
            continue
        match = CHECKLIST.match(token.content.strip())
        if match:
            phases.append(Phase(normalise(match.group(2)), match.group(3).strip(), match.group(1) != " "))
    return phases


def next_phase(task_dir: Path, after: str | None) -> Phase | None:
    """The first phase after ``after`` (or the first of all), reading the files afresh."""
    for phase in discover(task_dir):
        if after is None or phase.key > sort_key(after):
            return phase
    return None
