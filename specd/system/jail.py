"""The one jail: everything the agent can influence starts here, as (command, project root, jail) → process.

Two tiers, under bubblewrap when it works (see ``specd.system.probe``):

- ``agent``: an agent process (claude_code, a `cmd:` agent). No capability
  survives, even as root; the PID namespace dies with specd; `/` is read-only,
  the project writable except `.git` and specd's machinery, its ``.env*`` files empty; HOME is read-only
  but for the backend's own config and cache folders; /tmp and the network are
  kept, since the backend needs them, and so is the environment, but for
  Claude Code: it keeps only the keys it signs in with (and ``env_allow``).
- ``project``: code run on the agent's behalf (the anthropic agent's
  run_command, `run:` hooks). The agent tier plus a private /tmp, HOME hidden,
  secrets removed from the environment (but for ``env_allow``) and no network
  unless allowed.

``enabled=False`` is a pipeline's explicit opt-out (`sandbox: false`) for a
trusted script: the command runs as it is, with the whole environment. Where
bwrap is not usable the environment is still scrubbed, and the caller keeps
the other half of the promise: no shell for the agent's commands, and the
leftovers of every child killed when it ends (``specd.system.reaper``).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from specd.redact import scrubbed_env
from specd.system.envfiles import hidden_from_agents
from specd.system.machinery import overlays
from specd.system.probe import SYSTEM, bwrap_binary, bwrap_usable, isolation, supports_disable_userns

Tier = Literal["agent", "project"]
# An empty file shipped with specd, bound over each .env file (a bind of /dev/null reads EACCES: binds are nodev).
EMPTY = Path(__file__).with_name("empty")
ON = "jail: bubblewrap (user namespace, no capabilities)"
FALLBACK = "commands run without a shell, leftover processes are killed after each step"
# HOME entries a backend writes while it works (login state, caches); the rest of HOME stays read-only.
HOME_WRITABLE: Mapping[str, tuple[str, ...]] = {
    "claude_code": (".claude", ".claude.json", ".claude.json.backup", ".cache", ".npm", ".config/claude"),
    "command": (".cache",),
}
# Secret-named variables Claude Code itself signs in with (Anthropic, Bedrock, Vertex, Foundry); every other one
# (a GitHub token, a database password) is removed from its environment, since its Bash commands inherit it and
# what they print goes to the model. (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB would keep even these from its commands,
# but it also makes Claude Code demand its own sandbox, which cannot start inside this one: Bash then fails.)
BACKEND_KEYS: Mapping[str, tuple[str, ...]] = {"claude_code": (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_BASE_URL", "ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_AWS_API_KEY", "ANTHROPIC_BEDROCK_MANTLE_API_KEY",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}  # a proxy's password
# Folders a backend names through the environment instead of HOME.
ENV_WRITABLE: Mapping[str, tuple[str, ...]] = {"claude_code": ("CLAUDE_CONFIG_DIR",)}
# Installed tools that live in HOME (pyenv, nvm, rustup, pip --user...): read-only again inside a hidden HOME,
# or `python -m pytest` would not even start. Credentials (.ssh, .aws, .config, .netrc...) stay hidden.
HOME_TOOLS = (".pyenv", ".nvm", ".volta", ".asdf", ".rustup", ".cargo/bin", ".local/bin", ".local/lib", ".sdkman",
              ".deno", ".bun", "go/bin", ".nodenv", ".rbenv", ".goenv", ".juliaup")
# Made before the jail starts when missing: Claude Code keeps its sessions there, and `--resume` needs them.
HOME_CREATE: Mapping[str, tuple[str, ...]] = {"claude_code": (".claude",)}


@dataclass(frozen=True)
class Jail:
    tier: Tier
    enabled: bool = True  # False: the pipeline said `sandbox: false` for this agent or hook
    network: bool = False  # project tier only: the agent tier always keeps the network
    env_allow: tuple[str, ...] = ()  # secret-named variables that still get through (project tier, Claude Code)
    backend: str = "command"  # agent tier: whose config and cache folders stay writable
    task_dir: Path | None = None  # the running task: its folder is writable (but for machinery), others are not

    @classmethod
    def for_agent(cls, settings: Mapping[str, Any], backend: str, task_dir: Path | None = None) -> Jail:
        return cls("agent", enabled=enabled(settings.get("sandbox")), backend=backend, task_dir=task_dir,
                   env_allow=tuple(str(name) for name in settings.get("env_allow") or ()))

    def within(self, task_dir: Path) -> Jail:
        return replace(self, task_dir=task_dir)

    @classmethod
    def for_project(cls, settings: Mapping[str, Any]) -> Jail:
        """The project tier from an agent block or a hook spec (``sandbox``, ``network``, ``env_allow``)."""
        network = settings.get("network", settings.get("sandbox_network", False))
        return cls("project", enabled=enabled(settings.get("sandbox")), network=bool(network),
                   env_allow=tuple(str(name) for name in settings.get("env_allow") or ()))


def enabled(value: object) -> bool:
    """A `sandbox:` setting: false (and the older "allowlist") turns the jail off; anything else keeps it."""
    return value is not False and value != "allowlist"


@dataclass(frozen=True)
class Launch:
    """What to hand to ``popen_child``."""

    args: str | list[str]
    shell: bool
    env: dict[str, str]
    jailed: bool


def active() -> bool:
    """True when the jail is bubblewrap on this machine (the probe runs once)."""
    return bwrap_usable()[0]


def mode_line() -> str:
    """The jail in force, as `specd doctor` and the first line of a run say it."""
    usable, detail = bwrap_usable()
    return ON if usable else f"jail: none — {detail}; {FALLBACK}"


_UNJAILED = [0]  # what this process ran outside the jail so far: children, and in-process agents that write


def unjailed() -> int:
    """How many times this process let something the agent influences run outside the jail."""
    return _UNJAILED[0]


def note_unjailed() -> None:
    """An in-process agent wrote files with specd's own rights (the scripted agent)."""
    _UNJAILED[0] += 1


def read_only(root: Path, task_dir: Path | None) -> list[tuple[bool, Path]]:
    """What the jail binds inside ``root``, in mount order, each with whether it is read-only there; nothing when
    there is no jail. A path whose last bind (later ones lie over earlier ones) is read-only cannot be changed
    by any jailed process."""
    if not active():
        return []
    return [(flag.startswith("--ro-"), path.resolve()) for flag, path in overlays(root.resolve(), task_dir)]


def prepare(command: str | list[str], root: Path, jail: Jail, env: Mapping[str, str]) -> Launch:
    """The process for ``command`` (a shell line, or an argv that must not meet a shell) in ``root``."""
    if not jail.enabled:
        note_unjailed()
        return Launch(command, isinstance(command, str), dict(env), False)
    child_env = _environment(jail, env)
    if not active():
        note_unjailed()
        return Launch(command, isinstance(command, str), child_env, False)
    inner = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    return Launch([*bwrap_argv(root, jail, child_env), "--", *inner], False, child_env, True)


def _environment(jail: Jail, env: Mapping[str, str]) -> dict[str, str]:
    """What the jailed process sees: the project tier and Claude Code lose the secrets they do not need; a `cmd:`
    agent keeps them all (it is your CLI, which may need its own key)."""
    if jail.tier == "project":
        return scrubbed_env(env, jail.env_allow)
    if jail.backend not in BACKEND_KEYS:
        return dict(env)
    return scrubbed_env(env, (*BACKEND_KEYS[jail.backend], *jail.env_allow))


def bwrap_argv(root: Path, jail: Jail, env: Mapping[str, str]) -> list[str]:
    """bwrap and its flags, up to (not including) the command."""
    binary = bwrap_binary()
    if binary is None:
        raise FileNotFoundError("bwrap")
    root = root.resolve()
    args = [binary, *SYSTEM]
    home = _home(env)
    if jail.tier == "project":
        args += ["--tmpfs", "/tmp"]
        hidden = [Path("/tmp").resolve()]
        if home is not None:
            args += ["--tmpfs", str(home)]  # hidden: keys, shell history, other projects
            hidden.append(home)
        for source, target in tools(hidden, home, env):
            args += ["--ro-bind", str(source), str(target)]
    else:
        args += ["--bind", "/tmp", "/tmp"]
        for path in writable(jail.backend, env):
            args += ["--bind", str(path), str(path)]
    args += ["--bind", str(root), str(root)]  # after HOME and /tmp: a project inside either stays visible
    for flag, path in overlays(root, jail.task_dir):
        args += [flag, str(path), str(path)]
    for path in hidden_from_agents(root):  # keys the model would read: shown empty, and read-only
        args += ["--ro-bind-try", str(EMPTY), str(path)]
    if jail.tier == "project" and not jail.network:
        args.append("--unshare-net")
    return [*args, *isolation(disable_userns=supports_disable_userns()), "--chdir", str(root)]


def writable(backend: str, env: Mapping[str, str]) -> list[Path]:
    """The backend's own folders in HOME (and named by its environment) that exist, resolved."""
    home = _home(env)
    wanted: list[Path] = []
    if home is not None:
        for name in HOME_CREATE.get(backend, ()):
            # HOME itself read-only or odd: the backend then works as it would with no folder of its own.
            with contextlib.suppress(OSError):
                (home / name).mkdir(exist_ok=True)
        wanted += [home / name for name in HOME_WRITABLE.get(backend, ())]
    wanted += [Path(env[name]) for name in ENV_WRITABLE.get(backend, ()) if env.get(name)]
    found: list[Path] = []
    for path in wanted:
        # Binding follows links; a link is taken where it leads, and only if that exists.
        if path.exists() and (resolved := path.resolve()) != Path("/"):
            found.append(resolved)
    return list(dict.fromkeys(found))


def tools(hidden: list[Path], home: Path | None, env: Mapping[str, str]) -> list[tuple[Path, Path]]:
    """(where it really is, where it shows) for each tool folder inside a ``hidden`` folder: HOME's tool folders,
    PATH entries, and the Python environment specd itself runs from (a venv under /tmp runs the project's tests)."""
    wanted = [home / name for name in HOME_TOOLS] if home is not None else []
    wanted += [Path(entry) for entry in env.get("PATH", "").split(os.pathsep) if entry and Path(entry).is_absolute()]
    wanted += [Path(sys.prefix), Path(sys.base_prefix)]
    if env.get("VIRTUAL_ENV"):
        wanted.append(Path(env["VIRTUAL_ENV"]))
    found: dict[Path, Path] = {}
    for path in wanted:
        if any(path.is_relative_to(place) and path != place for place in hidden) and path.is_dir():
            found.setdefault(path, path.resolve())
    return [(source, target) for target, source in found.items()]


def _home(env: Mapping[str, str]) -> Path | None:
    value = env.get("HOME") or os.environ.get("HOME")
    if not value:
        return None
    path = Path(value)
    if not path.is_dir():
        return None
    resolved = path.resolve()
    return None if resolved == Path("/") else resolved
