"""The README's table of contents lists every `##` heading, in order, with the anchor GitHub gives it."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- contents -->", "<!-- /contents -->"


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def contents(text: str) -> str:
    outside = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # a `## ` inside a code block is no heading
    headings = [line[3:] for line in outside.splitlines() if line.startswith("## ")]
    listed = [h for h in headings if h not in ("Set up", "Contents")]  # the two above the list itself
    return "\n".join(f"- [{h.replace('`', '')}](#{anchor(h)})" for h in listed)


def test_the_table_of_contents_lists_every_section() -> None:
    text = README.read_text(encoding="utf-8")
    assert START in text, f"README.md has no {START} ... {END} block"
    shown = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert shown == contents(text), "regenerate it: python tests/test_readme_toc.py"


if __name__ == "__main__":  # print the block to paste: python tests/test_readme_toc.py
    print(contents(README.read_text(encoding="utf-8")))
