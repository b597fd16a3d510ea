"""Before a run starts: is there a `claude` binary, new enough, with some way to log in?

Each problem is a ConfigError (exit 2) that says how to fix it, so a user who
picks ``--agent claude_code`` learns what is missing before any step runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from specd.errors import ConfigError

# The oldest line checked against the flags and stream fields this backend uses
# (--json-schema with `structured_output`, --max-budget-usd, --session-id/--resume,
# `permission_denials` and `error_max_*` subtypes in the result event): 2.1.x.
MIN_VERSION = (2, 1, 0)
INSTALL = "npm install -g @anthropic-ai/claude-code"
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                   "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

_checked: dict[str, tuple[int, ...]] = {}  # binary → version, so a run asks once


def find_claude(env: Mapping[str, str]) -> str:
    """The binary to run: ``$SPECD_CLAUDE_BIN`` if set, else ``claude`` on PATH."""
    configured = env.get("SPECD_CLAUDE_BIN")
    if configured:
        path = shutil.which(configured, path=env.get("PATH"))
        if path is None:
            raise ConfigError(f"SPECD_CLAUDE_BIN={configured} is not an executable file",
                              fix=f"point SPECD_CLAUDE_BIN at the claude binary, or unset it and install: {INSTALL}")
        return path
    path = shutil.which("claude", path=env.get("PATH"))
    if path is None:
        raise ConfigError("the claude_code agent needs the Claude Code CLI, and `claude` is not on PATH",
                          fix=f"install it with `{INSTALL}` (Node.js 18+), or set SPECD_CLAUDE_BIN to its path")
    return path


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    if binary in _checked:
        return _checked[binary]
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, env=dict(env),
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"could not run `{binary} --version`: {exc}",
                          fix=f"reinstall Claude Code with `{INSTALL}`") from None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        said = (done.stdout + done.stderr).strip().splitlines()
        raise ConfigError(f"`{binary} --version` did not print a version ({said[0] if said else 'no output'})",
                          fix=f"reinstall Claude Code with `{INSTALL}`")
    version = tuple(int(part) for part in found.groups())
    if version < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        raise ConfigError(f"Claude Code {found.group(0)} at {binary} is too old: specd needs {need} or newer "
                          "(for --json-schema, --max-budget-usd and session flags)",
                          fix=f"update it with `{INSTALL}` (or `claude update`)")
    _checked[binary] = version
    return version


def check_credentials(env: Mapping[str, str], home: Path | None = None) -> None:
    """Refuse only when there is clearly no way to log in; Claude Code knows more ways than we can see."""
    if sys.platform == "darwin" or any(env.get(name) for name in CREDENTIAL_VARS):
        return  # on macOS a login lives in the keychain, out of our sight
    home = home or Path(env.get("HOME") or Path.home())
    config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    if (config_dir / ".credentials.json").is_file():
        return
    for path, marks in ((home / ".claude.json", ("oauthAccount", "primaryApiKey")),
                        (config_dir / "settings.json", ("apiKeyHelper", "ANTHROPIC_"))):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(mark in text for mark in marks):
            return
    raise ConfigError("the claude_code agent found no Claude Code credentials: no ANTHROPIC_API_KEY or "
                      f"ANTHROPIC_AUTH_TOKEN in the environment and no login in {config_dir}",
                      fix="run `claude` once and log in (/login), or export ANTHROPIC_API_KEY=...")


def ready_binary(env: Mapping[str, str] | None = None) -> str:
    """All three checks; the binary's path when they pass."""
    env = os.environ if env is None else env
    binary = find_claude(env)
    check_version(binary, env)
    check_credentials(env)
    return binary
