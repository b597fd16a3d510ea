"""`specd land` and `specd run --land`: a finished task's branch comes back as one merge commit, or nothing."""

from __future__ import annotations

from pathlib import Path

from executor_harness import Repo


def run(repo: Repo, *args: str) -> None:
    done = repo.specd("run", *args, "--auto", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr


def test_land_merges_the_branch_and_removes_the_worktree(repo: Repo, tmp_path: Path) -> None:
    repo.env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    repo.new("a")
    run(repo, "a")
    builds = tmp_path / "home" / ".cache" / "specd" / "pycache"
    marks = [mark for mark in builds.glob("*.tree") if mark.read_text() == str(repo.tree("a").resolve())]
    assert len(marks) == 1
    assert marks[0].with_suffix("").is_dir()
    repo.write("notes.txt", "my own edit, elsewhere\n")  # a dirty path the merge does not touch
    landed = repo.specd("land", "a")
    assert landed.returncode == 0, landed.stderr
    assert "specd/a merged into main" in landed.stdout
    assert repo.git("log", "-1", "--format=%P %s").count(" ") >= 2  # two parents: a merge commit
    assert (repo.root / "out-a-s3.txt").read_text() == "a s3\n"
    assert not repo.tree("a").exists()
    assert not marks[0].exists()
    assert not marks[0].with_suffix("").exists()
    assert repo.git("branch", "--list", "specd/a").strip()
    assert repo.git("status", "--porcelain") == "?? notes.txt\n"
    status = repo.specd("status", "a")  # the landed task folder in the user's tree says where it stands
    assert status.returncode == 0
    assert "COMPLETE" in status.stdout


def test_land_refuses_a_dirty_path_it_would_touch_and_changes_nothing(repo: Repo) -> None:
    repo.new("a")
    run(repo, "a")
    repo.write("out-a-s1.txt", "the user's own file\n")
    before = repo.snapshot()
    refused = repo.specd("land", "a")
    assert refused.returncode == 2
    assert "out-a-s1.txt" in refused.stderr
    assert "commit or stash" in refused.stderr
    assert repo.snapshot() == before
    assert repo.tree("a").exists()


def test_land_refuses_a_conflicting_merge(repo: Repo) -> None:
    repo.new("a")
    (repo.dir / "conflict-a").write_text("")
    run(repo, "a")
    repo.write("shared.txt", "main's own line\n")
    repo.git("add", "shared.txt")
    repo.git("commit", "-q", "-m", "main changes shared.txt")
    before = repo.snapshot()
    refused = repo.specd("land", "a")
    assert refused.returncode == 2
    assert "would conflict in shared.txt" in refused.stderr
    assert repo.snapshot() == before


def test_land_refuses_an_unfinished_task(repo: Repo) -> None:
    repo = Repo(repo.root.parent / "paused", pause="s2")
    repo.new("p")
    waiting = repo.specd("run", "p", "--semi-auto", "--agent", repo.agent())
    assert waiting.returncode == 3
    refused = repo.specd("land", "p")
    assert refused.returncode == 2
    assert "WAITING_FOR_HUMAN, not COMPLETE" in refused.stderr


def test_run_land_lands_each_completed_task(repo: Repo) -> None:
    repo.new("a")
    repo.new("b")
    done = repo.specd("run", "--all", "--auto", "--land", "--agent", repo.agent())
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo.root / "out-a-s3.txt").exists()
    assert (repo.root / "out-b-s3.txt").exists()
    assert repo.git("status", "--porcelain") == ""


def test_land_json_is_one_envelope_and_a_refusal_is_one_too(repo: Repo) -> None:
    import json

    from jsonschema import Draft202012Validator

    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "envelope.schema.json").read_text())
    repo.new("a")
    run(repo, "a")
    landed = repo.specd("land", "a", "--json")
    assert landed.returncode == 0, landed.stderr
    data = json.loads(landed.stdout)
    assert not list(Draft202012Validator(schema).iter_errors(data))
    assert (data["ok"], data["task"], data["landed"]) == (True, "a", "specd/a")
    assert any("merged into main" in line for line in data["said"])
    again = repo.specd("land", "nope", "--json")
    refused = json.loads(again.stdout)
    assert again.returncode == 2
    assert not list(Draft202012Validator(schema).iter_errors(refused))
    assert refused["ok"] is False
    assert refused["error"]["code"] == 2


def run_agent(repo: Repo, task: str, code: str) -> None:
    """Run ``task`` with an agent that is a few lines of Python, inline: no script file to bind into the jail."""
    import shlex
    import sys

    repo.new(task)
    agent = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote('import sys; sys.stdin.read()' + chr(10) + code)}"
    done = repo.specd("run", task, "--auto", "--agent", agent)
    assert done.returncode == 0, done.stdout + done.stderr


def ignore(repo: Repo, *patterns: str) -> None:
    repo.write(".gitignore", "".join(f"{p}\n" for p in patterns))
    repo.git("add", ".gitignore")
    repo.git("commit", "-q", "-m", "the user ignores their own files")


def test_land_never_overwrites_a_file_git_ignores(repo: Repo) -> None:
    # The agent takes local.cfg out of .gitignore and commits its own; the user's is ignored in their tree.
    ignore(repo, "local.cfg")
    run_agent(repo, "a", "from pathlib import Path\nPath('.gitignore').write_text('')\n"
                         "Path('local.cfg').write_text('the agent\\'s settings\\n')")
    assert repo.has("a", "local.cfg")
    mine = b"password=hunter2 # the user's own, never committed\n"
    (repo.root / "local.cfg").write_bytes(mine)
    before = repo.snapshot()

    refused = repo.specd("land", "a")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "local.cfg (ignored by git)" in refused.stderr
    assert "out of the way" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert (repo.root / "local.cfg").read_bytes() == mine
    assert repo.snapshot() == before  # HEAD, index, status: no merge commit, nothing staged
    assert repo.tree("a").exists()
    # The fix the message names works: moved out of the way, the file survives and the task lands.
    (repo.root / "local.cfg").rename(repo.root / "local.cfg.mine")
    landed = repo.specd("land", "a")
    assert landed.returncode == 0, landed.stderr
    assert (repo.root / "local.cfg.mine").read_bytes() == mine
    assert (repo.root / "local.cfg").read_text() == "the agent's settings\n"


def test_land_never_deletes_an_ignored_folder_where_the_branch_puts_a_file(repo: Repo) -> None:
    ignore(repo, "build/")  # only a folder matches: the agent's file named build is not ignored
    run_agent(repo, "a", "from pathlib import Path\nPath('build').write_text('#!/bin/sh\\n')")
    repo.write("build/cache.bin", "hours of compiling\n")
    before = repo.snapshot()

    refused = repo.specd("land", "a")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "build/ (a folder the merge replaces with a file; it holds build/cache.bin" in refused.stderr
    assert (repo.root / "build" / "cache.bin").read_text() == "hours of compiling\n"
    assert repo.snapshot() == before


def test_land_never_deletes_an_ignored_file_where_the_branch_needs_a_folder(repo: Repo) -> None:
    ignore(repo, "cache")
    run_agent(repo, "a", "from pathlib import Path\nPath('.gitignore').write_text('')\n"
                         "Path('cache').mkdir(exist_ok=True)\nPath('cache/index.txt').write_text('x\\n')")
    repo.write("cache", "the user's cache file\n")
    before = repo.snapshot()

    refused = repo.specd("land", "a")

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "cache (ignored by git; the merge needs a folder there)" in refused.stderr
    assert (repo.root / "cache").read_text() == "the user's cache file\n"
    assert repo.snapshot() == before


def merges(repo: Repo) -> list[str]:
    return repo.git("log", "--merges", "--format=%s").splitlines()


def test_landing_is_explicit_a_task_lands_alone_or_with_its_deps_named_and_twice_is_a_no_op(repo: Repo) -> None:
    repo.new("a")
    repo.new("e", "a")
    run(repo, "e")  # runs a first, then e on a branch holding a's work
    refused = repo.specd("land", "e")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "needs a, whose work is not landed yet" in refused.stderr
    assert "specd land e --with-deps" in refused.stderr
    assert merges(repo) == []  # nothing of a landed with it
    landed = repo.specd("land", "e", "--with-deps")
    assert landed.returncode == 0, landed.stderr
    assert merges(repo) == ["Merge specd/e: land task e", "Merge specd/a: land task a"]  # a first, then e
    assert not repo.tree("a").exists()
    assert not repo.tree("e").exists()
    again = repo.specd("land", "e")
    assert again.returncode == 0, again.stderr
    assert "already landed" in again.stdout
    assert len(merges(repo)) == 2  # no new merge


def test_an_unrelated_staged_file_does_not_stop_a_land_and_stays_staged(repo: Repo) -> None:
    repo.new("a")
    run(repo, "a")
    repo.write("README.md", "# mine, edited and staged\n")
    repo.git("add", "README.md")
    landed = repo.specd("land", "a")
    assert landed.returncode == 0, landed.stdout + landed.stderr  # `git merge` would refuse here
    assert (repo.root / "out-a-s3.txt").read_text() == "a s3\n"
    assert repo.git("diff", "--cached", "--name-only").split() == ["README.md"]  # still staged, still yours
    assert (repo.root / "README.md").read_text() == "# mine, edited and staged\n"
    assert repo.git("log", "-1", "--format=%s") == "Merge specd/a: land task a\n"
