"""The secret values specd knows of, beyond its environment: those in a project's secret files, and the user's.

A value that exists only in a ``.env`` file never reaches the environment specd sees, so the name-based filter
in ``specd.redact`` cannot know it; yet an agent or hook that reads the file may print it, or copy it into a file
a step commits. Two uses, two filters:
- redaction (``load_project_secrets``) masks every value at least 8 characters long, whatever its name: a
  false positive costs a few unreadable characters;
- the check before a commit (``known_secrets``) takes a ``.env`` value only when its name is a secret's, or the
  value looks generated (long, letters and digits, no spaces): ``NODE_ENV=development`` in every file an agent
  writes would hold every step for a person. It also names each value, never showing it.
"""

from __future__ import annotations

import functools
import math
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from specd.redact import MASK, add_secrets, is_secret_var, redact, secret_parts
from specd.redact_rules import holds_token
from specd.system import gitconfig
from specd.system.envfiles import env_files, is_env_name, secret_files
from specd.system.loadvars import in_view
from specd.tasks.secret_values import home_files, machine_files, parse, values_in

if TYPE_CHECKING:
    from specd.system import pastfiles

__all__ = ["env_files", "env_view", "known_secrets", "load_project_secrets", "refresh_project_secrets"]

MIN_LEN = 8  # as redaction: a shorter value would match ordinary words
REFRESH_EVERY = 1.0  # seconds between two looks for new secret files in a process that lives long (the page)
_looked: dict[str, float] = {}  # when this process last looked, by project root


def load_project_secrets(root: Path, dependencies: bool = False) -> int:
    """Add the values of ``root``'s secret files (and the user's credential files) to the redaction set;
    returns how many the project's files held. A run passes ``dependencies`` (it also reads the secret files in
    node_modules, a venv...: everything it writes is masked with them, and its first jail hides the files this
    search found); a command that only shows what runs wrote (`status`, `logs`, the dashboard) need not spend
    the walk of a big node_modules on every start."""
    own = [value for path, key, value in _file_values(root, home=False, dependencies=dependencies,
                                                      hand_on=dependencies) if not _in_view(path, key, value)]
    past = [value for *_, value in past_values(root)] if dependencies else []
    git = [value for _, value in git_values(root)]
    add_secrets([*own, *past, *git, *(value for _, _, value in _file_values(root, project=False))])
    _looked[str(root)] = time.monotonic()
    return len(own)


def refresh_project_secrets(root: Path) -> None:
    """``load_project_secrets`` again when this process last did more than ``REFRESH_EVERY`` seconds ago (or
    never): a page started before a step wrote a ``.env`` showed that file's values in the step's transcript,
    which the run wrote before the file existed, for as long as it ran. About 20 ms a look."""
    now = time.monotonic()
    if now - _looked.get(str(root), -math.inf) >= REFRESH_EVERY:
        load_project_secrets(root)


def load_file_secrets(path: Path) -> None:
    """Mask the values of one secret file too (a ``.env`` made after the process loaded the project's): a page
    started before a step wrote one showed its plain values."""
    add_secrets([value for key, value in values_in(path) if not _in_view(path, key, value)])


def env_view(path: Path) -> str:
    """A held ``.env`` as the run state keeps it for a page that cannot read it (a task on Temporal: the file is on
    its worker): each key it sets, with its value only where redaction leaves one in view (a program's path or
    options, which a person deciding on the hold must read), every other value masked whatever its length;
    comments left out. "" for a link, or what cannot be read."""
    if path.is_symlink():
        return ""
    first: dict[str, str] = {}
    for key, value in values_in(path):  # as written first, then as a program would see it
        first.setdefault(key, value)
    lines = [f"{key}={redact(value) if _in_view(path, key, value) else MASK}" for key, value in first.items()]
    return "\n".join(["# each value masked but a program's path or options", *lines]) if lines else ""


def _in_view(path: Path, key: str, value: str) -> bool:
    """A .env's program path or options (``LD_PRELOAD``, ``NODE_OPTIONS``, ``EDITOR``), unless secret by its shape:
    a person deciding on a step's new .env must read what it runs (``specd.system.loadvars``)."""
    return is_env_name(path.name) and in_view(key) and not is_secret_var(key, value)


def known_secrets(root: Path, environ: dict[str, str] | None = None, hand_on: bool = False) -> dict[str, str]:
    """Each secret value a commit must not hold, mapped to what it is (``the value of DB_PASSWORD in
    apps/web/.env``): secret-named environment variables and the values in secret files, in the tree and in the
    history. ``hand_on``: the search
    of the files may serve the next jail (``envfiles.hidden_from_agents``)."""
    known: dict[str, str] = {}
    found = [(path.name, _shown(path, root), key, value) for path, key, value in _file_values(root, hand_on=hand_on)]
    for name, shown, key, value in [*found, *past_values(root)]:
        if not is_env_name(name) or is_secret_var(key, value) or looks_generated(value):
            for part in secret_parts(value):
                known.setdefault(part, f"the value of {key} in {shown}")
    for shown, value in git_values(root):
        known.setdefault(value, f"a credential in {shown}")
    for name, value in sorted((os.environ if environ is None else environ).items()):
        if is_secret_var(name, value):
            for part in secret_parts(value):
                known[part] = f"the value of the environment variable {name}"
    return {value: name for value, name in known.items() if len(value) >= MIN_LEN}


def looks_generated(value: str) -> bool:
    """A generated key or password: long, one word with letters and digits mixed, not a URL or a path, and
    varied."""
    if len(value) < 16 or "://" in value or value.startswith(("/", "~", ".")) or any(c.isspace() for c in value):
        return False
    # Words and numbers joined (`my-app-production-2024`, `us-east-1`) are names; a key mixes them in one part.
    if not any(any(c.isdigit() for c in part) and any(c.isalpha() for c in part)
               for part in re.split(r"[-_.]", value)):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.5  # bits a character: a random 16-character word has about 3.7, `staging-eu-west-1` 3.4


def git_values(root: Path) -> list[tuple[str, str]]:
    """(where, value) of each credential in the repository's git config files (``gitconfig``): a remote's password or
    token, an extraheader's; a URL's user name only when it looks like a key."""
    return [(_shown(path, root), value) for path, kind, value in gitconfig.values(root)
            if len(value) >= MIN_LEN and (kind != "user" or looks_generated(value) or holds_token(value))]


def past_values(root: Path) -> list[tuple[str, str, str, str]]:
    """(file name, where, key, value) of each value in the versions of secret files the repository's history holds
    (``specd.system.pastfiles``): `.git` is the agent's to read, so they are as known as those in the tree."""
    from specd.system import pastfiles  # here: a listing never searches the history, and this costs a subprocess

    return _parsed(pastfiles.search(root))


@functools.lru_cache(maxsize=4)  # a run asks at every commit, and the search stays the same for a minute
def _parsed(past: pastfiles.Past) -> list[tuple[str, str, str, str]]:
    return [(name, f"{version.path} as committed in {version.commit[:12]}", key, value)
            for version in past.versions if (name := version.path.rpartition("/")[2])
            for key, value in parse(name, version.text) if value]


def _file_values(root: Path, project: bool = True, home: bool = True, dependencies: bool = True,
                 hand_on: bool = False) -> list[tuple[Path, str, str]]:
    # Each part is searched only when asked for: a walk of the project costs a second in a big one.
    files = [*(((path, "") for path in secret_files(root, dependencies, hand_on)) if project else ()),
             *(((path, "") for path in home_files()) if home else ()), *(machine_files() if home else ())]
    return [(path, key, value) for path, kind in files for key, value in values_in(path, kind)]


def _shown(path: Path, root: Path) -> str:
    """The file as a person knows it: from the project's root, else from HOME (a user's file)."""
    for base, prefix in ((root, ""), (Path(os.environ.get("HOME") or "/nonexistent"), "~/")):
        if path.is_relative_to(base):
            return prefix + path.relative_to(base).as_posix()
    return str(path)
