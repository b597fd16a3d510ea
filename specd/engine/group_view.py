"""What a `parallel` group's runner reads and writes besides the run state: the combine, its note, the tree's marks.

``combined`` is the rule of specd/pipeline/groups.py: the (outcome, any | all) rules are tried in order; ``any``
matches when one member gave that outcome, ``all`` when every member that ran did. ``note`` is how the members'
reviews reach the next step: the group's summary (``{{ steps.GROUP.summary }}``), and the same words in
``GROUP.group.md`` in the task folder. ``tree_marks`` is the tree as the read-only check compares it, for a
group and for a lone ``read_only`` step alike (``breach``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from specd.engine import records
from specd.state import atomic


def combined(rules: Sequence[tuple[str, str]], outcomes: Sequence[str]) -> str | None:
    """The group's outcome from its members' (None: no rule matches, or no member ran)."""
    if not outcomes:
        return None
    for outcome, quantifier in rules:
        if (quantifier == "any" and outcome in outcomes) or (quantifier == "all" and set(outcomes) == {outcome}):
            return outcome
    return None


def note(task_dir: Path, group: str, outcome: str, rows: Sequence[dict[str, Any]]) -> str:
    """The group's summary, one line per member, also written to ``GROUP.group.md`` in the task folder."""
    lines = [f"- {row['step']}: {row['outcome']}" + (f" — {row.get('summary')}" if row.get("summary") else "")
             for row in rows]
    summary = f"{group}: {outcome}\n" + "\n".join(lines)
    text = f"# {group}: {outcome}\n\nWhat each member of the group said:\n\n" + "\n".join(lines) + "\n"
    atomic.write_text(task_dir / f"{group}.group.md", text)  # redacted there
    return summary


def tree_marks(root: Path, task_dir: Path) -> dict[str, str]:
    """sha256 of every file in the project (dot-folders aside) and in the task folder (specd's own files
    aside): what a read-only step must leave as it found it."""
    marks = {f"task/{path}": digest for path, digest in records.snapshot(task_dir).items()}
    marks.update(records.snapshot(root))
    return marks


def breach(root: Path, task_dir: Path, before: dict[str, str], what: str) -> str | None:
    """Why a read-only step or group failed, if the tree changed while it ran (where no jail could stop it)."""
    now = tree_marks(root, task_dir)
    paths = sorted({path for path, _ in set(now.items()) ^ set(before.items())})
    if not paths:
        return None
    return (f"{what} is read-only, but the tree changed while it ran ({', '.join(paths[:5])}"
            f"{' ...' if len(paths) > 5 else ''}); specd takes none of it as its work: undo the change")
