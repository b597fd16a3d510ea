"""The tree carried from one of specd's commits to the next (specd/git/carry.py), on a real repository:
used only while nothing besides specd can have changed it, and the task folder's new files found without git."""

from __future__ import annotations

from pathlib import Path

import pytest
from git_harness import committed
from git_harness import plain_git as git

from specd.git.carry import Carry
from specd.git.repo import Repo
from specd.git.tree import Entry
from specd.tasks.setup import GITIGNORE

FOLDER = ".specd/tasks/t"
DIRTY = {"notes.txt": Entry("??", "abc")}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return committed(tmp_path, {".specd/.gitignore": GITIGNORE, f"{FOLDER}/state.json": "{}"})


def carry(repo: Repo) -> Carry:
    kept = Carry(repo, repo.top / FOLDER, FOLDER, ".specd")
    kept.keep(DIRTY)
    return kept


def test_the_tree_is_carried_while_only_specd_wrote(repo: Repo) -> None:
    kept = carry(repo)
    (repo.top / FOLDER / "state.json").write_text('{"step": 2}', encoding="utf-8")  # specd's own save
    assert kept.take(list) == DIRTY
    assert kept.take(list) is None  # used once: the next commit keeps it again


def test_a_commit_by_anyone_else_drops_it(repo: Repo) -> None:
    kept = carry(repo)
    (repo.top / "other.txt").write_text("another run's work\n", encoding="utf-8")
    git(repo.top, "add", "other.txt")
    git(repo.top, "commit", "-q", "-m", "another run's step")
    assert kept.take(list) is None


def test_another_runs_open_step_drops_it(repo: Repo) -> None:
    kept = carry(repo)
    assert kept.take(lambda: [{"<open>": "<open>"}]) is None


def test_a_packed_branch_cannot_be_read_as_a_file_so_git_is_asked(repo: Repo) -> None:
    git(repo.top, "pack-refs", "--all")
    kept = carry(repo)
    assert kept.take(list) is None


def test_new_files_are_those_git_neither_knew_nor_ignores(repo: Repo) -> None:
    kept = carry(repo)
    task = repo.top / FOLDER
    (task / ".pipeline-state.history").mkdir()
    (task / ".pipeline-state.history/00000000.jsonl").write_text("{}\n", encoding="utf-8")  # a sealed segment
    (task / ".pipeline-state.md").write_text("# run\n", encoding="utf-8")
    (task / ".heartbeat").write_text("1", encoding="utf-8")  # git-ignored (.specd/.gitignore)
    (task / "events.jsonl").write_text("{}\n", encoding="utf-8")  # git-ignored
    (task / "transcripts").mkdir()
    (task / "transcripts/discuss.jsonl").write_text("{}\n", encoding="utf-8")  # never even listed
    files = kept.files()
    assert files is not None
    assert f"{FOLDER}/transcripts/discuss.jsonl" not in files
    assert kept.new_files(files) == [f"{FOLDER}/.pipeline-state.history/00000000.jsonl",
                                     f"{FOLDER}/.pipeline-state.md"]


def test_a_nested_repository_in_the_task_folder_means_git_is_asked(repo: Repo) -> None:
    kept = carry(repo)
    (repo.top / FOLDER / "vendored/.git").mkdir(parents=True)
    assert kept.files() is None
