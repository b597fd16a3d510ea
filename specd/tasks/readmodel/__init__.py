"""The read model of `specd status`: what every task shows, kept so that asking again is a read, not a rebuild.

The task folders are the truth; this package keeps, in one SQLite store (``store``: ``.specd/.cache/index.db``),
what was worked out from them: each task's row (``rows``, kept in the store by ``kept``; a run that stops writes
its own: ``own``), each `status TASK` answer and the printed listing (``printed``). Each is used only while the
marks it was kept with still hold: the folder signatures (``signature``), the marks of the shared inputs and of
the paths it read, and the environment's digest (``inputs``). Rows are worked out by ``specd.tasks.status``; a
finished task's row has a fast path (``finished``); nothing is kept that redaction would change (``redaction``);
a terminal's drawing is kept with the size it was drawn for (``drawn``).

Callers (the CLI, ``--json``, the page, MCP, and a run that stops) use the functions here; the modules below
are this package's own. Only ``printed``, ``inputs`` and ``drawn`` are imported with it: a kept answer is printed
without loading the rest.
"""

from __future__ import annotations

from specd.tasks.readmodel.inputs import inputs as answer_inputs
from specd.tasks.readmodel.inputs import project_root
from specd.tasks.readmodel.printed import answer, forget_listing, listing_inputs, remember_answer, remember_listing
from specd.tasks.readmodel.printed import listing as printed_listing

__all__ = ["answer", "answer_inputs", "forget_listing", "listing_inputs", "printed_listing", "project_root",
           "remember_answer", "remember_listing"]
