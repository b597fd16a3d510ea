"""Regular expressions compiled when first used, not when their module is imported.

Python compiles a pattern in Python itself: 0.1 to 3 ms each, and a short command such as `specd status TASK`
imports modules holding dozens it never uses (the failure clusters' volatile parts, the ROADMAP's phase
headings when the markdown cache answers). ``lazy`` returns a stand-in that compiles on its first use and then
keeps the compiled pattern's methods on itself, so later calls cost what a compiled pattern's do.

A stand-in is not a ``re.Pattern`` for ``isinstance``, nor accepted by ``re.sub(pattern, ...)``: call its own
methods (``PATTERN.sub(...)``), as every use in specd does. The zygote compiles them all before it forks
(``compile_all``): its runs would otherwise each compile what they use.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _Lazy:
    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)
        _made.append(self)

    def __getattr__(self, name: str) -> Any:  # only called for what is not on the stand-in yet
        if name.startswith("__") or name == "_compiled":
            raise AttributeError(name)
        value = getattr(self.compiled(), name)
        setattr(self, name, value)
        return value

    def compiled(self) -> re.Pattern[str]:
        found: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if found is None:
            found = self._compiled = re.compile(*self._source)
        return found

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r})"


_made: list[_Lazy] = []


def compile_all() -> int:
    """Compile every pattern made so far; returns how many. The zygote calls it before it forks runs, which
    then inherit the compiled patterns instead of each compiling its own."""
    for stand_in in _made:
        stand_in.compiled()
    return len(_made)


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done at the first use of the result."""
    return cast("re.Pattern[str]", _Lazy(pattern, flags))
