"""Reading what a child wrote to a pseudo-terminal, for the tests that run specd as a person at a shell sees it."""

from __future__ import annotations

import os


def drain(fd: int) -> bytes:
    """Everything written to the pty whose leader is ``fd``, read until its other end is closed (read while the
    child writes: a pty holds little)."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the writer is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
