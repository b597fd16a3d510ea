"""Running the agent's commands under bubblewrap, when the machine offers it.

Inside, the project is the only writable place (its .git and specd's
machinery are bound read-only over it), /tmp is private, there is no network
unless the pipeline allows it, and the whole sandbox dies with specd. The
allowlist still decides what runs without a human; bubblewrap confines what an
allowed command then does (a test suite runs arbitrary code).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from specd.agents.anthropic.sandbox import machinery
from specd.sandbox_probe import ISOLATION as _ISOLATION
from specd.sandbox_probe import SYSTEM as _SYSTEM
from specd.sandbox_probe import bwrap_binary, bwrap_usable

Mode = Literal["bubblewrap", "allowlist"]
binary = bwrap_binary


def sandbox_mode() -> Mode:
    """Which confinement the anthropic agent's run_command gets on this machine."""
    return "bubblewrap" if bwrap_usable()[0] else "allowlist"


def describe(mode: Mode, *, network: bool) -> str:
    if mode == "bubblewrap":
        net = "network allowed" if network else "no network"
        return f"run_command sandbox: bubblewrap (project writable, private /tmp, {net})"
    return ("run_command sandbox: allowlist only (bubblewrap not available; install the `bubblewrap` package "
            "for an OS sandbox)")


def argv(command: str, root: Path, *, network: bool) -> list[str]:
    """The bwrap command line that runs ``command`` through /bin/sh in ``root``."""
    found = binary()
    if found is None:
        raise FileNotFoundError("bwrap")
    args = [found, *_SYSTEM, "--bind", str(root), str(root)]
    for flag, path in _overlays(root):  # later mounts lie over earlier ones: the order matters
        args += [flag, str(path), str(path)]
    if not network:
        args.append("--unshare-net")
    return [*args, *_ISOLATION, "--chdir", str(root), "/bin/sh", "-c", command]


def _overlays(root: Path) -> list[tuple[str, Path]]:
    """.git and .specd read-only; each task folder writable again, except its machinery."""
    specd = root / ".specd"
    mounts = [("--ro-bind", path) for path in (root / ".git", specd) if path.exists() and not path.is_symlink()]
    tasks = specd / "tasks"
    for task in sorted(tasks.iterdir()) if tasks.is_dir() and not tasks.is_symlink() else []:
        if task.is_dir() and not task.is_symlink():
            mounts.append(("--bind", task))
            mounts += [("--ro-bind", path) for path in _machinery_in(task, root)]
    return mounts


def _machinery_in(folder: Path, root: Path) -> list[Path]:
    found: list[Path] = []
    for here, dirs, files in os.walk(folder):
        for name in sorted([*dirs, *files]):
            path = Path(here) / name
            # Binding follows links, so a link is skipped; its target is covered where it lives.
            if not path.is_symlink() and machinery(path.relative_to(root).parts) is not None:
                found.append(path)
        dirs[:] = [d for d in dirs if Path(here) / d not in found]  # a read-only folder covers its inside
    return found
