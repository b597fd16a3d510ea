"""Test files a step leaves in a folder the project ignores whole, where your next test run collects them: held.

A project ignores ``tmp/``, ``out/`` or ``coverage/`` whole, so git names each such folder once and no commit or
review shows what is in it. A bare `pytest` recurses into it all the same (its defaults pass by only ``build``,
``dist``, ``node_modules``, ``venv``, eggs and dot-folders) and imports each ``conftest.py`` and test module it
finds, as `go test ./...` builds the tests there: a ``tmp/cache/conftest.py`` the step wrote runs as you, outside
any jail, at your next test run (and jest's or vitest's test files, but those a build compiled from the project's own
tests). So when a step or hook ends, each such folder is looked
through (at most ``LOOK`` entries a close, the folders a runner passes by left out) for test files made or changed
while it ran, and those hold the run like source a rule of the step's hides (``hidden``). Other source there is a
build's or a cache's, the project's choice to keep out of git, and is not held.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from specd.git.sources import environment, fresh
from specd.system import findfiles
from specd.system.environments import MARKS
from specd.system.ownfiles import DEEPEST, walk

RULE = "collected"  # the "rule" hiding them, for ``hidden.why``: the project's own, ignoring the folder whole
LOOK = 20_000  # entries looked through a close, over every such folder; past that, the rest is not looked at
# What a test runner passes by, so a test file there runs nothing: pytest's default norecursedirs, environments,
# installs and caches (a dot-folder: pytest and `go test` pass those by too), and what other tools keep
PASSED = frozenset({"build", "dist", "node_modules", "venv", "CVS", "_darcs", "{arch}", "__pycache__", "vendor",
                    "site-packages", "target", "testdata"})
TESTS = ("_test.go", "_test.py", ".test.ts", ".spec.ts", ".test.tsx", ".spec.tsx", ".test.mts", ".test.cts")
# jest's and vitest's JavaScript tests, but not one a build compiled from a test of the project's own: TypeScript
# writes `src/app.test.ts` to an ignored `out/app.test.js` (a VS Code extension's layout), babel `src/x.test.js` to
# `lib/x.test.js`, and every build there would hold. Told by name: a file git tracks, of the same name but for the
# extensions that compile to this one.
COMPILED_FROM = {".js": (".ts", ".tsx", ".js", ".jsx"), ".jsx": (".tsx", ".jsx"), ".mjs": (".mts", ".mjs"),
                 ".cjs": (".cts", ".cjs")}
JS_TESTS = tuple(f"{kind}{ext}" for kind in (".test", ".spec") for ext in COMPILED_FROM)


def collected(name: str, tracked: frozenset[str] | None = None) -> bool:
    """Whether a test runner collects a file of this name: pytest's conftest.py and test modules, Go's tests, jest's
    and vitest's; a JavaScript test only when ``tracked`` (the names of the project's files) is known and holds none
    it is compiled from."""
    if name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")) or name.endswith(TESTS):
        return True
    if tracked is None or not name.endswith(JS_TESTS):
        return False
    stem, _, ext = name.rpartition(".")
    return not any(f"{stem}{source}" in tracked for source in COMPILED_FROM[f".{ext}"])


def names(top: Path, changed: Iterable[str]) -> frozenset[str] | None:
    """The names (not the paths) of the project's files: git's index as the run's search for secret files listed it,
    and the paths the step changed (a test it added is compiled at once); None when no search listed the index (no
    git process is added to a close for this: then no JavaScript test is held)."""
    index = findfiles.indexed(top)
    if index is None:
        return None
    return frozenset(path.rpartition("/")[2] for path in (*index, *changed))


def _passed(name: str) -> bool:
    return name.startswith(".") or name in PASSED or name.endswith((".egg", ".egg-info"))


def found(top: Path, ignored: Iterable[str], since_ns: int, changed: Iterable[str] = ()) -> dict[str, str]:
    """The test files made or changed since ``since_ns`` in the folders among ``ignored`` (what git ignores; a folder
    ends in "/") that a runner recurses into, each with ``RULE``; ``changed``: the paths the step changed."""
    budget, tests = LOOK, []
    for path in ignored:
        parts = path.rstrip("/").split("/")
        if not path.endswith("/") or any(_passed(part) for part in parts) or environment(top, path):
            continue
        for folder, dirs, files in walk(top / path.rstrip("/"), DEEPEST):
            budget -= len(dirs) + len(files)
            if budget < 0:
                break
            if any(name in MARKS for name in (*dirs, *files)):
                dirs.clear()  # an environment: its own interpreter's files, passed by
                continue
            dirs[:] = [name for name in dirs if not _passed(name)]
            tests += [f"{folder}/{name}" for name in files
                      if (collected(name) or name.endswith(JS_TESTS))  # a test by its name: worth a look
                      and fresh(Path(folder) / name, since_ns, folders=False)]
    if not tests:
        return {}
    # the project's names only when a JavaScript test was met: a set of a monorepo's 100,000 names is not free
    known = names(top, changed) if any(path.endswith(JS_TESTS) for path in tests) else None
    return {os.path.relpath(path, top): RULE for path in tests if collected(path.rpartition("/")[2], known)}
