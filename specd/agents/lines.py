"""Output of agents and hooks, read in bounded pieces: a line is capped, a transcript is never held whole.

A child may print one line of any length (a minified bundle, a runaway loop, 300 MB of ``x``).
specd reads the pipe in chunks and keeps at most ``LINE_LIMIT`` bytes of each line; the rest is
counted, dropped and replaced by a visible mark, so memory stays flat and the transcript still
shows how the line began and how much of it there was.

Redaction is line by line, as the output arrives, so a secret never reaches the disk even if specd
is killed mid-command. The one secret shape that spans lines, a PEM private key, is masked by
remembering that a key began: its body lines are masked until its END line.
"""

from __future__ import annotations

import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from specd.redact import MASK, redact

LINE_LIMIT = 64 * 1024  # bytes of one line kept; a longer line is cut, with a mark saying by how much
CHUNK = 64 * 1024  # bytes read from a pipe at a time
# Bytes kept past the cap for redaction only: a secret cut in half by the cap is still seen (and masked) whole.
PEEK = 1024

_KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----")
_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY-----")
# What a key's body may hold: base64 lines, and the "Proc-Type: 4,ENCRYPTED" headers of an encrypted key.
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=\s]*|[A-Za-z-]+:.*")


@dataclass(frozen=True)
class Line:
    head: bytes  # the line's first limit + PEEK bytes at most, without its newline
    size: int  # the whole line's length in bytes
    ended: bool  # a newline ended it (the last line of a stream may have none)


def read_lines(stream: IO[bytes], limit: int = LINE_LIMIT) -> Iterator[Line]:
    """The lines of ``stream`` as they arrive, each holding at most ``limit + PEEK`` bytes in memory."""
    read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)  # read1: what the pipe has, no waiting
    keep = limit + PEEK
    head, size = bytearray(), 0
    while chunk := read(CHUNK):
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            if len(head) < keep:
                head += chunk[start:min(end, start + keep - len(head))]
            size += end - start
            if newline < 0:
                break
            yield Line(bytes(head), size, True)
            head, size, start = bytearray(), 0, newline + 1
    if size:
        yield Line(bytes(head), size, False)


def cut_mark(cut: int) -> str:
    return f"[... {cut:,} bytes of this line cut ...]"


def text_of(line: Line, clean: Callable[[str], str] = redact, limit: int = LINE_LIMIT) -> str:
    """The line as text (no newline), passed through ``clean``, with the cut mark if it was capped.

    ``limit`` is the one the line was read with.
    """
    whole = line.head.decode("utf-8", errors="replace")
    cut = max(0, line.size - limit)
    if not cut:
        return clean(whole)
    # Cleaned with the peeked bytes, then cut back to the cap: a secret across the cap is masked whole.
    kept = len(line.head[:limit].decode("utf-8", errors="replace"))
    return f"{clean(whole)[:kept]} {cut_mark(cut)}"


class Redactor:
    """``redact`` for a stream of lines, which also masks a PEM private key's body lines."""

    def __init__(self) -> None:
        self.in_key = False

    def __call__(self, line: str) -> str:
        if self.in_key:
            end = _KEY_END.search(line)
            if end is not None:
                self.in_key = False
                return MASK + redact(line[end.end():])
            if _KEY_BODY.fullmatch(line):
                return MASK if line.strip() else line
            self.in_key = False  # not key material: the key was torn off, as redact's own rule assumes
        begins = list(_KEY_BEGIN.finditer(line)) if "PRIVATE KEY" in line else []
        if begins and not _KEY_END.search(line, begins[-1].end()):
            self.in_key = True  # a key began and did not end on this line: its body follows
        return redact(line)


def pump(stream: IO[bytes], sink: IO[bytes]) -> None:
    """Copy ``stream`` to ``sink`` line by line: redacted, capped, flushed as each line ends."""
    clean = Redactor()
    for line in read_lines(stream):
        sink.write((text_of(line, clean) + ("\n" if line.ended else "")).encode("utf-8"))
        sink.flush()  # the transcript's mtime is the agent's activity (`specd status` reads it)


def tail(path: Path, chars: int) -> str:
    """The last ``chars`` characters of a text file, reading only its last bytes."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 4 * chars))  # a UTF-8 character is at most 4 bytes
            data = handle.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")[-chars:]


class Collector:
    """A pipe read to its end in a thread, keeping only its first and last ``keep`` bytes.

    For output that goes back whole to a model (which sees the head and the tail anyway): a command
    that prints gigabytes costs no more memory than one that prints a page.
    """

    def __init__(self, stream: IO[bytes], keep: int) -> None:
        self.keep, self.size = keep, 0
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self._tail_size = 0
        self._lock = threading.Lock()  # text() may read while a grandchild still feeds the pipe
        self._stream = stream
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        read: Callable[[int], bytes] = getattr(stream, "read1", stream.read)
        try:
            while chunk := read(CHUNK):
                with self._lock:
                    self._take(chunk)
        except (OSError, ValueError):
            pass  # the pipe was closed under us: what was read is the output

    def _take(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self._tail_size += len(chunk)
            while self._tail_size - len(self.tail[0]) >= self.keep:
                self._tail_size -= len(self.tail.popleft())

    def text(self, wait: float = 5.0) -> str:
        """The output as text, with a mark where the middle was dropped; waits for the end of the pipe."""
        self._thread.join(timeout=wait)  # a background grandchild may keep the pipe open: not ours to wait for
        if not self._thread.is_alive():
            self._stream.close()
        with self._lock:
            head, tail, size = bytes(self.head), b"".join(self.tail)[-self.keep:], self.size
        dropped = size - len(head) - len(tail)
        middle = f"\n[... {dropped:,} bytes of output cut ...]\n".encode() if dropped > 0 else b""
        return (head + middle + tail).decode("utf-8", errors="replace")
