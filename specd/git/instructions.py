"""Instructions for your own agent CLIs that git ignores, made or changed by a step: held like code hidden from git.

Claude Code reads ``CLAUDE.local.md`` (and ``CLAUDE.md``, ``.claude/CLAUDE.md``, its subagents and commands under
``.claude/``) as your own words each time you start it in the project; Codex reads ``AGENTS.md``, the Gemini CLI
``GEMINI.md``, Cursor ``.cursorrules`` and ``.cursor/rules/``, Copilot ``.github/copilot-instructions.md``. Tracked,
such a file is in the step's commit and its review. Ignored (``CLAUDE.local.md`` is meant to be, and many projects
ignore ``.claude/`` whole), it is in neither, and the next session of your agent CLI, outside any jail, follows what
the step's model wrote there as if you had. So each one git ignores that a step made or changed holds the run
(``hidden``'s wait), as code a rule of the step's hides does. What the agents' settings name (hooks, MCP servers)
is machinery already (``system/machinery``): a step's change there is undone.
"""

from __future__ import annotations

import os
from pathlib import Path

from specd.git.sources import INSTRUCTIONS as NAMES
from specd.git.sources import fresh
from specd.system.ownfiles import walk

FOLDERS = (".claude", ".cursor", ".gemini", ".codex", ".windsurf")  # their markdown: subagents, commands, rules
KINDS = (".md", ".mdc")
RULE = "instructions"  # the "rule" that hides them, for ``hidden.why``: git ignores them, by whatever rule
LOOK = 10_000  # entries looked through in an agent's folder that git ignores whole


def instruction(path: str) -> bool:
    """Whether the tree-relative ``path`` is a file an agent CLI reads as the user's instructions."""
    parts = path.rstrip("/").split("/")
    return parts[-1] in NAMES or (parts[-1].endswith(KINDS) and any(part in FOLDERS for part in parts[:-1]))


def ignored(top: Path, paths: list[str], since_ns: int) -> dict[str, str]:
    """The instructions among what git ignores (``paths``; an agent's folder it ignores whole is looked through)
    that were made or changed since ``since_ns``."""
    found: dict[str, str] = {}
    for path in paths:
        if not path.endswith("/"):
            if instruction(path) and fresh(top / path, since_ns, folders=False):
                found[path] = RULE
            continue
        if not any(part in FOLDERS for part in path.rstrip("/").split("/")):
            continue
        seen = 0
        for folder, dirs, files in walk(top / path, 8):
            seen += len(files) + len(dirs)
            if seen > LOOK:
                break
            rel = os.path.relpath(folder, top)
            found.update({f"{rel}/{name}": RULE for name in files
                          if name.endswith(KINDS) and fresh(Path(folder) / name, since_ns, folders=False)})
    return found
