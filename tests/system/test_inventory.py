"""Acceptance for issue 28: the inventory taken from inside each tier of the jail, through the real CLI.

Each test runs specd on a project with a fake HOME full of keys, host sockets and listeners, a sibling
project and secret-named variables around it (``inventory_harness.Host``), and has the tier under test run
the probe (``inventory_probe.py``): a `cmd:` agent, a `run:` hook, the anthropic agent's run_command, a Bash
call of the real Claude Code CLI, and a `cmd:` agent in a task's worktree (`specd run`). The probe walks the
whole file system from inside and says what it could read, write, connect to and see; ``findings`` turns
what is wrong with that into one line each, so a failure shows every leak at once.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from inventory_harness import Host, Project, hosting

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))

import fake_anthropic as fake  # noqa: E402
import fake_codex  # noqa: E402
from claude_cli import claude_binary, claude_env  # noqa: E402
from codex_cli import agent_block, codex_binary, codex_env  # noqa: E402

from specd.agents.codex.agent import install_folders  # noqa: E402
from specd.redact import is_secret_name  # noqa: E402
from specd.system.buildcaches import KINDS  # noqa: E402
from specd.system.jail import BACKEND_KEYS  # noqa: E402

# What specd itself puts in a jail that reaches its proxy: the bridge's script, read-only, and the proxy.
PROXY_SOCKET, BRIDGE = "/run/specd/proxy.sock", "/run/specd/bridge.py"
# The jail's own /dev (bwrap's tmpfs with the device nodes, /dev/shm...): a write there stays in the jail.
OWN_WRITABLE = ("/dev",)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    yield from hosting(tmp_path)


def findings(inv: dict[str, Any], host: Host, *, env: set[str], own: tuple[str, ...] = (),
             secrets: Mapping[str, str] | None = None) -> list[str]:
    """Everything the inventory shows that the jail should not allow, one line each ([] when sealed).

    ``env`` is the secret-named variables the tier may see; ``own`` the folders the program under test makes
    for itself in its private /tmp or HOME (Claude Code's), whose files are its own; ``secrets`` the values
    (by name) that no environment in the jail may hold, under any name."""
    found: list[str] = []
    seen = set(inv["values"])
    found += [f"sees the value of {name}" for name, value in (secrets or {}).items()
              if hashlib.sha256(value.encode()).hexdigest() in seen]
    allowed, mounts = inv["allowed"], inv["mounts"]
    # The tree's build folders (``PYTHONPYCACHEPREFIX``, ``CARGO_TARGET_DIR``): host folders of specd's, under
    # ~/.cache/specd, that only this tree's jailed builds read; the step's own to write, like the tree.
    builds = [inside for _, _, inside, _ in KINDS]
    jail_made = [BRIDGE, PROXY_SOCKET, *builds]
    # Reading: no file outside the system, the tool folders and the project.
    found += [f"reads {path}" for path in inv["read"]
              if path not in jail_made and not _under(path, [*own, *builds])]
    # Mounted: nothing but those and the jail's own; so no host /tmp, /run, /var, real HOME or other project.
    # /tmp and HOME are fresh file systems (tmpfs, from its root), not a host folder bound there.
    found += [f"{name} is {mounts.get(name)!r}, not a fresh tmpfs" for name in ("/tmp", inv["home"])
              if mounts.get(name) != "rw tmpfs /"]
    if mounts.get("/", "").split(" ")[1:2] != ["tmpfs"]:
        found.append(f"/ is {mounts.get('/')!r}, not the jail's own")
    for point in mounts:
        # A read-only tmpfs is one of the jail's sealed folders on the way to a bind: empty, and stays so.
        if not (_under(point, allowed) or point in ("/", "/tmp", inv["home"], *jail_made)
                or _under(point, ["/dev", "/proc"]) or mounts[point].startswith("ro tmpfs")):
            found.append(f"mounts {point}")
    # Listing: a folder outside them exists only as the way to a mount (bwrap makes those), or is the tier's own.
    ways = {str(way) for point in mounts for way in (Path(point), *Path(point).parents)}
    found += [f"lists {path}" for path in inv["dirs"]
              if path not in ways and not _under(path, own) and path not in ("/dev", "/proc", "/tmp", inv["home"])]
    # HOME itself (a fresh tmpfs), a listed tool folder (a venv in /home/<user>) and the folders on the way to
    # either are the jail's own; anything else under these is the machine's.
    own_home = {inv["home"], *map(str, Path(inv["home"]).parents)}
    for prefix in (host.host_tmp, host.other, "/var", "/run/user", "/home"):
        found += [f"sees {path}" for path in inv["dirs"] + inv["read"] if _under(path, [str(prefix)])
                  and path not in own_home and path not in ways and not _under(path, allowed)]
    # Writing: nowhere but the project, /tmp and HOME (fresh tmpfs), and the jail's own /dev. The probe left a
    # mark in each place it could write: found out here, the write reached the host.
    for path in inv["write"]:
        if _under(path, builds):
            continue
        if _mark_on_host(path, inv["mark"]):
            found.append(f"writes {path}, on the host")
        elif path not in OWN_WRITABLE:
            found.append(f"writes {path} (in the jail's own file system: the mark is not on the host)")
    # Sockets: none but specd's proxy, whether found on the way or named.
    found += [f"connects to {s['path']}" for s in inv["sockets"] if s["connect"] == "ok" and s["path"] != PROXY_SOCKET]
    found += [f"connects to @{s['name']}" for s in inv["abstract"] if s["connect"] == "ok"]
    found += [f"sees socket {s['path']}" for s in inv["sockets"] if s["path"] != PROXY_SOCKET]
    found += [f"{what}: {result}" for what, result in inv["attacks"].items()
              if what.startswith(("read ", "connect ")) and result == "ok"]
    found += [f"{what}: not there" for what, result in inv["attacks"].items()
              if what.startswith("present ") and result != "ok"]
    found += [f"{what}: {result}" for what, result in inv["attacks"].items()
              if what.startswith("empty ") and result.startswith("ok") and result != "ok 0 bytes"]
    # TCP: the host's loopback only where listed, and only through specd's proxy; nothing else through it.
    net = inv["net"]
    expected = {"direct unlisted": "failed 111 Connection refused", "direct listed": "ok host-listed",
                "proxy unlisted": "HTTP/1.1 403 Forbidden", "proxy elsewhere": "HTTP/1.1 403 Forbidden",
                "proxy listed": "HTTP/1.1 200 Connection established | host-listed"}
    found += [f"tcp {what}: {net[what]!r}, not {want!r}" for what, want in expected.items() if net[what] != want]
    # The environment: secret-named variables only where allowed.
    if set(inv["env"]) != env:
        found.append(f"secret-named variables {sorted(inv['env'])}, not {sorted(env)}")
    # And from the host's side: nobody came to a listener the jail may not reach, HOME is as it was.
    found += [f"host {name} listener accepted {count}" for name, count in host.accepted().items()
              if count and name != "listed"]
    after = host.home_snapshot()
    found += [f"HOME changed: {name}" for name in sorted(set(after) | set(host.home_before))
              if after.get(name) != host.home_before.get(name)]
    return found


def _under(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _mark_on_host(folder: str, mark: str) -> bool:
    """The probe left ``mark`` in every folder it could write; one found out here is a write that got out."""
    path = Path(folder, mark)
    if not mark or not path.exists():
        return False
    path.unlink()
    return True


def test_a_cmd_agent_sees_nothing_of_the_machine(host: Host, tmp_path: Path) -> None:
    project = Project(host, tmp_path / "proj", agent={"network": [host.listed], "env_allow": ["DB_PASSWORD"]})
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent", "cmd:python3 probe.py agent")
    assert run.returncode == 0, run.stdout + run.stderr
    assert findings(project.inventory("agent"), host, env={"DB_PASSWORD"}) == []


def test_a_run_hook_sees_nothing_of_the_machine(host: Host, tmp_path: Path) -> None:
    hook = {"run": "python3 probe.py hook", "network": [host.listed], "env_allow": ["DEPLOY_KEY"]}
    project = Project(host, tmp_path / "proj", step={"hooks": {"post": hook}})
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent", "cmd:true")
    assert run.returncode == 0, run.stdout + run.stderr
    assert findings(project.inventory("hook"), host, env={"DEPLOY_KEY"}) == []


def test_the_anthropic_agents_run_command_sees_nothing_of_the_machine(host: Host, tmp_path: Path) -> None:
    with fake.FakeAnthropic([fake.message(fake.tool("run_command", command="python3 probe.py anthropic")),
                             fake.complete("done", "inventory taken")]) as server:
        agent = {"backend": "anthropic", "base_url": server.url, "allow_commands": ["python3 probe.py*"],
                 "network": [host.listed]}
        project = Project(host, tmp_path / "proj", agent=agent)
        project.env["ANTHROPIC_API_KEY"] = "sk-ant-test-INVENTORY-0123456789"
        project.new()
        run = project.specd("continue", "t", "--auto")
        answers = [fake.tool_results(body) for body in server.bodies[1:]]
    assert run.returncode == 0, run.stdout + run.stderr
    assert answers, "run_command was never answered"
    assert answers[0][0].get("is_error") is not True, answers  # it ran: the probe exited 0
    assert findings(project.inventory("anthropic"), host, env=set(),
                    secrets={"ANTHROPIC_API_KEY": project.env["ANTHROPIC_API_KEY"]}) == []


def test_a_claude_code_bash_call_sees_nothing_of_the_machine(host: Host, tmp_path: Path) -> None:
    binary = claude_binary()
    done = fake.message(fake.tool("StructuredOutput", outcome="done", summary="inventory taken"))
    bash = fake.tool("Bash", command="python3 probe.py claude", description="take the inventory")
    with fake.FakeAnthropic([fake.message(bash)], responder=lambda body: done) as server:
        # Bash allowed whole, as a user might: the jail has to hold whatever the model runs.
        agent = {"backend": "claude_code", "network": [host.listed], "allowed_tools": ["Bash"]}
        project = Project(host, tmp_path / "proj", agent=agent)
        project.env = claude_env(project.env, url=server.url, home=host.home, binary=binary)
        project.new()
        run = project.specd("continue", "t", "--auto")
    assert run.returncode == 0, run.stdout + run.stderr
    inv = project.inventory("claude")
    # Its sign-in keys are given to it alone (AWS_SECRET_ACCESS_KEY: Bedrock's), so its commands see them too; its
    # API key only as a stand-in (system/keyguard.py, tests/agents/test_claude_code.py checks the value).
    keys = {name for name in BACKEND_KEYS["claude_code"] if name in project.env and is_secret_name(name)}
    # Claude Code keeps each Bash call's output in its own folder in the jail's /tmp (a fresh tmpfs, see above).
    assert findings(inv, host, env=keys, own=(f"/tmp/claude-{os.getuid()}",),
                    secrets={"ANTHROPIC_API_KEY": project.env["ANTHROPIC_API_KEY"]}) == []


def test_a_codex_shell_call_sees_nothing_of_the_machine(host: Host, tmp_path: Path) -> None:
    binary = codex_binary()
    def answer(body: dict[str, Any]) -> fake_codex.Reply:  # the probe may outlast Codex's wait: poll it
        session = fake_codex.still_running(body)
        return fake_codex.final("done", "taken") if session is None else fake_codex.reply(fake_codex.poll(session))

    with fake_codex.FakeCodexAPI([fake_codex.reply(fake_codex.shell("python3 probe.py codex"))],
                                 responder=answer) as server:
        # Codex's own program is shown, read-only: its npm package and the platform package with the binary.
        shown = tuple(str(folder) for folder in install_folders(binary))
        project = Project(host, tmp_path / "proj", agent=agent_block(server.base_url, network=[host.listed]),
                          config=host.probe_config(allow=shown))
        project.env = codex_env(project.env, home=host.home, binary=binary)
        project.new()
        run = project.specd("continue", "t", "--auto")
    assert run.returncode == 0, run.stdout + run.stderr
    # Its key variable is given to it alone, as a stand-in (system/keyguard.py); nothing else secret-named.
    assert findings(project.inventory("codex"), host, env={"OPENAI_API_KEY"},
                    secrets={"OPENAI_API_KEY": project.env["OPENAI_API_KEY"]}) == []


def test_a_task_in_a_worktree_sees_nothing_of_the_main_tree(host: Host, tmp_path: Path) -> None:
    main = tmp_path / "proj"
    harness = tmp_path / "harness"  # the probe, shown read-only through SPECD_JAIL_READ
    harness.mkdir()
    pipeline = main / ".specd" / "pipeline.json"
    config = host.probe_config(allow=(str(harness), str(main / ".git")), write=(str(pipeline),))
    project = Project(host, main, init=True, config=config, agent={"network": [host.listed]})
    Project.place_probe(harness, config)
    project.env["SPECD_JAIL_READ"] = str(harness)
    project.new()
    before = pipeline.read_bytes()
    run = project.specd("run", "t", "--auto", "--agent", f"cmd:python3 {harness / 'probe.py'} wt")
    assert run.returncode == 0, run.stdout + run.stderr
    tree = main / ".specd" / "worktrees" / "t"
    inv = project.inventory("wt", tree)
    assert inv["cwd"] == str(tree)
    problems = findings(inv, host, env=set())
    assert pipeline.read_bytes() == before
    # The main tree inside: its git folder, read-only, and the folders on the way to the worktree; nothing else.
    problems += [f"main tree: {path}" for path in inv["read"] + inv["dirs"]
                 if _under(path, [str(main)]) and not _under(path, [str(main / ".git"), str(tree)])
                 and path not in (str(main), str(main / ".specd"), str(main / ".specd" / "worktrees"))]
    if not inv["mounts"].get(str(main / ".git"), "").startswith("ro "):
        problems.append(f"main tree's .git is mounted {inv['mounts'].get(str(main / '.git'))!r}, not read-only")
    attack = inv["attacks"][f"write {pipeline}"]
    if attack == "ok":
        problems.append(f"write {pipeline}: ok (inside the jail; the main tree's file is unchanged)")
    assert problems == []
