"""A step's commit as a person reviews it: text the tree's own attributes would show as binary is shown as text.

A step may add ``*.py -diff`` (or ``binary``) to a ``.gitattributes``: the line is in its commit, but from then on
`git show` and `git diff` print "Binary files a/app.py and b/app.py differ" for every change to a Python file, and
the page's review of each step shows no code at all. git 2.39 cannot be told to read no attributes for one command
(``--attr-source`` came in 2.40), so each file a commit shows as binary is looked at the way git does without
attributes (a NUL byte in its first 8,000 bytes, before and after): one that is text is shown again as text, with
a line naming why.
"""

from __future__ import annotations

import subprocess

from specd.git.repo import NO_HOOKS, Repo, git_env

SNIFF = 8000  # the bytes git looks at for a NUL to call a file binary
MOST = 20  # files shown again as text in one commit


def review(repo: Repo, commit: str) -> str:
    """`git show --stat --patch` of ``commit``, each text file the attributes made binary shown as text."""
    text = repo.run("show", "--stat", "--patch", "--no-color", "--no-ext-diff", commit)
    if "Binary files " not in text:
        return text
    fields = repo.run("show", "--numstat", "-z", "--no-renames", "--format=", commit).split("\0")
    binary = [field.split("\t", 2)[2] for field in fields if field.startswith("-\t-\t")]
    hidden = [path for path in binary[:MOST] if _text(repo, f"{commit}^", path) and _text(repo, commit, path)]
    for path in hidden:
        text += (f"\n{path}: shown as binary above because .gitattributes says so (-diff or binary), but it is "
                 f"text; here it is as text:\n")
        text += repo.run("show", "--text", "--no-color", "--no-ext-diff", "--format=", commit, "--", path)
    return text


def _text(repo: Repo, commit: str, path: str) -> bool:
    """Whether ``path`` at ``commit`` is text by git's own test (absent counts as text: a file added or removed)."""
    done = subprocess.run(["git", *NO_HOOKS, "cat-file", "blob", f"{commit}:{path}"], cwd=repo.top,
                          capture_output=True, check=False, env=git_env())
    return done.returncode != 0 or b"\0" not in done.stdout[:SNIFF]
