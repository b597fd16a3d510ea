"""Acceptance: token shapes, URL credentials and values only the project's .env files hold, printed by a
`cmd:` agent and by `run:` hooks, reach no file under .specd/, no commit or git object, and no screen.

None of these values is in specd's environment: the agent and the hooks read them from their own source
text and from the .env files, the way a leaked key usually travels. They run with `sandbox: false`, since in
the jail the .env files read empty (tests/agents/test_env_files.py): this is redaction's own test.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

# Each value holds its needle: what must never show up anywhere once the value is masked.
TOKENS = {
    "stripe": "sk_live_" + "NEEDLEstripe4eC39HqLy",
    "stripe_rk": "rk_live_" + "NEEDLErk51Hx0abcd",
    "stripe_test": "sk_test_" + "NEEDLEtest51Hx0ab",
    "gitlab": "glpat-" + "NEEDLEgitlab_x-1234",
    "npm": "npm_" + "NEEDLEnpm" + "a1B2c3D4e5f6G7h8i9J0k1L2m3N",
    "google": "AIza" + "NEEDLEgoogle" + "-1234567890_abcdefghijk",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJNEEDLEjwt0In0.NEEDLEsig-dozjgNryP4J3",
}
URL = "postgres://app:NEEDLEurlpw@db.example.com:5432/app"
PASSWORD = "password: NEEDLEpassword"
ENV_FILES = {".env": "PLAIN_SETTING=NEEDLEdotenv-1\nAPP_MODE=dev\n",
             ".env.local": "export WHATEVER='NEEDLEdotlocal 2'\nCACHE=redis://:NEEDLEredis@cache:6379\n",
             ".env.production": "DEPLOY_HOOK=NEEDLEdotprod-3\n"}
NEEDLES = ["NEEDLEstripe", "NEEDLErk", "NEEDLEtest", "NEEDLEgitlab", "NEEDLEnpm", "NEEDLEgoogle", "NEEDLEjwt",
           "NEEDLEsig", "NEEDLEurlpw", "NEEDLEpassword", "NEEDLEdotenv", "NEEDLEdotlocal", "NEEDLEredis",
           "NEEDLEdotprod"]
PRINTED = " ".join([*TOKENS.values(), URL, PASSWORD])
AGENT = f"""\
import json, os, pathlib, sys
dotenv = " ".join(pathlib.Path(n).read_text() for n in (".env", ".env.local", ".env.production"))
text = {PRINTED!r} + " " + dotenv
print("agent prints", text)
print("on stderr", text, file=sys.stderr)
json.dump({{"outcome": "done", "summary": "summary " + text, "detail": {{"all": text}}}},
          open(os.environ["SPECD_RESULT"], "w"))
"""
LEAK_SH = f"echo {shlex.quote(PRINTED)}; cat .env .env.local .env.production\n"
HOOK = "sh tools/leak.sh"  # the values are in the project's script, not in the pipeline file specd reads


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, input=stdin,
                          errors="replace").stdout


def _leaks(text: str) -> list[str]:
    return [n for n in NEEDLES if n in text]


def test_shapes_and_dotenv_values_reach_no_file_commit_object_or_screen(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".specd" / "workflows").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "T")
    for name, text in ENV_FILES.items():
        (root / name).write_text(text)
    for name in ("discuss", "plan"):
        (root / ".specd" / "workflows" / f"{name}.md").write_text(f"# {name}\n\nDo {name}.\n")
    agent = f"{shlex.quote(sys.executable)} {shlex.quote(str(root / 'tools' / 'agent.py'))}"
    pipeline = {"schema_version": "1.0", "mode": "auto", "hooks": {"post-step": {"run": HOOK, "sandbox": False}},
                "agent": {"backend": "command", "command": agent, "sandbox": False},
                "pipelines": {"main": [
                    {"name": "discuss", "workflow": "discuss.md",
                     "hooks": {"pre": {"run": f"{HOOK}; exit 3", "optional": True, "sandbox": False}}},
                    {"name": "plan", "workflow": "plan.md"}]}}
    (root / ".specd" / "pipeline.json").write_text(json.dumps(pipeline))
    (root / "tools").mkdir()  # the user's own scripts, inside the project so every jail lets them be read
    (root / "tools" / "agent.py").write_text(AGENT)
    (root / "tools" / "leak.sh").write_text(LEAK_SH)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env.update(NO_COLOR="1", TERM="dumb")
    outputs: list[str] = []

    def specd(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "specd", "--project", str(root), *args], capture_output=True,
                              text=True, env=env, cwd=root, timeout=180, stdin=subprocess.DEVNULL, check=False)
        outputs.extend([done.stdout, done.stderr])
        return done

    assert specd("new", "t", "--description", "task").returncode == 0
    done = specd("continue", "t", "--auto")
    assert done.returncode == 0, done.stderr
    for args in (("status", "t", "--json"), ("status", "t"), ("status",), ("logs", "t"), ("logs", "t", "--json")):
        assert specd(*args).returncode == 0

    # The check is not vacuous: the agent's and the hooks' output was recorded, masked.
    task = root / ".specd" / "tasks" / "t"
    transcripts = "".join(p.read_text() for p in (task / "transcripts").rglob("*") if p.is_file())
    assert "agent prints" in transcripts
    assert "postgres://app:[REDACTED]@db.example.com:5432/app" in transcripts
    assert "password: [REDACTED]" in transcripts
    assert "APP_MODE=dev" in transcripts  # a short .env value is ordinary text, and stays readable
    assert "Hook failure" in (task / "CHANGELOG.md").read_text()
    leaked = {str(p): _leaks(p.read_text(errors="replace")) for p in (root / ".specd").rglob("*") if p.is_file()}
    assert {k: v for k, v in leaked.items() if v} == {}
    history = _git(root, "log", "-p", "--all")
    assert "discuss complete" in history
    assert _leaks(history) == []
    objects = _git(root, "cat-file", "--batch-all-objects", "--batch")
    assert "summary" in objects
    assert _leaks(objects) == []
    assert [n for text in outputs for n in _leaks(text)] == []
    assert any("[REDACTED]" in text for text in outputs)  # logs printed the masked transcripts
