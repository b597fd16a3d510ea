"""A task in its worktree follows the pipeline, hooks and workflows your HEAD holds, as a task in your tree does.

A worktree is branched from your HEAD once; a step of its pipeline disabled, moved or added there later, a hook
dropped into `.specd/hooks/` and committed, would otherwise never reach a task already placed (it ran the
disabled step, never the new one, and said nothing). So before each run of a task in its worktree, what your
HEAD changed of them since the task's branch forked from it is brought onto the task's branch as one commit
(`specd: pipeline, hooks and workflows from <your branch>`). The run then re-plans and says what changed, as it
does in your tree. When the task's branch changed one of the same files itself (someone edited its pipeline
there), nothing is brought, and the run's first line says so.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from specd.git.paths import QUIET
from specd.git.repo import git, identity

# What steers a run: the pipeline file (any of its names), the project's settings, hooks and workflows.
STEERING = (".specd/pipeline.json", ".specd/pipeline.yaml", ".specd/pipeline.yml", ".specd/config.json",
            ".specd/hooks", ".specd/workflows")


def follow_head(root: Path, tree: Path, branch: str) -> str | None:
    """Bring what ``root``'s HEAD changed of ``STEERING`` since ``tree``'s branch forked from it onto that branch;
    returns what was done or why not (a line to show), or None when there was nothing to bring."""
    head = _out(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    ours = _out(tree, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    base = _out(tree, "merge-base", head, ours) if head and ours else ""
    if not base or base == head:
        return None  # nothing new on your HEAD (or no common history to compare against)
    differ = set(_names(tree, ours, head))  # brought once already, a file no longer differs
    changed = [name for name in _names(tree, base, head) if name in differ]
    if not changed:
        return None
    own = set(_names(tree, base, ours)) & set(changed)
    if own:
        return (f"{branch} changed {', '.join(sorted(own))} itself, which your HEAD changed too since it forked: "
                f"the task follows its branch's (merge them with `git -C {shlex.quote(str(tree))} merge {head[:12]}`)")
    edited = _out(tree, "status", "--porcelain", "--", *changed)
    if edited:  # never over a change not committed there: it would be lost
        return (f"{branch} has changes not committed to {', '.join(changed)} in {tree}: the task follows them; "
                "commit or drop them there to take what your HEAD changed")
    there = set(_out(tree, "ls-tree", "-r", "--name-only", head, "--", *changed).splitlines())
    gone = [name for name in changed if name not in there]
    if there and git(tree, "checkout", head, "--", *sorted(there)).returncode != 0:
        return f"could not bring {', '.join(sorted(there))} from your HEAD onto {branch}; it follows its own"
    if gone:
        git(tree, "rm", "-q", "--ignore-unmatch", "--", *gone)
    where = _out(root, "rev-parse", "--abbrev-ref", "HEAD") or head[:12]
    commit = [*QUIET, "commit", "--quiet", "--no-verify", "-m",
              f"specd: pipeline, hooks and workflows from {where} ({head[:12]})", "--", *changed]
    if git(tree, *commit).returncode != 0 and git(tree, *identity(tree), *commit).returncode != 0:
        kept = set(_out(tree, "ls-tree", "-r", "--name-only", ours, "--", *changed).splitlines())
        git(tree, "reset", "-q", "--", *changed)  # back to the branch's own files, as they were
        if kept:
            git(tree, "checkout", ours, "--", *sorted(kept))
        for name in set(changed) - kept:
            (tree / name).unlink(missing_ok=True)
        return f"could not commit {', '.join(changed)} from your HEAD onto {branch}; it follows its own"
    return f"{branch} follows what your HEAD changed since it forked: {', '.join(changed)}"


def _names(tree: Path, since: str, until: str) -> list[str]:
    return _out(tree, "diff", "--name-only", "--no-renames", since, until, "--", *STEERING).splitlines()


def _out(where: Path, *args: str) -> str:
    done = git(where, *args)
    return done.stdout.strip() if done.returncode == 0 else ""
