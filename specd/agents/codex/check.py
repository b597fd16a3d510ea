"""Before a run starts: is there a `codex` binary, new enough, and a key for the server it will talk to?

Each problem is a ConfigError (exit 2) that says how to fix it. (`specd doctor` finds the same from its
table of backends, ``specd.agents.needs``.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from urllib.parse import urlsplit

from specd.agents.codex.options import Options
from specd.errors import ConfigError

# The version checked against the flags and events this backend uses (exec --json with thread.started and
# turn.completed usage, --output-schema, exec resume after exec's own flags, -c model_providers.*).
MIN_VERSION = (0, 169, 0)
INSTALL = "npm install -g @openai/codex@0.169.0"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")

_checked: dict[str, tuple[int, ...]] = {}  # binary → version, so a run asks once


def find_codex(env: Mapping[str, str]) -> str:
    """The binary to run: ``$SPECD_CODEX_BIN`` if set, else ``codex`` on PATH."""
    configured = env.get("SPECD_CODEX_BIN")
    path = shutil.which(configured or "codex", path=env.get("PATH"))
    if path is None and configured:
        raise ConfigError(f"SPECD_CODEX_BIN={configured} is not an executable file",
                          fix=f"point SPECD_CODEX_BIN at the codex binary, or unset it and install: {INSTALL}")
    if path is None:
        raise ConfigError("the codex agent needs the Codex CLI, and `codex` is not on PATH",
                          fix=f"install it with `{INSTALL}` (Node.js 18+), or set SPECD_CODEX_BIN to its path")
    return path


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    if binary in _checked:
        return _checked[binary]
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, env=dict(env),
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"could not run `{binary} --version`: {exc}", fix=f"reinstall Codex with `{INSTALL}`") \
            from None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        said = (done.stdout + done.stderr).strip().splitlines()
        raise ConfigError(f"`{binary} --version` did not print a version ({said[0] if said else 'no output'})",
                          fix=f"reinstall Codex with `{INSTALL}`")
    version = tuple(int(part) for part in found.groups())
    if version < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise ConfigError(f"Codex {found.group(0)} at {binary} is too old: specd needs {need} or newer "
                          "(for exec --json usage events, --output-schema and exec resume)",
                          fix=f"update it with `{INSTALL}`")
    _checked[binary] = version
    return version


def needs_key(options: Options, env: Mapping[str, str]) -> bool:
    """A local server (Ollama, a test's fake) may take no key; OpenAI and other remote servers do."""
    return (urlsplit(options.url(env)).hostname or "") not in LOCAL_HOSTS


def check_key(options: Options, env: Mapping[str, str]) -> None:
    if needs_key(options, env) and not env.get(options.key_env):
        raise ConfigError(f"the codex agent needs {options.key_env} in the environment (agent.api_key_env) for "
                          f"{options.url(env)}",
                          fix=f"export {options.key_env}=..., or set agent.base_url to a local Responses API server")


def ready_binary(options: Options, env: Mapping[str, str] | None = None) -> str:
    """All three checks; the binary's path when they pass."""
    env = os.environ if env is None else env
    binary = find_codex(env)
    check_version(binary, env)
    check_key(options, env)
    return binary

