"""Lists of paths handed to git: always on stdin, NUL-separated, never as argv.

argv holds only so many (a step that wrote 200,000 files failed with "Argument list too long" and its
commit was lost), and a file name may hold anything but NUL. Past a few thousand paths git's pathspec
matching is slow as well: each index entry is matched against every pathspec, so `git add` or
`git commit --only` of 20,000 paths took 6 s and of 200,000 would take ten minutes. So staging goes
through `git update-index --stdin`, which reads plain names in linear time, and a big commit of only
some paths is made the way `git commit --only` makes it inside: from a temporary index holding HEAD
plus those paths.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from specd.git.repo import GitFailed, Repo, nul

BIG = 2_000  # above this many paths, `commit --only` costs seconds; below, it is one process instead of six
NOTHING = ("nothing to commit", "no changes added to commit", "nothing added to commit")  # LC_ALL=C: English
# No automatic maintenance after each commit (one more git process per commit); the user's own git commands
# still run it.
QUIET = ["-c", "maintenance.auto=false", "-c", "gc.auto=0"]


def stage(repo: Repo, paths: Collection[str]) -> None:
    """Put each path's work-tree content in the index (``git add -f``: the caller chose the paths, from
    `git status`, which lists no ignored file, or on purpose, as transcripts are)."""
    if paths:
        repo.run("update-index", "--add", "-z", "--stdin", stdin=nul(paths))


def commit(repo: Repo, message: str, paths: Collection[str]) -> bool:
    """Commit the work-tree content of ``paths`` (deletions too) and nothing else the index holds, as
    ``git commit --only`` does; False when none of them differs from HEAD (nothing to commit)."""
    if not paths:
        return False  # `--only` with no path is an error; a commit of the whole index is never meant
    if len(paths) > BIG:
        return _commit_big(repo, message, paths)
    result = repo.run_paths(*QUIET, "commit", "-q", "--only", "-m", message, paths=paths, ok=(0, 1))
    if result.returncode == 0:
        return True
    if any(words in result.stdout for words in NOTHING):
        return False
    raise GitFailed([*QUIET, "commit", "--only"], result.stderr + result.stdout, len(paths))


def unstage(repo: Repo, paths: Collection[str]) -> None:
    """Set the index entries of ``paths`` back to HEAD (``git reset -- paths``: a path HEAD lacks leaves the
    index), with one read of what is staged and one write, whatever the number of paths."""
    wanted = set(paths)
    fields = repo.run("diff-index", "--cached", "-z", "--no-renames", _head_tree(repo, repo.head())).split("\0")
    # -z raw records: ":<HEAD mode> <index mode> <HEAD sha> <index sha> <status>", then the path; a path HEAD
    # lacks has mode 0 there, which --index-info reads as "remove it"
    entries = [f"{meta[1:].split()[0]} {meta.split()[2]}\t{path}"
               for meta, path in zip(fields[::2], fields[1::2], strict=False) if path in wanted]
    if entries:
        repo.run("update-index", "-z", "--index-info", stdin=nul(entries))


def _commit_big(repo: Repo, message: str, paths: Collection[str]) -> bool:
    head = repo.head()
    index = (repo.git_dir or repo.common_dir) / f"specd-commit-index-{os.getpid()}"
    own = {"GIT_INDEX_FILE": str(index)}
    try:
        repo.run("read-tree", head or "--empty", env=own)
        repo.run("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul(paths), env=own)
        tree = repo.run("write-tree", env=own).strip()
    finally:
        index.unlink(missing_ok=True)
    if tree == _head_tree(repo, head):
        return False
    # commit-tree reads no commit.gpgSign; `git commit` does, and a user who signs every commit gets this one
    # signed too
    signed = repo.run("config", "--type=bool", "commit.gpgSign", ok=(0, 1)).strip() == "true"
    made = repo.run(*QUIET, "commit-tree", tree, *(["-p", head] if head else []), *(["-S"] if signed else []),
                    "-m", message).strip()
    subject = message.split("\n", 1)[0]
    # The old value guards the update: a commit made meanwhile (by the user, say) fails this one, loudly.
    repo.run("update-ref", "-m", f"commit{'' if head else ' (initial)'}: {subject}", "HEAD", made, head or "")
    # The user's index now holds what was committed, as `commit --only` leaves it.
    repo.run("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul(paths))
    return True


def _head_tree(repo: Repo, head: str | None) -> str:
    """HEAD's tree, or the empty tree before the first commit (its id depends on the repository's hash)."""
    if head:
        return repo.run("rev-parse", f"{head}^{{tree}}").strip()
    return repo.run("hash-object", "-t", "tree", "--stdin", stdin="").strip()
