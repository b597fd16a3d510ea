"""A link an agent leaves in the tree never steers what the next jail shows of the machine.

The jail shows tool folders named by PATH and VIRTUAL_ENV, the programs a pipeline's command names, and the
folders of SPECD_JAIL_READ, each at its real place. When one of them lies in the project's tree, the agent may
have replaced it with a link to ``~/.ssh``: one jailed command plants the link, and the next one (a fresh jail,
as every run_command of the anthropic agent gets) would read the user's keys. Each test plants the link from
inside a real jail, then reads from a fresh one.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest
from inventory_harness import needs_bwrap

from specd.system import binds, jail

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- planted-key-bytes"


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    needs_bwrap()


def machine(tmp_path: Path) -> tuple[Path, Path]:
    """A HOME with keys, and a project (a git repository) beside it: (home, project)."""
    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY + "\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key=planted-aws\n")
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return home, project


def jailed(command: str, project: Path, env: Mapping[str, str], *, model: bool = True) -> str:
    launch = jail.prepare(command, project, jail.Jail("agent", backend="anthropic"), env, model=model)
    assert launch.jailed
    done = subprocess.run(launch.args, cwd=project, env=launch.env, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def test_a_virtualenv_in_the_tree_replaced_by_a_link_to_ssh_shows_no_key(tmp_path: Path) -> None:
    home, project = machine(tmp_path)
    (project / ".venv" / "bin").mkdir(parents=True)
    env = {"PATH": f"{project / '.venv' / 'bin'}:/usr/bin:/bin", "HOME": str(home),
           "VIRTUAL_ENV": str(project / ".venv")}
    assert "ok" in jailed("ls .venv/bin && echo ok", project, env)  # the venv as it is: shown by the tree's bind
    planted = jailed(f"rm -rf .venv && ln -s {home / '.ssh'} .venv && echo planted", project, env)
    assert "planted" in planted
    assert (project / ".venv").is_symlink()
    read = jailed(f"cat {home / '.ssh' / 'id_ed25519'}; cat .venv/id_ed25519", project, env)
    assert "planted-key-bytes" not in read
    assert "No such file" in read


def test_a_node_modules_bin_on_path_replaced_by_a_link_to_aws_shows_no_credentials(tmp_path: Path) -> None:
    home, project = machine(tmp_path)
    (project / "node_modules" / ".bin").mkdir(parents=True)
    env = {"PATH": f"{project / 'node_modules' / '.bin'}:/usr/bin:/bin", "HOME": str(home)}
    jailed(f"rm -rf node_modules && ln -s {home / '.aws'} node_modules", project, env)
    assert not (project / "node_modules").is_symlink()  # read-only in the jail: it cannot even be replaced
    (project / "node_modules" / ".bin").rmdir()
    (project / "node_modules").rmdir()
    (project / "node_modules").symlink_to(home / ".aws")  # planted all the same (by a run without the jail, say)
    read = jailed(f"cat {home / '.aws' / 'credentials'}", project, env)
    assert "planted-aws" not in read


def test_a_pipeline_program_in_the_tree_replaced_by_a_link_to_a_key_shows_no_key(tmp_path: Path) -> None:
    home, project = machine(tmp_path)
    (project / "scripts").mkdir()
    script = project / "scripts" / "lint.sh"
    script.write_text("#!/bin/sh\necho linted\n")
    script.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    assert "linted" in jailed(str(script), project, env, model=False)  # the pipeline's program runs
    jailed(f"rm scripts/lint.sh && ln -s {home / '.ssh' / 'id_ed25519'} scripts/lint.sh", project, env)
    # The pipeline's next command names the same path: what it names is not followed out of the tree.
    launch = jail.prepare(str(script), project, jail.Jail("agent", backend="anthropic"), env, model=False)
    sources = [launch.args[i + 1] for i, arg in enumerate(launch.args) if arg in ("--ro-bind", "--bind")]
    own = str(home / ".cache" / "specd" / "pycache")  # specd's own folder for the tree's compiled Python
    assert [source for source in sources if source.startswith(str(home)) and not source.startswith(own)] == []
    assert "planted-key-bytes" not in jailed(f"{script}; head -c 80 scripts/lint.sh", project, env, model=False)


def test_a_folder_you_named_to_be_shown_that_lies_in_the_tree_is_not_followed_out_of_it(tmp_path: Path) -> None:
    home, project = machine(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("shared data\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home),
           binds.READ_ENV: f"{project / 'refs'}:{shared}"}
    (project / "refs").mkdir()
    jailed(f"rm -rf refs && ln -s {home / '.ssh'} refs", project, env)
    read = jailed(f"cat {home / '.ssh' / 'id_ed25519'}; cat {shared / 'data.txt'}", project, env)
    assert "planted-key-bytes" not in read
    assert "shared data" in read  # what you named outside the tree is still shown


def test_steered_follows_every_link_on_the_way_as_the_kernel_does(tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "real").mkdir(parents=True)
    (outside / "tools").mkdir(parents=True)
    (tmp_path / "into-tree").symlink_to(tree)  # a link outside that leads into the tree
    (tree / "out").symlink_to(outside)  # and one in the tree that leads out again
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    (outside / "up").symlink_to("../outside/tools")  # relative, with `..`
    assert binds.steered(tree / "real", [tree])
    assert binds.steered(tmp_path / "into-tree" / "out" / "tools", [tree])  # through the tree, then out of it
    assert binds.steered(tmp_path / "loop-a" / "x", [tree])  # a loop is never shown
    assert not binds.steered(outside / "tools", [tree])
    assert not binds.steered(outside / "up", [tree])
    assert not binds.steered(outside / "missing" / "bin", [tree])
    assert binds.steered(outside / "up", [outside / "tools"])  # the link's target is met on the way


def test_a_link_left_in_the_main_tree_by_another_tasks_agent_steers_no_worktrees_jail(tmp_path: Path) -> None:
    home, project = machine(tmp_path)
    identity = ["-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run(["git", *identity, "commit", "-q", "--allow-empty", "-m", "init"], cwd=project, check=True)
    tree = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", str(tree)], cwd=project, check=True)
    (project / ".venv").symlink_to(home / ".ssh")  # what an agent in the main tree left there
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "VIRTUAL_ENV": str(project / ".venv")}
    assert "planted-key-bytes" not in jailed(f"cat {home / '.ssh' / 'id_ed25519'}", tree, env)


def test_a_program_or_tool_folder_that_holds_the_tree_is_not_shown_whole(tmp_path: Path) -> None:
    """Found by hand: `--agent 'cmd:python3 /work/agent.py'` with the project at /work/proj showed /work whole, so
    a worktree's agent read the main tree beside it as it is, `.env` and all (the jail hides secret files only in
    the task's own tree), and every other project under /work. The program is shown alone; so is a tool's bin
    folder whose install holds the tree."""
    work = tmp_path / "work"
    main, tree = work / "proj", work / "proj" / ".specd" / "worktrees" / "t"
    tree.mkdir(parents=True)
    (work / "agent.py").write_text("print('hi')\n")
    (work / "bin").mkdir()
    (work / "other").mkdir()  # a neighbour: another project
    home = tmp_path / "home"
    env = {"PATH": f"{work / 'bin'}:/usr/bin"}

    shown = binds.programs(f"python3 {work / 'agent.py'}", env, home, [tree, main])
    assert work / "agent.py" in shown
    assert work not in shown
    assert not any(main.is_relative_to(place) for place in shown if place.is_dir())

    found = binds.tools(home, env, [tree, main])
    assert work / "bin" in found  # the bin folder alone, not the install it would have meant
    assert not any(main.is_relative_to(place) for place in found)

    apart = tmp_path / "tools"  # a program beside, not above, the tree: its folder is shown as before
    apart.mkdir()
    (apart / "agent.py").write_text("print('hi')\n")
    assert binds.programs(f"python3 {apart / 'agent.py'}", env, home, [tree, main])[-1] == apart
