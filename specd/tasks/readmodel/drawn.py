"""What rich drew on a terminal, kept by the read model: the terminal size it was drawn for (``screen``), and what
a kept drawing may hold to be printed again as it is (``styles_only``). Imports only ``os`` and ``json``: a kept
drawing is printed without loading rich.
"""

from __future__ import annotations

import json
import os


def styles_only(text: str) -> bool:
    """Whether ``text`` drives a terminal no further than rich's colours do: every ESC starts a style (``ESC [``,
    digits and ``;``, ``m``), and nothing else in it is a control character but newlines. A table kept otherwise
    (the store is specd's own, which no jail lets an agent write) is drawn afresh."""
    for i, part in enumerate(text.split("\x1b")):
        if i:
            style, end, part = part.partition("m")
            if not (end and style[:1] == "[" and (style == "[" or style[1:].replace(";", "").isdigit())):
                return False
        if not part.replace("\n", "").isprintable():
            return False
    return True


def screen() -> str:
    """What a table drawn on this terminal follows besides its rows and the environment's digest (which leaves
    ``COLUMNS`` and ``LINES`` out, and holds ``TERM``, ``NO_COLOR`` and ``FORCE_COLOR``): those two variables and
    the size of the first standard stream that is a terminal, which rich reads in that order."""
    size: list[int] | None = None
    for fd in (0, 1, 2):
        try:
            size = list(os.get_terminal_size(fd))
        except (OSError, ValueError):
            continue
        break
    return json.dumps([os.environ.get("COLUMNS"), os.environ.get("LINES"), size])
