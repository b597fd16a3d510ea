"""Nothing is lost between a step (or hook) and its commit: kills in that window, then `specd continue`."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import time
from collections.abc import Callable

from git_harness import GitProject, warnings

HOLD = "hold.flag"  # ignored by git; while it exists the post-step hook waits, so the kill lands inside it


def pipeline(gp: GitProject, hooks: dict[str, object], step_hooks: dict[str, object]) -> None:
    steps = [{"name": "discuss", "workflow": "work.md", "hooks": step_hooks}, {"name": "plan", "workflow": "work.md"}]
    gp.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "hooks": hooks,
                                                  "pipelines": {"main": steps}}))
    gp.write(".gitignore", f"/{HOLD}\n")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "hooks")


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_kill_after_a_hook_and_before_the_next_commit_loses_nothing(gp: GitProject) -> None:
    pipeline(gp, {"post-step": {"run": f"while [ -e {HOLD} ]; do sleep 0.05; done"}},
             {"post": {"run": "echo made by the hook > hook-out.txt"}})
    gp.write("notes.txt", "the user's own notes\n")
    gp.new("t")
    gp.write(HOLD, "")
    proc = gp.start("t")
    transcripts = gp.root / ".specd/tasks/t/transcripts"
    # The post-step hook's log exists once the hook has started: the post hook is finished by then.
    wait_for(lambda: any(transcripts.glob("*/*discuss-post-step-hook.log")), "the post-step hook")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert not any("hook-out.txt" in files for _, files in gp.commits())  # the kill landed in the window

    (gp.root / HOLD).unlink()
    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    recovered = [(s, f) for s, f in gp.commits() if "recovered after an interrupted run" in s]
    assert len(recovered) == 1, gp.commits()
    subject, files = recovered[0]
    assert subject.startswith("docs(t): discuss post hook run: echo made by the hook")
    assert "hook-out.txt" in files
    assert "notes.txt" not in files
    assert gp.git("diff", "--cached", "--name-only") == ""
    assert gp.git("status", "--porcelain").splitlines() == ["?? notes.txt"]
    dirty = [line for line in warnings(result) if "uncommitted changes" in line]
    assert dirty
    assert "1 path outside .specd/ has" in dirty[0]  # notes.txt only: the hook's file is not the user's
    assert not (gp.root / ".specd/tasks/t/.git-pending.json").exists()


def killed_between_steps(gp: GitProject) -> None:
    """A first run killed after discuss, with no step or hook open, as at a kill inside a commit.

    (plan's agent kills specd; plan's baseline is then removed, as if plan had never started:
    between `git add` and `git commit` no step is open, so there is none.)
    """
    gp.rules({"plan": {"hold": True}})  # plan's agent waits; the test kills specd there (the jail hides its pid)
    proc = gp.start("t")
    wait_for(lambda: (gp.dir / "held").exists() or proc.poll() is not None, "plan's agent", timeout=120)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == -9
    gp.rules({})
    (gp.root / ".specd/tasks/t/.git-baseline.json").unlink()


def test_a_kill_between_git_add_and_git_commit_leaves_nothing_of_specds_staged(gp: GitProject) -> None:
    # What a kill between `git add` and `git commit` leaves: the task folder and a finished step's file
    # staged, that file journaled. The user has staged a change of their own meanwhile.
    gp.new("t")
    killed_between_steps(gp)
    gp.write("src/app.py", "print('the step')\n")
    gp.write(".specd/tasks/t/notes.md", "task notes\n")
    gp.write("README.md", "# the user's project, staged by the user\n")
    journal = gp.root / ".specd/tasks/t/.git-pending.json"
    journal.write_text(json.dumps({"work": {"src/app.py": "discuss"}, "user_staged": []}), encoding="utf-8")
    gp.git("add", "--", "src/app.py", ".specd/tasks/t/notes.md", "README.md")

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert gp.git("diff", "--cached", "--name-only").splitlines() == ["README.md"]  # the user's, still staged
    assert gp.git("show", "HEAD:README.md") == "# the user's project\n"
    commits = dict(gp.commits())
    files = commits["docs(t): discuss complete (recovered after an interrupted run)"]
    assert {"src/app.py", ".specd/tasks/t/notes.md"} <= set(files)
    assert "README.md" not in files
    assert gp.git("show", "HEAD:src/app.py") == "print('the step')\n"
    assert not journal.exists()


def test_a_kill_between_add_and_commit_of_the_task_folder_alone_is_unstaged_on_resume(gp: GitProject) -> None:
    gp.new("t")
    killed_between_steps(gp)
    gp.write(".specd/tasks/t/notes.md", "task notes\n")
    gp.write("README.md", "# staged by the user\n")
    gp.git("add", "--", ".specd/tasks/t/notes.md", "README.md")

    status = gp.specd("status", "t")  # a read-only command touches nothing
    assert status.returncode == 0, status.stderr
    assert gp.git("diff", "--cached", "--name-only").splitlines() == [".specd/tasks/t/notes.md", "README.md"]
    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert gp.git("diff", "--cached", "--name-only").splitlines() == ["README.md"]
    assert "notes.md" not in gp.git("status", "--porcelain")  # committed with the next step
    assert not [s for s, _ in gp.commits() if "recovered" in s]  # no step's work was waiting


def test_with_commit_docs_off_a_staged_task_folder_is_the_users_and_stays_staged(gp: GitProject) -> None:
    config = json.loads((gp.root / ".specd/config.json").read_text(encoding="utf-8"))
    gp.write(".specd/config.json", json.dumps({**config, "auto_commit_docs": False}))
    gp.git("commit", "-q", "-am", "no docs commits")
    gp.new("t")
    killed_between_steps(gp)
    gp.write(".specd/tasks/t/notes.md", "task notes\n")
    gp.git("add", "--", ".specd/tasks/t/notes.md")

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert gp.git("diff", "--cached", "--name-only").splitlines() == [".specd/tasks/t/notes.md"]


def test_a_real_kill_between_git_add_and_git_commit_then_resume(gp: GitProject) -> None:
    # A git in front of the real one kills specd (its parent) when specd commits the step's file:
    # after specd's `git add`, before its `git commit`. It does so once. The file is new: a tracked one
    # needs no `git add` (`commit --only` takes it from the tree), so there would be no such window.
    # The commit's paths come on stdin: the fake reads them, and hands them on when it does not kill.
    real = shutil.which("git")
    assert real is not None
    bin_dir, armed, paths = gp.dir / "bin", gp.dir / "armed", gp.dir / "paths"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" commit "*) if [ -e \'{armed}\' ]; then cat > \'{paths}\'; '
        f"if grep -qa src/new.py '{paths}'; then rm '{armed}'; kill -9 $PPID; sleep 5; exit 1; fi; "
        f"exec {shlex.quote(real)} \"$@\" < '{paths}'; fi;; esac\n"
        f'exec {shlex.quote(real)} "$@"\n', encoding="utf-8")
    (bin_dir / "git").chmod(0o755)
    gp.env["PATH"] = f"{bin_dir}{os.pathsep}{gp.env['PATH']}"
    gp.write("README.md", "# staged by the user before the run\n")
    gp.git("add", "README.md")
    gp.rules({"discuss": {"write": {"src/new.py": "print('discuss')\n"}}})
    gp.new("t")
    armed.write_text("")

    killed = gp.run("t")

    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert "src/new.py" in gp.git("diff", "--cached", "--name-only").splitlines()  # the kill landed in the window
    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert gp.git("diff", "--cached", "--name-only").splitlines() == ["README.md"]
    assert gp.git("show", "HEAD:README.md") == "# the user's project\n"
    commits = dict(gp.commits())
    assert "src/new.py" in commits["docs(t): discuss complete (recovered after an interrupted run)"]
    assert gp.git("show", "HEAD:src/new.py") == "print('discuss')\n"


KILL_AT_FINAL = """#!/bin/sh
# git, except that the first `run state COMPLETE` commit kills specd (its parent) instead: a kill -9 landing
# between the task's state saved COMPLETE and its last commit.
case "$*" in
  *"run state COMPLETE"*) if [ ! -e "$KILLED_MARK" ]; then : > "$KILLED_MARK"; kill -9 "$PPID"; exit 1; fi ;;
esac
exec "$REAL_GIT" "$@"
"""


def test_a_kill_at_the_last_commit_is_finished_by_the_next_run(gp: GitProject) -> None:
    """Finished means committed: the next run commits the record a kill left short, the last hook's output too."""
    pipeline(gp, {}, {})
    gp.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "pipelines": {"main": [
        {"name": "discuss", "workflow": "work.md"},
        {"name": "plan", "workflow": "work.md", "hooks": {"post": {"run": "echo by the last hook > last.txt"}}}]}}))
    gp.git("commit", "-q", "-am", "a post hook on the last step")
    gp.new("t")
    wrapper = gp.dir / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(KILL_AT_FINAL, encoding="utf-8")
    wrapper.chmod(0o755)
    real = shutil.which("git")
    assert real is not None
    gp.env.update(PATH=f"{wrapper.parent}{os.pathsep}{gp.env['PATH']}", REAL_GIT=real,
                  KILLED_MARK=str(gp.dir / "killed"))
    killed = gp.run("t")
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert (gp.dir / "killed").exists()
    assert json.loads((gp.root / ".specd/tasks/t/.pipeline-state.json").read_text())["status"] == "COMPLETE"
    assert not any(s == "docs(t): run state COMPLETE" for s, _ in gp.commits())  # the kill landed in the window

    again = gp.run("t")

    assert again.returncode == 0, again.stdout + again.stderr
    assert "already complete" in again.stdout + again.stderr
    # The hook's work is committed under the name of what made it (the last hook), alone; the COMPLETE record
    # goes into the task's last commit, which ends the branch.
    [(subject, files)] = [(s, f) for s, f in gp.commits() if "recovered after an interrupted run" in s]
    assert subject.startswith("docs(t): plan post hook run: echo by the last hook")
    assert files == ["last.txt"]
    last, record = gp.commits()[-1]
    assert last == "docs(t): run state COMPLETE"
    assert ".specd/tasks/t/.pipeline-state.json" in record
    assert gp.git("status", "--porcelain") == ""
    made = len(gp.commits())
    assert gp.run("t").returncode == 0
    assert len(gp.commits()) == made  # nothing more to do
