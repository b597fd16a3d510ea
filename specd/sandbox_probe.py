"""Is bubblewrap usable here? The same answer for `specd doctor` and the run's first line.

Being installed is not enough: containers and hardened kernels often forbid the
user namespaces bwrap needs, so the probe runs a real (trivial) sandbox.
"""

from __future__ import annotations

import shutil
import subprocess

PROBE = ("--ro-bind", "/", "/", "--dev", "/dev", "true")
PROBE_TIMEOUT = 20.0  # seconds; a sandbox that cannot start in this long is not usable


def bwrap_usable() -> tuple[bool, str]:
    """(usable, what was found) for ``bwrap`` on PATH."""
    binary = shutil.which("bwrap")
    if binary is None:
        return False, "bwrap is not installed"
    try:
        result = subprocess.run([binary, *PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT,
                                check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{binary} could not start a sandbox ({exc})"
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        return False, f"{binary} is installed but cannot start a sandbox here: {reason}"
    return True, f"{binary} works"
