"""Is bubblewrap usable here? One answer for `specd doctor` and for the agent's run_command.

Being installed is not enough: containers and hardened kernels often forbid the
user namespaces bwrap needs, so the probe runs a real (trivial) sandbox with the
same isolation flags the agent's commands get.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache

ISOLATION = ("--unshare-pid", "--die-with-parent", "--new-session")
SYSTEM = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
PROBE_TIMEOUT = 30.0  # seconds; a sandbox that cannot start in this long is not usable


def bwrap_binary() -> str | None:
    """``$SPECD_BWRAP``, else ``bwrap`` on PATH."""
    return os.environ.get("SPECD_BWRAP") or shutil.which("bwrap")


def bwrap_usable() -> tuple[bool, str]:
    """(usable, what was found)."""
    binary = bwrap_binary()
    if binary is None:
        return False, "bwrap is not installed"
    return _probe(binary)


@cache
def _probe(binary: str) -> tuple[bool, str]:
    try:
        result = subprocess.run([binary, *SYSTEM, "--unshare-net", *ISOLATION, "true"], capture_output=True,
                                text=True, timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"{binary} could not start a sandbox ({exc})"
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        return False, f"{binary} is installed but cannot start a sandbox here: {reason}"
    return True, f"{binary} works"
