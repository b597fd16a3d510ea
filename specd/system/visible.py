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

# and Unicode's bidirectional embeddings, overrides and isolates: "Trojan Source" text, which a terminal or a
# browser that applies them shows in another order than it holds (a `.py` name shown ending `.md`, code whose
# comment seems to close before a statement that runs)
_BIDI = "\\u202a-\\u202e\\u2066-\\u2069"
_CONTROL = f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]"
_ANY = lazy(_CONTROL)
_BIDI_ANY = lazy(f"[{_BIDI}]")
_KEEP_COLOURS = lazy(f"(\\x1b\\[[0-9;:]*m)|({_CONTROL})")


def _picture(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ... ␟, ␛ for ESC
    return "\u2421" if code == 0x7F else "\ufffd"


def bidi_shown(text: str) -> str:
    """``text`` with each bidirectional control written out as ``[U+202E]``: a page shows what its text holds, in
    the order it holds it (plain text, so it is as safe in an attribute as between tags)."""
    if not _BIDI_ANY.search(text):
        return text
    return _BIDI_ANY.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def visible(text: str, *, colours: bool = False) -> str:
    """``text`` with every control character but newline and tab shown as a picture; ``colours`` keeps SGR."""
    if not _ANY.search(text):
        return text
    if colours:
        return _KEEP_COLOURS.sub(lambda m: m.group(1) or _picture(m.group(2)), text)
    return _ANY.sub(lambda m: _picture(m.group()), text)
