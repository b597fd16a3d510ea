"""run_command under bubblewrap, for real: only the project is writable, /tmp is private, no network.

The probes are scripts in the project, so the path check lets them through and
only the OS sandbox stands between them and the machine.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest

from specd.system import jail

PROBE = """\
import os, socket, sys
# Paths are built here, not passed: run_command refuses a command line naming a path outside.
target = os.path.join(os.path.dirname(os.getcwd()), "outside", "new.txt")
host_file, port = os.path.join(os.sep + "tmp", "specd-host-" + sys.argv[1]), int(sys.argv[2])
for name, act in [
    ("outside", lambda: open(target, "w").write("pwned")),
    ("pipeline", lambda: open(".specd/pipeline.json", "w").write("{}")),
    ("gitconfig", lambda: open(".git/config", "a").write("[x]")),
    ("state", lambda: open(".specd/tasks/t/.pipeline-state.json", "w").write("{}")),
    ("project", lambda: open("made-inside.txt", "w").write("ok")),
    ("plan", lambda: open(".specd/tasks/t/PLAN.md", "w").write("ok")),
    ("tmp", lambda: open("/tmp/specd-inside-probe", "w").write("ok")),
    ("net", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close()),
    ("var_tmp", lambda: open(os.path.join(os.sep + "var", "tmp", "specd-probe-" + sys.argv[1]), "w").write("x")),
]:
    try:
        act()
        print(name, "ok")
    except OSError as err:
        print(name, "failed", err.errno)
import subprocess
for name, argv in [("umount_git", ["umount", os.path.join(os.getcwd(), ".git")]),
                   ("remount_root", ["mount", "-o", "remount,rw", os.sep]),
                   ("nested_userns", ["unshare", "-rm", "mount", "-o", "remount,rw", os.sep])]:
    done = subprocess.run(argv, capture_output=True)
    print(name, "ok" if done.returncode == 0 else "failed", done.returncode)
print("host_tmp_visible", os.path.exists(host_file))
names = ("SPECD_TEST_API_KEY", "DB_PASSWORD", "ANTHROPIC_API_KEY", "MYSQL_PWD", "DATABASE_URL", "GH_PAT", "CI_JOB_JWT")
print("secrets", ",".join(k for k in names if k in os.environ) or "none")
"""


@pytest.fixture
def needs_bwrap() -> None:
    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")


def _probe(project: Any, server: Any, make_agent: Any, **settings: Any) -> dict[str, str]:
    os.environ.update(SPECD_TEST_API_KEY="sk-test-0123456789abcdef", DB_PASSWORD="hunter2-hunter2",
                      MYSQL_PWD="mysql-pw-123", DATABASE_URL="postgres://u:pw-123456@db/x", GH_PAT="ghpat-value-123",
                      CI_JOB_JWT="jwt-value-1234567")
    (project.root / "probe.py").write_text(PROBE)
    (project.root / ".specd" / "pipeline.json").write_text('{"keep": true}')
    marker = uuid.uuid4().hex
    host_file = Path(f"/tmp/specd-host-{marker}")
    host_file.write_text("host")
    port = server.url.rsplit(":", 1)[1].strip("/")
    try:
        server.push(fake.message(fake.tool("run_command", command=f"python probe.py {marker} {port}")),
                    fake.complete())
        make_agent(allow_commands=["python probe.py*"], sandbox="bubblewrap", **settings).run(project.request())
    finally:
        host_file.unlink()
        for name in ("SPECD_TEST_API_KEY", "DB_PASSWORD", "MYSQL_PWD", "DATABASE_URL", "GH_PAT", "CI_JOB_JWT"):
            os.environ.pop(name, None)
    output = fake.tool_results(server.bodies[1])[0]["content"]
    return dict(line.split(" ", 1) for line in output.splitlines()[1:] if " " in line)


@pytest.mark.usefixtures("needs_bwrap")
def test_inside_bubblewrap_only_the_project_is_writable(project: Any, server: Any, make_agent: Any) -> None:
    seen = _probe(project, server, make_agent)
    assert seen["outside"].startswith("failed")
    assert seen["pipeline"].startswith("failed")
    assert seen["gitconfig"].startswith("failed")
    assert seen["state"].startswith("failed")
    assert seen["project"] == "ok"
    assert seen["plan"] == "ok"
    assert not (project.outside / "new.txt").exists()
    assert (project.root / ".specd" / "pipeline.json").read_text() == '{"keep": true}'
    assert (project.root / ".git" / "config").read_text() == "[core]\n"
    assert (project.root / "made-inside.txt").read_text() == "ok"


@pytest.mark.usefixtures("needs_bwrap")
def test_code_an_allowed_command_runs_cannot_unmount_remount_leave_the_project_or_read_secrets(
        project: Any, server: Any, make_agent: Any) -> None:
    """As root too: the jail's user namespace holds no capability, and a nested one cannot be made."""
    seen = _probe(project, server, make_agent)
    for name in ("umount_git", "remount_root", "nested_userns", "var_tmp", "gitconfig", "pipeline"):
        assert seen[name].startswith("failed"), (name, seen[name])
    assert seen["secrets"] == "none"
    assert not list(Path("/var/tmp").glob("specd-probe-*"))
    assert (project.root / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.usefixtures("needs_bwrap")
def test_tmp_is_private_and_there_is_no_network(project: Any, server: Any, make_agent: Any) -> None:
    seen = _probe(project, server, make_agent)
    assert seen["tmp"] == "ok"
    assert not Path("/tmp/specd-inside-probe").exists()
    assert seen["host_tmp_visible"] == "False"
    assert seen["net"].startswith("failed")


@pytest.mark.usefixtures("needs_bwrap")
def test_network_when_the_pipeline_allows_it(project: Any, server: Any, make_agent: Any) -> None:
    seen = _probe(project, server, make_agent, sandbox_network=True)
    assert seen["net"] == "ok"
    assert seen["outside"].startswith("failed")
