"""What each agent backend needs on this machine, and what `specd doctor` finds of it.

One row per backend: the CLI it runs (and the variable that points at another copy of it), the SDK it
imports, and the keys it signs in with. ``survey`` looks for each: the CLI's path and the first line of
``<cli> --version`` (with a timeout, so a hung binary cannot hang doctor), the SDK's installed version, and
which keys are set (their presence only, never a value). The agent CLIs can sign in by themselves (a
login kept in their own config), so a missing key is said, not judged; an API backend cannot run without
one, unless its agent block points it at a server of the user's own (a local model needs no key: for
openai any ``base_url``, for codex one on this machine, as its backend decides).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

VERSION_TIMEOUT = 10.0
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Needs:
    backend: str
    cli: str | None = None
    bin_env: str | None = None
    sdk: str | None = None
    keys: tuple[str, ...] = ()
    key_required: bool = False
    install: str = ""
    url_env: str | None = None  # where the backend reads another server's address from the environment
    local_ok: bool = False  # pointed at a server of the user's own (agent.base_url), it needs no key


NEEDS = (
    Needs("anthropic", sdk="anthropic", keys=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), key_required=True,
          install="pip install anthropic", url_env="ANTHROPIC_BASE_URL"),
    Needs("claude_code", cli="claude", bin_env="SPECD_CLAUDE_BIN",
          keys=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
          install="npm install -g @anthropic-ai/claude-code"),
    Needs("codex", cli="codex", bin_env="SPECD_CODEX_BIN", keys=("OPENAI_API_KEY",), key_required=True,
          install="npm install -g @openai/codex", local_ok=True),
    Needs("gemini", cli="gemini", bin_env="SPECD_GEMINI_BIN", keys=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
          install="npm install -g @google/gemini-cli"),
    Needs("openai", sdk="openai", keys=("OPENAI_API_KEY",), key_required=True, install="pip install 'openai>=2,<3'",
          url_env="OPENAI_BASE_URL", local_ok=True),
    Needs("command"),
    Needs("scripted"),
)


@dataclass(frozen=True)
class Found:
    """One backend on this machine: ready or not, what was found, and what to do when it is not ready."""

    backend: str
    ready: bool
    detail: str
    fix: str = ""
    cli: dict[str, str | None] | None = None  # name, path, version
    sdk: dict[str, str | None] | None = None  # name, version
    keys: dict[str, bool] = field(default_factory=dict)
    url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "ready": self.ready, "detail": self.detail, "fix": self.fix or None,
                "cli": self.cli, "sdk": self.sdk, "keys": dict(self.keys), "url": self.url}


def survey(agent: Mapping[str, Any], env: Mapping[str, str] | None = None) -> list[Found]:
    """Every backend, in the order of ``NEEDS``; ``agent`` is the pipeline's agent block (its
    ``api_key_env`` and ``base_url`` apply to the backend it names, or to openai when it names none)."""
    env = os.environ if env is None else env
    # Side by side: a CLI's `--version` may take seconds (a Node start), and there are several.
    with ThreadPoolExecutor(max_workers=len(NEEDS)) as pool:
        return list(pool.map(lambda needs: _find(needs, _own(needs.backend, agent), env), NEEDS))


def _own(backend: str, agent: Mapping[str, Any]) -> Mapping[str, Any]:
    named = str(agent.get("backend") or "")
    return agent if named == backend or (not named and backend == "openai") else {}


def _find(needs: Needs, agent: Mapping[str, Any], env: Mapping[str, str]) -> Found:
    if not needs.cli and not needs.sdk:
        what = "any shell command (--agent 'cmd:...')" if needs.backend == "command" else \
            "ships with specd (--agent 'scripted:<script.yaml>')"
        return Found(needs.backend, True, what)
    parts: list[str] = []
    cli: dict[str, str | None] | None = None
    sdk: dict[str, str | None] | None = None
    if needs.cli:
        cli = _cli(needs, env)
        if cli["version"] is None:
            where = cli["path"] or f"`{needs.cli}` is not on PATH"
            fix = f"install it (`{needs.install}`) or set {needs.bin_env} to its path"
            detail = f"{where} does not run (`--version` failed)" if cli["path"] else where
            return Found(needs.backend, False, detail, fix, cli=cli)
        parts.append(f"{cli['path']}: {cli['version']}")
    if needs.sdk:
        if importlib.util.find_spec(needs.sdk) is None:
            return Found(needs.backend, False, f"the {needs.sdk} SDK is not installed", needs.install)
        sdk = {"name": needs.sdk, "version": importlib.metadata.version(needs.sdk)}
        parts.append(f"SDK {sdk['version']}")
    names = (str(agent["api_key_env"]),) if agent.get("api_key_env") else needs.keys
    keys = {name: bool(env.get(name)) for name in names}
    url = str(agent.get("base_url") or (env.get(needs.url_env) if needs.url_env else "") or "") or None
    present = [name for name, there in keys.items() if there]
    if present:
        parts.append(f"{present[0]} is set")
    elif not needs.key_required:
        parts.append(f"no {' or '.join(names)} set, so it must be signed in by itself")
    elif url and needs.local_ok and (needs.sdk or (urlsplit(url).hostname or "") in LOCAL_HOSTS):
        parts.append(f"server {url}; no {' or '.join(names)}, which a local server does not need")
        url = None  # said already
    else:
        detail = "; ".join([*parts, f"no {' or '.join(names)} in the environment"])
        fix = f"export {names[0]}=..." + (", or set agent.base_url to a local server (Ollama, vLLM), which "
                                          "needs no key" if needs.local_ok else "")
        return Found(needs.backend, False, detail, fix, cli=cli, sdk=sdk, keys=keys)
    if url:
        parts.append(f"server {url}")
    return Found(needs.backend, True, "; ".join(parts), cli=cli, sdk=sdk, keys=keys, url=url)


def _cli(needs: Needs, env: Mapping[str, str]) -> dict[str, str | None]:
    """The CLI's path (the variable's, else PATH's) and its version's first line (None: it did not run)."""
    assert needs.cli
    path = (env.get(needs.bin_env) if needs.bin_env else None) or shutil.which(needs.cli, path=env.get("PATH"))
    found: dict[str, str | None] = {"name": needs.cli, "path": path, "version": None}
    if not path:
        return found
    # In a scratch folder, HOME and GEMINI_CLI_HOME included: `gemini --version` alone writes into ~/.gemini.
    try:
        with tempfile.TemporaryDirectory(prefix="specd-doctor-") as scratch:
            done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT,
                                  check=False, stdin=subprocess.DEVNULL, cwd=scratch,
                                  env={**env, "HOME": scratch, "GEMINI_CLI_HOME": scratch})
    except (OSError, subprocess.TimeoutExpired):
        return found
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        found["version"] = lines[0].strip()
    return found
