"""A project's secret files never reach the model: the jail shows them empty to every agent and command (what
Claude Code's Bash reads goes to the API as it is), and the anthropic agent's file tools refuse them.

Found by hand: the model of a real Claude Code step ran `cat .env` and got the project's GitHub token back. Found
by an attacker (issue 28): `.env` files in dot-folders, deeper than four levels or under node_modules, and
`.npmrc`'s token, were readable.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from specd.agents.anthropic.sandbox import Refused, Sandbox
from specd.system import jail

TOKEN = "ghp_" + "S3cr3tT0k3nValue0123456789abcdefABCD"
DEEPER = {".devcontainer/a/b/c/d/.env": "DB_PASSWORD=deepDevcontainerValue1\n",
          "node_modules/pkg/.env": "API_KEY=dependencyEnvValue2\n",
          ".npmrc": "//registry.npmjs.org/:_authToken=npmrcTokenValue3\n",
          "keys/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nsshKeyBodyValue4\n"}


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".env" / "bin").mkdir(parents=True)  # a virtualenv called .env: a folder, left alone
    (root / ".env" / "bin" / "tool").write_text("venv tool\n")
    (root / ".env.local").write_text(f"GITHUB_TOKEN={TOKEN}\n")
    (root / ".env.production").write_text("DB_PASSWORD=hunter2hunter2\n")
    (root / ".env.example").write_text("GITHUB_TOKEN=put-yours-here\n")
    (root / "app.py").write_text("print('hi')\n")
    (root / "apps" / "web").mkdir(parents=True)  # a monorepo: each app has its own
    (root / "apps" / "web" / ".env").write_text("STRIPE_KEY=sk_live_nestedNestedNested0123\n")
    (root / "apps" / "web" / ".env.example").write_text("STRIPE_KEY=put-yours-here-too\n")
    for name, text in DEEPER.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize("tier", ["agent", "project"])
def test_in_the_jail_env_files_read_empty_and_cannot_be_written(tmp_path: Path, tier: str) -> None:
    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")
    root = _project(tmp_path)
    script = ("cat .env.local .env.production && [ ! -s .env.local ] && echo read-empty; cat .env.example; "
              "cat apps/web/.env apps/web/.env.example; "
              "cat .env/bin/tool; cat .devcontainer/a/b/c/d/.env node_modules/pkg/.env .npmrc keys/id_ed25519; "
              "echo mine > .env.local && echo wrote; rm -f .env.production && echo removed; "
              "grep -r hunter2 . ; echo end")
    launch = jail.prepare(script, root, jail.Jail(tier=tier), {"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    done = subprocess.run(launch.args, shell=launch.shell, env=launch.env, cwd=root, capture_output=True, text=True,
                          check=False, timeout=60)
    said = done.stdout + done.stderr
    assert TOKEN not in said, said
    assert "hunter2" not in said, said
    assert "nestedNested" not in said, said
    for value in ("deepDevcontainerValue1", "dependencyEnvValue2", "npmrcTokenValue3", "sshKeyBodyValue4"):
        assert value not in said, said
    assert "put-yours-here-too" in said, said
    assert "read-empty" in said, said  # readable, and empty: a program that loads .env still starts
    assert "put-yours-here" in said
    assert "venv tool" in said
    assert "wrote" not in said, said
    assert "removed" not in said, said
    assert "end" in said
    assert TOKEN in (root / ".env.local").read_text()  # nothing outside changed
    assert (root / ".env.production").exists()


def test_the_anthropic_agents_file_tools_refuse_env_files(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "innocent.txt").symlink_to(root / ".env.local")
    sandbox = Sandbox(root)
    for path in (".env.local", ".env.production", "innocent.txt", str(root / ".env.local"), "apps/web/.env",
                 *DEEPER):
        with pytest.raises(Refused, match="never shown to the model"):
            sandbox.read_text(path)
        with pytest.raises(Refused):
            sandbox.write_text(path, "x")
    assert "put-yours-here" in sandbox.read_text(".env.example")
    assert sandbox.read_text(".env/bin/tool") == "venv tool\n"
    listed = {sandbox.relative(p) for p in sandbox.walk(root, "**/*")} | {sandbox.relative(p)
                                                                           for p in sandbox.walk(root, ".*")}
    assert ".env.example" in listed
    assert "app.py" in listed
    assert not {".env.local", ".env.production", "innocent.txt", "apps/web/.env", *DEEPER} & listed  # nor a search
