"""The one jail: everything the agent can influence starts here, as (command, project root, jail) → process.

Deny by default, in both tiers, under bubblewrap when it works (see ``specd.system.probe``): a jail starts
from nothing and binds what ``specd.system.binds`` lists (the system's programs, tool folders, a private /tmp
and a fresh HOME), then the task's tree: writable but for `.git`, specd's machinery and the secret files
(shown empty); for a worktree, the main repository's git folder read-only and nothing else of the main tree.
No capability survives, even as root; the PID namespace dies with specd. The network is a list: a jail has
its own network namespace and reaches only the hosts its list names, through specd's proxy
(``specd.system.proxy``); `network: true` keeps the host's network instead, and the run says so.

- ``agent``: an agent process (claude_code, gemini, a `cmd:` agent). It reaches its backend's API hosts and
  the listed ones; its state (Claude Code's or the Gemini CLI's config folder) is a per-task copy
  (``specd.system.agent_state``).
- ``project``: code run on the agent's behalf (the anthropic agent's run_command, `run:` hooks): no network
  unless listed.

Every tier loses the secret-named variables but those ``env_allow`` names; a backend's sign-in keys pass to
that backend alone.

``enabled=False`` is a pipeline's explicit opt-out (`sandbox: false`) for a
trusted script: the command runs as it is, with the whole environment. Where
bwrap is not usable the environment is still scrubbed, and the caller keeps
the other half of the promise: no shell for the agent's commands, and the
leftovers of every child killed when it ends (``specd.system.reaper``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from specd.redact import scrubbed_env
from specd.system import binds, buildcaches, environments, gitconfig, keeper, ownpath, submodules
from specd.system.agent_state import seed_state
from specd.system.binds import EMPTY
from specd.system.envfiles import forget_handoff, hidden_from_agents
from specd.system.findfiles import gitlinks
from specd.system.machinery import overlays
from specd.system.netlist import PROXY_VARS, api_hosts, through_proxy
from specd.system.probe import bwrap_binary, bwrap_usable, isolation, supports_disable_userns

Tier = Literal["agent", "project"]
ON = "jail: bubblewrap (user namespace, no capabilities)"
FALLBACK = "commands run without a shell, leftover processes are killed after each step"
# Secret-named variables an agent CLI itself signs in with (Claude Code: Anthropic, Bedrock, Vertex, Foundry;
# the Gemini CLI: a Gemini API key, or Vertex AI's): they pass to that CLI and to no other backend or tier.
# Every other one (a GitHub token, a database password) is removed, since the CLI's shell commands inherit it
# and what they print goes to the model.
BACKEND_KEYS: Mapping[str, tuple[str, ...]] = {"claude_code": (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_BASE_URL", "ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_AWS_API_KEY", "ANTHROPIC_BEDROCK_MANTLE_API_KEY",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH"),
    "codex": ("OPENAI_API_KEY",),  # or the variable its agent.api_key_env names, passed by the backend itself
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT",
               "GOOGLE_CLOUD_LOCATION")}


@dataclass(frozen=True)
class Jail:
    tier: Tier
    enabled: bool = True  # False: the pipeline said `sandbox: false` for this agent or hook
    network: bool = False  # True: the host's network as it is (`network: true`), said on the run's first line
    hosts: tuple[str, ...] = ()  # `network: [host, ...]`: reachable through specd's proxy, and nothing else
    env_allow: tuple[str, ...] = ()  # secret-named variables that still get through
    backend: str = "command"  # agent tier: whose API hosts, sign-in keys and state folder it gets
    task_dir: Path | None = None  # the running task: its folder is writable (but for machinery), others are not
    # A `read_only` step (issue 30): the whole tree is bound read-only, the task's folder too; ``writable`` are the
    # only folders it may write (the command agent's $SPECD_RESULT lives in one).
    read_only: bool = False
    writable: tuple[Path, ...] = ()

    @classmethod
    def for_agent(cls, settings: Mapping[str, Any], backend: str, task_dir: Path | None = None) -> Jail:
        network, hosts = network_of(settings.get("network"))
        return cls("agent", enabled=enabled(settings.get("sandbox")), backend=backend, task_dir=task_dir,
                   network=network, hosts=hosts, env_allow=tuple(str(name) for name in settings.get("env_allow") or ()),
                   read_only=settings.get("read_only") is True)

    def within(self, task_dir: Path) -> Jail:
        return replace(self, task_dir=task_dir)

    @classmethod
    def for_project(cls, settings: Mapping[str, Any]) -> Jail:
        """The project tier from an agent block or a hook spec (``sandbox``, ``network``, ``env_allow``)."""
        network, hosts = network_of(settings.get("network", settings.get("sandbox_network", False)))
        return cls("project", enabled=enabled(settings.get("sandbox")), network=network, hosts=hosts,
                   env_allow=tuple(str(name) for name in settings.get("env_allow") or ()),
                   read_only=settings.get("read_only") is True)


def network_of(value: object) -> tuple[bool, tuple[str, ...]]:
    """A `network:` setting: true (the host's network), a list of hosts (through the proxy), or nothing."""
    if isinstance(value, list | tuple):
        return False, tuple(str(host) for host in value)
    return bool(value), ()


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

    @property
    def guarded(self) -> bool:
        """Whether the first process started sets its own death signal, so ``popen_child`` needs no
        ``preexec_fn`` (see there): the keeper (race-free: it is given specd's pid), or bubblewrap
        (``--die-with-parent``), which sets it after it made the jail's namespaces, a millisecond or two after its
        start. A specd killed within that moment leaves the jail running on; the next run of the task stops it, by
        the run's mark in bubblewrap's environment (``children.stop_leftovers``), as it stops anything left."""
        return self.jailed or keeper.guards(self.args)


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
    """Something the agent or the pipeline influences runs outside the jail: a child, or an in-process agent that
    writes files with specd's own rights (the scripted agent). What it may make, the next jail must find."""
    _UNJAILED[0] += 1
    forget_handoff()


def read_only(root: Path, task_dir: Path | None) -> list[tuple[bool, Path]]:
    """What the jail binds inside ``root``, in mount order, each with whether it is read-only there; nothing when
    there is no jail. A path whose last bind (later ones lie over earlier ones) is read-only cannot be changed
    by any jailed process."""
    if not active():
        return []
    return [(flag.startswith("--ro-"), path.resolve()) for flag, path in overlays(root.resolve(), task_dir)]


def prepare(command: str | list[str], root: Path, jail: Jail, env: Mapping[str, str], *,
            model: bool = False) -> Launch:
    """The process for ``command`` (a shell line, or an argv that must not meet a shell) in ``root``. ``model``:
    the command is the model's (the anthropic agent's run_command), so nothing it names is shown in the jail;
    the pipeline's and yours show the programs they name (``binds.programs``)."""
    env = ownpath.yours(env)  # PATH as you set it: the project's own tools, which specd itself never runs
    if not jail.enabled:
        note_unjailed()
        return Launch(keeper.argv(command), False, dict(env), False)  # its descendants die with specd (keeper)
    child_env = _environment(jail, env)
    for variable in buildcaches.VARIABLES:  # a build of the tree's goes elsewhere (``buildcaches``)
        child_env.pop(variable, None)
    builds = buildcaches.folders(root.resolve(), env)
    child_env.update(buildcaches.environment(builds, active()))
    if not active():
        note_unjailed()
        return Launch(keeper.argv(command), False, child_env, False)
    inner = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    args = bwrap_argv(root, jail, child_env, "" if model else command, builds)
    rules = () if jail.network else (*jail.hosts, *api_hosts(jail.tier, jail.backend, env))
    if jail.tier == "agent" and jail.backend in BACKEND_KEYS:  # an agent CLI: its API key stays outside
        from specd.system import standins  # here: an HTTP server's modules, for an agent CLI's runs only

        guards = standins.shield(jail.backend, env, child_env)
        if not jail.network:
            rules = (*rules, *guards)  # the key guards' ports, tunnelled in: the backend's keys stay out
    if rules:
        inner = through_proxy(rules, args, child_env, inner)
    args += ["--remount-ro", "/"]  # last: the folders bubblewrap made on the way to each bind stay empty
    return Launch([*args, "--", *inner], False, child_env, True)


def _environment(jail: Jail, env: Mapping[str, str]) -> dict[str, str]:
    """One rule for every tier and backend: no secret-named variable but those ``env_allow`` names, and a
    backend's own sign-in keys for that backend alone."""
    own = BACKEND_KEYS.get(jail.backend, ()) if jail.tier == "agent" else ()
    child = scrubbed_env(env, (*own, *jail.env_allow))
    if not jail.network:  # the host's proxy is not reachable from inside; specd's own is set where there is one
        for name in PROXY_VARS:
            child.pop(name, None)
    state = backend_state(jail)
    if state is not None:  # made and seeded here: without bubblewrap too, the backend signs in from its copy
        child[state[0]] = str(seed_state(jail.backend, state[1], env))
    return child


def backend_state(jail: Jail) -> tuple[str, Path] | None:
    """(the variable that names it, the folder) of a backend's own state for this task: Claude Code's config
    folder or Codex's ``CODEX_HOME``, a copy kept with the task's transcripts, never the user's ``~/.claude``
    or ``~/.codex``."""
    if jail.tier != "agent" or jail.backend not in BACKEND_STATE or jail.task_dir is None:
        return None
    from specd.system.agent_state import FOLDER

    return BACKEND_STATE[jail.backend], jail.task_dir / "transcripts" / FOLDER / jail.backend


BACKEND_STATE: Mapping[str, str] = {"claude_code": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME",
                                    "gemini": "GEMINI_CLI_HOME"}


def bwrap_argv(root: Path, jail: Jail, env: Mapping[str, str], command: str | list[str] = "",
               builds: list[buildcaches.Folder] | None = None) -> list[str]:
    """bwrap and its flags, up to (not including) the command: nothing of the machine but what is listed.
    ``builds``: ``buildcaches.folders`` of the tree, when the caller has them."""
    binary = bwrap_binary()
    if binary is None:
        raise FileNotFoundError("bwrap")
    root = root.resolve()
    common = gitconfig.git_common(root)
    # Where an agent may have left a link: this tree, the project's main tree (another task's agent), and what
    # this step may write. Nothing of the machine is shown by way of them (``binds.steered``).
    planted = [root, *([common.parent] if common is not None and common.name == ".git" else []),
               *(folder.resolve() for folder in jail.writable)]
    args = [binary, *binds.base(env, command, [root] if common is None else [root, common], planted)]
    # After HOME and /tmp: a project inside either stays visible.
    args += ["--ro-bind" if jail.read_only else "--bind", str(root), str(root)]
    if common is not None:  # a worktree: the main repository's git folder, read-only, and nothing else of it
        args += ["--ro-bind", str(common), str(common)]
    hidden = hidden_from_agents(root)  # first: the same search lists the submodules
    if not jail.read_only:  # before any bind inside the tree: the submodules' folders are bound anew
        args += submodules.guards(root, gitlinks(root))
    for flag, path in () if jail.read_only else overlays(root, jail.task_dir):  # read-only: nothing writable
        args += [flag, str(path), str(path)]
    if not jail.read_only:  # the tree's .venv and node_modules: code you run later, which no review sees
        args += environments.binds(root, env)
    args += buildcaches.binds(buildcaches.folders(root, env) if builds is None else builds)  # the tree's, outside it
    for folder in jail.writable:
        args += ["--bind", str(folder.resolve()), str(folder.resolve())]
    for own in binds.itself(root):  # specd's own Python and code, in the tree: the agent must not rewrite them
        args += ["--ro-bind", str(own), str(own)]
    for path in hidden:  # keys the model would read: shown empty, and read-only
        args += ["--ro-bind-try", str(EMPTY), str(path)]
    for copy, config in gitconfig.binds(gitconfig.git_folders(root, common)):  # a remote's token: left out
        args += ["--ro-bind", str(copy), str(config)]
    state = backend_state(jail)
    if state is not None:
        folder = state[1].resolve()
        args += ["--bind", str(folder), str(folder)]
    if not jail.network:
        args.append("--unshare-net")
    return [*args, *isolation(disable_userns=supports_disable_userns()), "--chdir", str(root)]
