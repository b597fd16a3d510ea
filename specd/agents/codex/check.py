"""Before a run starts: is there a `codex` binary, new enough, and a key for the server it will talk to?

Each problem is a ConfigError (exit 2) that says how to fix it. (`specd doctor` finds the same from its
table of backends, ``specd.agents.needs``.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from specd.agents import cli_check
from specd.agents.cli_check import Cli, find
from specd.agents.codex.options import Options
from specd.errors import ConfigError

# The version checked against the flags and events this backend uses (exec --json with thread.started and
# turn.completed usage, --output-schema, exec resume after exec's own flags, -c model_providers.*).
MIN_VERSION = (0, 169, 0)
INSTALL = "npm install -g @openai/codex@0.169.0"
CLI = Cli("codex", "codex", "Codex", "the Codex CLI", "SPECD_CODEX_BIN", INSTALL, "Node.js 18+", MIN_VERSION,
          "for exec --json usage events, --output-schema and exec resume")
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")

def find_codex(env: Mapping[str, str]) -> str:
    return find(CLI, env)


def check_version(binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    return cli_check.check_version(CLI, binary, env)


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

