"""``specd/git/ignored.py``: what a step leaves where git does not look, on real files and git."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from specd.git import ignored, tree
from specd.git.repo import Repo
from specd.system import buildcaches


def _repo(root: Path) -> Repo:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / ".gitignore").write_text("__pycache__/\n*.py[cod]\n*.so\nbuild/\nnode_modules/\n")
    repo = Repo.open(root)
    assert repo is not None
    return repo


def _write(root: Path, path: str) -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"compiled")
    return target


def test_the_compiled_files_git_ignores_and_made_since_the_step_opened_go(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    listed: list[str] = []
    for path in ("pkg/__pycache__/mod.cpython-311.pyc", "helper.pyc", "build/lib/pytest.pyc", "node_modules/x.pyc",
                 "pkg/__pycache__/notes.txt"):
        _write(tmp_path, path)
    snapshot = tree.take(repo, ".", ignored=listed)
    assert ".gitignore" in snapshot
    assert "helper.pyc" not in snapshot  # the dirty paths are as before
    assert sorted(listed) == ["build/", "helper.pyc", "node_modules/", "pkg/__pycache__/"]
    newest = max(_ctime(path) for path in tmp_path.rglob("*.pyc"))
    assert ignored.sweep(tmp_path, listed, newest + ignored.SLACK_NS + 1) == []  # all made before the step
    removed = ignored.sweep(tmp_path, listed, 0)  # all made since
    assert sorted(removed) == ["helper.pyc", "pkg/__pycache__/mod.cpython-311.pyc"]
    assert not (tmp_path / "helper.pyc").exists()
    assert (tmp_path / "build/lib/pytest.pyc").exists()  # inside a folder git ignores whole: never walked
    assert (tmp_path / "node_modules/x.pyc").exists()
    assert (tmp_path / "pkg/__pycache__/notes.txt").exists()  # not a compiled file
    assert "2 compiled Python files" in ignored.said(removed, "execute (phase 1)")
    assert "while execute (phase 1) ran" in ignored.said(removed, "execute (phase 1)")


def test_an_extension_the_step_built_is_said_and_kept(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    ext = _write(tmp_path, "pytest.cpython-311-x86_64-linux-gnu.so")
    _write(tmp_path, "build/other.so")
    listed: list[str] = []
    tree.take(repo, ".", ignored=listed)
    lines = ignored.after(tmp_path, listed, _ctime(ext), "execute")
    assert len(lines) == 1
    assert lines[0].startswith("execute made or changed 1 compiled extension that git ignores "
                               "(pytest.cpython-311-x86_64-linux-gnu.so)")
    assert ext.exists()
    assert ignored.after(tmp_path, listed, _ctime(ext) + ignored.SLACK_NS + 1, "execute") == []
    assert ignored.after(tmp_path, listed, 0, "execute") == []  # when the step opened is not known


def test_a_link_named_like_a_compiled_file_goes_and_its_target_stays(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    target = _write(tmp_path, "elsewhere/real.bin")
    (tmp_path / "mod.pyc").symlink_to(target)
    listed: list[str] = []
    tree.take(repo, ".", ignored=listed)
    assert ignored.sweep(tmp_path, listed, _ctime(target) - ignored.SLACK_NS) == ["mod.pyc"]
    assert target.exists()


def test_a_trees_build_folder_unused_for_a_month_is_forgotten(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home)}
    stale = home / ".cache/specd/pycache/0123456789abcdef"
    (stale / "x").mkdir(parents=True)
    month = time.time() - (buildcaches.UNUSED_DAYS + 1) * 86400
    os.utime(stale, (month, month))
    buildcaches._prune.cache_clear()
    (tmp_path / "tree").mkdir()
    found = buildcaches.folders(tmp_path / "tree", env)
    assert [variable for variable, _, _ in found] == ["PYTHONPYCACHEPREFIX"]  # no Cargo.toml: no cargo folder
    folder = found[0][1]
    assert folder.is_dir()
    assert folder.parent == stale.parent
    assert not stale.exists()
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert folder.with_suffix(".tree").read_text() == str(tmp_path / "tree")
    gone = tmp_path / "worktree"  # a tree that was removed by hand: its folder goes at the next look over them
    gone.mkdir()
    old = buildcaches.folders(gone, env)[0][1]
    gone.rmdir()
    buildcaches._prune.cache_clear()
    assert buildcaches.folders(tmp_path / "tree", env)[0][1] == folder
    assert old.exists()  # looked over less than PRUNE_EVERY ago (by this test's first process): not yet
    stamp = folder.parent / buildcaches.STAMP
    hour = time.time() - buildcaches.PRUNE_EVERY - 1
    os.utime(stamp, (hour, hour))
    buildcaches._prune.cache_clear()
    assert buildcaches.folders(tmp_path / "tree", env)[0][1] == folder
    assert stamp.stat().st_mtime > hour  # looked over now, and said so for the next hour's processes
    assert not old.exists()
    assert not old.with_suffix(".tree").exists()
    assert folder.exists()
    (tmp_path / "tree" / "Cargo.toml").write_text("[package]\n")
    assert buildcaches.environment(buildcaches.folders(tmp_path / "tree", env), jailed=True) == {
        "PYTHONPYCACHEPREFIX": "/tmp/.specd-pycache", "CARGO_TARGET_DIR": "/tmp/.specd-cargo-target"}
    outside = buildcaches.environment(buildcaches.folders(tmp_path / "tree", env), jailed=False)
    assert outside["CARGO_TARGET_DIR"].startswith(str(home / ".cache/specd/cargo-target/"))


def test_the_build_folders_follow_xdg_cache_home_in_home_only(tmp_path: Path) -> None:
    """In HOME (which no jail shows); one elsewhere could be a folder a jail shows, and every tree's code with it."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "tree").mkdir()
    buildcaches._prune.cache_clear()
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / "var" / "cache")}
    found = buildcaches.folders(tmp_path / "tree", env)
    assert found[0][1].parent == home / "var" / "cache" / "specd" / "pycache"
    assert found[0][1].is_dir()
    assert not (home / ".cache").exists()
    buildcaches.forget(tmp_path / "tree", env)
    assert not found[0][1].exists()
    assert not found[0][1].with_suffix(".tree").exists()
    for elsewhere in ("xdg", str(tmp_path / "opt-cache"), str(home / ".local" / "lib" / "c"), str(home), "/"):
        got = buildcaches.folders(tmp_path / "tree", {"HOME": str(home), "XDG_CACHE_HOME": elsewhere})
        assert got[0][1].parent == home / ".cache" / "specd" / "pycache", elsewhere
    assert not (tmp_path / "opt-cache").exists()


def _ctime(path: Path) -> int:
    return path.lstat().st_ctime_ns


def test_a_key_file_git_ignores_that_the_step_made_is_said(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / ".gitignore").write_text(".env\n.npmrc\n")
    made = [_write(tmp_path, ".env"), _write(tmp_path, "web/.npmrc")]
    listed: list[str] = []
    tree.take(repo, ".", ignored=listed)
    lines = ignored.after(tmp_path, listed, min(_ctime(path) for path in made), "discuss")
    assert lines == [ignored.loaded([".env", "web/.npmrc"], "discuss")]
    assert lines[0].startswith("discuss made or changed .env, web/.npmrc, which git ignores and specd never commits")
    assert all(path.exists() for path in made)


def test_no_build_folder_makes_a_home_that_is_not_there(tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    assert buildcaches.folders(tmp_path / "tree", {"HOME": str(tmp_path / "nonexistent")}) == []
    assert not (tmp_path / "nonexistent").exists()


def test_a_folder_that_cannot_be_forgotten_is_left_quietly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    parent = home / ".cache/specd/pycache"
    (parent / "0123456789abcdef").mkdir(parents=True)
    (parent / "0123456789abcdef.tree").write_text(str(tmp_path / "gone"))
    parent.chmod(0o555)  # as another user's would be: nothing in it can be removed
    try:
        buildcaches._prune.cache_clear()
        if os.access(parent, os.W_OK):  # root writes anyway: the folder goes
            buildcaches._prune(parent)
            assert not (parent / "0123456789abcdef").exists()
        else:
            buildcaches._prune(parent)  # no PermissionError
            assert (parent / "0123456789abcdef").exists()
    finally:
        parent.chmod(0o755)
