"""Code a step hides from git with a rule git ignores too is held for a person (``specd/git/hidden.py``).

Real `specd continue` runs with a real command agent in a real repository: the run's exit code, its reason, the
answers, and what git shows afterwards."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from git_harness import GitProject

from specd.git import hidden, tree
from specd.git.repo import Repo

CONFTEST = "open('/tmp/ran-as-you', 'w').write('x')\n"
# tests/.gitignore names itself and the files it hides: git shows none of them
HIDING = {"tests/.gitignore": ".gitignore\nconftest.py\ntest_zz.py\nhelpers/\n", "tests/conftest.py": CONFTEST,
          "tests/test_zz.py": "def test_z():\n    pass\n", "tests/helpers/conftest.py": CONFTEST,
          "tests/helpers/data.json": "{{}}\n", "notes/work.md": "the step's visible work\n"}


def _ran(project: GitProject, code: int) -> str:
    """`specd continue t` once, expected to exit ``code``: what it printed, on one line."""
    ran = project.run("t")
    assert ran.returncode == code, ran.stdout + ran.stderr
    return " ".join((ran.stdout + ran.stderr).split())


def _state(project: GitProject, task: str) -> dict[str, object]:
    path = project.root / ".specd/tasks" / task / ".pipeline-state.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_source_hidden_by_a_rule_git_ignores_holds_the_run_until_a_person_answers(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute", "review"))
    project.rules({"execute": {"write": HIDING}})
    project.new("t")
    out = _ran(project, 3)
    assert ("step 'execute' hid 3 files from git: tests/conftest.py, tests/helpers/conftest.py, "
            "tests/test_zz.py (hidden by tests/.gitignore, a rule git ignores as well)") in out
    assert "your own next test run (pytest" in out
    assert "data.json" not in out  # not source
    assert project.git("status", "--porcelain", "--", "tests") == ""  # what git itself shows: nothing
    assert ("notes/work.md" in {f for _, files in project.commits() for f in files})  # the visible work is committed
    state = _state(project, "t")
    waiting = state["waiting"]
    assert isinstance(waiting, dict)
    assert waiting["kind"] == "hidden"
    assert [f["path"] for f in waiting["files"]] == ["tests/conftest.py", "tests/helpers/conftest.py",
                                                     "tests/test_zz.py"]
    assert "review" not in json.dumps(state.get("history"))  # the next step did not run
    again = project.run("t")  # `continue` alone keeps waiting
    assert again.returncode == 3
    skipped = project.specd("skip", "t")
    assert skipped.returncode == 2
    assert "skipping would not take out what it hid from git" in skipped.stderr
    listing = project.specd("status")
    assert "WAITING_FOR_HUMAN" in listing.stdout
    approved = project.specd("approve", "t")
    assert approved.returncode == 0, approved.stderr
    assert ("tests/conftest.py, tests/helpers/conftest.py, tests/test_zz.py stay as they are, out of git"
            in approved.stdout + approved.stderr)
    done = project.run("t")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "COMPLETE" in done.stdout + done.stderr
    assert (project.root / "tests/conftest.py").exists()  # a person's answer: nothing removed


def test_a_rejected_step_runs_again_and_deleted_files_are_not_held_again(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute",))
    project.rules({"execute": {"write": HIDING}})
    project.new("t")
    assert project.run("t").returncode == 3
    for name in ("tests/.gitignore", "tests/conftest.py", "tests/test_zz.py"):
        (project.root / name).unlink()
    subprocess.run(["rm", "-r", str(project.root / "tests/helpers")], check=True)
    project.rules({"execute": {"write": {"notes/work.md": "again\n"}}})
    rejected = project.specd("reject", "t", "--note", "no hidden tests")
    assert rejected.returncode == 0, rejected.stderr
    done = project.run("t")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "hid" not in done.stdout + done.stderr


def test_a_rule_one_step_leaves_and_the_source_a_later_step_hides_with_it_are_held(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("plan", "execute"))
    project.write("scratch/.gitignore", "*\n")  # the user's own: what it hides from before is theirs
    project.write("scratch/mine.py", "print('mine')\n")
    project.rules({"plan": {"write": {"tests/.gitignore": ".gitignore\nconftest.py\n", "notes/plan.md": "plan\n"}},
                   "execute": {"write": {"tests/conftest.py": CONFTEST, "notes/done.md": "done\n"}}})
    project.new("t")
    project.env["SPECD_STEPS"] = "1"  # the plan step alone: the rule is older than the next run's step
    first = project.run("t")
    assert first.returncode == 0, first.stdout + first.stderr
    del project.env["SPECD_STEPS"]
    out = _ran(project, 3)
    assert ("step 'execute' hid a file from git: tests/conftest.py (hidden by tests/.gitignore, a rule git "
            "ignores as well)") in out
    assert "mine.py" not in out


def test_a_rule_the_commit_shows_is_committed_and_the_source_it_keeps_out_is_said(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute",))
    project.rules({"execute": {"write": {"tests/.gitignore": "evil/\n", "tests/evil/conftest.py": CONFTEST}}})
    project.new("t")
    out = _ran(project, 0)
    assert ("execute changed tests/.gitignore, whose rules keep source it made out of every commit and review: "
            "tests/evil/conftest.py") in out
    assert "tests/.gitignore" in {f for _, files in project.commits() for f in files}  # the rule: in the review


def test_tools_own_rules_hold_nothing_and_source_the_project_ignores_is_said(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute",))
    project.ignore("local_settings.py\n")
    project.rules({"execute": {"write": {
        ".pytest_cache/.gitignore": "# Created by pytest automatically.\n*\n",
        ".pytest_cache/v/cache/lastfailed": "{{}}\n",
        "dist/.gitignore": "*\n", "dist/app-1.0-py3-none-any.whl": "wheel\n",  # uv build
        "env2/.gitignore": "*\n", "env2/pyvenv.cfg": "home = /usr/bin\n",  # uv venv, virtualenv
        "env2/lib/python3.11/site-packages/mod.py": "x = 1\n", "env2/lib/python3.11/site-packages/x.pth": "mod\n",
        "local_settings.py": "DEBUG = True\n"}}})
    project.new("t")
    out = _ran(project, 0)
    assert "hid" not in out
    assert ("execute made or changed local_settings.py, source that git ignores by the project's own rules, so no "
            "commit or review shows it") in out


def test_what_a_rule_hides_is_asked_of_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("__pycache__/\n*.log\n")
    files = {"web/.gitignore": ".gitignore\nsrc/\nold.log\n", "web/src/a.test.js": "", "web/src/deep/b.go": "",
             "web/old.log": "", "web/__pycache__/x.py": "", "other/.gitignore": "*\n", "other/run.sh": "",
             "env/.gitignore": "*\n", "env/pyvenv.cfg": "", "env/lib/site.py": "", "env/lib/app.test.js": "",
             "kept/.gitignore": "*.tmp\n", "kept/x.py.tmp": ""}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    repo = Repo.open(tmp_path)
    assert repo is not None
    listed: list[str] = []
    tree.take(repo, ".", ignored=listed)
    found = hidden.look(tmp_path, listed, 0, [])[0]
    assert found == {"web/src/a.test.js": "web/.gitignore", "web/src/deep/b.go": "web/.gitignore",
                     "other/run.sh": "other/.gitignore", "env/lib/app.test.js": "env/.gitignore"}
    # web/__pycache__/x.py: hidden by the project's own rule; env/lib/site.py: Python in an environment;
    # kept/.gitignore is not ignored itself (git shows it, so the commit takes it)
    newest = max((tmp_path / name).lstat().st_ctime_ns for name in files if name.endswith(".gitignore"))
    assert hidden.look(tmp_path, listed, newest + 1, [])[0] == {}  # no rule made since


def test_a_flood_of_hidden_files_is_named_by_its_rules_folder(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    (tmp_path / "src").mkdir()
    (tmp_path / "src/.gitignore").write_text(".gitignore\ngen_*.py\n")
    for i in range(hidden.MOST + 1):
        (tmp_path / f"src/gen_{i}.py").write_text("")
    repo = Repo.open(tmp_path)
    assert repo is not None
    listed: list[str] = []
    tree.take(repo, ".", ignored=listed)
    assert hidden.look(tmp_path, listed, 0, [])[0] == {"src/": "src/.gitignore"}
    (tmp_path / "src/gen_0.py").unlink()
    assert len(hidden.look(tmp_path, listed, 0, [])[0]) == hidden.MOST  # the listing is git's from before: one is gone


def test_a_file_name_that_is_not_utf8_is_committed_as_its_bytes_and_can_be_held(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute", "review"))
    # "\udcff": the byte 0xff of a name, as Python carries it (what the agent's open() makes of it)
    project.rules({"execute": {"write": {"notes-\udcff.md": "x\n"}}})
    project.new("t")
    out = _ran(project, 0)  # once a traceback: git's listing of the name could not be decoded
    assert "COMPLETE" in out
    names = subprocess.run(["git", "log", "--name-only", "-z", "--format="], cwd=project.root, capture_output=True,
                           check=True).stdout.split(b"\0")
    assert b"notes-\xff.md" in names
    assert project.git("status", "--porcelain") == ""
    project.new("u")
    project.rules({"execute": {"write": {"tests/.gitignore": ".gitignore\n*.py\n", "tests/x\udcff.py": CONFTEST}}})
    project.env["SPECD_STEPS"] = "1"
    held = project.specd("continue", "u", "--auto", "--agent", project.agent_spec())
    assert held.returncode == 3, held.stdout + held.stderr
    assert "tests/x\\udcff.py" in held.stdout + held.stderr


def test_a_held_env_is_kept_for_the_page_as_its_keys_with_only_what_runs_code_in_view(tmp_path: Path) -> None:
    """A task on Temporal keeps its held files on its worker: the run state keeps the start of each for the page,
    and kept nothing of a `.env`, so a person on a phone approved an `LD_PRELOAD` no one could see. Now its keys,
    with only a program's path or options in view; every other value masked, a short one too (redaction leaves
    values under 8 characters), and comments left out."""
    env = tmp_path / ".env"
    env.write_text("# the staging box: root / hunter2\nLD_PRELOAD=./build/libfast.so\nexport NODE_OPTIONS='--require "
                   "./hook.js'\nDB_PASS=s3cr3t\nREGION_NOTE=plain-value-1234\nEDITOR=sk-ant-api03-" + "x" * 40 + "\n",
                   encoding="utf-8")
    assert hidden.excerpt(env).splitlines() == [
        "# each value masked but a program's path or options",
        "LD_PRELOAD=./build/libfast.so", "NODE_OPTIONS=--require ./hook.js", "DB_PASS=[REDACTED]",
        "REGION_NOTE=[REDACTED]", "EDITOR=[REDACTED]"]
    (tmp_path / "key.env").symlink_to(env)
    assert hidden.excerpt(tmp_path / "key.env") == ""  # a link: nothing of what it points at
    (tmp_path / ".npmrc").write_text("//registry.npmjs.org/:_authToken=npm_abc\n", encoding="utf-8")
    assert hidden.excerpt(tmp_path / ".npmrc") == ""
