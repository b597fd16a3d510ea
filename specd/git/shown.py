"""A step's commit as a person reviews it: text the tree's own attributes would show as binary is shown as text.

A step may add ``*.py -diff`` (or ``binary``) to a ``.gitattributes``: the line is in its commit, but from then on
`git show` and `git diff` print "Binary files a/app.py and b/app.py differ" for every change to a Python file, and
the page's review of each step shows no code at all. git 2.39 cannot be told to read no attributes for one command
(``--attr-source`` came in 2.40), so each file a commit shows as binary is looked at the way git does without
attributes (a NUL byte in its first 8,000 bytes, before and after): one that is text is shown again as text, with
a line naming why.
"""

from __future__ import annotations

from pathlib import Path

from specd.git.repo import GitFailed, Repo, blob, git
from specd.system.ownfiles import read_regular

SNIFF = 8000  # the bytes git looks at for a NUL to call a file binary
MOST = 20  # files shown again as text in one commit


def review(repo: Repo, commit: str) -> str:
    """`git show --stat --patch` of ``commit``, each text file the attributes made binary shown as text."""
    text = repo.run("show", "--stat", "--patch", "--no-color", "--no-ext-diff", commit)
    if "Binary files " not in text:
        return text
    try:
        fields = repo.run("show", "--numstat", "-z", "--no-renames", "--format=", commit).split("\0")
        binary = [field.split("\t", 2)[2] for field in fields if field.startswith("-\t-\t")]
        for path in [p for p in binary[:MOST] if _text(repo.top, f"{commit}^", p) and _text(repo.top, commit, p)]:
            text += (f"\n{path}: shown as binary above because .gitattributes says so (-diff or binary), but it is "
                     f"text; here it is as text:\n")
            text += repo.run("show", "--text", "--no-color", "--no-ext-diff", "--format=", commit, "--", path)
    except (GitFailed, UnicodeDecodeError):
        pass  # what git showed stands
    return text


def masked(top: Path, since: str) -> list[str]:
    """The files `git diff <since>` (against the work tree) shows as binary that are text on both sides: what a
    review step must read with ``--text``."""
    listed = git(top, "diff", "--numstat", "-z", "--no-renames", since).stdout
    binary = [field.split("\t", 2)[2] for field in listed.split("\0") if field.startswith("-\t-\t")]
    return [path for path in binary[:MOST] if _text(top, since, path) and _plain(top / path)]


def _plain(path: Path) -> bool:
    """Whether the work tree's ``path`` is text (a regular file only, never through a link: a FIFO would hang)."""
    try:
        return b"\0" not in read_regular(path, SNIFF, head=True)
    except OSError:
        return True


def _text(top: Path, commit: str, path: str) -> bool:
    """Whether ``path`` at ``commit`` is text by git's own test (absent counts as text: a file added or removed)."""
    data = blob(top, f"{commit}:{path}", SNIFF)
    return data is None or b"\0" not in data
