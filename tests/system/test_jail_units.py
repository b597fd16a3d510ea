"""The jail's pieces on their own: what a child is given, what stays read-only, what is swept after it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from specd.agents.proc import run_group
from specd.state.lock import TaskLock
from specd.system import children, jail, keeper, machinery

ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "DEPLOY_TOKEN": "t0k3n-value-123", "DB_PASSWORD": "pw-123456",
       "PLAIN": "kept"}


def test_one_environment_rule_every_tier_loses_secrets_but_env_allow_and_its_own_sign_in_keys(
        tmp_path: Path) -> None:
    project = jail.prepare(["true"], tmp_path, jail.Jail("project", env_allow=("DB_PASSWORD",)), ENV)
    assert {k: v for k, v in project.env.items() if k in ENV} == {
        "PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "DB_PASSWORD": "pw-123456", "PLAIN": "kept"}
    keyed = {**ENV, "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40}
    command = jail.prepare(["true"], tmp_path, jail.Jail("agent"), keyed)
    assert "DEPLOY_TOKEN" not in command.env
    assert "ANTHROPIC_API_KEY" not in command.env
    allowed = jail.prepare(["true"], tmp_path, jail.Jail("agent", env_allow=("DEPLOY_TOKEN",)), keyed)
    assert allowed.env["DEPLOY_TOKEN"] == "t0k3n-value-123"
    claude = jail.prepare(["true"], tmp_path, jail.Jail("agent", backend="claude_code"), keyed)
    if jail.active():  # jailed, the key itself stays out: a stand-in, and specd's key guard (keyguard.py)
        assert claude.env["ANTHROPIC_API_KEY"].startswith("specd-stand-in-")
        assert claude.env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    else:
        assert claude.env["ANTHROPIC_API_KEY"] == keyed["ANTHROPIC_API_KEY"]
    assert "DEPLOY_TOKEN" not in claude.env
    hook = jail.prepare(["true"], tmp_path, jail.Jail("project"), keyed)
    assert "ANTHROPIC_API_KEY" not in hook.env  # a backend's key goes to that backend alone
    off = jail.prepare("echo hi", tmp_path, jail.Jail("project", enabled=False), ENV)
    # `sandbox: false`: the shell line as it is, under the keeper (its descendants die with specd)
    assert (off.args, off.shell, off.jailed, off.env["DEPLOY_TOKEN"]) == (keeper.argv("echo hi"), False, False,
                                                                          "t0k3n-value-123")
    assert off.args[-3:] == ["/bin/sh", "-c", "echo hi"]


def test_without_a_usable_bwrap_the_command_runs_as_it_is_but_still_without_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECD_BWRAP", "/bin/false")
    assert not jail.active()
    assert jail.mode_line().startswith("jail: none — /bin/false is installed but cannot start a jail here")
    launch = jail.prepare(["ls", "*.py"], tmp_path, jail.Jail("project"), ENV)
    assert (launch.args, launch.shell, launch.jailed) == (keeper.argv(["ls", "*.py"]), False, False)
    assert launch.args[-2:] == ["ls", "*.py"]  # no shell between: the argv as it is, under the keeper
    assert "DEPLOY_TOKEN" not in launch.env


@pytest.mark.parametrize(("value", "on"), [(None, True), (True, True), ("auto", True), ("bubblewrap", True),
                                           (False, False), ("allowlist", False)])
def test_sandbox_settings(value: object, on: bool) -> None:
    assert jail.enabled(value) is on


def test_machinery_is_read_only_but_files_specd_replaces_mid_step_are_not_bound(tmp_path: Path) -> None:
    task = tmp_path / ".specd" / "tasks" / "t"
    (task / "transcripts").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for name in ("config.json", ".pipeline-state.json", "PLAN.md", ".run.lock", ".run.lock.owner", ".heartbeat"):
        (task / name).write_text("x")
    (tmp_path / ".specd" / "tasks" / "other").mkdir()
    # The lock's owner file is bound (it names the pid `specd cancel` stops; written before any child starts);
    # the lock file and the heartbeat, which specd rewrites while a child runs, are not.
    own = [("--bind-try", ".specd/tasks/t"), ("--ro-bind-try", ".specd/tasks/t/.pipeline-state.json"),
           ("--ro-bind-try", ".specd/tasks/t/.run.lock.owner"), ("--ro-bind-try", ".specd/tasks/t/config.json"),
           ("--ro-bind-try", ".specd/tasks/t/transcripts")]

    def mounts(task_dir: Path | None) -> list[tuple[str, str]]:
        return [(flag, path.relative_to(tmp_path).as_posix()) for flag, path in machinery.overlays(tmp_path, task_dir)]

    # The running task's folder is writable but for its machinery; another task's stays read-only whole.
    assert mounts(task) == [("--ro-bind", ".git"), ("--ro-bind", ".specd"), *own]
    assert mounts(None) == [("--ro-bind", ".git"), ("--ro-bind", ".specd"), ("--bind-try", ".specd/tasks/other"),
                            *own]


def test_a_daemon_that_left_the_session_is_still_swept_by_the_runs_mark(tmp_path: Path) -> None:
    """`setsid` takes a grandchild out of the hook's session; the owner mark in its environment still finds it."""
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    pid_file = tmp_path / "daemon.pid"
    daemon = (f"import os, time; open({str(pid_file)!r}, 'w').write(f'{{os.getpid()}} {{os.getsid(0)}}'); "
              "time.sleep(60)")
    command = f"setsid {sys.executable} -c \"{daemon}\" & sleep 0.5"
    with TaskLock(task_dir, "t") as lock, children.tracked_by(lock):
        outcome = run_group(command, cwd=tmp_path, env=dict(os.environ), stdin=None, log=tmp_path / "log",
                            timeout=60)
    assert outcome.returncode == 0, outcome.tail(2000)
    pid, session = map(int, pid_file.read_text().split())
    assert session == pid  # it had left the hook's session: only the mark could find it
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_step_stopped_while_its_command_ignores_term_takes_a_setsid_grandchild_down_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside the jail the keeper holds every descendant. Asked once, it lets the command end by itself; the
    command ignores TERM, so it is asked again and kills its tree, before a SIGKILL of the keeper could set free
    a grandchild that left the session and dropped the owner mark."""
    monkeypatch.setattr(children, "STOPPING", ((signal.SIGTERM, 0.5), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)))
    pid_file = tmp_path / "escaped.pid"
    command = f"trap '' TERM; setsid env -i sleep 300 & echo $! > {pid_file}; sleep 60"
    pid = 0
    try:
        outcome = run_group(command, cwd=tmp_path, env=dict(os.environ), stdin=None, log=tmp_path / "log",
                            timeout=5.0)  # the shell needs milliseconds to start its grandchild; 5 s to spare
        assert outcome.timed_out
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "the setsid grandchild outlived its stopped step"
    finally:
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def test_claude_codes_config_is_a_per_task_copy_seeded_with_the_sign_in_jail_or_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": "x"}')
    (home / ".claude" / "settings.json").write_text('{"hooks": {"SessionStart": "curl evil"}}')
    (home / ".claude.json").write_text('{"oauthAccount": {"emailAddress": "a@b.c"}, "mcpServers": {"x": {}}}')
    task_dir = tmp_path / "proj" / ".specd" / "tasks" / "t"
    task_dir.mkdir(parents=True)
    for bwrap in (None, "/bin/false"):  # in the jail, and without a usable bubblewrap
        if bwrap:
            monkeypatch.setenv("SPECD_BWRAP", bwrap)
        launch = jail.prepare(["claude"], tmp_path / "proj", jail.Jail("agent", backend="claude_code",
                                                                         task_dir=task_dir), {**ENV, "HOME": str(home)})
        own = Path(launch.env["CLAUDE_CONFIG_DIR"])
        assert own == (task_dir / "transcripts" / ".agent" / "claude_code").resolve()
        assert (own / ".credentials.json").read_text() == '{"claudeAiOauth": "x"}'
        assert json.loads((own / ".claude.json").read_text()) == {"oauthAccount": {"emailAddress": "a@b.c"}}
        assert not (own / "settings.json").exists()  # the user's hooks and servers stay the user's


def test_a_models_command_shows_nothing_it_names_and_the_pipelines_shows_its_program(tmp_path: Path) -> None:
    """The jail's binds never follow the model's words: a run_command naming a file outside the project (which
    the path check refuses first anyway) binds nothing; a pipeline's command naming its program shows that."""
    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")
    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key=planted\n")
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "lint").write_text("#!/bin/sh\necho linted\n")
    (tools / "lint").chmod(0o755)
    project.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}

    def shown(command: str, model: bool) -> list[str]:
        args = jail.prepare(command, project, jail.Jail("project"), env, model=model).args
        return [args[i + 1] for i, arg in enumerate(args) if arg == "--ro-bind"]

    stolen = f"cat {home / '.aws' / 'credentials'}"
    assert str(home / ".aws") not in shown(stolen, model=True)
    assert str(home / ".aws") in shown(stolen, model=False)  # the pipeline's own command: what it names is shown
    assert str(tools) in shown(f"{tools / 'lint'} src", model=False)
    assert str(tools) not in shown(f"{tools / 'lint'} src", model=True)
    launch = jail.prepare(stolen, project, jail.Jail("project"), env, model=True)
    done = subprocess.run(launch.args, cwd=project, env=launch.env, capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "planted" not in done.stdout


def test_a_keeper_started_for_a_specd_that_is_already_gone_runs_nothing(tmp_path: Path) -> None:
    """specd starts the keeper without a preexec_fn (vfork): the keeper sets its own death signal, and a specd
    that died before it could is seen by the pid it was given, so the command never starts."""
    ran = tmp_path / "ran"
    args = keeper.argv(["touch", str(ran)])
    assert keeper.guards(args)
    assert jail.Launch(args, False, {}, False).guarded
    assert args[4] == str(os.getpid())
    done = subprocess.run(args, check=False)  # our own child: the pid it was given is its parent's
    assert (done.returncode, ran.exists()) == (0, True)
    ran.unlink()
    gone = subprocess.run([*args[:4], "1", *args[5:]], check=False)  # given a specd that is not its parent
    assert (gone.returncode, ran.exists()) == (137, False)
    assert not jail.Launch(["touch", str(ran)], False, {}, False).guarded  # a bare command needs the preexec_fn
    older = subprocess.run([*args[:4], *args[5:]], check=False)  # as a specd from before the pid argument starts it
    assert (older.returncode, ran.exists()) == (0, True)


def test_the_agent_clis_settings_that_exist_go_read_only_and_none_through_a_link(tmp_path: Path) -> None:
    """Your agent CLIs' project settings are bound read-only where they are; one reached by way of a link in the tree
    is not bound (a bind follows the link, and would show the target's file, your own `~/.claude`, in the jail)."""
    (tmp_path / ".claude" / "hooks").mkdir(parents=True)
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    (tmp_path / ".mcp.json").write_text("{}")
    outside = tmp_path.parent / f"{tmp_path.name}-yours"
    outside.mkdir()
    (outside / "config.toml").write_text("notify = []\n")
    (tmp_path / ".codex").symlink_to(outside)

    bound = [(flag, path.relative_to(tmp_path).as_posix()) for flag, path in machinery.overlays(tmp_path)]

    assert bound == [("--ro-bind-try", ".claude/settings.json"), ("--ro-bind-try", ".mcp.json"),
                     ("--ro-bind-try", ".claude/hooks")]
    assert machinery.machinery((".claude", "settings.local.json")) == machinery.TOOL_WHY
    assert machinery.machinery((".claude", "agents", "reviewer.md")) is None


def test_a_pipeline_command_naming_proc_sys_or_dev_starts_its_jail(tmp_path: Path) -> None:
    """A `run:` hook that reads /proc/self/status named a folder bubblewrap could not bind (/proc/<pid>): every
    jail of that hook failed to start. The jail's own /proc, /sys and /dev are there already."""
    from specd.system import binds

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    shown = binds.programs("grep Cap /proc/self/status /dev/null /sys/kernel/mm", env, tmp_path / "home", [])
    assert [str(path) for path in shown if str(path).startswith(("/proc", "/sys", "/dev"))] == []
    if not jail.active():
        return
    launch = jail.prepare("grep -c Cap /proc/self/status", tmp_path, jail.Jail("project"), env)
    done = subprocess.run(launch.args, cwd=tmp_path, env=launch.env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5"
