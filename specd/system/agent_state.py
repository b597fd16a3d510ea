"""A backend's own state, per task: a folder of specd's that the backend keeps its config and sessions in.

Claude Code reads and writes ``CLAUDE_CONFIG_DIR`` (settings, session files for ``--resume``, its
``.claude.json``). The jail never shows it the user's ``~/.claude``, ``~/.claude.json`` or caches: what the
model's commands write there (a settings hook, say) would run at the user's next plain ``claude``. So each
task gets a folder of its own, kept with its transcripts (never committed), seeded once with what signs in:
the credentials file of a ``claude login`` and the account entry of ``.claude.json`` (in a jail, their tokens
become stand-ins before each run: ``system/signin.py``). What the backend
writes stays there, and runs, if ever, only inside this task's jail. The Gemini CLI gets the same, through
``GEMINI_CLI_HOME`` (its ``.gemini/`` inside), seeded with a Google login's ``oauth_creds.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

FOLDER = ".agent"  # under the task's transcripts: the backends' own state, never committed (``git.settings``)
SIGN_IN_KEYS = ("oauthAccount", "userID", "hasCompletedOnboarding", "primaryApiKey", "customApiKeyResponses")


def seed_state(backend: str, folder: Path, env: Mapping[str, str]) -> Path:
    """``folder``, made when missing and seeded from the user's own sign-in on first use; returned resolved."""
    fresh = not folder.is_dir()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    if fresh and backend == "claude_code":
        _seed_claude(folder, env)
    if fresh and backend == "gemini":
        _seed_gemini(folder, env)
    return folder.resolve()


def _seed_gemini(folder: Path, env: Mapping[str, str]) -> None:
    """A Google login of the user's own Gemini CLI, copied: its settings are specd's own (written per step)."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or os.environ.get("HOME") or ""
    mine = Path(home) / ".gemini"
    if str(mine.resolve()) == str((folder / ".gemini").resolve()):
        return
    (folder / ".gemini").mkdir(exist_ok=True)
    for name in ("oauth_creds.json", "google_accounts.json"):
        with contextlib.suppress(OSError):
            if (mine / name).is_file():
                shutil.copyfile(mine / name, folder / ".gemini" / name)
                (folder / ".gemini" / name).chmod(0o600)


def _seed_claude(folder: Path, env: Mapping[str, str]) -> None:
    home = env.get("HOME") or os.environ.get("HOME") or ""
    mine = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else Path(home) / ".claude"
    if str(mine.resolve()) == str(folder.resolve()):
        return
    credentials = mine / ".credentials.json"
    with contextlib.suppress(OSError):
        if credentials.is_file():
            shutil.copyfile(credentials, folder / ".credentials.json")
            (folder / ".credentials.json").chmod(0o600)
    config = mine / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else Path(home) / ".claude.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return
    if isinstance(data, dict):
        kept = {key: data[key] for key in SIGN_IN_KEYS if key in data}
        (folder / ".claude.json").write_text(json.dumps(kept), encoding="utf-8")
