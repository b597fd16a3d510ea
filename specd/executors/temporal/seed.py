"""Before a task's workflow starts, its branch must be on the shared remote: the submitter's HEAD, plus the
task folder when HEAD does not hold it yet (a task made with `specd new` and not committed, the usual case).

The commit is built in a scratch index, so the user's own tree, index and branch are never touched. A branch
already on the remote is left alone: it holds the task's finished steps.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from specd.errors import UsageError
from specd.executors.temporal.ids import branch
from specd.git.repo import FALLBACK_IDENTITY, git, git_env
from specd.system.gitsafe import OPTIONS
from specd.tasks.project import Project


class RemoteError(UsageError):
    """The shared remote cannot be read or written from here."""


def remote_heads(project: Project, remote: str) -> set[str]:
    done = git(project.root, "ls-remote", "--heads", remote, "refs/heads/specd/*")
    if done.returncode != 0:
        raise RemoteError(f"cannot read the shared remote {remote!r}: {git_said(done, 'git ls-remote failed')}",
                          fix="pass --remote NAME|URL (default: origin) naming a repository every worker can "
                              "push to, e.g. `git remote add origin URL`")
    return {line.split("\t", 1)[1].removeprefix("refs/heads/") for line in done.stdout.splitlines() if "\t" in line}


def git_said(done: subprocess.CompletedProcess[str], otherwise: str) -> str:
    """git's first complaint, without its `fatal: ` prefix."""
    said = (done.stderr or done.stdout).strip().splitlines()
    return said[0].removeprefix("fatal: ") if said else otherwise


def seed(project: Project, remote: str, task: str, present: set[str]) -> str:
    """Push the task's starting commit to ``specd/<task>``: "tree" when it took the task folder from the working
    tree (so the branch holds the task as this clone's files do), "head" when HEAD held it, "" when the branch was
    there already."""
    if branch(task) in present:
        return ""
    folder = str(Path(".specd") / "tasks" / task)
    commit, took = _head(project), "head"
    if git(project.root, "cat-file", "-e", f"{commit}:{folder}").returncode != 0:
        commit, took = _with_folder(project, commit, folder, task), "tree"
    done = git(project.root, "push", "--quiet", "--no-verify", remote, f"{commit}:refs/heads/{branch(task)}")
    if done.returncode != 0:
        raise RemoteError(f"cannot push {branch(task)} to {remote!r}: {git_said(done, 'git push failed')}",
                          fix="check that this clone may push to the remote (`git push --dry-run "
                              f"{remote} HEAD:refs/heads/specd-check`)")
    return took


def _head(project: Project) -> str:
    done = git(project.root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if done.returncode != 0:
        raise UsageError(f"{project.root} has no commit to start tasks from",
                         fix="commit once (`git add -A && git commit -m initial`)")
    return done.stdout.strip()


def _with_folder(project: Project, base: str, folder: str, task: str) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        env = {**git_env(), "GIT_INDEX_FILE": str(Path(scratch) / "index")}

        def run(*args: str) -> str:
            done = subprocess.run(["git", *OPTIONS, *args], cwd=project.root, env=env, capture_output=True, text=True,
                                  check=False)
            if done.returncode != 0:
                raise UsageError(f"`git {' '.join(args)}` failed: {done.stderr.strip()}",
                                 fix=f"check the task folder {folder}")
            return done.stdout.strip()

        run("read-tree", base)
        run("add", "--", folder)
        tree = run("write-tree")
        known = all(git(project.root, "var", f"GIT_{w}_IDENT").returncode == 0 for w in ("AUTHOR", "COMMITTER"))
        return run(*([] if known else FALLBACK_IDENTITY), "commit-tree", tree, "-p", base, "-m",
                   f"specd: task folder of {task}")
