"""The markdown structure specd reads in task documents, from markdown-it-py's token stream.

A document becomes a flat list of blocks: headings (ATX, with their level), bullet-list items (with their
task-list box: ticked, open, or none) and the lines of every other paragraph. Code blocks, fenced or
indented, and block quotes hold no structure for specd, so they yield nothing; an underlined (setext)
heading is read as the paragraph lines it was before it had an underline.

markdown-it-py is imported on the first parse only. What a caller reads from a file (``outline``) is kept in
``.specd/.cache/`` keyed by the file's size, time and inode, so `specd status` over documents it has read
before never loads the parser.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from specd import __version__
from specd.system.ownfiles import read_regular

CACHE = "markdown-blocks.json"
MAX_BYTES = 8 << 20  # a task document past this is not one to read for its outline
RACY_NS = 100_000_000  # a file changed this recently may change again within the same time tick: not kept


class Block(NamedTuple):
    kind: str  # "heading" | "item" | "line"
    level: int  # a heading's level; 0 otherwise
    text: str  # a heading's or item's first line (an item without its box), or one paragraph line
    checked: bool | None = None  # an item's task-list box: True ticked, False open, None no box


@cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def blocks(text: str) -> list[Block]:
    """The blocks of ``text``, in document order."""
    found: list[Block] = []
    quoted, lists, heading = 0, [], 0  # block-quote depth, enclosing list kinds, the open heading's level
    item_open = False  # the next paragraph is an item's first one
    for token in _parser().parse(text):
        kind = token.type
        if kind == "blockquote_open":
            quoted += 1
        elif kind == "blockquote_close":
            quoted -= 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(kind)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            item_open = lists[-1] == "bullet_list_open"
        elif kind == "heading_open":
            heading = int(token.tag[1:]) if token.markup.startswith("#") else 0
        elif kind == "inline" and not quoted:
            lines = token.content.split("\n")
            if heading:
                found.append(Block("heading", heading, token.content.strip()))
            elif item_open:
                found.append(_item(lines[0]))
                found += [Block("line", 0, line) for line in lines[1:]]
            else:
                found += [Block("line", 0, line) for line in lines]
            heading, item_open = 0, False
        elif kind == "inline":
            heading, item_open = 0, False
    return found


def _item(first: str) -> Block:
    box, rest = first[:3], first[3:]
    if box in ("[ ]", "[x]", "[X]") and (not rest or rest[0].isspace()):
        return Block("item", 0, rest.strip(), box != "[ ]")
    return Block("item", 0, first)


def outline(path: Path, what: str, build: Callable[[list[Block]], Any]) -> Any | None:
    """``build`` of the blocks of the file at ``path`` (None if it cannot be read), computed once per version
    of the file; ``what`` names the reading and ``build`` returns plain JSON values."""
    try:
        st = path.stat()
    except OSError:
        return None
    mark = [st.st_mtime_ns, st.st_size, st.st_ino]
    store = _store(path)
    memo = _memo(store) if store else {}
    key = f"{what}:{path.absolute()}"
    entry = memo.get(key)
    if isinstance(entry, dict) and entry.get("mark") == mark and "value" in entry:
        return entry["value"]
    try:
        # a task document the agent may have made a FIFO or a link to /dev/zero: read as a regular file, capped
        value = build(blocks(read_regular(path, MAX_BYTES, follow=True).decode("utf-8", errors="replace")))
    except OSError:
        return None
    if store and st.st_mtime_ns < time.time_ns() - RACY_NS:
        memo[key] = {"mark": mark, "value": value}
        if not _dirty:
            atexit.register(_flush)  # one write per process, however many files it read
        _dirty.add(store)
    return value


_memos: dict[Path, dict[str, Any]] = {}
_dirty: set[Path] = set()


def _store(path: Path) -> Path | None:
    """``.specd/.cache/`` of the project holding ``path`` (a task document), if there is one."""
    for parent in path.absolute().parents:
        if parent.name == ".specd":
            return parent / ".cache" / CACHE
    return None


def _memo(store: Path) -> dict[str, Any]:
    if store not in _memos:
        try:
            data = json.loads(store.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            data = None
        ok = isinstance(data, dict) and data.get("version") == __version__ and isinstance(data.get("files"), dict)
        _memos[store] = dict(data["files"]) if ok else {}
    return _memos[store]


def _flush() -> None:
    from specd.state import atomic

    for store in sorted(_dirty):
        files = {k: v for k, v in _memos[store].items() if Path(k.partition(":")[2]).exists()}  # forget deleted
        with contextlib.suppress(OSError, TypeError, ValueError):  # a read-only checkout parses every time
            atomic.make_folder(store.parent)
            # A cache: whole or not at all, even after a kill, but worth no fsync (lost or torn, it is parsed again)
            atomic.write_text(store, json.dumps({"version": __version__, "files": files}, separators=(",", ":")),
                              durable=False)
    _dirty.clear()
