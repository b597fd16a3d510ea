"""Is bubblewrap usable here? One answer for `specd doctor`, the run's first line and the jail.

Being installed is not enough: containers and hardened kernels often forbid the
user namespaces the jail needs, so the probe starts a real (trivial) jail with
the same flags every jailed child gets. The reason it failed is kept word for
word, because "not usable" alone sends the user hunting.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache

SYSTEM = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
PROBE_TIMEOUT = 30.0  # seconds; a jail that cannot start in this long is not usable


def bwrap_binary() -> str | None:
    """``$SPECD_BWRAP``, else ``bwrap`` on PATH."""
    return os.environ.get("SPECD_BWRAP") or shutil.which("bwrap")


def isolation(*, disable_userns: bool = True) -> tuple[str, ...]:
    """The flags that make the jail a jail, whatever the tier.

    A user namespace mapped to our own uid/gid (files keep their owner) with every
    capability dropped, so even root inside cannot unmount or remount the
    read-only binds; no nested user namespace to win capabilities back; a PID
    namespace that dies with specd, so no descendant outlives it; a new session,
    so nothing inside can push input into specd's terminal.
    """
    flags = ["--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid()), "--cap-drop", "ALL"]
    if disable_userns:
        flags.append("--disable-userns")
    return (*flags, "--unshare-pid", "--die-with-parent", "--new-session")


def bwrap_usable() -> tuple[bool, str]:
    """(usable, what was found): the reason is the real one when it is not."""
    binary = bwrap_binary()
    if binary is None:
        return False, "bwrap is not installed"
    return _probe(binary)[:2]


def supports_disable_userns() -> bool:
    binary = bwrap_binary()
    return binary is not None and _probe(binary)[2]


@cache
def _probe(binary: str) -> tuple[bool, str, bool]:
    # --disable-userns came with bubblewrap 0.8; an older bwrap still gives the rest of the jail.
    result = _try(binary, disable_userns=True)
    if isinstance(result, subprocess.CompletedProcess) and result.returncode != 0 \
            and "disable-userns" in result.stderr:
        return _verdict(binary, _try(binary, disable_userns=False), False)
    return _verdict(binary, result, True)


def _try(binary: str, *, disable_userns: bool) -> subprocess.CompletedProcess[str] | str:
    argv = [binary, *SYSTEM, "--unshare-net", *isolation(disable_userns=disable_userns), "true"]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)


def _verdict(binary: str, result: subprocess.CompletedProcess[str] | str, nested: bool) -> tuple[bool, str, bool]:
    if isinstance(result, str):
        return False, f"{binary} could not start a jail ({result})", nested
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        return False, f"{binary} is installed but cannot start a jail here: {reason}", nested
    return True, f"{binary} works", nested
