"""Instructions for your own agent CLIs that git ignores, made or changed by a step: held like code hidden from git.

Claude Code reads ``CLAUDE.local.md`` (and ``CLAUDE.md``, ``.claude/CLAUDE.md``, its subagents and commands under
``.claude/``) as your own words each time you start it in the project; Codex reads ``AGENTS.md``, the Gemini CLI
``GEMINI.md``, Cursor ``.cursorrules`` and ``.cursor/rules/``, Copilot ``.github/copilot-instructions.md``. Tracked,
such a file is in the step's commit and its review. Ignored (``CLAUDE.local.md`` is meant to be, and many projects
ignore ``.claude/`` whole), it is in neither, and the next session of your agent CLI, outside any jail, follows what
the step's model wrote there as if you had. So each one git ignores that a step made or changed holds the run
(``hidden``'s wait), as code a rule of the step's hides does. What the agents' settings name (hooks, MCP servers)
is machinery already (``system/machinery``): a step's change there is undone. The same goes for an editor's
settings and tasks the project ignores (``.vscode/``): in a workspace you trust, VS Code runs the
interpreter its settings name and a task marked to run when the folder opens; and for docker compose's override
file, which every `docker compose up` merges in and projects keep out of git for local changes.
"""

from __future__ import annotations

import os
from pathlib import Path

from specd.git.sources import INSTRUCTIONS as NAMES
from specd.git.sources import fresh
from specd.system.ownfiles import walk

KINDS = (".md", ".mdc")
RULE = "instructions"  # the "rule" that hides them, for ``hidden.why``: git ignores them, by whatever rule
EDITOR = "editor"  # an editor's settings, tasks and run configurations
# folder -> (the files read there, what they are): an agent's markdown (subagents, commands, rules); VS Code's
# settings.json (an interpreter path it runs), tasks.json (a task run when the folder opens), launch.json; Zed's and
# Helix's project settings (a language server's command, run when a file opens). Not JetBrains' .idea/: the IDE
# itself rewrites workspace.xml as you work, so every step would hold.
FOLDERS = {".claude": (KINDS, RULE), ".cursor": (KINDS, RULE), ".gemini": (KINDS, RULE), ".codex": (KINDS, RULE),
           ".windsurf": (KINDS, RULE), ".vscode": ((".json",), EDITOR), ".zed": ((".json",), EDITOR),
           ".helix": ((".toml",), EDITOR)}
# a tool's settings file that names commands it runs: aider's `test-cmd` and `lint-cmd`, run after each edit with
# `auto-test` (aider adds `.aider*` to .gitignore itself); docker compose's override, merged into the project's
# compose file by every `docker compose up` with no -f, and kept out of git for local changes: a service it adds
# runs what it names, privileged and with your / mounted if it says so; mise's local config, which every mise
# command you type trusts as the project's (its `_.source`, its hooks run)
SETTINGS = (".aider.conf.yml", "compose.override.yaml", "compose.override.yml", "docker-compose.override.yml",
            "docker-compose.override.yaml", "mise.local.toml", ".mise.local.toml")
LOOK = 10_000  # entries looked through in such a folder that git ignores whole


def kind(path: str) -> str | None:
    """``RULE`` when the tree-relative ``path`` is a file an agent CLI reads as your instructions, ``EDITOR`` when
    your editor runs what it names, else None."""
    parts = path.rstrip("/").split("/")
    if parts[-1] in NAMES:
        return RULE
    if parts[-1] in SETTINGS:
        return EDITOR
    for part in reversed(parts[:-1]):
        if part in FOLDERS:
            return FOLDERS[part][1] if parts[-1].endswith(FOLDERS[part][0]) else None
    return None


def ignored(top: Path, paths: list[str], since_ns: int) -> dict[str, str]:
    """The instructions and editor settings among what git ignores (``paths``; such a folder it ignores whole is
    looked through) that were made or changed since ``since_ns``, each with its ``kind``."""
    found: dict[str, str] = {}
    for path in paths:
        if not path.endswith("/"):
            if (what := kind(path)) and fresh(top / path, since_ns, folders=False):
                found[path] = what
            continue
        if not any(part in FOLDERS for part in path.rstrip("/").split("/")):
            continue
        seen = 0
        for folder, dirs, files in walk(top / path, 8):
            seen += len(files) + len(dirs)
            if seen > LOOK:
                break
            rel = os.path.relpath(folder, top)
            for name in files:
                if (what := kind(f"{rel}/{name}")) and fresh(Path(folder) / name, since_ns, folders=False):
                    found[f"{rel}/{name}"] = what
    return found
