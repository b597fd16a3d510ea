"""Code a step hid from git with a rule git cannot see either: held for a person before the run goes on.

A step may write ``tests/.gitignore`` naming itself and ``conftest.py``, then ``tests/conftest.py``: git shows
neither, so the step's commit, `git status` and every review miss both, and your own next `pytest` runs the
conftest as you, outside any jail (a test file of any runner the same: jest, vitest, `go test ./...`, `cargo
test`). So when a step or hook ends, each ``.gitignore`` that git ignores and that was made or changed while it
ran is a rule of the step's that no review sees; git says which ignored paths each rule hides (`git
check-ignore -v`), and the source files among them (the folders hidden whole are looked through) are held: the run
waits (WAITING_FOR_HUMAN) naming them, like a file that holds a secret (``engine/secret_hold``). A rule left by an
earlier step (hiding nothing yet, so nothing was held) hides what this step makes as well: the source it hides that
was made or changed while the step ran is held too.

Tools write such rules too, for folders of their own: pytest's, mypy's and ruff's caches, a virtualenv (uv,
virtualenv), `uv build`'s ``dist/``. Their folders hold no source, or are an environment (``pyvenv.cfg``), whose
Python files are not held: pytest passes an environment by, and only its own interpreter imports them (its other
source is: jest or `go test ./...` would not pass it by). Source git ignores by the project's own rules (a
``local_settings.py``) is said, not held: the project chose to keep such files out of git (``ignored.py``); so is
source kept out by a ``.gitignore`` the step changed where git shows it (``look``): that rule is in its commit.
A repository of its own inside the tree hides what it holds from git too, and is held the same way (``nested``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from specd.errors import listed
from specd.git import collected, instructions, loaders, nested
from specd.git.repo import git, nul
from specd.git.sources import GIT, code, fresh
from specd.git.tree import inside
from specd.system.envfiles import is_env_name, maybe_secret
from specd.system.ownfiles import read_regular

RULES = ".gitignore"
MOST = 100  # source files named one by one; past that, the folders of the rules that hide them
READ = 4 << 20
EXCERPT = 4096  # bytes of a held file the run state keeps for a page that cannot read it
OWN = ", a git repository of its own, which git leaves out of every commit"  # after "in sub/"
INSTRUCTED = "instructions your own agent CLI reads as yours at its next start here, which git ignores"
EDITED = "settings or tasks of a tool of yours (an editor, aider, docker compose, mise), which git ignores"
COLLECTED = "in a folder the project ignores whole, where your next test run collects it"
_LOADED = {loaders.UNREADABLE: "that cannot be read (a link elsewhere, or not a file)"}


def look(top: Path, ignored: list[str], since_ns: int, changed: list[str], repos: Sequence[str] = (),
         keys: Sequence[str] = ()) -> tuple[dict[str, str], dict[str, str]]:
    """(each file held: source a rule git ignores hides (all it hides when the rule was made or changed since
    ``since_ns``, else what was: a rule an earlier step left, hiding nothing then, hides this step's files as well),
    and ``nested`` and ``instructions``' files; the source made or changed since ``since_ns`` that a ``.gitignore``
    among ``changed`` hides): a rule the step added where git shows it is in its commit, the source it hides in
    none, so that source is said. ``repos``: the untracked folders git shows as one entry ("sub/"); ``keys``: the
    untracked key files specd leaves out of every commit (``loaders``)."""
    made = [path for path in ignored if path.rpartition("/")[2] == RULES and fresh(top / path, since_ns)]
    old = [path for path in ignored if path.rpartition("/")[2] == RULES and path not in made]
    shown = [path for path in changed if path.rpartition("/")[2] == RULES and path not in ignored]
    rules = (*made, *old, *shown)
    found: dict[str, str] = {**instructions.ignored(top, ignored, since_ns),
                             **nested.repositories(top, repos, since_ns, changed),
                             **loaders.found(top, ignored, keys, since_ns)}
    under = [p for p in ignored if any(inside(p, rule.rpartition("/")[0]) for rule in rules)] if rules else []
    ruled = set(under)
    own = [p for p in ignored if p not in ruled]  # what the project's own rules ignore (``collected``)
    said: dict[str, str] = {}
    for rule, path in _sources(top, under) if under else ():
        if rule not in rules:  # the project's own rule: said elsewhere, not held
            own.append(path + "/" if (top / path).is_dir() else path)
            continue
        for source in code(top, path, 0 if rule in made else since_ns):
            (said if rule in shown else found).setdefault(source, rule)
    found = {**collected.found(top, own, since_ns, changed), **found}
    return _folded(found), _folded({path: rule for path, rule in said.items() if path not in found})


def why(rule: str) -> str:
    """What hides a held file from git: a rule git ignores, or a repository of its own (``nested``)."""
    if rule.rpartition("/")[2] == GIT:
        return f"in {rule[:-len(GIT)]}{OWN}"
    if rule == instructions.RULE:
        return INSTRUCTED
    if rule == instructions.EDITOR:
        return EDITED
    if rule == collected.RULE:
        return COLLECTED
    if rule.startswith(loaders.RULE + " "):
        key = rule.partition(" ")[2]
        return f"settings your next command here loads, which git ignores, {_LOADED.get(key, f'setting {key}')}"
    return f"hidden by {rule}, a rule git ignores as well"


def _folded(found: dict[str, str]) -> dict[str, str]:
    """Past ``MOST`` files, named by their rules' folders: the run's state keeps what a person answers."""
    if len(found) > MOST:
        return {(rule.rpartition("/")[0] or ".") + "/": rule for rule in sorted(set(found.values()))}
    return found


def said(shown: dict[str, str], label: str) -> list[str]:
    """The run's line about the source a rule the step added where git shows it keeps out of git (``look``)."""
    if not shown:
        return []
    rules = ", ".join(sorted(set(shown.values())))
    return [f"{label or 'the step'} changed {rules}, whose rules keep source it made out of every commit and review: "
            f"{listed(sorted(shown), 8)}; your next test run or import here runs such a file; look before you run "
            "anything here"]


def digest(path: Path) -> str:
    """The content a person approves: a changed file is held again."""
    try:
        return hashlib.sha256(read_regular(path, READ, head=True)).hexdigest()
    except OSError:
        return "unreadable"


def excerpt(path: Path) -> str:
    """The start of a held file as text, for the run state (``barrier.Hit.seen``): "" when it is no regular file,
    and for a secret file by its name, but for a ``.env``'s keys and the values it shows of them (``env_view``):
    values a person wrote meanwhile would reach the committed state, unknown to redaction."""
    if maybe_secret(path.name):
        from specd.tasks.secrets import env_view

        return env_view(path)[:EXCERPT] if is_env_name(path.name) else ""
    try:
        return read_regular(path, EXCERPT, head=True).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _sources(top: Path, paths: list[str]) -> list[tuple[str, str]]:
    """(the rule file, the path) for each of ``paths`` git ignores, by the rule that decides it."""
    fields = git(top, "check-ignore", "-v", "-z", "--stdin", stdin=nul(p.rstrip("/") for p in paths)).stdout.split("\0")
    pairs = []
    for i in range(0, len(fields) - 3, 4):
        source, pattern, path = fields[i], fields[i + 2], fields[i + 3]
        if source and not pattern.startswith("!"):
            pairs.append((os.path.relpath(source, top) if Path(source).is_absolute() else source, path))
    return pairs


