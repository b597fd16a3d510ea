"""Path lists handed to git on stdin (specd/git/paths.py), on a real repository: any name, any count, and a
commit of only some paths leaves what the user staged alone, below and above ``paths.BIG``."""

from __future__ import annotations

from pathlib import Path

import pytest
from git_harness import plain_git as git

from specd.git import paths
from specd.git.repo import Repo

ODD = ["new\nline.txt", "-dash.txt", "star*.txt", ":(glob)magic.txt", 'quote".txt', "sp ace.txt"]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    git(tmp_path, "init", "-q")
    for name in ("tracked.txt", "gone.txt", "starX.txt"):
        (tmp_path / name).write_text("first\n", encoding="utf-8")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "first")
    (tmp_path / "staged.txt").write_text("the user's, staged\n", encoding="utf-8")
    git(tmp_path, "add", "staged.txt")
    (tmp_path / "starX.txt").write_text("the user's edit\n", encoding="utf-8")  # a glob would take it
    found = Repo.open(tmp_path)
    assert found is not None
    return found


def files(root: Path, count: int) -> list[str]:
    made = ODD + [f"many/{n // 100}/f{n}.txt" for n in range(count)]
    for name in made:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"{name}\n", encoding="utf-8")
    return made


def committed(repo: Repo) -> list[str]:
    return git(repo.top, "diff-tree", "-r", "-z", "--no-commit-id", "--name-only", "HEAD").split("\0")[:-1]


@pytest.mark.parametrize("count", [10, paths.BIG + 10])
def test_a_commit_of_only_some_paths_takes_them_whatever_their_names_and_nothing_else(repo: Repo,
                                                                                      count: int) -> None:
    new = files(repo.top, count)
    (repo.top / "tracked.txt").write_text("second\n", encoding="utf-8")
    (repo.top / "gone.txt").unlink()
    ours = [*new, "tracked.txt", "gone.txt"]

    paths.stage(repo, new)
    assert paths.commit(repo, "docs(t): a step\n\nits body", ours)

    assert sorted(committed(repo)) == sorted(ours)
    assert git(repo.top, "cat-file", "commit", "HEAD").endswith("\n\ndocs(t): a step\n\nits body\n")
    assert git(repo.top, "reflog", "-1", "--format=%gs") == "commit: docs(t): a step\n"
    # what the user staged or edited is as it was; what was committed is clean, in the index too
    assert git(repo.top, "status", "--porcelain", "-z").split("\0")[:-1] == ["A  staged.txt", " M starX.txt"]
    assert not paths.commit(repo, "docs(t): nothing new", [*new, "tracked.txt"])


@pytest.mark.parametrize("count", [10, paths.BIG + 10])
def test_unstaging_puts_back_only_the_given_paths(repo: Repo, count: int) -> None:
    new = files(repo.top, count)
    (repo.top / "tracked.txt").write_text("second\n", encoding="utf-8")
    paths.stage(repo, [*new, "tracked.txt"])

    paths.unstage(repo, [*new, "tracked.txt"])

    status = git(repo.top, "status", "--porcelain", "-z", "--untracked-files=all").split("\0")[:-1]
    assert sorted(status) == sorted(["A  staged.txt", " M starX.txt", " M tracked.txt",
                                     *(f"?? {name}" for name in new)])
