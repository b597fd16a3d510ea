"""Acceptance for issue 28: the attacks the jail exists for, each through the real CLI.

(a) a host's tmux or ssh-agent socket (in a host tmp folder, in HOME, abstract) cannot be connected to;
(b) what an agent writes to ``~/.claude/settings.json`` or ``~/.cache/x`` never reaches the user's HOME, so the
    user's next plain ``claude`` runs nothing new: from a `cmd:` agent and from a Claude Code Bash call;
(c) ``~/.ssh/id_ed25519`` cannot be read;
(d) an agent in a task's worktree (a project under /tmp, `specd run`) cannot write the main tree's pipeline.

The `cmd:` agents run the inventory probe with ``--attacks-only`` (no walk: the attacks alone), so each test
costs one short specd run; ``inventory_harness.Host`` plants the targets and watches them from outside.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inventory_harness import HOME_FILES, Host, Project, hosting

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))

import fake_anthropic as fake  # noqa: E402
from claude_cli import claude_binary, claude_env  # noqa: E402

ATTACK = "cmd:python3 probe.py attack --attacks-only"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    yield from hosting(tmp_path)


def attacked(host: Host, tmp_path: Path) -> tuple[Project, dict[str, Any]]:
    """A `cmd:` agent's attacks in a project of its own: the project, and what each attack got inside."""
    project = Project(host, tmp_path / "proj")
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent", ATTACK)
    assert run.returncode == 0, run.stdout + run.stderr
    attacks: dict[str, Any] = project.inventory("attack")["attacks"]
    assert attacks[f"present {host.home / '.cargo' / 'bin' / 'tool'}"] == "ok"  # it ran in the jail, with tools
    return project, attacks


def test_a_cmd_agent_cannot_reach_a_host_tmux_or_ssh_agent_socket(host: Host, tmp_path: Path) -> None:
    _, attacks = attacked(host, tmp_path)
    tmux, agent = host.host_tmp / "tmux-0" / "default", host.home / ".ssh" / "agent.sock"
    tried = {what: result for what, result in attacks.items() if what.startswith("connect ")}
    # SSH_AUTH_SOCK is secret-named (AUTH), so it is not even in the agent's environment; TMUX is.
    assert set(tried) >= {f"connect {tmux}", f"connect {agent}", f"connect @{host.abstract}", "connect $TMUX"}
    assert [what for what, result in tried.items() if not result.startswith("failed")] == []
    assert {name: host.accepted()[name] for name in ("tmux", "ssh-agent", "abstract")} == \
        {"tmux": 0, "ssh-agent": 0, "abstract": 0}  # and nobody knocked, seen from the host's side


def test_a_cmd_agents_writes_to_claude_settings_and_a_cache_leave_the_users_home_unchanged(
        host: Host, tmp_path: Path) -> None:
    _, attacks = attacked(host, tmp_path)
    for name in (".claude/settings.json", ".cache/x"):
        assert f"write {host.home / name}" in attacks  # tried (it lands in the jail's own HOME, if anywhere)
    assert host.home_snapshot() == host.home_before


def test_a_claude_code_bash_calls_writes_to_its_settings_and_a_cache_leave_the_users_home_unchanged(
        host: Host, tmp_path: Path) -> None:
    binary = claude_binary()
    # What a prompt-injected model would do: a SessionStart hook in the user's settings (the probe writes one),
    # run by the next `claude`. In code Claude Code cannot read: a plain `echo ... > ~/.claude/settings.json` is
    # refused by Claude Code's own checks before the jail is even reached.
    done = fake.message(fake.tool("StructuredOutput", outcome="done", summary="settings written"))
    bash = fake.tool("Bash", command="python3 probe.py attack --attacks-only", description="write the settings")
    with fake.FakeAnthropic([fake.message(bash)], responder=lambda body: done) as server:
        agent = {"backend": "claude_code", "allowed_tools": ["Bash"]}  # Bash allowed whole: the jail must hold
        project = Project(host, tmp_path / "proj", agent=agent)
        project.env = claude_env(project.env, url=server.url, home=host.home, binary=binary)
        project.new()
        run = project.specd("continue", "t", "--auto")
    assert run.returncode == 0, run.stdout + run.stderr
    attacks = project.inventory("attack")["attacks"]
    for name in (".claude/settings.json", ".cache/x"):
        assert attacks[f"write {host.home / name}"] == "ok"  # it ran, and the write worked: in the jail's HOME
    assert host.home_snapshot() == host.home_before
    for name, text in HOME_FILES.items():
        assert (host.home / name).read_text(encoding="utf-8") == text, name


def test_a_cmd_agent_cannot_read_the_users_ssh_key(host: Host, tmp_path: Path) -> None:
    project, attacks = attacked(host, tmp_path)
    key = host.home / ".ssh" / "id_ed25519"
    assert attacks[f"read {key}"].startswith("failed"), attacks
    assert attacks[f"read {host.home / '.aws' / 'credentials'}"].startswith("failed"), attacks
    planted = HOME_FILES[".ssh/id_ed25519"].splitlines()[1]
    assert [p for p in project.root.rglob("*") if p.is_file() and planted in p.read_text(errors="replace")] == []


def test_a_link_planted_in_one_step_shows_the_next_step_no_key(host: Host, tmp_path: Path) -> None:
    """Step a replaces the project's virtualenv (on PATH, and VIRTUAL_ENV, as an activated venv is) by a link to
    ``~/.ssh``; step b, in a fresh jail, reads the key through it. The tool folders are never found by way of the
    tree, so b reads nothing."""
    project = Project(host, tmp_path / "proj")
    venv = project.root / ".venv"
    (venv / "bin").mkdir(parents=True)
    project.env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}:{project.env['PATH']}")
    project.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "mode": "auto", "pipelines": {
        "main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]}}))
    project.new()
    agent = ('cat >/dev/null; if [ -L .venv ]; then cat .venv/id_ed25519 "$HOME/.ssh/id_ed25519" > stolen.txt 2>&1;'
             f' else rm -rf .venv && ln -s {host.home / ".ssh"} .venv; fi; true')
    run = project.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(agent)}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert venv.is_symlink()  # step a planted it
    stolen = (project.root / "stolen.txt").read_text(encoding="utf-8")  # step b tried
    assert "No such file" in stolen
    assert HOME_FILES[".ssh/id_ed25519"].splitlines()[1] not in stolen


def test_an_agent_in_a_worktree_cannot_write_the_main_trees_pipeline(host: Host, tmp_path: Path) -> None:
    main = tmp_path / "proj"  # under /tmp, as pytest's tmp_path is
    assert str(main).startswith("/tmp/")
    pipeline = main / ".specd" / "pipeline.json"
    harness = tmp_path / "harness"  # the probe, shown read-only through SPECD_JAIL_READ
    harness.mkdir()
    config = host.probe_config(write=(str(pipeline),))
    project = Project(host, main, init=True, config=config)
    Project.place_probe(harness, config)
    project.env["SPECD_JAIL_READ"] = str(harness)
    project.new()
    before = pipeline.read_bytes()
    run = project.specd("run", "t", "--auto", "--agent", f"cmd:python3 {harness / 'probe.py'} attack --attacks-only")
    assert run.returncode == 0, run.stdout + run.stderr
    attacks = project.inventory("attack", main / ".specd" / "worktrees" / "t")["attacks"]
    assert pipeline.read_bytes() == before  # the main tree's file is unchanged
    # And the write was refused, not let into a copy: inside the jail the main tree is only the folders on the way
    # to the worktree, which bwrap makes in the jail's own (writable) /tmp.
    assert attacks[f"write {pipeline}"] != "ok", f"the write to {pipeline} succeeded inside the jail"


def test_control_without_the_jail_the_same_attacks_succeed(host: Host, tmp_path: Path) -> None:
    """The attacks are real ones: with the jail off for the agent (`sandbox: false`) they all get through."""
    project = Project(host, tmp_path / "proj", agent={"sandbox": False})
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent", ATTACK)
    assert run.returncode == 0, run.stdout + run.stderr
    attacks = project.inventory("attack")["attacks"]
    tmux = host.host_tmp / "tmux-0" / "default"
    for what in (f"read {host.home / '.ssh' / 'id_ed25519'}", f"connect {tmux}", f"connect @{host.abstract}",
                 f"write {host.home / '.claude' / 'settings.json'}"):
        assert attacks[what] == "ok", (what, attacks[what])
    assert host.knocked("tmux")  # seen from the host's side too
    assert host.home_snapshot() != host.home_before
