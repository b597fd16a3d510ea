"""Helpers for issue 5's acceptance tests: run the real `specd` CLI as a subprocess.

Each call is a fresh `python -m specd` process, the way a user meets it, with
an environment that has no API key and (unless a test removes it) a git
identity, so results never depend on the machine's git config or network.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Demo Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.com",
    "GIT_COMMITTER_NAME": "Demo Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.com",
}
# Anything that could make a run talk to a real API or pick up someone's identity.
SCRUBBED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", *IDENTITY)


def base_env(extra: Mapping[str, str] | None = None, *, identity: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    if identity:
        env.update(IDENTITY)
    env.update(extra or {})
    return env


def specd(*args: str, cwd: Path, stdin: str | None = None, env: Mapping[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run `specd ARGS` in ``cwd``; stdin is EOF unless text is given."""
    return subprocess.run(
        [sys.executable, "-m", "specd", *args], cwd=cwd, env=dict(env) if env is not None else base_env(),
        input=stdin if stdin is not None else "", capture_output=True, text=True, timeout=timeout, check=False,
    )


def git(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, env=dict(env) if env is not None else base_env(),
                            capture_output=True, text=True, check=True)
    return result.stdout


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path → bytes), for "nothing changed" checks."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
