"""Test files a step leaves in a folder the project ignores whole, where your next test run collects them: held.

A project ignores ``tmp/``, ``out/`` or ``coverage/`` whole, so git names each such folder once and no commit or
review shows what is in it. A bare `pytest` recurses into it all the same (its defaults pass by only ``build``,
``dist``, ``node_modules``, ``venv``, eggs and dot-folders) and imports each ``conftest.py`` and test module it
finds, as `go test ./...` builds the tests there: a ``tmp/cache/conftest.py`` the step wrote runs as you, outside
any jail, at your next test run. So when a step or hook ends, each such folder is looked
through (at most ``LOOK`` entries a close, the folders a runner passes by left out) for test files made or changed
while it ran, and those hold the run like source a rule of the step's hides (``hidden``). Other source there is a
build's or a cache's, the project's choice to keep out of git, and is not held.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from specd.git.sources import environment, fresh
from specd.system.environments import MARKS

RULE = "collected"  # the "rule" hiding them, for ``hidden.why``: the project's own, ignoring the folder whole
LOOK = 20_000  # entries looked through a close, over every such folder; past that, the rest is not looked at
# What a test runner passes by, so a test file there runs nothing: pytest's default norecursedirs, environments,
# installs and caches (a dot-folder: pytest and `go test` pass those by too), and what other tools keep
PASSED = frozenset({"build", "dist", "node_modules", "venv", "CVS", "_darcs", "{arch}", "__pycache__", "vendor",
                    "site-packages", "target", "testdata"})
# Not jest's or vitest's `*.test.js`: TypeScript compiles a project's own tests into such a folder (`out/`, a VS Code
# extension's), and every build there would hold.
TESTS = ("_test.go", "_test.py")


def collected(name: str) -> bool:
    """Whether a test runner collects a file of this name: pytest's conftest.py and test modules, Go's tests."""
    return name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) or name.endswith(TESTS)


def _passed(name: str) -> bool:
    return name.startswith(".") or name in PASSED or name.endswith((".egg", ".egg-info"))


def found(top: Path, ignored: Iterable[str], since_ns: int) -> dict[str, str]:
    """The test files made or changed since ``since_ns`` in the folders among ``ignored`` (what git ignores; a folder
    ends in "/") that a runner recurses into, each with ``RULE``."""
    held: dict[str, str] = {}
    budget = LOOK
    for path in ignored:
        parts = path.rstrip("/").split("/")
        if not path.endswith("/") or any(_passed(part) for part in parts) or environment(top, path):
            continue
        todo = [str(top / path.rstrip("/"))]
        while todo and budget > 0:
            folder = todo.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError:
                continue
            budget -= len(entries)
            if any(entry.name in MARKS for entry in entries):
                continue  # an environment: its own interpreter's files, passed by
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if not _passed(entry.name):
                        todo.append(entry.path)
                elif collected(entry.name) and fresh(Path(entry.path), since_ns, folders=False):
                    held[os.path.relpath(entry.path, top)] = RULE
    return held
