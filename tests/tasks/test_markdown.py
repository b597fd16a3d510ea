"""Task documents read through markdown-it-py's token stream, once per version of a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from specd.tasks.markdown import Block, blocks

DOC = """# Title

Intro line one
intro line two

## Section `code`

- [ ] open item
- [x] ticked **item**
  continued on a second line
- [ ]no space: not a box
* plain item
1. [ ] ordered: not a task-list item

```
## Phase 9: in a fence
- [ ] fenced
```

    - [ ] indented code

> - [ ] quoted
> Status: done

Underlined
----------

### Closing hashes ###
"""


def test_blocks_are_headings_items_and_paragraph_lines_outside_code_and_quotes() -> None:
    assert blocks(DOC) == [
        Block("heading", 1, "Title"),
        Block("line", 0, "Intro line one"),
        Block("line", 0, "intro line two"),
        Block("heading", 2, "Section `code`"),
        Block("item", 0, "open item", False),
        Block("item", 0, "ticked **item**", True),
        Block("line", 0, "continued on a second line"),
        Block("item", 0, "[ ]no space: not a box"),
        Block("item", 0, "plain item"),
        Block("line", 0, "[ ] ordered: not a task-list item"),
        Block("line", 0, "Underlined"),  # a setext heading reads as the paragraph line it was
        Block("heading", 3, "Closing hashes"),
    ]


def specd(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "specd", "--project", str(root), *args],
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def test_status_parses_a_document_once_per_version_of_it(tmp_path: Path) -> None:
    (tmp_path / ".specd").mkdir()
    assert specd(tmp_path, "new", "t").returncode == 0
    context = tmp_path / ".specd" / "tasks" / "t" / "CONTEXT.md"
    past = time.time() - 60
    os.utime(context, (past, past))  # older than a file-time tick: safe to keep its reading

    first = specd(tmp_path, "status", "t", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["next"]["step"] == "discuss"  # CONTEXT.md lists open gray areas
    assert "markdown_it" in first.stderr  # parsed

    again = specd(tmp_path, "status", "t", "--json")
    assert json.loads(again.stdout) == json.loads(first.stdout)
    assert "markdown_it" not in again.stderr  # read from .specd/.cache: the parser is never loaded

    # A new version of the file is read afresh: every gray area ticked, so research comes next.
    context.write_text(context.read_text(encoding="utf-8").replace("- [ ]", "- [x]"), encoding="utf-8")
    os.utime(context, (past + 1, past + 1))
    ticked = specd(tmp_path, "status", "t", "--json")
    assert json.loads(ticked.stdout)["next"]["step"] == "research"
    assert "markdown_it" in ticked.stderr
