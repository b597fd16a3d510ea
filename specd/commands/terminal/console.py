"""One shared rich console per stream, created on first use; everything printed is redacted, and no text in it
can drive the terminal (``specd.system.visible``)."""

from __future__ import annotations

import sys
from functools import cache
from typing import Any

from rich.console import Console
from rich.text import Text

from specd.redact import redact
from specd.system.visible import visible


class _Redacting:
    """A text stream that redacts each write, then hands it to ``sys.<name>``.

    The stream is looked up at write time, as rich does by default, so test
    capture and redirected output keep working.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def write(self, text: str) -> int:
        stream = getattr(sys, self._name)
        stream.write(redact(text))
        return len(text)

    def __getattr__(self, attr: str) -> Any:  # isatty, fileno, flush, encoding: the real stream's
        return getattr(getattr(sys, self._name), attr)


class ShownConsole(Console):
    """A console whose text shows every control character as a picture: what an agent said cannot move the
    cursor, erase a line or write the clipboard. rich's own styles are added after, when it renders; a picture
    is no markup, so markup reads as it did."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Before rich reads it: rich drops BEL and CR itself, and would keep ESC.
        return super().render_str(visible(text), **kwargs)


@cache
def out() -> Console:
    console = ShownConsole(file=_Redacting("stdout"), highlight=False)  # type: ignore[arg-type]
    if not console.is_terminal:  # piped output: do not cut names at rich's 80-column default
        console.width = 160
    return console


@cache
def err() -> Console:
    console = ShownConsole(file=_Redacting("stderr"), highlight=False)  # type: ignore[arg-type]
    if not console.is_terminal:  # a log file or a pipe: one message, one line, never cut mid-sentence
        console.soft_wrap = True
        console.width = 10_000
    return console


class Spinner:
    """The live line during a step (terminals only); paused while someone is asked something."""

    active: Spinner | None = None

    def __init__(self, renderable: object) -> None:
        self._status = err().status(renderable)  # type: ignore[arg-type]

    def start(self) -> None:
        Spinner.active = self
        self._status.start()

    def stop(self) -> None:
        self._status.stop()
        if Spinner.active is self:
            Spinner.active = None


def pause_spinner() -> Spinner | None:
    spinner = Spinner.active
    if spinner is not None:
        spinner._status.stop()
    return spinner
