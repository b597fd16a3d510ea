"""A failed round of checks, worded for the step's next prompt.

The rounds themselves are read back from the history by ``specd.state.rounds``, below the engine, which
`status` and the page use too.
"""

from __future__ import annotations

from specd.pipeline.model import Step
from specd.state.model import Current, RunState
from specd.state.rounds import failing, last_round, why


def feedback(state: RunState, cur: Current, step: Step) -> str:
    """What the agent is told about the failed round before this run of the step; '' when there was none."""
    row = last_round(state, cur) if step.checks and cur.attempt > 1 else None
    if row is None or row.get("outcome") == "passed":
        return ""
    bad = failing(row)
    return (f"attempt {min(cur.checked + 1, int(row.get('of') or 1))} of {row.get('of')}. After your last attempt "
            f"the check `{bad.get('run')}` {why(bad)}. Fix the cause, then finish the step as before. The end of "
            f"its output:\n\n```\n{bad.get('output') or '(no output)'}\n```")
