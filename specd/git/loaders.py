"""Settings files git ignores that make your next command run code: a step's new ones held like hidden code.

A ``.env`` is loaded into the environment of your next command by pipenv, uv (``--env-file``), node
(``--env-file``, which takes ``NODE_OPTIONS`` from it), direnv's ``dotenv``, mise and any app that calls
python-dotenv; an ``.npmrc`` is read by your next ``npm``. Neither reaches a commit: git ignores them, or specd
leaves a new one out for its name (``envfiles.never_added``). The jail shows an existing one empty and read-only,
but cannot show one that is not there yet, and one line that sets ``LD_PRELOAD``, ``NODE_OPTIONS`` or npm's
``node-options`` runs what the model chose, as you, outside any jail. So a key file a step made or changed that
sets such a variable holds the run (``hidden``'s wait); one that sets only values (a database URL) is said, as
before (``ignored.loaded``), and so is a program named by a bare word (``BROWSER=none``: see ``WORDS``). One that
cannot be read (a link to nowhere, a FIFO) is held too: it cannot be told.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from specd.git.sources import fresh
from specd.system.envfiles import is_env_name
from specd.system.loadvars import setting
from specd.system.ownfiles import read_regular

RULE = "loads"  # the "rule" hiding them, for ``hidden.why``: git ignores them, or specd never adds them
UNREADABLE = "unreadable"
READ = 1 << 20
# Where the value decides. A program named by a bare word is found on PATH, which a step cannot change without
# setting PATH (held): `BROWSER=none` (create-react-app's), `EDITOR=vim`, `ENV=production` pass; a path or a
# command line does not. A warnings filter or a breakpoint hook imports a module only when it names one
# (`ignore::DeprecationWarning` does not). node's options pass when each is one that loads no code.
WORDS = frozenset({"EDITOR", "VISUAL", "PAGER", "BROWSER", "ENV", "GIT_EDITOR", "GIT_PAGER", "editor", "browser",
                   "viewer"})
DOTTED = frozenset({"PYTHONWARNINGS", "PYTHONBREAKPOINT"})
NODE = frozenset({"NODE_OPTIONS", "node-options"})
SAFE_NODE = ("--max-old-space-size=", "--max-semi-space-size=", "--stack-size=", "--no-warnings", "--no-deprecation",
             "--trace-warnings", "--trace-deprecation", "--enable-source-maps", "--dns-result-order=",
             "--openssl-legacy-provider", "--unhandled-rejections=", "--experimental-vm-modules", "--use-openssl-ca",
             "--use-system-ca", "--tls-min-v1.2", "--tls-min-v1.3", "--trace-uncaught", "--throw-deprecation")
_WORD = re.compile(r"[A-Za-z0-9_+-]*")  # no "." or "/": `BROWSER=open.js` runs that script, `ENV=.x` sources .x
_KEY = re.compile(rb"^[ \t]*(?:export[ \t]+)?([A-Za-z_@/:.][A-Za-z0-9_.@/:-]*)[ \t]*[=:](.*)$", re.MULTILINE)


def runs(path: Path) -> str | None:
    """The first setting in the key file ``path`` that makes a program run code ("LD_PRELOAD", "node-options"),
    ``UNREADABLE`` when it cannot be read, else None."""
    try:
        data = read_regular(path, READ, follow=True, head=True)
    except OSError:
        return UNREADABLE
    npmrc = not is_env_name(path.name)
    for match in _KEY.finditer(data):
        key = match.group(1).decode("ascii")
        name = setting(key, npmrc)
        if name and not _harmless(name, match.group(2).decode("utf-8", "replace")):
            return key
    return None


def _harmless(name: str, raw: str) -> bool:
    """Whether the value ``raw`` (as written after the "=") of the setting ``name`` runs nothing of a step's."""
    value = raw.strip()
    if value[:1] and value[:1] in "\"'" and value.find(value[0], 1) > 0:  # quoted, maybe a comment after it
        value = value[1:value.find(value[0], 1)].strip()
    elif " #" in value:  # a comment after an unquoted value
        value = value[:value.index(" #")].strip()
    if name in WORDS:
        return _WORD.fullmatch(value) is not None
    if name in DOTTED:
        return "." not in value
    if name in NODE:
        return all(option.startswith(SAFE_NODE) for option in value.split())
    return False


def found(top: Path, ignored: Iterable[str], untracked: Iterable[str], since_ns: int) -> dict[str, str]:
    """The key files among ``ignored`` (what git ignores) and ``untracked`` (new ones specd leaves out of every
    commit for their names) made or changed since ``since_ns`` that set what runs code, each with its rule
    ("loads LD_PRELOAD")."""
    held: dict[str, str] = {}
    for path in {*ignored, *untracked}:
        name = path.rpartition("/")[2]
        if path.endswith("/") or not (is_env_name(name) or name == ".npmrc"):
            continue
        if fresh(top / path, since_ns, folders=False) and (key := runs(top / path)):
            held[path] = f"{RULE} {key}"
    return held
