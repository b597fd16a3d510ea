"""The last word on a step's outcome, for every backend: a ``Verdict: X`` line in the workflow's ``verdict_file``.

A review workflow names its verdict file in its frontmatter (``verdict_file: REVIEW.md``) and asks
for a last line like ``Verdict: revise``. A verdict the step wrote (the file changed while it ran)
decides, even when the agent reported something else: a review that says ``revise`` in REVIEW.md
must not pass because its agent said ``approve`` or ``done``; the disagreement is kept as a warning.
When the agent reported nothing (no ``complete_step`` call, no structured output, no ``$SPECD_RESULT``)
and there is no such line, or only one left over from an earlier visit, the step fails and says so.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path

from specd.agents.base import AgentFailed, AgentRequest, AgentResult
from specd.system.ownfiles import read_regular
from specd.tasks import phases

VERDICT_LIMIT = 8 << 20  # bytes of a review file read for its verdict
_VERDICT = re.compile(r"^\s*[*_]*verdict[*_]*\s*:\s*[*_`]*\s*([A-Za-z][\w-]*)", re.IGNORECASE | re.MULTILINE)
# Words reviewers write for the built-in review outcomes; used only when the outcome is allowed.
SYNONYMS = {
    "pass": "approve", "passed": "approve", "approved": "approve", "accept": "approve", "accepted": "approve",
    "lgtm": "approve", "revision": "revise", "revisions": "revise", "changes-requested": "revise",
    "needs-revision": "revise", "request-changes": "revise", "escalated": "escalate",
}

Seen = dict[Path, tuple[int, str] | None]  # verdict file → (mtime_ns, sha256) before the step ran


def verdict_file(request: AgentRequest) -> str | None:
    name = request.frontmatter.get("verdict_file")
    return str(name) if name else None


def candidates(request: AgentRequest, name: str) -> list[Path]:
    """Where the verdict file may be: the phase folder first (reviews are per phase), then the task folder."""
    found: list[Path] = []
    if request.phase:
        found += [phases.phase_dir(request.task_dir, request.phase) / name,
                  request.task_dir / "phases" / request.phase / name]
    found.append(request.task_dir / name)
    return found


def look(request: AgentRequest) -> Seen:
    """What the verdict files hold before the agent runs, to tell a fresh verdict from a stale one."""
    name = verdict_file(request)
    return {path: _stamp(path) for path in candidates(request, name)} if name else {}


def settle(request: AgentRequest, result: AgentResult, before: Seen) -> AgentResult:
    """The result with its outcome decided. A verdict this step wrote is the last word, even over a reported
    outcome (a disagreement is kept as a warning); else the reported outcome; else a clear failure."""
    name = verdict_file(request)
    if name is None:
        return result
    tried = candidates(request, name)
    found = [(path, word) for path in tried if (word := _last_verdict(path)) is not None]
    fresh = [(path, word) for path, word in found if not (path in before and before[path] == _stamp(path))]
    if fresh:
        path, word = fresh[0]
        if result.reported:
            return _overrule(request, result, path, word)
        outcome = _outcome(request, path, word, result)
        note = f"outcome '{outcome}' from the Verdict line in {_shown(request, path)} (no outcome was reported)"
        return replace(result, outcome=outcome, summary=result.summary or note,
                       data={**result.data, "verdict": outcome, "verdict_file": str(path)})
    if result.reported:
        return result  # an old verdict from an earlier visit says nothing about this one
    if found:
        path, word = found[0]
        raise _failure(result, f"{_shown(request, path)} still holds 'Verdict: {word}' from before this step "
              f"(this step did not change the file), and the agent reported no outcome")
    names = " or ".join(_shown(request, path) for path in tried)
    raise _failure(result, f"the agent reported no outcome and no 'Verdict:' line was found in {names} "
          f"(the workflow's verdict_file); it must report one of {', '.join(request.outcomes)}, or end {name} "
          "with a line such as 'Verdict: approve'")


def _overrule(request: AgentRequest, result: AgentResult, path: Path, word: str) -> AgentResult:
    """A reported outcome against the verdict the step wrote: the file wins, and the disagreement is kept."""
    outcome = _outcome(request, path, word, result)
    data = {**result.data, "verdict": outcome, "verdict_file": str(path)}
    if outcome == result.outcome:
        return replace(result, data=data)
    warning = (f"the agent reported outcome '{result.outcome}' but {_shown(request, path)} says 'Verdict: {word}'; "
               f"the verdict file is the last word, so the outcome is '{outcome}'")
    return replace(result, outcome=outcome, data={**data, "reported_outcome": result.outcome, "warning": warning})


def _outcome(request: AgentRequest, path: Path, word: str, result: AgentResult) -> str:
    outcome = word if word in request.outcomes else SYNONYMS.get(word, word)
    if outcome not in request.outcomes:
        raise _failure(result, f"{_shown(request, path)}: 'Verdict: {word}' is not an allowed outcome of "
              f"step {request.step} (allowed: {', '.join(request.outcomes)}); end the file with a line such as "
              f"'Verdict: {request.outcomes[0] if request.outcomes else 'done'}'")
    return outcome


def _last_verdict(path: Path) -> str | None:
    try:  # the agent's file: a FIFO or a link to /dev/zero there must not hang specd
        text = read_regular(path, VERDICT_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None
    matches = _VERDICT.findall(text)
    return matches[-1].lower() if matches else None  # the last line wins: a file may quote examples above it


def _failure(result: AgentResult, reason: str) -> AgentFailed:
    # Carries what the agent spent, so a failed review still counts against the budgets.
    return AgentFailed(reason, result.usage, result.transcript)


def _stamp(path: Path) -> tuple[int, str] | None:
    try:
        return path.stat().st_mtime_ns, hashlib.sha256(read_regular(path, VERDICT_LIMIT)).hexdigest()
    except OSError:
        return None


def _shown(request: AgentRequest, path: Path) -> str:
    try:
        return str(path.relative_to(request.project_root))
    except ValueError:
        return str(path)
