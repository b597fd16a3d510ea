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


def outcome(request: AgentRequest, allowed: tuple[str, ...]) -> tuple[str, Path]:
    """The fallback outcome and its file; ``ValueError`` says why there is none."""
    found = find(request)
    if found is None:
        names = ", ".join(str(p.relative_to(request.task_dir)) for p in candidates(request))
        raise ValueError(f"the agent ended step {request.step} without calling complete_step, even after a "
                         f"reminder, and no 'Verdict:' line was found in {names}")
    value, path = found
    if value not in allowed:
        raise ValueError(f"{path}: 'Verdict: {value}' is not an allowed outcome of step {request.step} "
                         f"({', '.join(allowed)})")
    return value, path
