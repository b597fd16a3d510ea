"""A worker's clone of the shared repository, one per task: ``<workdir>/<repo key>/<task>/`` on ``specd/<task>``.

The remote's task branch is the truth: it holds every finished step, and only what was pushed counts. Each
attempt starts its clone again from that branch: a commit the clone never pushed (a push that failed, or a
superseded attempt's, whose lease had lapsed) stays in the reflog and is never pushed later, so its step runs
again. A push names the commit it expects the remote to hold and only fast-forwards from it; it never forces, so
nothing already pushed is ever lost.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from specd.executors.temporal.ids import branch
from specd.executors.temporal.job import within
from specd.git.repo import git, identity


class Refused(Exception):
    """The task cannot go on without a person: a merge conflict, a push the remote refused."""


class Overtaken(OSError):
    """Another attempt of this same task pushed its step commits first (one Temporal had given up on, still
    running elsewhere): this attempt's commits are dropped, and the step runs again from the remote's branch."""


@dataclass(frozen=True)
class Clone:
    path: Path
    task: str
    remote: str
    kept: bool = False  # found the remote's branch, untouched, and left as it was (no fetch, checkout or merge)


def path_of(workdir: Path, key: str, task: str) -> Path:
    """The task's clone: refused (job.JobRefused) unless it resolves inside the work folder."""
    return within(workdir, key, task)


def prepare(workdir: Path, remote: str, key: str, task: str, needs: list[str],
            changing: Callable[[], None] = lambda: None, head: str = "") -> Clone:
    """The task's clone as the remote's branch has it, with its needs merged; ``changing`` is called before the
    first thing that changes it (a fetch, a checkout, a merge), once. ``head``: the commit the task's last step
    pushed, as the workflow was told (then the remote is not asked where its branch is)."""
    tree = path_of(workdir, key, task)
    clone, changing = Clone(tree, task, remote), _once(changing)
    if not (tree / ".git").exists():
        changing()
        tree.parent.mkdir(parents=True, exist_ok=True)
        _run(tree.parent, "clone", "--quiet", "--no-checkout", remote, str(tree))
    elif _current(clone, head):
        merged = [need for need in needs if _merge(clone, need, changing)]
        return clone if merged else Clone(tree, task, remote, kept=True)
    else:
        changing()
        _run(tree, "fetch", "--quiet", "--prune", "origin")
    theirs = f"refs/remotes/origin/{branch(task)}"
    if not _exists(tree, theirs):
        raise Refused(f"branch {branch(task)} is not on {remote}: submit the task with `specd run {task} "
                      "--executor temporal` from a clone that pushes there")
    _run(tree, "checkout", "--quiet", "--force", "-B", branch(task), theirs)
    _run(tree, "clean", "--quiet", "-fd")  # what an interrupted step here left behind is not anyone's work
    for need in needs:
        _merge(clone, need, changing)
    return clone


def _once(call: Callable[[], None]) -> Callable[[], None]:
    done: list[bool] = []

    def first() -> None:
        if not done:
            done.append(True)
            call()
    return first


def _current(clone: Clone, head: str = "") -> bool:
    """Whether this clone already is the remote's branch, so the step needs no fetch and no checkout: the task did
    not change worker since this clone pushed (or fetched) it, and nothing was left behind here. A `git ls-remote`
    (none when the workflow says where its last step left the branch: ``head``, a round trip to the remote saved
    each step) and a `status` instead of a fetch, a checkout and a clean; the status names the remote-tracking
    branch the checkout set up and how far HEAD is from it (``+0 -0``: the same commit), else a `rev-parse` reads
    it. Any doubt takes the long way. Should the remote have moved since (someone pushed the branch between two
    steps), the step's push, which expects what this clone last saw there, is refused."""
    name = branch(clone.task)
    theirs = head
    if not theirs:
        said = git(clone.path, "ls-remote", "--quiet", "origin", f"refs/heads/{name}")
        theirs = said.stdout.split()[0] if said.returncode == 0 and said.stdout.strip() else ""
    left = git(clone.path, "status", "--porcelain=v2", "--branch", "--untracked-files=all")
    lines = left.stdout.splitlines()
    if not theirs or left.returncode != 0 or lines[:2] != [f"# branch.oid {theirs}", f"# branch.head {name}"] \
            or not all(line.startswith("# ") for line in lines):
        return False
    if lines[2:4] == [f"# branch.upstream origin/{name}", "# branch.ab +0 -0"]:
        return True  # the remote-tracking branch is HEAD, which is the remote's
    return git(clone.path, "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{name}").stdout.strip() == theirs


def push(clone: Clone) -> str:
    """Push the task branch as a fast-forward of exactly what the remote was last seen to hold (the
    remote-tracking branch): when HEAD descends from it, one `merge-base` says so before the push. The commit the
    remote's branch holds now, once pushed."""
    name = branch(clone.task)
    head = git(clone.path, "rev-parse", "--verify", "--quiet", "HEAD").stdout.strip()
    tracking = f"refs/remotes/origin/{name}"
    if _ancestor(clone.path, tracking, "HEAD"):
        seen = tracking  # the lease names the ref; git reads its commit, which only this clone's fetch or push moves
    else:  # not a descendant, or never fetched: which of the two
        seen = git(clone.path, "rev-parse", "--verify", "--quiet", tracking).stdout.strip()
        if seen:
            raise Overtaken(f"{clone.task}: {name} here no longer descends from what the remote held; the task goes "
                            "on from the remote's branch")
    expect = [f"--force-with-lease=refs/heads/{name}:{seen}"] if seen else []  # a fast-forward of exactly that
    done = git(clone.path, "push", "--quiet", "--no-verify", *expect, "origin", f"{name}:refs/heads/{name}")
    if done.returncode == 0:
        return head
    said = [line.strip() for line in (done.stderr or done.stdout).strip().splitlines() if line.strip()]
    rejected = [line for line in said if "rejected" in line]
    why = (rejected or said or [f"git push exited with {done.returncode}"])[0]
    if rejected and _only_ours(clone):
        raise Overtaken(f"{clone.task}: another attempt of this task pushed {branch(clone.task)} first; this "
                        f"attempt's commits stay in {clone.path} (`git reflog`), and the task goes on from the "
                        "remote's branch")
    if rejected:
        raise Refused(f"push of {branch(clone.task)} to {clone.remote} was rejected: the branch moved there "
                      f"({why}); nothing pushed is lost, and this worker's commits are kept in {clone.path} "
                      f"(`git -C {shlex.quote(str(clone.path))} reflog {branch(clone.task)}`)")
    raise Refused(f"could not push {branch(clone.task)} to {clone.remote}: {why}; the step's commits stay "
                  f"in {clone.path}")


def _only_ours(clone: Clone) -> bool:
    """Whether every commit the remote's branch has and this clone lacks is one of specd's for this task."""
    name = branch(clone.task)
    if git(clone.path, "fetch", "--quiet", "origin", f"+{name}:refs/remotes/origin/{name}").returncode != 0:
        return False
    done = git(clone.path, "log", "--format=%s", f"HEAD..refs/remotes/origin/{name}")
    subjects = done.stdout.splitlines()
    return done.returncode == 0 and bool(subjects) and all(s.startswith(f"docs({clone.task}): ") for s in subjects)


def _merge(clone: Clone, need: str, changing: Callable[[], None]) -> bool:
    """Whether the need's branch had to be merged (then it was, or Refused says why not)."""
    theirs = f"refs/remotes/origin/{branch(need)}"
    if not _exists(clone.path, theirs) or _ancestor(clone.path, theirs, "HEAD"):
        return False  # finished on the base branch itself, or merged before
    changing()
    merged = git(clone.path, *identity(clone.path), "merge", "--no-edit", "--quiet", theirs)
    if merged.returncode == 0:
        return True
    files = git(clone.path, "diff", "--name-only", "--diff-filter=U").stdout.split()
    git(clone.path, "merge", "--abort")
    if files:
        raise Refused(f"merging {branch(need)} into {branch(clone.task)} conflicts in {', '.join(files)}; "
                      f"resolve it on {branch(clone.task)} (`git merge origin/{branch(need)}`), push, then "
                      f"`specd run {clone.task} --executor temporal`")
    raise Refused(f"`git merge {branch(need)}` failed: {(merged.stderr or merged.stdout).strip()}")


def _exists(tree: Path, ref: str) -> bool:
    return git(tree, "rev-parse", "--verify", "--quiet", ref).returncode == 0


def _ancestor(tree: Path, older: str, newer: str) -> bool:
    return git(tree, "merge-base", "--is-ancestor", older, newer).returncode == 0



def _run(where: Path, *args: str) -> str:
    done = git(where, *args)
    if done.returncode != 0:
        raise OSError(f"`git {' '.join(args)}` in {where} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout
