"""Before a run starts: is there a `gemini` binary, new enough, with some way to sign in?

Each problem is a ConfigError (exit 2) that says how to fix it, so a user who picks ``--agent gemini``
learns what is missing before any step runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from specd.errors import ConfigError

# The line checked against the flags, settings and stream-json events this backend uses (`-p` with stdin,
# `--output-format stream-json`, `--approval-mode`, `--resume <session id>`, `model.maxSessionTurns`).
MIN_VERSION = (0, 61, 0)
INSTALL = "npm install -g @google/gemini-cli"
CREDENTIAL_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")
LOGIN_FILE = "oauth_creds.json"  # where a `gemini` Google login keeps its tokens, in ~/.gemini

_checked: dict[str, tuple[int, ...]] = {}  # binary → version, so a run asks once


def find_gemini(env: Mapping[str, str]) -> str:
    """The binary to run: ``$SPECD_GEMINI_BIN`` if set, else ``gemini`` on PATH."""
    configured = env.get("SPECD_GEMINI_BIN")
    if configured:
        path = shutil.which(configured, path=env.get("PATH"))
        if path is None:
            raise ConfigError(f"SPECD_GEMINI_BIN={configured} is not an executable file",
                              fix=f"point SPECD_GEMINI_BIN at the gemini binary, or unset it and install: {INSTALL}")
        return path
    path = shutil.which("gemini", path=env.get("PATH"))
    if path is None:
        raise ConfigError("the gemini agent needs the Gemini CLI, and `gemini` is not on PATH",
                          fix=f"install it with `{INSTALL}` (Node.js 20+), or set SPECD_GEMINI_BIN to its path")
    return path


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    if binary in _checked:
        return _checked[binary]
    try:
        # Even `--version` registers the working folder in the CLI's ~/.gemini/projects.json: it is asked
        # in a throwaway folder, so the user's own ~/.gemini is never touched.
        with tempfile.TemporaryDirectory(prefix="specd-gemini-") as scratch:
            done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, check=False,
                                  env={**env, "GEMINI_CLI_HOME": scratch}, cwd=scratch)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"could not run `{binary} --version`: {exc}",
                          fix=f"reinstall the Gemini CLI with `{INSTALL}`") from None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        said = (done.stdout + done.stderr).strip().splitlines()
        raise ConfigError(f"`{binary} --version` did not print a version ({said[0] if said else 'no output'})",
                          fix=f"reinstall the Gemini CLI with `{INSTALL}`")
    version = tuple(int(part) for part in found.groups())
    if version < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise ConfigError(f"the Gemini CLI {found.group(0)} at {binary} is too old: specd needs {need} or newer "
                          "(for stream-json stats and --resume by session id)",
                          fix=f"update it with `{INSTALL}`")
    _checked[binary] = version
    return version


def check_credentials(env: Mapping[str, str]) -> None:
    """Refuse only when there is clearly no way to sign in: no key in the environment and no Google login."""
    if any(env.get(name) for name in CREDENTIAL_VARS):
        return
    if (user_folder(env) / LOGIN_FILE).is_file():
        return
    raise ConfigError("the gemini agent found no Gemini credentials: no GEMINI_API_KEY in the environment and "
                      f"no Google login in {user_folder(env)}",
                      fix="export GEMINI_API_KEY=... (from Google AI Studio), or run `gemini` once and sign in "
                          "with Google")


def user_folder(env: Mapping[str, str]) -> Path:
    """The user's own Gemini CLI folder (read for a login to copy, never used by a run)."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home) / ".gemini"


def ready_binary(env: Mapping[str, str] | None = None) -> str:
    """All three checks; the binary's path when they pass."""
    env = os.environ if env is None else env
    binary = find_gemini(env)
    check_version(binary, env)
    check_credentials(env)
    return binary

