"""A step whose files hold a secret waits for a person, and those files wait out of every commit meanwhile.

The recorder's barrier (``specd.git.barrier``) finds them when the step or a hook closes, and withholds them
from each commit; the brain asks it after every stage and stops the run here. The wait is held like any other
(``specd.engine.waiting.HELD``): `specd approve` lets the files through as they are (``answers.approved_files``),
`specd reject --note` runs the step again with the note, and `specd continue` alone keeps waiting.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from specd.engine.loop import Stop
from specd.engine.waiting import waiting
from specd.git.barrier import Hit
from specd.pipeline.model import Step
from specd.state.model import Frame

Holds = Callable[[], list[Hit]]


def check(holds: Holds | None, task: str, frame: Frame, step: Step) -> None:
    """Stop the run (WAITING_FOR_HUMAN) when files changed so far hold secrets; the reason names each file and
    what its secret is, never the value."""
    hits = holds() if holds is not None else []
    if not hits:
        return
    name = shlex.quote(task)
    files = "; ".join(f"{hit.path} holds {hit.holds}" for hit in hits)
    raise Stop("WAITING_FOR_HUMAN", f"{'a file' if len(hits) == 1 else f'{len(hits)} files'} changed at step "
               f"{step.name!r} {'holds' if len(hits) == 1 else 'hold'} a secret and {'is' if len(hits) == 1 else 'are'}"
               f" not committed: {files}. Take the secret out of the file, then `specd approve {name}`; or `specd "
               f"approve {name}` commits it as it is; or `specd reject {name} --note TEXT` runs the step again with "
               "your note", waiting("secret", frame, step, files=[hit.as_dict() for hit in hits]))
