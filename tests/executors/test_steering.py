"""A task in its worktree follows the pipeline, hooks and workflows committed on your branch after it forked.

Real repositories and worktrees: ``steering.follow_head`` brings what your HEAD changed of them onto the task's
branch as one commit, leaves the branch alone when it changed the same files itself, and does nothing when
nothing changed. ``test_a_waiting_task_in_its_worktree_...`` drives it through `specd run`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from specd.executors.steering import follow_head


def git(where: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=where, check=True, capture_output=True, text=True).stdout


def write(root: Path, name: str, text: str) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)


def forked(tmp_path: Path) -> tuple[Path, Path]:
    """(your tree, the task's worktree on specd/t), forked from a commit holding a pipeline and a workflow."""
    root, tree = tmp_path / "proj", tmp_path / "wt"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    write(root, ".specd/pipeline.json", json.dumps({"steps": ["a", "b", "c"]}))
    write(root, ".specd/workflows/old.md", "# old\n")
    write(root, "app.py", "print(1)\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    git(root, "worktree", "add", "-q", "-b", "specd/t", str(tree))
    write(tree, "work.txt", "a step's work\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "step a")
    return root, tree


def test_what_your_head_changed_since_the_fork_is_brought_onto_the_branch_as_one_commit(tmp_path: Path) -> None:
    root, tree = forked(tmp_path)
    write(root, ".specd/pipeline.json", json.dumps({"steps": ["a", "b", "d"]}))
    write(root, ".specd/hooks/pre-d.md", "# before d\n")
    (root / ".specd/workflows/old.md").unlink()
    write(root, "app.py", "print(2)\n")  # your work, not the pipeline's: stays off the task's branch
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the pipeline changes, and some work")

    said = follow_head(root, tree, "specd/t")

    assert said == ("specd/t follows what your HEAD changed since it forked: .specd/hooks/pre-d.md, "
                    ".specd/pipeline.json, .specd/workflows/old.md")
    assert git(tree, "log", "-1", "--format=%s").startswith("specd: pipeline, hooks and workflows from main (")
    assert json.loads((tree / ".specd/pipeline.json").read_text()) == {"steps": ["a", "b", "d"]}
    assert (tree / ".specd/hooks/pre-d.md").read_text() == "# before d\n"
    assert not (tree / ".specd/workflows/old.md").exists()
    assert (tree / "app.py").read_text() == "print(1)\n"
    assert git(tree, "status", "--porcelain") == ""
    assert follow_head(root, tree, "specd/t") is None  # brought once: nothing more to bring


def test_a_branch_that_changed_the_same_file_itself_keeps_its_own(tmp_path: Path) -> None:
    root, tree = forked(tmp_path)
    write(tree, ".specd/pipeline.json", json.dumps({"steps": ["a", "x"]}))
    git(tree, "commit", "-qam", "this task's own pipeline")
    write(root, ".specd/pipeline.json", json.dumps({"steps": ["a", "b", "d"]}))
    git(root, "commit", "-qam", "the pipeline changes")
    before = git(tree, "rev-parse", "HEAD")

    said = follow_head(root, tree, "specd/t")

    assert said is not None
    assert "specd/t changed .specd/pipeline.json itself, which your HEAD changed too" in said
    assert git(tree, "rev-parse", "HEAD") == before
    assert json.loads((tree / ".specd/pipeline.json").read_text()) == {"steps": ["a", "x"]}


def test_a_change_not_committed_in_the_worktree_is_never_overwritten(tmp_path: Path) -> None:
    root, tree = forked(tmp_path)
    write(tree, ".specd/pipeline.json", json.dumps({"steps": ["being", "edited"]}))
    write(root, ".specd/pipeline.json", json.dumps({"steps": ["a", "b", "d"]}))
    git(root, "commit", "-qam", "the pipeline changes")

    said = follow_head(root, tree, "specd/t")

    assert said is not None
    assert "has changes not committed to .specd/pipeline.json" in said
    assert json.loads((tree / ".specd/pipeline.json").read_text()) == {"steps": ["being", "edited"]}


def test_nothing_is_done_when_your_head_changed_nothing_that_steers(tmp_path: Path) -> None:
    root, tree = forked(tmp_path)
    assert follow_head(root, tree, "specd/t") is None
    write(root, "app.py", "print(3)\n")
    git(root, "commit", "-qam", "work only")
    before = git(tree, "rev-parse", "HEAD")
    assert follow_head(root, tree, "specd/t") is None
    assert git(tree, "rev-parse", "HEAD") == before


def test_a_waiting_task_in_its_worktree_follows_a_pipeline_edit_committed_on_your_branch(tmp_path: Path) -> None:
    """The QA's case: t waits at s2's gate in its worktree; you turn s3 off and add s4 with a hook, and commit.
    Before, the task ran s3 (off), never s4 or the hook, and said nothing."""
    from executor_harness import Repo

    repo = Repo(tmp_path, pause="s2")
    repo.new("t")
    first = repo.specd("run", "t", "--semi-auto", "--agent", repo.agent())
    assert first.returncode == 3, first.stdout + first.stderr
    steps = [{"name": "s1", "workflow": "work.md"}, {"name": "s2", "workflow": "work.md", "pause_in_semi_auto": True},
             {"name": "s3", "workflow": "work.md", "enabled": False}, {"name": "s4", "workflow": "work.md"}]
    repo.write(".specd/pipeline.json", json.dumps({"schema_version": "1.0", "pipelines": {"main": steps}}))
    repo.write(".specd/hooks/pre-s4.md", "---\ndescription: before s4\n---\n\n# before s4\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "s3 off, s4 and its hook on")
    assert repo.specd("approve", "t").returncode == 0

    done = repo.specd("run", "t", "--agent", repo.agent())

    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    brought = "specd/t follows what your HEAD changed since it forked: .specd/hooks/pre-s4.md, .specd/pipeline.json"
    assert brought in said
    # s3 is off; the pre-s4 hook (its agent run is named for its step) and then s4
    assert [step for task, step, _, _ in repo.ledger() if task == "t"] == ["s1", "s2", "s4", "s4"]
    history = json.loads(repo.specd("status", "t", "--json").stdout)["history"]
    assert [row["step"] for row in history if row["kind"] == "hook"] == ["s4"]  # the new hook ran, before s4
