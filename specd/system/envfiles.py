"""A project's secret files: the settings and credential files that hold its keys and passwords.

- ``.env``, ``.env.local``, ``.env.production``, ... at any depth: a monorepo's ``apps/web/.env``, a
  ``.devcontainer/.env``, one under ``node_modules``. Templates (``.env.example``, ``.env.sample``, ...) hold
  no values and stay readable, so an agent can still document a new setting there; a ``.env/`` virtualenv is a
  folder, not one of them.
- the package managers' and tools' credentials: ``.npmrc``, ``.pypirc``, ``.netrc``, ``.git-credentials``, and
  Rails' ``secrets.yml``;
- private keys: ssh's ``id_rsa``, ``id_ed25519``, ... (never ``.pub``), and any ``id_*``, ``*.pem`` or ``*.key``
  file holding a ``PRIVATE KEY`` block (a ``.pem`` certificate alone is public, and ``id_map.py`` is code);
  PKCS#12 key stores (``*.p12``, ``*.pfx``), which always hold one; ``credentials*.json`` (a cloud service
  account's key, an OAuth client's secret); and PostgreSQL's ``.pgpass``.

Three parts of specd read this list: the jail shows each of these files to the agent and its commands as an
empty file (``specd.system.jail``), since what an agent reads goes to the model untouched; the anthropic
agent's file tools refuse them (``is_hidden``); and their values are masked by redaction and checked for in
every commit (``specd.tasks.secrets``). And specd never adds a new file named like one of them to a commit
(``never_added``), unless git tracks it already. Finding them at any depth stays cheap: see ``specd.system.findfiles``.
"""

from __future__ import annotations

import time
from pathlib import Path

from specd.system.findfiles import find, tracked

TEMPLATES = (".example", ".sample", ".template", ".dist")
CREDENTIALS = frozenset({".npmrc", ".pypirc", ".netrc", "_netrc", ".git-credentials", "secrets.yml",
                         "secrets.yaml", ".pgpass"})
KEY_STORES = (".p12", ".pfx")
SSH_KEYS = frozenset({"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"})
KEY_BLOCK = b"PRIVATE KEY-----"
PEEK = 64 * 1024  # a key file's block is at its start; a big .pem bundle is certificates
HANDOFF = 2.0  # seconds a run's own search stays good for its first jail (see ``hidden_from_agents``)
_handed: tuple[Path, float, list[Path]] | None = None  # (root, when, found): the run's search, not taken yet


def is_env_name(name: str, templates: bool = False) -> bool:
    return name.startswith(".env") and (templates or not name.endswith(TEMPLATES))


# Every secret file's name starts with one of these three characters or ends with one of these four: a name
# with neither is none, told by two set lookups (most of a walk's 100,000 names).
_HEADS = frozenset(name[:3] for name in (*CREDENTIALS, ".env", "credentials", "id_"))
_TAILS = frozenset((".pem", ".key", *KEY_STORES))


def maybe_secret(name: str) -> bool:
    """Whether a file of this name may be a secret file (a maybe-key still has to hold a key)."""
    # Called on every file of a walk: plain string tests. `id_*`, `*.pem`, `*.key` hold a key only if a PRIVATE
    # KEY block is in them (``is_secret_file``).
    if name[:3] not in _HEADS and name[-4:] not in _TAILS:
        return False
    if name.startswith(".env"):
        return not name.endswith(TEMPLATES)
    return (name in CREDENTIALS or name.endswith((".pem", ".key", *KEY_STORES)) or _cloud_key(name)
            or (name.startswith("id_") and not name.endswith(".pub")))


def _cloud_key(name: str) -> bool:
    return name.startswith("credentials") and name.endswith(".json")


def by_name(name: str) -> bool:
    """A secret file by its name alone: nothing in it needs a look."""
    return is_env_name(name) or name in CREDENTIALS or name in SSH_KEYS or name.endswith(KEY_STORES) or _cloud_key(name)


def never_added(name: str) -> bool:
    """Whether specd leaves a new file of this name out of every commit while git does not track it
    (``specd.git.tree``): a secret file by its name, and any ``.pem`` or ``.key``, since a commit does not look
    inside to tell a certificate from a key. Plain string tests: a step may make 200,000 files."""
    return by_name(name) or name.endswith((".pem", ".key"))


def holds_private_key(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return KEY_BLOCK in handle.read(PEEK)
    except OSError:
        return False


def is_secret_file(path: Path) -> bool:
    """Whether the regular file at ``path`` is one of a project's secret files (see the module's docstring)."""
    name = path.name
    if not maybe_secret(name):
        return False
    if by_name(name):
        return path.is_file()
    return path.is_file() and holds_private_key(path)


def env_files(root: Path, templates: bool = True) -> list[Path]:
    """The ``.env*`` files at any depth under ``root`` (with the templates, unless ``templates`` is False)."""
    return find(root, _env_with_templates if templates else is_env_name)


def hidden_from_agents(root: Path) -> list[Path]:
    """The secret files under ``root`` the jail shows as empty, at any depth, sorted. A jail takes the last
    search made while nothing ran (``hand_on``: as the run started, or the commit's check after a step), once,
    when that was under ``HANDOFF`` seconds ago and nothing ran outside a jail since (``forget_handoff``): only
    specd has worked in the tree meanwhile (recovery, the step's commits), and a search is two git processes, a
    tenth of what a Temporal step's run adds. Any other jail searches again: an agent may have made a file."""
    global _handed
    handed, _handed = _handed, None
    if handed is not None and handed[0] == root and time.monotonic() - handed[1] <= HANDOFF:
        return handed[2]
    return secret_files(root)


def forget_handoff() -> None:
    """Something runs outside the jail (a hook with `sandbox: false`, any command where there is no bubblewrap, an
    in-process agent): it may make a secret file (`vercel env pull`), so the next jail searches for itself."""
    global _handed
    _handed = None


def secret_files(root: Path, dependencies: bool = True, hand_on: bool = False) -> list[Path]:
    """The secret files under ``root``; without ``dependencies``, none in the folders of dependencies git ignores
    (``node_modules``, a venv: ``findfiles.HEAVY``), which may take a walk of a second to cover. ``hand_on``:
    a run's search as it starts, which its first jail may take (``hidden_from_agents``)."""
    found = [path for path in find(root, maybe_secret, heavy=dependencies) if is_secret_file(path)]
    if hand_on and dependencies:
        global _handed
        _handed = (root, time.monotonic(), found)
    return found


def tracked_secrets(root: Path) -> list[Path]:
    """The secret files the last search under ``root`` found that git tracks: the jail shows each one empty, but
    what was committed of it lies in ``.git``, which the agent reads (`git show HEAD:.env`)."""
    return sorted(path for path in tracked(root) if is_secret_file(path))


def is_hidden(root: Path, resolved: Path) -> bool:
    """Whether ``resolved`` (symlinks resolved) is a secret file inside ``root`` kept from agents."""
    return maybe_secret(resolved.name) and resolved.is_relative_to(root) and is_secret_file(resolved)


def _env_with_templates(name: str) -> bool:
    return is_env_name(name, templates=True)
