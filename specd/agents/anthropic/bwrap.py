"""Running the agent's commands under bubblewrap, when the machine offers it.

Inside, the project is the only writable place (its .git and specd's
machinery are bound read-only over it), /tmp is private, there is no network
unless the pipeline allows it, and the whole sandbox dies with specd. The
allowlist still decides what runs without a human; bubblewrap confines what an
allowed command then does (a test suite runs arbitrary code).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Literal

from specd.agents.anthropic.sandbox import machinery

Mode = Literal["bubblewrap", "allowlist"]
_ISOLATION = ("--unshare-pid", "--die-with-parent", "--new-session")
_SYSTEM = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")


def binary() -> str | None:
    return os.environ.get("SPECD_BWRAP") or shutil.which("bwrap")


@cache
def _works(path: str) -> bool:
    # Installed is not enough: containers often forbid the user namespaces bwrap needs.
    try:
        probe = subprocess.run([path, *_SYSTEM, "--unshare-net", *_ISOLATION, "true"],
                               capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def sandbox_mode() -> Mode:
    """Which confinement the anthropic agent's run_command gets on this machine."""
    found = binary()
    return "bubblewrap" if found and _works(found) else "allowlist"


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
