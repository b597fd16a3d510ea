"""The host side of the inventory from inside (issue 28): a machine with things worth stealing, and projects.

``Host`` plants, outside any project, what a jailed process must never reach: a fake HOME holding keys
(``.ssh/id_ed25519``, ``.aws/credentials``, ``.cargo/credentials.toml``), Claude Code's user settings and a
cache a later program trusts; a listening AF_UNIX socket in a host tmp folder (as tmux's ``tmux-0/default``)
and one in HOME (as ssh-agent's), an abstract socket, and two TCP listeners on the host's loopback: one the
pipeline lists (`network: ["127.0.0.1:PORT"]`), one it does not. Each listener says which it is on its first
line and counts who came, so a connection is proven from both ends. It also sets secret-named variables
in specd's environment, and a sibling project beside the one under test.

``Project`` is a git repository with one step, the probe (``inventory_probe.py``) copied in as ``probe.py``
with its ``probe-config.json``, both in ``.git/info/exclude``; specd runs through its real CLI.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from specd.system import jail

PROBE = Path(__file__).with_name("inventory_probe.py")
RUN_TIMEOUT = 240.0  # a safety net only: a hang fails the test instead of the suite
WORKFLOW = "---\ndescription: the {name} step\noutcomes: [\"done\"]\n---\n\n# {name}\n\nRun `python3 probe.py`.\n"
SECRETS = {"GITHUB_TOKEN": "ghp_inventoryprobe0123456789abcdefABCDEF", "DB_PASSWORD": "hunter2-inventory",
           "AWS_SECRET_ACCESS_KEY": "aws-secret-inventory-0123456789", "DEPLOY_KEY": "deploy-key-inventory-01",
           "REDIS_URL": "redis://user:redis-pw-inventory@cache:6379/0"}
# What the fake HOME holds, and what a jailed process reading or overwriting it would get or change.
HOME_FILES = {".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n", ".aws/credentials": "[default]\n",
              ".claude/settings.json": '{"permissions": {}}\n', ".claude.json": '{"userID": "planted"}\n',
              ".cache/x": "cached\n", ".cargo/credentials.toml": "[registry]\ntoken = \"planted\"\n",
              ".bash_history": "ssh prod\n", ".config/gh/hosts.yml": "github.com:\n  oauth_token: planted\n"}
TOOL = ".cargo/bin/tool"  # a tool installed in HOME, on PATH: the jail shows it (and only it) read-only
# What in /etc only root may read (the jail binds each empty): judged by its mode alone, never opened here.
ETC_SECRETS = sorted(str(path) for path in Path("/etc").rglob("*") if path.is_file() and not path.is_symlink()
                     and not path.stat().st_mode & stat.S_IROTH)
DOTENV = "API_TOKEN=dotenv-secret-inventory-0123\n"  # the project's .env: shown empty inside


def needs_bwrap() -> None:
    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")


def known_outside(root: Path, secrets: tuple[str, ...], files: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """What specd makes, outside any jail, of secrets the jail keeps from view: the ones redaction would still show
    once the project's secrets are loaded (none, if masked), and each of ``files`` (written into ``root``) that
    the commit barrier holds, with what it says it holds."""
    from specd.git import tree
    from specd.git.barrier import Barrier
    from specd.git.repo import Repo
    from specd.redact import MASK, redact
    from specd.tasks.secrets import load_project_secrets

    load_project_secrets(root)
    shown = [secret for secret in secrets if redact(f"x {secret}") != f"x {MASK}"]
    repo = Repo.open(root)
    assert repo is not None
    gate = Barrier(repo, root, ".specd/tasks/t", ".specd")
    for name, text in files.items():
        (root / name).write_text(text)
    gate.look(set(files), tree.take(repo, "."))
    return shown, {hit.path: hit.holds for hit in gate.holds()}


def hosting(tmp_path: Path) -> Iterator[Host]:
    """The body of each test module's ``host`` fixture: bubblewrap or a skip, then a Host, closed after."""
    needs_bwrap()
    host = Host(tmp_path)
    try:
        yield host
    finally:
        host.close()


class Listener:
    """A host listener (TCP on 127.0.0.1, a unix path or an abstract name) that greets and counts."""

    def __init__(self, name: str, family: int, address: Any) -> None:
        self.name = name
        self.accepted = 0
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        if family == socket.AF_INET:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(address)
        self.sock.listen(16)
        self.address = self.sock.getsockname()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.address[1])

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            with client, contextlib.suppress(OSError):
                client.sendall(f"host-{self.name}\n".encode())

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


class Host:
    """What lies around the projects under test, and the environment specd runs with."""

    def __init__(self, tmp_path: Path) -> None:
        # Short paths (a socket's path has a 108-byte limit), outside tmp_path, so outside every project.
        self.base = Path(tempfile.mkdtemp(prefix="specd-inv-"))
        self.home = self.base / "home"
        self.host_tmp = self.base / "hosttmp"  # as the host's /tmp: a tmux socket and a stray file
        self.tmp_path = tmp_path
        for name, text in HOME_FILES.items():
            path = self.home / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (self.home / TOOL).parent.mkdir(parents=True, exist_ok=True)
        (self.home / TOOL).write_text("#!/bin/sh\necho tool\n", encoding="utf-8")
        (self.home / TOOL).chmod(0o755)
        (self.host_tmp / "tmux-0").mkdir(parents=True)
        (self.host_tmp / "stray.txt").write_text("another program's temp file\n", encoding="utf-8")
        self.other = tmp_path / "other"  # another project beside the one under test
        (self.other / ".specd").mkdir(parents=True)
        (self.other / "secret-plan.md").write_text("another project's work\n", encoding="utf-8")
        self.abstract = f"specd-inv-{uuid.uuid4().hex[:12]}"
        self.listeners = {
            "tmux": Listener("tmux", socket.AF_UNIX, str(self.host_tmp / "tmux-0" / "default")),
            "ssh-agent": Listener("ssh-agent", socket.AF_UNIX, str(self.home / ".ssh" / "agent.sock")),
            "abstract": Listener("abstract", socket.AF_UNIX, b"\0" + self.abstract.encode()),
            "unlisted": Listener("unlisted", socket.AF_INET, ("127.0.0.1", 0)),
            "listed": Listener("listed", socket.AF_INET, ("127.0.0.1", 0)),
        }
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("ANTHROPIC_", "CLAUDE", "GIT_")) and k != "SPECD_JAIL_READ"}
        self.env.update({"HOME": str(self.home), "PATH": f"{self.home / '.cargo' / 'bin'}:{os.environ['PATH']}",
                         "NO_COLOR": "1", "COLUMNS": "1000", "TERM": "dumb", "PYTHONDONTWRITEBYTECODE": "1",
                         "SSH_AUTH_SOCK": str(self.home / ".ssh" / "agent.sock"),
                         "TMUX": f"{self.host_tmp / 'tmux-0' / 'default'},4242,0", **SECRETS})
        self.home_before = self.home_snapshot()

    @property
    def listed(self) -> str:
        return f"127.0.0.1:{self.listeners['listed'].port}"

    def home_snapshot(self) -> dict[str, bytes | None]:
        """Every file of the fake HOME (but the socket) and the ones an attack would create, with their bytes; but
        specd's own cache folder, which specd writes outside the jail (the trees' build folders and the files
        naming their trees: ``buildcaches``; a jail writes only into the build folders, at their jail paths, which
        the inventory's own findings look at)."""
        found: dict[str, bytes | None] = {}
        own = self.home / ".cache" / "specd"
        for path in sorted(self.home.rglob("*")):
            if path.is_file() and not path.is_socket() and not path.is_relative_to(own):
                found[str(path.relative_to(self.home))] = path.read_bytes()
        return found

    def probe_config(self, allow: tuple[str, ...] = (), write: tuple[str, ...] = ()) -> dict[str, Any]:
        return {
            "allow": list(allow),
            "net": {"unlisted": self.listeners["unlisted"].port, "listed": self.listeners["listed"].port},
            "attacks": {
                "read": [str(self.home / ".ssh" / "id_ed25519"), str(self.home / ".aws" / "credentials"),
                         str(self.host_tmp / "stray.txt"), str(self.other / "secret-plan.md")],
                "write": [str(self.home / ".claude" / "settings.json"), str(self.home / ".cache" / "x"), *write],
                "connect": [str(self.host_tmp / "tmux-0" / "default"), str(self.home / ".ssh" / "agent.sock")],
                "abstract": [self.abstract],
                "empty": sorted({*ETC_SECRETS, "/etc/shadow"}),
                "present": [str(self.home / TOOL)],
            },
        }

    def accepted(self) -> dict[str, int]:
        return {name: listener.accepted for name, listener in self.listeners.items()}

    def knocked(self, name: str, deadline: float = 10.0) -> bool:
        """Whether someone connected to listener ``name`` (waiting for its thread to take a queued connection)."""
        end = time.monotonic() + deadline
        while not self.listeners[name].accepted and time.monotonic() < end:
            time.sleep(0.02)
        return self.listeners[name].accepted > 0

    def close(self) -> None:
        for listener in self.listeners.values():
            listener.close()
        shutil.rmtree(self.base, ignore_errors=True)


class Project:
    """A git repository with one step `a` and the probe beside its files (never committed)."""

    def __init__(self, host: Host, root: Path, *, agent: dict[str, Any] | None = None,
                 step: dict[str, Any] | None = None, init: bool = False,
                 config: dict[str, Any] | None = None) -> None:
        self.host, self.root = host, root
        root.mkdir(parents=True)
        self.env = dict(host.env)
        self.git("init", "-q", "-b", "main")
        for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
            self.git("config", key, value)
        if init:
            done = self.specd("init")
            assert done.returncode == 0, done.stderr
        pipeline = {"schema_version": "1.0", "mode": "auto", **({"agent": agent} if agent else {}),
                    "pipelines": {"main": [{"name": "a", "workflow": "w.md", **(step or {})}]}}
        self.write(".specd/pipeline.json", json.dumps(pipeline, indent=2))
        self.write(".specd/workflows/w.md", WORKFLOW.format(name="a"))
        self.write("README.md", "# the project under test\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "initial")
        self.write(".git/info/exclude", "probe.py\nprobe-config.json\ninventory-*.json\n.env\n")
        self.write(".env", DOTENV)
        config = config or host.probe_config()
        config["attacks"]["empty"].append(str(root / ".env"))
        self.place_probe(root, config)

    @staticmethod
    def place_probe(folder: Path, config: dict[str, Any]) -> None:
        shutil.copyfile(PROBE, folder / "probe.py")
        (folder / "probe-config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")

    def write(self, path: str, text: str) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, env=self.env,
                              check=False)
        assert done.returncode == 0, f"git {args}: {done.stderr}"
        return done.stdout

    def specd(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "specd", "--project", str(self.root), *args], cwd=self.root,
                              capture_output=True, text=True, env=self.env, stdin=subprocess.DEVNULL,
                              timeout=RUN_TIMEOUT, check=False)

    def new(self, task: str = "t") -> None:
        done = self.specd("new", task)
        assert done.returncode == 0, done.stderr

    def inventory(self, label: str, folder: Path | None = None) -> dict[str, Any]:
        path = (folder or self.root) / f"inventory-{label}.json"
        assert path.exists(), f"the probe wrote no {path.name}"
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
