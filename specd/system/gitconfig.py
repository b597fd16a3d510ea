"""git's own config files as a jail shows them: every setting, without the credentials some of them hold.

The jail shows `.git` read-only, since an agent runs git. But `.git/config` may hold a remote's token
(`url = https://x-token:glpat-...@gitlab.com/...`, or the token as the user name), an `http.extraheader` with a
bearer token, or a credential inside a `[url "..."]` section's name. So each config file that holds one is
shown through a copy without it (``binds``): the user information of every URL left out, every extraheader's
value replaced, and the rest as redaction leaves it. git's settings (the object format, LFS filters, the
remotes' names and addresses) stay, so git works as before inside.

The values taken out (``credentials``) are masked in all specd writes and held by the commit barrier
(``specd.tasks.secrets``): the anthropic agent reads files with its own tools, outside the jail.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from specd.redact import MASK, redact
from specd.system.etcfiles import USERINFO, keep_copy, read
from specd.system.lazyre import lazy

CONFIGS = ("config", "config.worktree")
SHOWN = "specd-shown"  # the copies, in the git folder: read-only in every jail, like the rest of it
_HEADER = lazy(r"^(\s*extraheader\s*=\s*)(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
_GIT_PARTS = frozenset({"objects", "refs", "logs", "hooks", "info", "lfs", "rr-cache", "worktrees"})


def shown(text: str) -> str:
    """``text``, a git config file, without its credentials."""
    text = USERINFO.sub(r"\1", text)
    return redact(_HEADER.sub(lambda m: f"{m.group(1)}{MASK}", text))


def credentials(text: str) -> list[tuple[str, str]]:
    """(kind, value) of each credential in ``text``: a URL's password ("password"), a URL's user name when it has
    no password ("user": a token, or just a name, as Bitbucket's clone URLs hold), an extraheader's last word
    ("header": the token of `Authorization: Bearer <token>`)."""
    found = []
    for match in USERINFO.finditer(text):
        user, colon, password = match.group(2).partition(":")
        found.append(("password", password) if colon else ("user", user))
    found += [("header", words[-1]) for match in _HEADER.finditer(text) if (words := match.group(2).split())]
    return found


def values(root: Path) -> list[tuple[Path, str, str]]:
    """(config file, kind, value) of each credential in the git config files a jail on ``root`` would show."""
    folders = git_folders(root, git_common(root))
    return [(path, kind, value) for path in config_files(folders) for kind, value in credentials(read(path))]


def config_files(folders: list[Path]) -> list[Path]:
    """The config files of the git folders ``folders`` and of the submodules' git folders inside them."""
    found = [folder / name for folder in folders for name in CONFIGS]
    for folder in folders:
        for here, dirs, files in os.walk(folder / "modules"):
            dirs[:] = [d for d in dirs if d not in _GIT_PARTS]
            if "HEAD" in files:
                found += [Path(here) / name for name in CONFIGS if name in files]
    return [path for path in found if path.is_file() and not path.is_symlink()]


def binds(folders: list[Path]) -> list[tuple[Path, Path]]:
    """(copy, config file) for each config file of ``folders`` that holds a credential: the copy, written or
    refreshed in ``<first folder>/specd-shown``, goes over the file in the jail. When no copy can be written the
    file is shown empty (``fallback``): git then works on its defaults."""
    pairs = []
    for path in config_files(folders):
        text = read(path)
        clean = shown(text)
        if clean != text:
            pairs.append((_copy(folders[0], path, clean), path))
    return pairs


def _copy(home: Path, path: Path, text: str) -> Path:
    from specd.system.binds import EMPTY

    name = path.relative_to(home) if path.is_relative_to(home) else path
    return keep_copy(home / SHOWN / str(name).strip("/").replace("/", "%"), text) or EMPTY


def git_common(root: Path) -> Path | None:
    """The git folder a worktree's ``.git`` file points into (its common dir), when it lies outside ``root``."""
    own = _own(root)
    if own is None:
        return None
    try:
        common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        common = own
    return None if common.is_relative_to(root) or not common.is_dir() else common


def git_folders(root: Path, common: Path | None) -> list[Path]:
    """The git folders a jail on ``root`` shows: its own `.git`, or a worktree's common folder (``common``, as
    ``git_common`` gives it) and its own."""
    dot = root / ".git"
    if common is None:
        return [dot] if dot.is_dir() and not dot.is_symlink() else []
    own = _own(root)
    return [common, own] if own is not None and own.is_dir() and own != common else [common]


def _own(root: Path) -> Path | None:
    """The git folder named by ``root``'s ``.git`` file (a worktree's, a submodule's), or None."""
    pointer = root / ".git"
    try:
        text = pointer.read_text(encoding="utf-8") if pointer.is_file() else ""
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (root / text.removeprefix("gitdir:").strip()).resolve()
