"""Text from an agent, as a terminal shows it: nothing in it can drive the terminal.

What a model says reaches the user's terminal: a step's summary, a question, a command it asks to run, the
output of a failed step, a transcript. An escape sequence in it would move the cursor and erase lines (so a
command shown for approval need not be the one that runs), set the window's title, or write the clipboard
(OSC 52). So every control character but newline and tab is shown as its picture (ESC as ␛), one character
for one, which keeps a rich Text's styles where they were. Colours (SGR, ``ESC [ ... m``) may be kept where a
program's own output is shown (a test run's colours in `specd logs`): they only colour.
"""

from __future__ import annotations

from specd.system.lazyre import lazy

_CONTROL = "[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]"
_ANY = lazy(_CONTROL)
_KEEP_COLOURS = lazy(f"(\\x1b\\[[0-9;:]*m)|({_CONTROL})")


def _picture(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ... ␟, ␛ for ESC
    return "\u2421" if code == 0x7F else "\ufffd"


def visible(text: str, *, colours: bool = False) -> str:
    """``text`` with every control character but newline and tab shown as a picture; ``colours`` keeps SGR."""
    if not _ANY.search(text):
        return text
    if colours:
        return _KEEP_COLOURS.sub(lambda m: m.group(1) or _picture(m.group(2)), text)
    return _ANY.sub(lambda m: _picture(m.group()), text)
