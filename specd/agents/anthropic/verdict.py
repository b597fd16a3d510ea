"""The fallback outcome: a ``Verdict: X`` line in the file the workflow names.

Used only when the model ended the step without calling ``complete_step``,
even after a reminder. Review workflows write their verdict as the last line
of REVIEW.md, so a model that forgot the tool still leaves a usable outcome.
"""

from __future__ import annotations

import re
from pathlib import Path

from specd.agents.base import AgentRequest

_VERDICT = re.compile(r"^\s*[*_]*verdict[*_]*\s*:\s*[*_`]*\s*([A-Za-z][\w-]*)", re.IGNORECASE | re.MULTILINE)


def candidates(request: AgentRequest) -> list[Path]:
    name = str(request.frontmatter.get("verdict_file") or "REVIEW.md")
    found: list[Path] = []
    if request.phase:
        found += [request.task_dir / "phases" / f"phase-{request.phase}" / name,
                  request.task_dir / "phases" / request.phase / name]
    found.append(request.task_dir / name)
    return found


def find(request: AgentRequest) -> tuple[str, Path] | None:
    """(verdict in lower case, file) from the first candidate that has one; the last line wins."""
    for path in candidates(request):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        matches = _VERDICT.findall(text)
        if matches:
            return matches[-1].lower(), path
    return None
