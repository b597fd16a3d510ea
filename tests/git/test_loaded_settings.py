"""A key file git ignores that a step makes and that sets what runs code holds the run (``specd/git/loaders.py``).

A ``.env`` is loaded into your next command by pipenv, uv, node --env-file or direnv, an ``.npmrc`` by your next npm;
neither reaches a commit or a review, so an ``LD_PRELOAD`` or a ``node-options`` line there ran what the model chose
as you, with one warning line among others. Real `specd continue` runs with a real command agent in the real jail."""

from __future__ import annotations

import json
from pathlib import Path

from git_harness import GitProject

from specd.git import hidden, loaders


def _waiting(project: GitProject) -> dict[str, object]:
    state = json.loads((project.root / ".specd/tasks/t/.pipeline-state.json").read_text(encoding="utf-8"))
    return dict(state["waiting"])


def test_a_new_env_or_npmrc_that_sets_what_runs_code_holds_the_run_until_a_person_answers(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute", "review"))
    project.ignore(".env\n")
    project.rules({"execute": {"write": {
        ".env": "DATABASE_URL=postgres://db/app\nexport LD_PRELOAD=/tmp/x.so\n",  # ignored by the project
        "web/.env.local": "NODE_OPTIONS='--require ./x.js'\n",  # untracked: specd never adds it
        ".npmrc": "; npm\nnode-options = --require ./y.js\n",
        "api/.env": "API_URL=http://localhost\n",  # values only: said, as before, not held
        "notes/work.md": "the visible work\n"}}})
    out = project.held("t")  # before: COMPLETE, with a warning line about .env only
    assert ("step 'execute' hid 3 files from git: .env, .npmrc, web/.env.local (settings your next command here "
            "loads, which git ignores, setting LD_PRELOAD; settings your next command here loads, which git ignores, "
            "setting NODE_OPTIONS; settings your next command here loads, which git ignores, setting node-options)"
            ) in out
    assert "pipenv, uv, node --env-file, direnv or npm load such settings into your next command" in out
    assert "Look at them and delete what you did not ask for, then `specd approve t`" in out  # no rule hides them
    assert "execute made or changed api/.env, which git ignores and specd never commits" in out
    waiting = _waiting(project)
    assert waiting["kind"] == "hidden"
    assert [f["path"] for f in waiting["files"]] == [".env", ".npmrc", "web/.env.local"]  # type: ignore[union-attr]
    # What the page shows of each where the file is not (a task on Temporal): a .env's keys, only what runs code in
    # view; nothing of another key file
    seen = {f["path"]: f.get("seen", "") for f in waiting["files"]}  # type: ignore[union-attr]
    assert seen[".npmrc"] == ""
    assert seen[".env"].splitlines()[1:] == ["DATABASE_URL=[REDACTED]", "LD_PRELOAD=/tmp/x.so"]
    assert seen["web/.env.local"].splitlines()[1:] == ["NODE_OPTIONS=--require ./x.js"]
    assert "postgres://db/app" not in json.dumps(waiting)
    assert "notes/work.md" in {f for _, files in project.commits() for f in files}
    assert project.run("t").returncode == 3  # `continue` alone keeps waiting
    approved = project.specd("approve", "t")
    assert approved.returncode == 0, approved.stderr
    done = project.run("t")
    assert done.returncode == 0, done.stdout + done.stderr  # approved as they are: not held again by the next step
    assert (project.root / ".env").read_text(encoding="utf-8").endswith("LD_PRELOAD=/tmp/x.so\n")  # kept


def test_a_link_made_for_a_key_file_is_held_since_what_it_loads_cannot_be_told(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute",))
    project.rules({"execute": {"run": [["ln", "-s", "/nowhere/at/all", ".env"]]}})
    out = project.held("t")
    assert ("hid a file from git: .env (settings your next command here loads, which git ignores, that cannot be "
            "read (a link elsewhere, or not a file))") in out


def test_which_settings_run_code(tmp_path: Path) -> None:
    cases = {
        ".env": ("FOO=1\n# LD_PRELOAD=/x.so\n  export PYTHONSTARTUP = ./s.py\n", "PYTHONSTARTUP"),
        ".env.production": ("GIT_CONFIG_KEY_0=core.fsmonitor\n", "GIT_CONFIG_KEY_0"),
        ".env.test": ("npm_config_script_shell=./sh\n", "npm_config_script_shell"),
        ".env.dev": ("SECRET_KEY=abc\nDEBUG=1\nPATHNAME=/x\n", None),  # PATHNAME is not PATH
        ".npmrc": ("//registry.npmjs.org/:_authToken=abc\n@acme:registry=https://npm.evil.example/\n",
                   "@acme:registry"),
        "a/.npmrc": ("save-exact=true\nfund=false\n", None),
        # the value decides: a bare program name, a warnings filter naming no module, node options loading no code
        "b/.env": ("BROWSER=none\nENV=production\nEDITOR='vim'\nPYTHONWARNINGS=ignore::DeprecationWarning\n"
                   "PYTHONBREAKPOINT=0\nNODE_OPTIONS=\"--max-old-space-size=4096 --enable-source-maps\"  # builds\n",
                   None),
        "c/.env": ("BROWSER=scripts/open.js\n", "BROWSER"),  # create-react-app runs a .js it names
        "d/.env": ("ENV=.profile\n", "ENV"),
        "e/.env": ("PYTHONWARNINGS=ignore::evil.Warning\n", "PYTHONWARNINGS"),  # imports evil
        "f/.env": ("NODE_OPTIONS=--max-old-space-size=4096 -r ./x.js\n", "NODE_OPTIONS"),
        "g/.npmrc": ("editor=vim\nbrowser=./x.sh\n", "browser"),
    }
    for name, (text, _) in cases.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / ".env.example").write_text("LD_PRELOAD=\n", encoding="utf-8")  # a template: no tool loads it
    (tmp_path / "x.env").write_text("LD_PRELOAD=/x.so\n", encoding="utf-8")  # not a .env by name
    found = loaders.found(tmp_path, [*cases, ".env.example", "x.env", "node_modules/"], [], 0)
    assert found == {name: f"loads {key}" for name, (_, key) in cases.items() if key}
    assert loaders.found(tmp_path, [], [".env.production"], 0) == {".env.production": "loads GIT_CONFIG_KEY_0"}
    later = max(p.lstat().st_ctime_ns for p in tmp_path.rglob("*")) + 1
    assert loaders.found(tmp_path, list(cases), [], later) == {}  # nothing made since
    assert hidden.why("loads LD_PRELOAD") == ("settings your next command here loads, which git ignores, setting "
                                              "LD_PRELOAD")


def test_a_rejected_file_the_step_leaves_as_it_was_is_held_again(tmp_path: Path) -> None:
    """`reject` runs the step again; before, a step that left the rejected .env alone passed, and the run went on
    to COMPLETE with it in the tree."""
    project = GitProject(tmp_path, steps=("execute", "review"))
    project.ignore(".env\n")
    project.rules({"execute": {"write": {".env": "LD_PRELOAD=/tmp/x.so\n", "notes/a.md": "a\n"}}})
    project.held("t")
    rejected = project.specd("reject", "t", "--note", "no .env, please")
    assert rejected.returncode == 0, rejected.stderr
    project.rules({"execute": {"write": {"notes/a.md": "a, again\n"}}})  # this time it leaves .env as it was
    again = project.run("t")
    out = " ".join((again.stdout + again.stderr).split())
    assert again.returncode == 3, out  # before: COMPLETE
    assert ("hid a file from git: .env (settings your next command here loads, which git ignores, setting "
            "LD_PRELOAD, rejected and left as it was)") in out
    assert "what you rejected runs as its first hold said, since the step ran again and left it" in out
    (project.root / ".env").unlink()  # the person takes it out
    approved = project.specd("approve", "t")
    assert approved.returncode == 0, approved.stderr
    done = project.run("t")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (project.root / ".env").exists()
