"""Issue 28, item 6: no secret in a commit, whatever the file.

An agent copies a secret into a file of its own: the value of a secret-named variable in specd's environment,
values of `.env` files four and six folders down (one inside `.devcontainer/`), a private key. The step is held
(exit 3, WAITING_FOR_HUMAN) naming the file and what the secret is, never its value; no commit holds the file
until `specd approve` lets it through, and `specd reject` runs the step again with the note.

The agent script and its rules live inside the project (ignored through .git/info/exclude): a jail that shows
the agent nothing outside the project still lets it run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from git_harness import GitProject

from specd.state.store import StateStore

TOKEN = "tok-" + "Zq81vR4mXw2Lp9sK3nB7"  # in specd's environment, as SPECD_TEST_TOKEN
DEEP = "deep-" + "Hc5Tj0Yk7Wd2Fs9Qa4"  # apps/web/config/local/.env (four folders down)
DEVBOX = "devbox-" + "Ue6Ro3Mi8Gv1Xb5Nz"  # .devcontainer/a/b/c/d/e/.env (six folders down)
KEY_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + (KEY_BODY + "AAAAAAAABAAAAMwAAAAtzc2gtZW\n") * 3
       + "-----END OPENSSH PRIVATE KEY-----\n")
NOTE = "take the values out of the notes"
AGENT = r'''
import json, os, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
step = os.environ["SPECD_STEP"]
prompt = sys.stdin.read()
rule = json.loads((HERE / "rules.json").read_text()).get(step, {})
files = rule.get("clean", {}) if rule.get("note", "\0") in prompt else rule.get("write", {})
for name, text in files.items():
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    Path(name).write_text(text)
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "summary": step + " done"}))
'''


class Inside(GitProject):
    """The harness with its agent inside the project, ignored by git."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path)
        self.dir = self.root / ".harness"
        self.dir.mkdir()
        self.agent = self.dir / "agent.py"
        self.agent.write_text(AGENT, encoding="utf-8")
        with (self.root / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
            exclude.write("/.harness/\n")
        self.rules({})
        self.env["SPECD_TEST_TOKEN"] = TOKEN

    def history(self) -> str:
        return self.git("log", "-p", "--all", "--format=%H %s%n%b")

    def state(self, task: str) -> Any:
        state = StateStore(self.root / ".specd" / "tasks" / task, task).load()
        assert state is not None
        return state


@pytest.fixture
def inside(tmp_path: Path) -> Inside:
    if shutil.which("git") is None:
        pytest.fail("git is required for these tests")
    return Inside(tmp_path)


def _said(result: Any) -> str:
    return str(result.stdout) + str(result.stderr)


def _specd_files(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in (root / ".specd").rglob("*") if p.is_file())


def _assert_nowhere(gp: Inside, value: str, *outputs: Any) -> None:
    for result in outputs:
        assert value not in _said(result)
    assert value not in _specd_files(gp.root)
    assert value not in gp.history()


def test_an_environment_secret_holds_the_step_until_approved(inside: Inside) -> None:
    inside.rules({"plan": {"write": {"loot.txt": f"found it: {TOKEN}\n", "docs/plan.md": "the plan\n"}}})
    inside.new("t")

    held = inside.run("t")

    assert held.returncode == 3, _said(held)
    assert "loot.txt" in _said(held)
    assert "SPECD_TEST_TOKEN" in _said(held)
    state = inside.state("t")
    assert state.status == "WAITING_FOR_HUMAN"
    assert state.waiting["kind"] == "secret"
    assert [f["path"] for f in state.waiting["files"]] == ["loot.txt"]
    assert "docs/plan.md" in dict(inside.commits())["docs(t): plan complete"]  # the step's other work goes in
    again = inside.run("t")  # `continue` alone keeps holding, and runs nothing
    assert again.returncode == 3, _said(again)
    assert "docs(t): starting execute" not in [s for s, _ in inside.commits()]
    _assert_nowhere(inside, TOKEN, held, again)
    assert "loot.txt" not in "".join(f for _, files in inside.commits() for f in files)

    approved = inside.specd("approve", "t")
    assert approved.returncode == 0, _said(approved)
    done = inside.specd("continue", "t")

    assert done.returncode == 0, _said(done)
    assert TOKEN not in _said(approved) + _said(done)
    subjects = [s for s, files in inside.commits() if "loot.txt" in files]
    assert subjects == ["docs(t): plan complete (held for a secret, committed as approved)"]
    state = inside.state("t")
    assert state.status == "COMPLETE"
    rows = [row for row in state.checkpoints if row.get("waiting") == "secret"]
    assert [(row["answer"], [f["path"] for f in row["files"]]) for row in rows] == [("approve", ["loot.txt"])]
    assert inside.git("status", "--porcelain") == ""


def test_values_of_nested_env_files_hold_the_step_and_reject_runs_it_again(inside: Inside) -> None:
    inside.write("apps/web/config/local/.env", f"API_TOKEN={DEEP}\nMODE=development\n")
    inside.write(".devcontainer/a/b/c/d/e/.env", f"DB_PASSWORD={DEVBOX}\n")
    inside.rules({"execute": {"note": NOTE,
                              "write": {"notes/one.txt": f"deep {DEEP}\n", "notes/two.txt": f"dev {DEVBOX}\n",
                                        "src/app.py": "print('development')\n"},
                              "clean": {"notes/one.txt": "deep: see the .env\n", "notes/two.txt": "dev: ask\n"}}})
    inside.new("t")

    held = inside.run("t")

    assert held.returncode == 3, _said(held)
    said = _said(held)
    assert "notes/one.txt holds the value of API_TOKEN in apps/web/config/local/.env" in said
    assert "notes/two.txt holds the value of DB_PASSWORD in .devcontainer/a/b/c/d/e/.env" in said
    assert "src/app.py" in dict(inside.commits())["docs(t): execute complete"]  # `development` is no secret
    _assert_nowhere(inside, DEEP, held)
    _assert_nowhere(inside, DEVBOX, held)

    rejected = inside.specd("reject", "t", "--note", NOTE)
    assert rejected.returncode == 0, _said(rejected)
    done = inside.run("t")

    assert done.returncode == 0, _said(done)
    _assert_nowhere(inside, DEEP, rejected, done)
    _assert_nowhere(inside, DEVBOX, rejected, done)
    assert inside.git("show", "HEAD:notes/one.txt") == "deep: see the .env\n"
    assert [row["answer"] for row in inside.state("t").checkpoints if row.get("waiting") == "secret"] == ["reject"]


def test_a_private_key_is_held_and_no_later_commit_takes_it(inside: Inside) -> None:
    inside.rules({"discuss": {"write": {"keys/deploy.txt": PEM}}})
    inside.new("t")

    held = inside.run("t")

    assert held.returncode == 3, _said(held)
    assert "keys/deploy.txt holds a private key block" in _said(held)
    waiting = json.dumps(inside.state("t").waiting)
    assert "keys/deploy.txt" in waiting
    for _ in range(2):  # neither `continue` nor its run state commit takes the file
        again = inside.run("t")
        assert again.returncode == 3, _said(again)
        _assert_nowhere(inside, KEY_BODY, held, again)

    assert inside.specd("approve", "t").returncode == 0
    done = inside.run("t")

    assert done.returncode == 0, _said(done)
    assert KEY_BODY not in _said(done)
    commits = [(s, files) for s, files in inside.commits() if "keys/deploy.txt" in files]
    assert [s for s, _ in commits] == ["docs(t): discuss complete (held for a secret, committed as approved)"]
    assert [s for s, _ in inside.commits()][-1] == "docs(t): run state COMPLETE"
