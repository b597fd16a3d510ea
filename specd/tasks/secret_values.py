"""The values in one secret file, each with the key it goes by; a file is parsed again only when it changed.

What each kind of file holds (see ``specd.system.envfiles`` for which files these are):
- ``.env*``: every value, as written and as a program loading it would see it (interpolated);
- ``.netrc``: the passwords; ``.git-credentials``: the password of each URL, as stored and decoded;
- ``.npmrc``, ``.pypirc``, ``~/.aws/credentials`` (``key = value``) and ``secrets.yml`` (``key: value``): the
  values of secret-named keys (``_authToken``, ``password``, ``aws_secret_access_key``), not a registry's URL;
- ``.pgpass``: the password of each line;
- ``credentials*.json``: the string values of secret-named keys (``private_key``, ``client_secret``);
- a private key or a key store: nothing here; a key's block is a token shape (``specd.redact_rules``).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from urllib.parse import unquote

from specd.redact import is_secret_var
from specd.redact_rules import URL_CREDENTIALS
from specd.system.envfiles import is_env_name
from specd.system.ownfiles import read_regular

MAX_BYTES = 1 << 20  # a settings file is a few lines; a huge one is not a settings file
Pairs = list[tuple[str, str]]
_parsed: dict[str, tuple[tuple[int, int, int], Pairs]] = {}


def values_in(path: Path, kind: str = "") -> Pairs:
    """(key, value) pairs of the file at ``path``, parsed as its name says or as ``kind`` (a file name that
    says its format: ``.netrc``); none when it cannot be read (nor can an agent read it)."""
    try:
        info = path.stat()
        key = (info.st_mtime_ns, info.st_size, info.st_ino)
        kept = _parsed.get(str(path))
        if kept is not None and kept[0] == key:
            return kept[1]
        # a FIFO named .env (an agent can make one) would hang every command; a linked .env is common, so followed
        text = read_regular(path, MAX_BYTES, follow=True, head=True).decode("utf-8", errors="replace")
    except OSError:
        return []
    pairs = [(k, v) for k, v in parse(kind or path.name, text) if v]
    _parsed[str(path)] = (key, pairs)
    return pairs


def parse(name: str, text: str) -> Pairs:
    if is_env_name(name):
        return _dotenv(text)
    if name in (".netrc", "_netrc"):
        words = text.split()
        return [(word, value) for word, value in zip(words, words[1:], strict=False) if word in ("password",
                                                                                                 "account")]
    if name == ".git-credentials":
        return [("password", found) for match in URL_CREDENTIALS.finditer(text)
                for found in {match.group(2), unquote(match.group(2))}]
    if name == ".pgpass":  # host:port:database:user:password, a line each; \: and \\ escape within a field
        fields = [re.split(r"(?<!\\):", line.replace("\\\\", "\0")) for line in text.splitlines()
                  if not line.startswith("#")]
        raw = [":".join(f[4:]).replace("\0", "\\\\") for f in fields if len(f) >= 5]  # as written, and as used
        return [("password", found) for value in raw
                for found in dict.fromkeys([value, value.replace("\\:", ":").replace("\\\\", "\\")])]
    if name.endswith(".json"):
        return _json_secrets(text)
    if name.endswith(".xml"):  # Maven's settings: <password>...</password>
        from specd.system.etcfiles import XML_COMMENT, XML_SECRET

        text = XML_COMMENT.sub("", text)  # examples: Debian's own holds <password>repopwd</password>
        return [(tag, value) for tag, value in XML_SECRET.findall(text) if is_secret_var(tag, value)]
    if name.endswith((".pem", ".key", ".p12", ".pfx")) or name.startswith("id_"):
        return []  # a key's block is a token shape; a key store is binary
    split = ":" if name.endswith((".yml", ".yaml")) else "="
    pairs = []
    for line in text.splitlines():
        key, sep, value = line.strip().partition(split)
        value = value.strip().strip("\"'")
        if sep and key and not key.startswith(("#", ";")) and is_secret_var(key.strip(), value):
            pairs.append((key.strip(), value))
    return pairs


def _json_secrets(text: str) -> Pairs:
    """The string values of secret-named keys at any depth (a service account's ``private_key``, an OAuth
    client's ``client_secret``)."""
    import json

    try:
        todo: list[object] = [json.loads(text)]
    except (ValueError, RecursionError):  # a file of the agent's, nested past json's depth: no values read
        return []
    pairs: Pairs = []
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if isinstance(value, str) and is_secret_var(str(key), value):
                    pairs.append((str(key), value))
                elif isinstance(value, (dict, list)):
                    todo.append(value)
        elif isinstance(item, list):
            todo += item
    return pairs


def _dotenv(text: str) -> Pairs:
    import logging

    from dotenv import dotenv_values  # only a project with such a file pays for the import (and logging's)

    # A line it cannot parse is logged by python-dotenv; specd's screen is no place for that (or for its text).
    logging.getLogger("dotenv").setLevel(logging.CRITICAL)
    pairs: Pairs = []
    for interpolate in (False, True):  # as written, and as a program loading it would see it
        values = dotenv_values(stream=io.StringIO(text), interpolate=interpolate)
        pairs += [(key, value) for key, value in values.items() if value]
    return list(dict.fromkeys(pairs))


def machine_files() -> list[tuple[Path, str]]:
    """The machine's credential files everyone may read (``specd.system.etcfiles``), each with the format to
    parse it as."""
    from specd.system import etcfiles
    from specd.system.binds import home_of, tools

    shown = tools(home_of(os.environ), os.environ, [])  # the tool folders a jail shows, with their own settings
    return [*((Path(path), "") for path in [*etcfiles.files(etcfiles.SETTINGS), *etcfiles.tool_files(shown)]),
            *((Path(path), ".netrc") for path in etcfiles.files(etcfiles.PURE))]


def home_files(home: str | None = None) -> list[Path]:
    """The user's own credential files: the jail hides HOME, but an agent run with ``sandbox: false`` reads it."""
    try:
        base = Path(home) if home else Path.home()
    except RuntimeError:  # no HOME and no password entry: nothing of the user's to know
        return []
    names = (".aws/credentials", ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials")
    return [base / name for name in names if (base / name).is_file()]
