"""Test files a step leaves in a folder the project ignores whole are held (``specd/git/collected.py``).

git names such a folder once (`!! tmp/`), so no commit, `git status` or review shows a `tmp/cache/conftest.py`, and a
bare `pytest` recurses into `tmp/` and imports it, as you, outside any jail. Real `specd continue` runs with a real
command agent in the real jail."""

from __future__ import annotations

import os
import time
from pathlib import Path

from git_harness import GitProject

from specd.git import collected

CONFTEST = "import os\nos.system('id > /tmp/ran-as-you')\n"


def test_a_conftest_and_a_test_file_in_a_folder_the_project_ignores_hold_the_run(tmp_path: Path) -> None:
    project = GitProject(tmp_path, steps=("execute", "review"))
    project.write("src/app.test.ts", "test('app', () => {});\n")  # the project's own test, which a build compiles
    project.git("add", "src")
    project.git("commit", "-q", "-m", "a test")
    project.ignore("tmp/\nout/\nbuild/\n")
    project.rules({"execute": {"write": {
        "tmp/cache/conftest.py": CONFTEST, "out/pkg/test_app.py": CONFTEST,
        "out/web/app.test.js": "// compiled from the project's own src/app.test.ts\n",  # not held: see collected.py
        "out/web/evil.test.js": "require('child_process').execSync('id')\n",
        "tmp/cache/notes.py": "x = 1\n",  # source, not collected: a cache's, not held
        "build/lib/conftest.py": CONFTEST,  # pytest passes build/ by
        "notes/work.md": "the visible work\n"}}})
    out = project.held("t")  # before: COMPLETE, and not a line about tmp/ or out/
    assert ("step 'execute' hid 3 files from git: out/pkg/test_app.py, out/web/evil.test.js, tmp/cache/conftest.py "
            "(in a folder the "
            "project ignores whole, where your next test run collects it)") in out
    assert "delete what you did not ask for, then" in out  # the project's rule is its own: not to be deleted
    assert project.git("status", "--porcelain").strip() == ""  # git shows nothing of them
    approved = project.specd("approve", "t")
    assert approved.returncode == 0, approved.stderr
    done = project.run("t")
    assert done.returncode == 0, done.stdout + done.stderr  # approved as they are: the next step is not held


def test_what_is_looked_through_and_what_is_passed_by(tmp_path: Path) -> None:
    files = ["tmp/a/conftest.py", "tmp/a/test_mod.py", "tmp/a/mod_test.go", "tmp/a/x.spec.ts", "tmp/a/helper.py",
             "tmp/.hidden/conftest.py", "tmp/env/pyvenv.cfg", "tmp/env/lib/test_site.py", "tmp/node_modules/x.test.js",
             "tmp/dist/conftest.py", "tmp/pkg.egg-info/test_x.py", "logs/old/test_old.py", ".cache/conftest.py",
             "venv/conftest.py"]
    (tmp_path / "opened").write_bytes(b"")  # the step's start, by the files' own clock
    since = (tmp_path / "opened").lstat().st_ctime_ns
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    old = time.time_ns() - 3_600_000_000_000
    os.utime(tmp_path / "logs/old/test_old.py", ns=(old, old))
    found = collected.found(tmp_path, ["tmp/", "logs/", ".cache/", "venv/", "tmp/a/helper.py"], since)
    assert found == {"tmp/a/conftest.py": "collected", "tmp/a/test_mod.py": "collected",
                     "tmp/a/mod_test.go": "collected", "tmp/a/x.spec.ts": "collected",
                     "logs/old/test_old.py": "collected"}  # its change time is now: a time set back is still seen
    assert collected.collected("app.test.js", frozenset({"app.test.ts"})) is False  # a build's, from the project's
    assert collected.collected("app.test.js", frozenset({"other.ts"})) is True
    assert collected.collected("app.test.js", None) is False  # the project's names unknown: not held
    later = max(p.lstat().st_ctime_ns for p in tmp_path.rglob("*")) + 1
    assert collected.found(tmp_path, ["tmp/"], later) == {}  # nothing made since


def test_a_folder_past_the_look_is_looked_through_only_so_far(tmp_path: Path) -> None:
    (tmp_path / "big").mkdir()
    for i in range(collected.LOOK + 10):
        (tmp_path / "big" / f"f{i}").write_bytes(b"")
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "conftest.py").write_text("x\n")
    assert collected.found(tmp_path, ["small/", "big/"], 0) == {"small/conftest.py": "collected"}
    assert collected.found(tmp_path, ["big/", "small/"], 0) == {}  # the budget went on big/ (docs/security.md)
