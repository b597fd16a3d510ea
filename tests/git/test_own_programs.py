"""specd's own programs never come from a folder the agent can write.

specd runs git (every commit), bubblewrap and an agent CLI's `--version` outside any jail, found on PATH. You work
in the project's activated venv, so its `.venv/bin` is first on PATH, and it lies inside the tree the agent writes;
a relative entry (`node_modules/.bin`) is looked up in the project too. A `git` the model left there ran as you at
specd's next commit. And when specd itself is installed in the project's venv, the model's `.pth` file there would
run at specd's next start. Found by an attacker's inventory of the jail, from inside.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from git_harness import GitProject

from specd.system import binds, jail, ownpath

PLANT = r"""#!/bin/sh
cat > /dev/null
echo "$PATH" > "$SEEN"
for folder in .venv/bin node_modules/.bin; do
  mkdir -p "$folder"
  printf '#!/bin/sh\ntouch %s\nexec /usr/bin/git "$@"\n' "$MARK" > "$folder/git"
  chmod +x "$folder/git"
done
printf '{"outcome": "done"}' > "$SPECD_RESULT"
"""


@pytest.mark.skipif(not jail.active() and not os.environ.get("CI"), reason="bubblewrap is not available here")
def test_a_git_the_agent_leaves_on_your_path_in_the_project_never_runs(tmp_path: Path) -> None:
    gp = GitProject(tmp_path)
    gp.ignore(".venv/\nnode_modules/\n")
    (gp.root / ".venv" / "bin").mkdir(parents=True)
    mark = tmp_path / "ran-outside-the-jail"  # no jail can write here: only a git run by specd itself could
    agent = gp.dir / "plant.sh"
    agent.write_text(PLANT, encoding="utf-8")
    gp.env.update({"PATH": f"{gp.root / '.venv' / 'bin'}:node_modules/.bin:{gp.env['PATH']}", "MARK": str(mark),
                   "SEEN": str(gp.dir / "agent-path.txt"), "SPECD_JAIL_READ": str(agent)})
    gp.new("a")

    done = gp.specd("continue", "a", "--auto", "--agent", f"cmd:sh {shlex.quote(str(agent))}")

    assert done.returncode == 0, done.stdout + done.stderr
    assert not mark.exists()
    assert (gp.root / ".venv" / "bin" / "git").exists()  # planted, at the first step; three steps committed since
    gp.env["PATH"] = os.environ["PATH"]  # the test's own git: not the planted one either
    assert [subject for subject, _ in gp.commits()].count("docs(a): execute complete") == 1
    seen = (gp.dir / "agent-path.txt").read_text(encoding="utf-8").strip().split(":")
    assert seen[:2] == [str(gp.root / ".venv" / "bin"), "node_modules/.bin"]  # the agent's commands: PATH as yours


def test_specds_own_lookups_skip_relative_entries_and_the_projects_folders(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "proj"
    (project / ".venv" / "bin").mkdir(parents=True)
    yours = f"{project / '.venv' / 'bin'}:node_modules/.bin::/usr/bin:/bin"
    monkeypatch.setenv("PATH", yours)
    monkeypatch.delenv(ownpath.STASH, raising=False)
    monkeypatch.setattr(ownpath, "_roots", [])

    ownpath.guard()
    assert os.environ["PATH"] == f"{project / '.venv' / 'bin'}:/usr/bin:/bin"
    ownpath.guard(project)
    assert os.environ["PATH"] == "/usr/bin:/bin"
    assert ownpath.yours(os.environ)["PATH"] == yours  # what the agent's and the pipeline's commands get
    assert ownpath.STASH not in ownpath.yours(os.environ)
    ownpath.guard(project)  # again (a second command in the same process): still from yours
    assert os.environ["PATH"] == "/usr/bin:/bin"
    monkeypatch.setenv("PATH", "/opt/new/bin:/usr/bin")  # set anew since: that is yours now
    ownpath.guard()
    assert os.environ["PATH"] == "/opt/new/bin:/usr/bin"


def _tool_in(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An executable ``name`` in ``folder``, first on a fresh PATH of this process, nothing guarded yet."""
    tool = folder / name
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho 2.1.0\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:/usr/bin:/bin")
    monkeypatch.delenv(ownpath.STASH, raising=False)
    monkeypatch.setattr(ownpath, "_roots", [])
    return tool


def test_an_agent_cli_found_only_in_the_project_is_refused_with_the_fix(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from specd.agents.cli_check import Cli, find
    from specd.errors import ConfigError

    project = tmp_path / "proj"
    tool = _tool_in(project / "node_modules" / ".bin", "claude", monkeypatch)
    ownpath.guard(project)
    cli = Cli("claude_code", "claude", "Claude Code", "Claude Code", "SPECD_CLAUDE_BIN", "npm i -g claude", "Node",
              (1,), "")

    with pytest.raises(ConfigError) as refused:
        find(cli, os.environ)

    assert "is inside the project, where the agent can rewrite it" in str(refused.value)
    assert str(tool) in str(refused.value)
    assert "SPECD_CLAUDE_BIN" in (refused.value.fix or "")
    # named outright, it is the same file the model can rewrite
    with pytest.raises(ConfigError, match="inside the project"):
        find(cli, {**os.environ, "SPECD_CLAUDE_BIN": str(tool)})


@pytest.mark.skipif(not jail.active() and not os.environ.get("CI"), reason="bubblewrap is not available here")
def test_specd_installed_in_the_projects_venv_is_read_only_in_the_jail(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "proj"
    site = project / ".venv" / "lib" / "python3" / "site-packages"
    site.mkdir(parents=True)
    (project / "src").mkdir()
    monkeypatch.setattr(sys, "prefix", str(project / ".venv"))
    assert binds.itself(project.resolve()) == [(project / ".venv").resolve()]

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    launch = jail.prepare(f"echo 'import os' > {site}/zz.pth; echo x > src/ok.txt", project, jail.Jail("agent"),
                          env)
    done = subprocess.run(launch.args, cwd=project, env=launch.env, capture_output=True, text=True)

    assert "Read-only file system" in done.stderr
    assert not (site / "zz.pth").exists()
    assert (project / "src" / "ok.txt").read_text() == "x\n"  # the rest of the tree is the agent's to write


@pytest.mark.skipif(not jail.active() and not os.environ.get("CI"), reason="bubblewrap is not available here")
def test_a_git_left_in_the_main_trees_venv_never_runs_for_a_task_in_its_worktree(tmp_path: Path) -> None:
    # A task run in the main tree (`specd continue`) can write the main tree's .venv/bin; a task that `specd run`
    # runs in a worktree is started with --project <worktree>, and its specd must not take that git either.
    gp = GitProject(tmp_path, steps=("discuss",))
    gp.ignore(".venv/\n")
    mark = tmp_path / "ran-outside-the-jail"
    planted = gp.root / ".venv" / "bin" / "git"
    planted.parent.mkdir(parents=True)
    planted.write_text(f"#!/bin/sh\ntouch {mark}\nexec /usr/bin/git \"$@\"\n", encoding="utf-8")
    planted.chmod(0o755)
    agent = gp.dir / "plant.sh"
    agent.write_text(PLANT, encoding="utf-8")
    gp.env.update({"PATH": f"{planted.parent}:{gp.env['PATH']}", "MARK": str(mark), "SEEN": str(gp.dir / "p.txt"),
                   "SPECD_JAIL_READ": str(agent)})
    gp.new("w")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "the task")
    mark.unlink(missing_ok=True)  # the test's own git calls above took the planted one: the user's PATH says so

    done = gp.specd("run", "w", "--auto", "--agent", f"cmd:sh {shlex.quote(str(agent))}")

    assert done.returncode == 0, done.stdout + done.stderr
    assert not mark.exists()


def test_a_hook_not_found_in_a_worktree_names_where_it_is_on_your_path(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    main = tmp_path / "proj"
    tool = _tool_in(main / ".venv" / "bin", "mytest", monkeypatch)
    worktree = main / ".specd" / "worktrees" / "t"
    worktree.mkdir(parents=True)
    ownpath.guard(main)

    said = ownpath.unseen("mytest --fast", worktree)

    assert str(tool) in said
    assert "worktree does not show" in said
    assert ownpath.unseen("mytest", main) == ""  # the main tree's own jail shows it: not why it was not found
    assert ownpath.unseen("no-such-tool-here", worktree) == ""
