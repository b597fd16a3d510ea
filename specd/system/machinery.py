"""specd's machinery: the paths in a project that an agent, or code it wrote, must never change.

One definition for the whole code base. The anthropic agent's file tools refuse
to write these paths, and the jail binds them read-only over the writable
project, so every backend and every command meets the same list: a rewritten
pipeline file, hook or workflow would run the agent's code on the next
`specd continue`, and rewritten run state would lie about what happened.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from specd.system.ownfiles import walk

_CONFIG = ("pipeline.*", "config.json", "*.json", "*.yaml", "*.yml")  # .specd/<name>: specd's configuration
TASK_HOMES = ("tasks", "features")  # features/: specdacular's older place for task folders
_STATE = ("events.jsonl", "config.json", "*.lock", "*.lock.*", "*heartbeat*")
# Files specd replaces while a child runs (the heartbeat, scratch files, the lock file). A bind of one would race
# with the replacement and fail the jail's start, so they are left out of the read-only binds; they steer
# nothing that runs, and the check after every step covers what does. The lock's owner file is not among them:
# it names the pid `specd cancel` stops (an agent that rewrote it would have the user's cancel kill a process of
# its choosing), and it is written once, when the lock is taken, before any child starts; the groups file beside
# it is written through a descriptor opened then.
_VOLATILE = ("*.lock", "*heartbeat*", ".tmp-*", ".result-*.json")
# Files of the tree that an agent CLI of the user's runs commands from the next time it starts here, outside any
# jail: Claude Code's project settings (hooks, statusLine, apiKeyHelper, env) and the hook scripts beside them,
# .mcp.json's servers, Codex's project config (notify, MCP servers) and the Gemini CLI's workspace settings (MCP
# servers, hooks). Each is (folder, names); ``TOOL_HOOKS`` are folders, whole.
TOOL_CONFIGS = ((".claude", ("settings.json", "settings.local.json")), ("", (".mcp.json",)),
                (".codex", ("config.toml",)), (".gemini", ("settings.json",)))
TOOL_HOOKS = (".claude/hooks",)
TOOL_WHY = ("your own claude, codex or gemini would run the commands it names, outside any jail, the next time "
            "you start it in this project; a human edits it")


def machinery(parts: tuple[str, ...]) -> str | None:
    """Why the agent may not write the project-relative path ``parts``, or None when it may."""
    if ".git" in parts:
        return ".git/ is git's own; use run_command with git if the workflow allows it"
    if is_tool_config(parts):
        return TOOL_WHY
    if not parts or parts[0] != ".specd":
        return None
    rest = parts[1:]
    if not rest:
        return ".specd/ is specd's own folder"
    if len(rest) == 1 and any(fnmatch.fnmatch(rest[0], p) for p in _CONFIG):
        return "this is specd's configuration; the agent may read it, a human edits it"
    if rest[0] in ("hooks", "workflows"):
        return "hooks and workflows are specd's instructions; the agent may read them, a human edits them"
    if "transcripts" in rest or any(part.startswith(".") for part in rest):
        return "this is specd's own run state; it is managed by specd, not the agent"
    if rest[0] not in TASK_HOMES and rest != ("PROJECT.md",):  # codex/, worktrees/, homes/: what runs, or runs next
        return "this is specd's own (a backend's config, another task's worktree); a human edits it"
    if any(fnmatch.fnmatch(rest[-1], p) for p in _STATE):
        return "this is specd's own run state; it is managed by specd, not the agent"
    return None


def is_tool_config(parts: tuple[str, ...]) -> bool:
    """Whether the project-relative path ``parts`` is one of ``TOOL_CONFIGS`` or inside one of ``TOOL_HOOKS``."""
    folder, name = "/".join(parts[:-1]), parts[-1] if parts else ""
    return any(folder == place and name in names for place, names in TOOL_CONFIGS) or any(
        "/".join(parts[:len(hooks.split("/"))]) == hooks for hooks in TOOL_HOOKS)


def tool_configs(root: Path) -> list[Path]:
    """The tool configs and hook folders in ``root`` that exist, reached by no link inside ``root`` (binding
    follows links, and a link's target outside the tree must not be shown)."""
    found = []
    for place, names in TOOL_CONFIGS:
        found += [root / place / name for name in names]
    found += [root / hooks for hooks in TOOL_HOOKS]
    return [path for path in found if path.exists() and _plain(root, path)]


def _plain(root: Path, path: Path) -> bool:
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        if here.is_symlink():
            return False
    return True


def is_state(parts: tuple[str, ...]) -> bool:
    """Run state and transcripts: noise in a listing or search."""
    rest = parts[1:] if parts and parts[0] == ".specd" else None
    return rest is not None and (
        not rest or "transcripts" in rest or any(p.startswith(".") for p in rest)
        or any(fnmatch.fnmatch(rest[-1], p) for p in _STATE if p != "config.json")
    )


def overlays(root: Path, task_dir: Path | None = None) -> list[tuple[str, Path]]:
    """The binds that make machinery read-only inside a writable ``root``, in mount order.

    ``.git`` and ``.specd`` go read-only whole; the running task's folder (every
    task folder when none is named) is made writable again, since the agent
    writes PLAN.md there, except the machinery inside it. Other tasks' folders
    stay read-only as a whole: their runs replace files there at any moment, and
    a bind of a file that is being replaced fails the jail's start. Later mounts
    lie over earlier ones, so the order matters; "-try" binds let a file that
    vanished meanwhile go. Last, the user's agent CLIs' configs (``TOOL_CONFIGS``)
    that exist go read-only; one the step makes is undone by the check after it.
    """
    specd = root / ".specd"
    mounts = [("--ro-bind", path) for path in (root / ".git", specd) if path.exists() and not path.is_symlink()]
    homes = [specd / "tasks", specd / "features"]  # features/: specdacular's older place for task folders
    if task_dir is not None:
        folders = [task_dir.resolve()] if task_dir.resolve().parent in [h.resolve() for h in homes] else []
    else:
        folders = [t for h in homes if h.is_dir() and not h.is_symlink() for t in sorted(h.iterdir())]
    for task in folders:
        if task.is_dir() and not task.is_symlink():
            mounts.append(("--bind-try", task))
            mounts += [("--ro-bind-try", path) for path in _machinery_in(task, root)]
    return mounts + [("--ro-bind-try", path) for path in tool_configs(root)]


def _machinery_in(folder: Path, root: Path) -> list[Path]:
    found: list[Path] = []
    for here, dirs, files in walk(folder):  # an agent's nesting a thousand deep: no recursion
        for name in sorted([*dirs, *files]):
            path = Path(here) / name
            # Binding follows links, so a link is skipped; its target is covered where it lives.
            if path.is_symlink() or any(fnmatch.fnmatch(name, p) for p in _VOLATILE):
                continue
            if machinery(path.relative_to(root).parts) is not None:
                found.append(path)
        dirs[:] = [d for d in dirs if Path(here) / d not in found]  # a read-only folder covers its inside
    return found
