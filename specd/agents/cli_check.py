"""Before a run with an agent CLI starts: where its binary is, and whether it is new enough.

The same two questions for Claude Code, Codex and the Gemini CLI, each answered with a ConfigError (exit 2)
that names the fix. A binary's version is asked once per run, in a scratch folder that is also the Gemini CLI's
config folder: even `gemini --version` writes into its config folder, and the user's own is never touched.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from specd.errors import ConfigError
from specd.system import ownpath
from specd.system.ownpath import STASH


@dataclass(frozen=True)
class Cli:
    agent: str  # the backend's name: "codex"
    command: str  # what is looked for on PATH: "codex"
    title: str  # as a sentence names it: "Codex", "the Gemini CLI"
    product: str  # what "needs the ..." names: "the Codex CLI"
    bin_env: str  # the variable that points at another binary: "SPECD_CODEX_BIN"
    install: str
    node: str  # the Node.js it needs, for the install hint: "Node.js 18+"
    minimum: tuple[int, ...]
    why: str  # what the minimum version brings, for the "too old" message
    update: str = ""  # how to update, when not the install line again


_checked: dict[str, tuple[int, ...]] = {}  # binary -> version, so a run asks once


def find(cli: Cli, env: Mapping[str, str]) -> str:
    """The binary to run: the one ``cli.bin_env`` names if set, else ``cli.command`` on PATH."""
    configured = env.get(cli.bin_env)
    path = shutil.which(configured or cli.command, path=env.get("PATH"))
    if path is None and env.get(STASH):  # not on the PATH specd runs its own programs from: on yours, in the project?
        path = shutil.which(configured or cli.command, path=env[STASH])
    if path is not None and ownpath.inside(path):
        raise ConfigError(f"`{path}` is inside the project, where the agent can rewrite it, and specd runs it "
                          "outside the jail to ask its version",
                          fix=f"install {cli.title} outside the project ({cli.install}), or set {cli.bin_env} to "
                              "a copy outside it")
    if path is None and configured:
        raise ConfigError(f"{cli.bin_env}={configured} is not an executable file",
                          fix=f"point {cli.bin_env} at the {cli.command} binary, or unset it and install: "
                              f"{cli.install}")
    if path is None:
        raise ConfigError(f"the {cli.agent} agent needs {cli.product}, and `{cli.command}` is not on PATH",
                          fix=f"install it with `{cli.install}` ({cli.node}), or set {cli.bin_env} to its path")
    return path


def check_version(cli: Cli, binary: str, env: Mapping[str, str]) -> tuple[int, ...]:
    if binary in _checked:
        return _checked[binary]
    reinstall = f"reinstall {cli.title} with `{cli.install}`"
    try:
        with tempfile.TemporaryDirectory(prefix="specd-version-") as scratch:
            done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, check=False,
                                  cwd=scratch, env={**env, "GEMINI_CLI_HOME": scratch})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"could not run `{binary} --version`: {exc}", fix=reinstall) from None
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if done.returncode != 0 or found is None:
        said = (done.stdout + done.stderr).strip().splitlines()
        raise ConfigError(f"`{binary} --version` did not print a version ({said[0] if said else 'no output'})",
                          fix=reinstall)
    version = tuple(int(part) for part in found.groups())
    if version < cli.minimum:
        need = ".".join(map(str, cli.minimum))
        raise ConfigError(f"{cli.title} {found.group(0)} at {binary} is too old: specd needs {need} or newer "
                          f"({cli.why})", fix=cli.update or f"update it with `{cli.install}`")
    _checked[binary] = version
    return version
