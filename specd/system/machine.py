"""When the machine refuses a write mid-run: say so, keep what was saved, and leave a trail.

The in-memory state may be half-way through a transition when a write fails,
so it is never saved as it is: the last state on disk is reloaded and only its
status and reason change. If even that cannot be written, the reason goes to
the journal, where ``specd status`` finds it.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from specd.errors import MachineError, machine_error
from specd.state.store import StateStore

INTERRUPTED = "run_interrupted"  # the journal event that explains a run that could not save its end


def stop_run(exc: OSError, store: StateStore, task: str) -> MachineError | None:
    """Record why the run stopped (best effort); the MachineError to raise, or None if ``exc`` is not one."""
    error = machine_error(exc, resume=f"specd continue {task}")
    if error is None:
        return None
    saved = False
    with contextlib.suppress(Exception):  # the state may be unreadable or unwritable now; the journal remains
        state = store.load()
        if state is not None:
            step = state.current.step if state.current else None
            state.status, state.reason = "BLOCKED", str(error)
            state.waiting = {"kind": "machine", "step": step} if step else {"kind": "machine"}
            store.save(state)
            saved = True
    with contextlib.suppress(OSError):
        store.journal.append(INTERRUPTED, task=task, status="BLOCKED", reason=error.message, fix=error.fix,
                             state_saved=saved)
    return error


def interrupted_reason(store: StateStore) -> str | None:
    """Why the last run stopped, when it could not record that in the state (from the journal's last event)."""
    try:
        events = store.journal.read()
    except OSError:
        return None
    if events and events[-1].get("kind") == INTERRUPTED:
        return f"{events[-1].get('reason')}; fix: {events[-1].get('fix')}"
    return None


# What a failed git command says when the machine refused it, as the errno it stands for.
_SAID = {"No space left on device": errno.ENOSPC, "Read-only file system": errno.EROFS,
         "Disk quota exceeded": errno.EDQUOT}
_REFUSALS = frozenset(_SAID.values())


def machine_refusal(exc: Exception, where: Path | None) -> OSError | None:
    """``exc`` as the machine's refusal of a write (a full disk, a read-only file system), or None.

    A git command that failed for that reason says so in its own words; it becomes the OSError it stands for,
    so the run stops the way any refused write stops it."""
    if isinstance(exc, OSError):
        return exc if exc.errno in _REFUSALS else None
    said = str(exc)
    for words, number in _SAID.items():
        if words in said:
            return OSError(number, os.strerror(number), str(where) if where is not None else None)
    return None
