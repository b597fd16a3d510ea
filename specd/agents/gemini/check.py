"""Before a run starts: is there a `gemini` binary, new enough, with some way to sign in?

Each problem is a ConfigError (exit 2) that says how to fix it, so a user who picks ``--agent gemini``
learns what is missing before any step runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from specd.agents import cli_check
from specd.agents.cli_check import Cli, find
from specd.errors import ConfigError

# The line checked against the flags, settings and stream-json events this backend uses (`-p` with stdin,
# `--output-format stream-json`, `--approval-mode`, `--resume <session id>`, `model.maxSessionTurns`).
MIN_VERSION = (0, 61, 0)
INSTALL = "npm install -g @google/gemini-cli"
CLI = Cli("gemini", "gemini", "the Gemini CLI", "the Gemini CLI", "SPECD_GEMINI_BIN", INSTALL, "Node.js 20+",
          MIN_VERSION, "for stream-json stats and --resume by session id")
CREDENTIAL_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")
LOGIN_FILE = "oauth_creds.json"  # where a `gemini` Google login keeps its tokens, in ~/.gemini

def find_gemini(env: Mapping[str, str]) -> str:
    return find(CLI, env)


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    return cli_check.check_version(CLI, binary, env)


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

