"""The machine's own credential files, as a jail shows them: without the keys they hold.

The jail shows `/etc` and `/usr` read-only, since programs need their settings, less only what root alone may read.
But a machine set up for a team often holds a key in a file everyone may read: a private package index's password
in `/etc/pip.conf`, a registry's `_authToken` in the global `npmrc`, a remote's token in `/etc/gitconfig`, an
`export NPM_TOKEN=...` in `/etc/profile.d/`. Each of those files (``SETTINGS``) that holds one is shown through a
copy without it: the user information of every URL left out, the value of every secret-named key, and what
redaction masks. A file that exists only to hold credentials (``PURE``: netrc's format) is shown empty.

The copies are written under the user's cache folder (``~/.cache/specd/machine``), which no jail shows; when none
can be written, the file is shown empty. The values themselves are masked in all specd writes and held from
commits (``specd.tasks.secrets``), as those of the user's own credential files are.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from specd.redact import MASK, is_secret_var, redact
from specd.system.lazyre import lazy
from specd.system.ownfiles import read_regular

SETTINGS = ("/etc/pip.conf", "/etc/xdg/pip/pip.conf", "/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc",
            "/etc/yarnrc", "/etc/gemrc", "/etc/gitconfig", "/etc/environment", "/etc/profile.d/*", "/etc/boto.cfg",
            "/etc/containers/auth.json", "/etc/docker/config.json", "/etc/maven/settings.xml",
            "/usr/share/maven/conf/settings.xml", "/etc/conda/.condarc", "/etc/conda/condarc", "/etc/uv/uv.toml",
            "/usr/local/cargo/credentials.toml", "/usr/local/cargo/config.toml")
PURE = ("/etc/netrc", "/etc/apt/auth.conf", "/etc/apt/auth.conf.d/*")
# The same kind of file inside a tool's own install, which the jail shows with the tool (``binds.tools``): npm's
# global config in a node's prefix (nvm's, asdf's, volta's, nodenv's), pip's site config in a Python's prefix or a
# venv, gem's and git's in theirs. `npm config set -g` and `pip config --site` write a token or password there.
TOOL_SETTINGS = ("pip.conf", "etc/npmrc", "etc/gemrc", "etc/gitconfig", "versions/*/pip.conf", "versions/*/etc/npmrc",
                 "versions/*/etc/gemrc", "versions/node/*/etc/npmrc", "versions/*/envs/*/pip.conf",
                 "installs/*/*/pip.conf", "installs/*/*/etc/npmrc", "tools/image/node/*/etc/npmrc",
                 # Maven's and Gradle's own settings (a repository's password), under sdkman too; conda's channels;
                 # a CARGO_HOME's registry token
                 "conf/settings.xml", "candidates/maven/*/conf/settings.xml", "gradle.properties",
                 "candidates/gradle/*/gradle.properties", ".condarc", "condarc", "credentials.toml")
_LIMIT = 1 << 20
# `<password>value</password>`, Maven's way (and `<passphrase>`, `<privateKey>`...): the element's text.
XML_SECRET = lazy(r"<([A-Za-z][\w.-]*)>([^<\s]{4,})</\1>")
XML_COMMENT = lazy(r"(<!--.*?-->)", re.DOTALL)  # examples, not settings
# `scheme://` then user information up to an `@`: `x-token:glpat-...@`, `ghp_...@`, `user:pass@`.
USERINFO = lazy(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)([^\s/@\"'\]]+)@")
# `key = value`, `key: "value"`, `export KEY=value`, `//registry/:_authToken=value`, a JSON member: the value.
_ASSIGNED = lazy(r"""^(\s*(?:export\s+)?"?([^\s=:"#;]+(?::[^\s=:"]+)?)"?\s*[=:]\s*"?)([^"\s,}]+)""",
                       re.MULTILINE)


def files(patterns: tuple[str, ...]) -> list[str]:
    """The files ``patterns`` name that are there (a pattern ends in `/*` for a folder's files), a link's target in
    its place (what the jail shows there). A stat or a folder listing each: a status pays for it at every call."""
    found: list[str] = []
    for pattern in patterns:
        if pattern.endswith("/*"):
            try:
                with os.scandir(pattern[:-2]) as entries:
                    found += sorted(entry.path for entry in entries)
            except OSError:
                continue
        else:
            found.append(pattern)
    shown = [_regular(path) for path in found]
    return list(dict.fromkeys(path for path in shown if path is not None))


def tool_files(folders: list[Path]) -> list[str]:
    """The settings files (``TOOL_SETTINGS``) inside these tool folders that are there."""
    found: list[str] = []
    for folder in folders:
        for pattern in TOOL_SETTINGS:
            if "*" in pattern:
                found += sorted(str(path) for path in folder.glob(pattern))
            elif os.path.lexists(folder / pattern):
                found.append(str(folder / pattern))
    shown = [_regular(path) for path in found]
    return list(dict.fromkeys(path for path in shown if path is not None))


def _regular(path: str) -> str | None:
    """Where ``path`` really is, through any link on its way (Debian's /usr/share/maven/conf is one to /etc/maven: a
    bind is made at the end of the links), when that is a regular file."""
    try:
        path = os.path.realpath(path)
        mode = Path(path).stat().st_mode
    except OSError:
        return None
    return path if stat.S_ISREG(mode) else None


def scrubbed(text: str) -> str:
    """``text`` without what a secret is: URLs' user information, secret-named keys' values, redaction's shapes."""
    text = USERINFO.sub(r"\1", text)
    text = "".join(part if part.startswith("<!--") else XML_SECRET.sub(_masked_element, part)
                   for part in XML_COMMENT.split(text))  # Debian's own settings.xml shows <password>repopwd</password>
    text = _ASSIGNED.sub(lambda m: m.group(1) + MASK if is_secret_var(m.group(2), m.group(3))
                         and len(m.group(3)) >= 8 else m.group(0), text)
    return redact(text)


def _masked_element(match: re.Match[str]) -> str:
    tag, value = match.group(1), match.group(2)
    return f"<{tag}>{MASK}</{tag}>" if is_secret_var(tag, value) else match.group(0)


def read(path: str | Path) -> str:
    """A settings file's text (a regular file, never a FIFO; at most a MB); "" when it cannot be read."""
    try:
        return read_regular(Path(path), _LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return ""


def binds(cache: Path | None, empty: Path, tools: list[Path] | None = None) -> list[str]:
    """bwrap flags that show each machine credential file holding a key without it; with ``tools``, each settings
    file in those tool folders instead."""
    args: list[str] = []
    for path in files(PURE) if tools is None else ():
        if read(path).strip():
            args += ["--ro-bind", str(empty), path]
    for path in files(SETTINGS) if tools is None else tool_files(tools):
        text = read(path)
        clean = scrubbed(text)
        if clean != text:
            args += ["--ro-bind", str(_copy(cache, path, clean) or empty), path]
    return args


def _copy(cache: Path | None, path: str, text: str) -> Path | None:
    return None if cache is None else keep_copy(cache / path.strip("/").replace("/", "%"), text)


def keep_copy(target: Path, text: str) -> Path | None:
    """``target`` holding ``text``, written (atomically, only when it holds something else) for a jail to show in
    a file's place; None when it cannot be written."""
    try:
        current = target.read_text(encoding="utf-8") if target.is_file() and not target.is_symlink() else None
        if current != text:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            scratch = target.with_name(f".{target.name}.{os.getpid()}")
            scratch.write_text(text, encoding="utf-8")
            os.replace(scratch, target)
    except OSError:
        return None
    return target
