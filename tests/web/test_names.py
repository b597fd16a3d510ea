"""A task document whose name is not UTF-8 (an agent's open(b"notes-\\xff.md")) does not break the task's page."""

from __future__ import annotations

import os
from typing import Any

from web_harness import Site


def test_a_document_named_with_bytes_that_are_not_utf8_is_shown(site: Site, signed_in: Any) -> None:
    folder = os.fsencode(site.root / ".specd" / "tasks" / "done")
    with open(folder + b"/notes-\xff.md", "wb") as handle:  # noqa: PTH123 - a name of bytes
        handle.write(b"# notes\n")
    reply = signed_in.get("/tasks/done")  # once a 500: the page's text could not be encoded
    assert reply.status_code == 200
    assert "notes-\ufffd.md" in reply.text
    assert signed_in.get("/tasks/done.json").status_code == 200
