"""Paths a commit must leave out whatever the step meant, each said once.

- A FIFO where a file was: the agent may make one (`mkfifo app.py`), and specd, which reads every changed file
  after a step (its hash, the secret check), must never open it: a FIFO's open waits for a writer that never
  comes, and the run hung there for good, Ctrl-C included.
- A file over 100 MB: GitHub refuses a push that holds one, and rewriting the history is the only way out.
- A link out of the project (`.venv -> /home/me/.ssh`): it leads nowhere in another clone, and names a place here.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from git_harness import GitProject, warnings

from specd.git import tree

ATTACK = ("rm src/app.py .specd/tasks/t/CONTEXT.md; mkfifo src/app.py .specd/tasks/t/CONTEXT.md new.fifo; "
          "echo kept > made.txt")


def test_a_fifo_in_place_of_a_file_is_never_opened_and_never_committed(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a", "b"))
    g.new("t")

    run = g.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(ATTACK + '; true')}")

    assert run.returncode == 0, run.stdout + run.stderr
    said = [line for line in warnings(run) if "not a file, a link or a folder" in line]
    assert said == ["warning: not committing .specd/tasks/t/CONTEXT.md, src/app.py: not a file, a link or a folder "
                    "(a FIFO or a socket), which git cannot hold"]  # once, though step b saw them again
    commits = dict(g.commits())
    assert "made.txt" in commits["docs(t): a complete"]
    assert "src/app.py" not in {path for files in commits.values() for path in files}
    assert g.git("show", "HEAD:src/app.py") == "print('hello')\n"  # what was committed stays as it was


def test_the_digest_of_a_fifo_and_its_unfitness_say_what_it_is_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert tree.digest(fifo) == "special:10000"  # S_IFIFO; an open() here would wait for a writer
    assert tree.unfit(tmp_path, "pipe") == "special"
    (tmp_path / "file").write_text("x")
    assert tree.unfit(tmp_path, "file") is None


def test_a_file_over_100_mb_is_not_committed_and_said_once(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a", "b"))
    g.new("t")
    # sparse: 101 MB to every reader, nothing on the disk
    make = "truncate -s 101M data/dump.bin .specd/tasks/t/trace.bin; echo small > data/ok.txt"
    run = g.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote('mkdir -p data; ' + make)}")

    assert run.returncode == 0, run.stdout + run.stderr
    said = [line for line in warnings(run) if "over 100 MB" in line]
    assert len(said) == 1, warnings(run)
    assert said[0].startswith("warning: not committing .specd/tasks/t/trace.bin, data/dump.bin: over 100 MB, which "
                              "GitHub and most hosts refuse in a push")
    tracked = g.git("ls-files").splitlines()
    assert "data/ok.txt" in tracked
    assert "data/dump.bin" not in tracked
    assert ".specd/tasks/t/trace.bin" not in tracked


def test_a_link_out_of_the_project_is_not_committed_and_one_inside_is(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a",))
    g.new("t")
    outside = tmp_path / "outside"
    outside.mkdir()
    make = (f"ln -s {outside} .venv; mkdir docs; ln -s ../.. docs/up; ln -s ../README.md docs/readme; "
            f"ln -s {outside} .specd/tasks/t/ext; ln -s FEATURE.md .specd/tasks/t/spec.md")
    run = g.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(make)}")

    assert run.returncode == 0, run.stdout + run.stderr
    said = [line for line in warnings(run) if "a link out of the project" in line]
    assert said == ["warning: not committing .specd/tasks/t/ext, .venv, docs/up: a link out of the project, which "
                    "leads nowhere in another clone and names a place on this machine (commit it yourself if it "
                    "belongs in the repository)"]
    tracked = g.git("ls-files").splitlines()
    assert "docs/readme" in tracked
    assert ".specd/tasks/t/spec.md" in tracked
    for name in (".venv", "docs/up", ".specd/tasks/t/ext"):
        assert name not in tracked


def test_a_file_too_big_to_commit_is_told_by_its_stat_not_read(tmp_path: Path) -> None:
    """A 3 GB dump a step left took 7 s to hash at every run's first look; such a file is never committed."""
    dump = tmp_path / "dump.bin"
    with dump.open("wb") as handle:
        handle.truncate(tree.BIG_FILE + 1)  # sparse: nothing written to the disk
    first = tree.digest(dump)
    assert first.startswith(f"big:{tree.BIG_FILE + 1}:")
    assert tree.digest(dump) == first
    os.utime(dump, ns=(1, 1))  # rewritten in place: its times move (set here, not waited for)
    rewritten = tree.digest(dump)
    assert rewritten != first
    with dump.open("ab") as handle:
        handle.write(b"x")
    assert tree.digest(dump) not in (first, rewritten)
