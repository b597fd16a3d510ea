"""A run that stops writes its task's row into the read model: the next listing reads it instead of building it.

Whatever ends a run (finished, at a gate, failed, cancelled, interrupted), its last save and the release of its
lock have just moved the task folder's times, so the next listing found the row changed and built it again:
the pipeline loaded, the run state decoded, the plan worked out. The run has all of that at hand, so once, at
its end (never per step), it builds the row as a listing would (``status.listing_row``) and keeps it under the
same rules (``rows.remember``). Only where a store exists already: a project (or a worktree of `specd run`) that
nothing lists pays nothing for it.

One rule is met differently. A listing keeps no row built from a file changed in the last 0.1 s, because a
change in the same tick of the file clock would leave every mark as it was. The run's row is built from files
it changed a moment ago, and waiting 0.1 s at the end of every run costs too much. File times are stamped from
the kernel's coarse clock (``CLOCK_REALTIME_COARSE``), so once that clock has moved past the newest change, any
later change gets a later time: the run waits for that (a tick, a few ms at most), then takes the marks. Where
that clock does not exist, the listing's 0.1 s rule applies and the row is simply not kept. Nothing here can
fail a run: the store is only a cache.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from specd.tasks.project import Project
from specd.tasks.readmodel import inputs, rows, signature, store

# Linux's CLOCK_REALTIME_COARSE (the time module does not name it); elsewhere none is known.
COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5 if sys.platform == "linux" else 0)
WAIT_NS = 50_000_000  # at most this long for the coarse clock to pass the newest change (a tick is a few ms)


def write_row(project: Project, task: str) -> bool:
    """Keep ``task``'s row as a listing would build it now; False when it was not kept (no store, a live run, a
    change too recent, anything unexpected)."""
    try:
        return _write(project, task)
    except Exception:  # noqa: BLE001 - a cache: whatever goes wrong here, the run's outcome stands
        return False


def _write(project: Project, task: str) -> bool:
    parents = [str(folder) for folder in (project.tasks_dir, project.features_dir)]
    found = [parent for parent in parents if os.path.isfile(f"{parent}/{task}/config.json")]  # noqa: PTH113
    if len(found) != 1 or not inputs.plain(task):
        return False  # no such task, or a name in both places: a listing reports that every time
    if not os.path.exists(f"{project.specd_dir}/.cache/{store.NAME}"):  # noqa: PTH110
        return False  # nothing has listed this project (or its worktree) yet: the first listing builds every row
    parent, folder = found[0], f"{found[0]}/{task}"
    tree = signature.deep(folder)
    if tree is None or not _past(tree[1]):
        return False
    settled = _clock()
    from specd.tasks.status import listing_row, pipeline_or_problem

    config, broken = pipeline_or_problem(project)
    shared = inputs.shared_marks(project, config)
    got = signature.marks(folder)
    if got is None:
        return False
    sig, newest = got
    entry = (folder, frozenset(signature.names(sig[1])), Path(folder).is_symlink())
    row, deep = listing_row(project, task, entry, config, broken, {parent: project.rel(Path(parent))},
                            deep=shared is not None)
    return rows.remember(project, folder, row, sig, newest, deep, shared, settled)


def _clock() -> int:
    """The coarse clock file times are stamped from; where there is none, now less the listing's 0.1 s."""
    return time.clock_gettime_ns(COARSE) if COARSE else time.time_ns() - rows.RACY_NS


def _past(newest: int) -> bool:
    """Wait until the coarse clock is past ``newest``; False when it did not get there in ``WAIT_NS``."""
    deadline = time.monotonic_ns() + WAIT_NS
    while _clock() <= newest:
        if time.monotonic_ns() > deadline:
            return False
        time.sleep(0.001)
    return True
