"""Before a run starts: is there a `claude` binary, new enough, with some way to log in?

Each problem is a ConfigError (exit 2) that says how to fix it, so a user who
picks ``--agent claude_code`` learns what is missing before any step runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from specd.agents import cli_check
from specd.agents.cli_check import Cli, find
from specd.errors import ConfigError

# The oldest line checked against the flags and stream fields this backend uses
# (--json-schema with `structured_output`, --max-budget-usd, --session-id/--resume,
# `permission_denials` and `error_max_*` subtypes in the result event): 2.1.x.
MIN_VERSION = (2, 1, 0)
INSTALL = "npm install -g @anthropic-ai/claude-code"
CLI = Cli("claude_code", "claude", "Claude Code", "the Claude Code CLI", "SPECD_CLAUDE_BIN", INSTALL, "Node.js 18+",
          MIN_VERSION, "for --json-schema, --max-budget-usd and session flags",
          f"update it with `{INSTALL}` (or `claude update`)")
CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                   "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")

def find_claude(env: Mapping[str, str]) -> str:
    return find(CLI, env)


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    return cli_check.check_version(CLI, binary, env)


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
