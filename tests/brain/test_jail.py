"""The jail, through the real CLI: what a `run:` hook (code the agent may have written) can and cannot do.

A hook runs the project's own code (a test suite, a conftest.py the agent
wrote) in the project tier: no capabilities even as root, `.git` and specd's
machinery read-only, nothing outside the project writable, secrets out of the
environment, and nothing it started left running once it ends.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from brain_harness import Harness, marked_alive

from specd.system import jail

PROBE = r'''
import json, os, socket, subprocess, sys

root = os.getcwd()
results = {}

def attempt(name, act):
    try:
        act()
        results[name] = "ok"
    except OSError as err:
        results[name] = f"failed {err.errno}"

def run(name, *argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    results[name] = "ok" if done.returncode == 0 else f"failed {done.returncode}: {done.stderr.strip()[:120]}"

run("umount_git", "umount", os.path.join(root, ".git"))
run("umount_specd", "umount", "-l", os.path.join(root, ".specd"))
run("remount_root", "mount", "-o", "remount,rw", "/")
run("remount_project_git", "mount", "-o", "remount,rw,bind", os.path.join(root, ".git"))
run("nested_userns", "unshare", "-rm", "mount", "-o", "remount,rw", "/")
attempt("write_git", lambda: open(os.path.join(root, ".git", "config"), "a").write("[pwned]\n"))
attempt("write_pipeline", lambda: open(os.path.join(root, ".specd", "pipeline.json"), "w").write("{}"))
attempt("drop_hook", lambda: open(os.path.join(root, ".specd", "hooks", "pre-a.md"), "w").write("pwned"))
attempt("write_task_config", lambda: open(os.path.join(root, ".specd", "tasks", "t", "config.json"), "w").write("{}"))
attempt("write_var_tmp", lambda: open(os.path.join("/var/tmp", sys.argv[1]), "w").write("pwned"))
attempt("write_project", lambda: open(os.path.join(root, "made-by-hook.txt"), "w").write("ok"))
attempt("net", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5).close())
SECRET_NAMES = ("SPECD_TEST_API_KEY", "DB_PASSWORD", "DEPLOY_TOKEN", "MYSQL_PWD", "DATABASE_URL", "GH_PAT",
                "CI_JOB_JWT", "SPECD_SERVER")
results["secrets"] = sorted(k for k in SECRET_NAMES if k in os.environ)
results["plain_env"] = os.environ.get("JAIL_PLAIN", "")
results["home"] = sorted(os.listdir(os.path.expanduser("~"))) if os.path.isdir(os.path.expanduser("~")) else None
results["caps"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
open(os.path.join(root, "probe-result.json"), "w").write(json.dumps(results))
'''


def needs_bwrap() -> None:
    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")


def git_repo(h: Harness) -> None:
    for argv in (["git", "init", "-q"], ["git", "config", "user.name", "T"], ["git", "config", "user.email", "t@x"]):
        subprocess.run(argv, cwd=h.root, check=True, capture_output=True)
    # The harness's log of each agent call holds its environment: a step would commit it, and a secret in it holds
    # the step (issue 28). It is the test's, not the project's.
    with (h.root / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
        exclude.write("/.harness/\n")


def one_step(h: Harness, post: dict[str, object]) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md", "hooks": {"post": post}}]})
    h.new("t")


def test_a_hook_under_bubblewrap_cannot_unmount_write_machinery_leave_the_project_or_read_secrets(
        h: Harness, tmp_path: Path) -> None:
    needs_bwrap()
    git_repo(h)
    (h.root / "probe.py").write_text(PROBE, encoding="utf-8")
    (h.root / ".specd" / "hooks").mkdir()
    var_tmp = uuid.uuid4().hex
    home = tmp_path / "home"  # a HOME with credentials in it, and a tool installed with pip --user
    for name in (".ssh/id_ed25519", ".aws/credentials", ".local/bin/tool"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("secret", encoding="utf-8")
    h.env.update(SPECD_TEST_API_KEY="sk-test-0123456789abcdef", DB_PASSWORD="hunter2-hunter2", JAIL_PLAIN="kept",
                 MYSQL_PWD="mysql-pw-123", DATABASE_URL="postgres://u:pw-123456@db/x", GH_PAT="ghpat-value-123",
                 CI_JOB_JWT="jwt-value-1234567", HOME=str(home),
                 # the control plane's address, as README says to keep it for a shell: its token is a key
                 SPECD_SERVER="http://127.0.0.1:8765/?token=Zx9yQw8vTu7sRq6pOn5m")
    with _listener() as port:
        one_step(h, {"run": f"{shlex.quote(sys.executable)} probe.py {var_tmp} {port}"})
        git_config = (h.root / ".git" / "config").read_text(encoding="utf-8")
        pipeline = (h.root / ".specd" / "pipeline.json").read_text(encoding="utf-8")
        task_config = (h.task_dir("t") / "config.json").read_text(encoding="utf-8")
        result = h.cont("t")
    assert result.returncode == 0, result.stderr
    seen = json.loads((h.root / "probe-result.json").read_text(encoding="utf-8"))
    for name in ("umount_git", "umount_specd", "remount_root", "remount_project_git", "nested_userns",
                 "write_git", "write_pipeline", "drop_hook", "write_task_config", "write_var_tmp", "net"):
        assert seen[name].startswith("failed"), (name, seen[name])
    assert seen["write_project"] == "ok"
    assert seen["caps"] == "0000000000000000"
    assert seen["secrets"] == []  # secret-named variables never reach project code
    assert seen["plain_env"] == "kept"
    assert seen["home"] == [".local"]  # HOME is hidden: no keys, no shell history; tools stay usable
    # Nothing changed where the hook was refused; the project itself was writable.
    assert (h.root / ".git" / "config").read_text(encoding="utf-8") == git_config
    assert (h.root / ".specd" / "pipeline.json").read_text(encoding="utf-8") == pipeline
    assert json.loads((h.task_dir("t") / "config.json").read_text(encoding="utf-8")).keys() == \
        json.loads(task_config).keys()  # specd's own update at the end of the run, not the hook's "{}"
    assert not (h.root / ".specd" / "hooks" / "pre-a.md").exists()
    assert not Path("/var/tmp", var_tmp).exists()
    assert (h.root / "made-by-hook.txt").read_text(encoding="utf-8") == "ok"
    assert result.stderr.startswith("note: jail: bubblewrap (user namespace, no capabilities)\n")


def test_env_allow_and_network_let_a_hook_have_what_it_names(h: Harness) -> None:
    needs_bwrap()
    (h.root / "probe.py").write_text(PROBE, encoding="utf-8")
    h.env.update(SPECD_TEST_API_KEY="sk-test-0123456789abcdef", DB_PASSWORD="hunter2-hunter2")
    with _listener() as port:
        one_step(h, {"run": f"{shlex.quote(sys.executable)} probe.py {uuid.uuid4().hex} {port}",
                     "env_allow": ["DB_PASSWORD"], "network": True})
        result = h.cont("t")
    assert result.returncode == 0, result.stderr
    seen = json.loads((h.root / "probe-result.json").read_text(encoding="utf-8"))
    assert seen["secrets"] == ["DB_PASSWORD"]
    assert seen["net"] == "ok"
    assert seen["write_pipeline"].startswith("failed")  # the rest of the jail holds


@pytest.mark.parametrize("mode", ["bubblewrap", "none"])
def test_nothing_a_hook_started_outlives_it(h: Harness, mode: str) -> None:
    if mode == "bubblewrap":
        needs_bwrap()
    else:
        h.env["SPECD_BWRAP"] = "/bin/false"
    mark = f"JAIL_PROBE={uuid.uuid4().hex}"
    h.env[mark.split("=")[0]] = mark.split("=")[1]
    one_step(h, {"run": "sleep 30 & echo $! > started.pid; sleep 0.2"})
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    assert (h.root / "started.pid").read_text().strip().isdigit()  # the background sleep did start
    assert marked_alive(mark) == []


def test_without_bubblewrap_the_first_line_says_so_and_why(h: Harness) -> None:
    h.env["SPECD_BWRAP"] = "/bin/false"
    one_step(h, {"run": "true"})
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first == ("warning: jail: none — /bin/false is installed but cannot start a jail here: exit status 1; "
                     "commands run without a shell, leftover processes are killed after each step")


def test_sandbox_false_on_a_hook_is_announced_first_and_the_hook_may_write_git(h: Harness) -> None:
    git_repo(h)
    one_step(h, {"run": "echo trusted > .git/written-by-hook", "sandbox": False})
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("warning: jail: ")
    assert first.endswith("; jail OFF (sandbox: false) for pipelines.main.a.hooks.post "
                          "(run: echo trusted > .git/written-by-hook)")
    assert (h.root / ".git" / "written-by-hook").read_text() == "trusted\n"


def test_jail_keys_on_a_workflow_hook_are_a_config_error(h: Harness) -> None:
    one_step(h, {"workflow": "w.md", "sandbox": False})
    result = h.cont("t")
    assert result.returncode == 2
    assert "pipelines.main[0].hooks.post.sandbox: only a 'run' hook has its own jail" in result.stderr
    assert "Traceback" not in result.stderr


class _listener:
    """A loopback port that accepts, to tell "no network" from "nobody listening"."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def test_a_cmd_agent_is_jailed_unless_the_agent_block_says_sandbox_false(h: Harness) -> None:
    git_repo(h)
    h.workflow("w.md")
    writer = f"cmd:{shlex.quote(sys.executable)} -c \"open('.git/by-agent', 'w').write('x')\""
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    jailed = h.specd("continue", "t", "--auto", "--agent", writer)
    if jail.active():
        assert jailed.returncode == 1, jailed.stderr  # the write failed, so the agent failed
        assert "Read-only file system" in jailed.stderr
        assert not (h.root / ".git" / "by-agent").exists()
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"sandbox": False})
    h.new("u")
    trusted = h.specd("continue", "u", "--auto", "--agent", writer)
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stderr.splitlines()[0].endswith("; jail OFF (sandbox: false) for the agent (agent.sandbox)")
    assert (h.root / ".git" / "by-agent").read_text() == "x"


def test_a_pipeline_that_requires_bubblewrap_does_not_run_without_it(h: Harness) -> None:
    h.env["SPECD_BWRAP"] = "/bin/false"
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"sandbox": "bubblewrap"})
    h.new("t")
    result = h.cont("t")
    assert result.returncode == 2
    assert "agent.sandbox is 'bubblewrap' but /bin/false is installed but cannot start a jail here" in result.stderr
    assert "Traceback" not in result.stderr
    assert h.log() == []  # nothing ran


def test_a_listed_host_is_reached_through_specds_proxy_and_nothing_else(h: Harness) -> None:
    needs_bwrap()
    (h.root / "probe.py").write_text(PROBE, encoding="utf-8")
    with _listener() as listed, _listener() as other:
        one_step(h, {"run": f"{shlex.quote(sys.executable)} probe.py {uuid.uuid4().hex} {listed}",
                     "network": [f"127.0.0.1:{listed}"]})
        assert h.cont("t").returncode == 0
        seen = json.loads((h.root / "probe-result.json").read_text(encoding="utf-8"))
        assert seen["net"] == "ok"  # the listed loopback service, at its own address, through the proxy
        h.pipeline({"main": [{"name": "a", "workflow": "w.md", "hooks": {"post": {
            "run": f"{shlex.quote(sys.executable)} probe.py {uuid.uuid4().hex} {other}",
            "network": [f"127.0.0.1:{listed}"]}}}]})
        h.new("u")
        assert h.cont("u").returncode == 0
    seen = json.loads((h.root / "probe-result.json").read_text(encoding="utf-8"))
    assert seen["net"].startswith("failed")  # the host's loopback is not the jail's


def test_an_open_network_for_the_agent_is_said_on_the_runs_first_line(h: Harness) -> None:
    needs_bwrap()
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]}, agent={"network": True})
    h.new("t")
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("warning: jail: bubblewrap")
    assert "NETWORK is the host's, open" in first


def test_a_cmd_agent_named_by_a_link_outside_path_runs_in_the_jail(h: Harness, tmp_path: Path) -> None:
    """As `SPECD_CLAUDE_BIN=…/node_modules/.bin/claude` is: a link in a folder of links, into its package."""
    needs_bwrap()
    package = tmp_path / "tools" / "pkg" / "bin"
    package.mkdir(parents=True)
    (package / "agent").write_text("#!/bin/sh\necho ran > by-linked-agent.txt\n")
    (package / "agent").chmod(0o755)
    links = tmp_path / "tools" / ".bin"
    links.mkdir()
    (links / "agent").symlink_to("../pkg/bin/agent")
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}]})
    h.new("t")
    result = h.specd("continue", "t", "--auto", "--agent", f"cmd:{links / 'agent'}")
    assert result.returncode == 0, result.stderr
    assert (h.root / "by-linked-agent.txt").read_text() == "ran\n"


def test_a_secret_file_an_unjailed_pre_hook_pulls_is_hidden_from_the_agent_that_follows(h: Harness) -> None:
    """`vercel env pull` as a `sandbox: false` pre hook: the run's own search, made as it started, is not the
    agent's jail's any more; that jail searches again and shows the new .env empty."""
    needs_bwrap()
    git_repo(h)
    h.workflow("w.md")
    pull = {"run": "printf 'API_TOKEN=sk-live-pulled-0123456789abcdef\\n' > .env", "sandbox": False}
    h.pipeline({"main": [{"name": "a", "workflow": "w.md", "hooks": {"pre": pull}}]})
    h.new("t")
    seen = h.dir / "agent-saw.txt"
    reader = f"cmd:sh -c {shlex.quote(f'cat .env > {seen}; true')}"
    h.env["SPECD_JAIL_WRITE"] = str(h.dir)
    result = h.specd("continue", "t", "--auto", "--agent", reader)
    assert result.returncode == 0, result.stderr
    assert (h.root / ".env").read_text().startswith("API_TOKEN=sk-live-pulled")  # the hook's file is there
    assert seen.read_text() == ""  # and the agent read it empty
