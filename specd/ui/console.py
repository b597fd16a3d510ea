"""One shared rich console per stream, created on first use."""

from __future__ import annotations

from functools import cache

from rich.console import Console


@cache
def out() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:  # piped output: do not cut names at rich's 80-column default
        console.width = 160
    return console


@cache
def err() -> Console:
    return Console(stderr=True, highlight=False)


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
