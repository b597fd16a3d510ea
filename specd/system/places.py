"""Where specd's machinery lives: the files whose content decides what specd runs next.

- ``.specd/pipeline.*`` and ``.specd/config.json``; ``.specd/hooks/**`` and ``.specd/workflows/**``;
- the task's ``config.json``, run state and history;
- the configs in the tree that the user's own agent CLIs run commands from (``machinery.TOOL_CONFIGS``):
  ``.claude/settings*.json`` and ``.claude/hooks/``, ``.mcp.json``, ``.codex/config.toml``, ``.gemini/settings.json``;
- the config of a git hook manager whose hook is installed (pre-commit's ``.pre-commit-config.yaml``, lefthook's);
- the repository's ``config`` (and ``config.worktree``), ``info/exclude``, ``info/attributes`` and ``hooks/**`` in
  the git common dir, and the folder ``core.hooksPath`` names when it lies inside the project or its work tree.

Finding the git folders costs one ``git rev-parse``, asked again only when the repository's own
config files moved (that is where ``core.hooksPath`` is set).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from specd.git.journal import NAME as PENDING_JOURNAL
from specd.redact import scrubbed_env
from specd.state.history import HISTORY_FILE, SEALED_DIR
from specd.state.store import SHAPE_JSON
from specd.system.machinery import TOOL_CONFIGS, TOOL_HOOKS
from specd.system.ownfiles import read_regular

SPECD_FILES = ("pipeline.*", "config.json")
# The git journals say which paths specd commits as a step's work: a forged one would get the user's own
# files committed. specd writes them only between steps (at a step's or hook's start and end), never during one.
TASK_FILES = ("config.json", ".pipeline-state.json", HISTORY_FILE, SHAPE_JSON, ".git-baseline.json",
              PENDING_JOURNAL)
GIT_FILES = ("config", "config.worktree")
# What decides which files git shows at all, and how: a rule added to info/exclude hides a step's files from every
# commit, `git status` and review, as a .gitignore of its own would (``specd/git/hidden.py``).
GIT_INFO = ("exclude", "attributes")


@dataclass(frozen=True)
class Place:
    """A folder and what of it is machinery: named top-level entries, or (``deep``) everything below it."""

    folder: Path
    names: tuple[str, ...] = ()
    deep: bool = False


@dataclass(frozen=True)
class GitDirs:
    common: Path
    own: Path  # this worktree's git dir (the common dir in a plain clone)
    hooks: Path  # where git looks for hooks: core.hooksPath when set, else <common>/hooks


def git_dirs(root: Path) -> GitDirs | None:
    """The repository holding ``root``, or None (no repository, no git)."""
    try:
        found = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir",
                                "--git-path", "hooks"], cwd=root, capture_output=True, text=True, check=False,
                               env=scrubbed_env())
    except OSError:
        return None
    lines = found.stdout.splitlines()
    if found.returncode != 0 or len(lines) != 3:
        return None
    return GitDirs(Path(lines[0]), Path(lines[1]), Path(lines[2]))


def places(root: Path, task_dir: Path, git: GitDirs | None) -> list[Place]:
    specd = root / ".specd"
    found = [Place(specd, SPECD_FILES), Place(specd / "hooks", deep=True), Place(specd / "workflows", deep=True),
             Place(task_dir, TASK_FILES), Place(task_dir / SEALED_DIR, deep=True)]
    found += [Place(root / folder, deep=True) for folder in TOOL_HOOKS]
    tools = {folder: names for folder, names in TOOL_CONFIGS}  # what your own agent CLIs run; one look per folder
    if git is None:
        return found + [Place(root / folder, names) for folder, names in tools.items()]
    found += [Place(git.common, GIT_FILES), Place(git.common / "hooks", deep=True),
              Place(git.common / "info", GIT_INFO)]
    if git.own != git.common:
        found.append(Place(git.own, GIT_FILES))
    hooks = git.hooks
    if hooks != git.common / "hooks" and any(_within(hooks, top) for top in (root, git.common.parent)):
        if _within(root, hooks):  # core.hooksPath = "." (or above): its top-level files, never the whole tree
            found.append(Place(hooks, ("*",)))
        else:
            found.append(Place(hooks, deep=True))
            if hooks.name == "_":  # husky 9 keeps its stubs in .husky/_ and the user's hooks in .husky/
                found.append(Place(hooks.parent, ("*",)))
    tools[""] = tuple(dict.fromkeys([*tools[""], *(name for names in hook_configs(hooks) for name in names)]))
    return found + [Place(root / folder, names) for folder, names in tools.items()]


# Git hook managers whose installed hook reads its commands from a file in the work tree at each `git commit`:
# (what their hook script says, the config files it reads).
HOOK_MANAGERS = ((b"pre-commit.com", (".pre-commit-config.yaml", ".pre-commit-config.yml")),
                 (b"lefthook", ("lefthook.*", ".lefthook.*", "lefthook-local.*", ".lefthook-local.*")))


def hook_configs(hooks: Path) -> list[tuple[str, ...]]:
    """The config files of the hook managers installed in ``hooks`` (git's hooks folder): your next `git commit`
    runs what they name, outside any jail, so they are machinery like the hooks themselves."""
    found: list[tuple[str, ...]] = []
    try:
        scripts = [entry for entry in os.scandir(hooks) if entry.is_file(follow_symlinks=False)][:64]
    except OSError:
        return found
    for entry in scripts:
        try:  # a hooks folder in the tree (husky's) is the agent's to fill: no link, FIFO or huge file is read
            head = read_regular(Path(entry.path), 8192, head=True)
        except OSError:
            continue
        found += [names for mark, names in HOOK_MANAGERS if mark in head and names not in found]
    return found


def ancestors(root: Path, place: Place) -> list[Path]:
    """The folders between the project root and a place: replaced by a link, they would redirect a restore."""
    try:
        parts = place.folder.relative_to(root).parts
    except ValueError:
        return [place.folder] if not place.deep else []
    return [root / Path(*parts[:i]) for i in range(1, len(parts) + (0 if place.deep else 1))]


def deny_rules(root: Path, task_dir: Path, git: GitDirs | None) -> list[str]:
    """Claude Code permission rules that refuse its file tools every machinery path.

    ``Edit(...)`` rules cover every built-in file-writing tool (Write and NotebookEdit too). A leading
    ``/`` is relative to the project root (Claude Code's working directory), ``//`` is absolute.
    """
    rules = []
    for place in places(root, task_dir, git):
        patterns = ["**"] if place.deep else list(place.names)
        rules += [f"Edit({_rule_path(root, place.folder)}/{pattern})" for pattern in patterns]
    if git is not None:
        rules.append(f"Edit({_rule_path(root, git.common)}/**)")
    return list(dict.fromkeys(rules))


def _rule_path(root: Path, path: Path) -> str:
    try:
        rel = path.relative_to(root)
    except ValueError:
        return "/" + path.as_posix()
    return "" if rel == Path() else "/" + rel.as_posix()


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def key(st: os.stat_result) -> tuple[int, int, int, int]:
    """What a write to a file always moves: ctime cannot be set back by the writer, unlike mtime."""
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino
