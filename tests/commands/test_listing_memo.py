"""A piped or --json `specd status` listing printed from what was kept follows every change of what it shows.

Each test lists a copy of a project with three finished tasks, waits until both listings (plain and --json)
are printed from what was kept (a call that imports no ``specd.tasks.status``), then changes one thing: a
task's config.json edited in place, a task made or removed, a folder that becomes a task, the pipeline file,
a `.env` secret, a run. The next listing must be worked out afresh and print what a listing with no cache at
all prints. A task not finished is kept too, with its plan, until any file of its folder changes.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from brain_harness import Harness
from terminal_reads import drain

# The CLI in a child Python that says, after it ran, whether the listing was worked out (a miss) or read.
PROBE = ("import sys\nfrom specd.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
         "    code = done.code\nprint('MEMO', 'miss' if 'specd.tasks.status' in sys.modules else 'hit', code,"
         " file=sys.stderr)\n")
SECRET = "zq7secretish-name"  # shown by --json (the agent a task last ran with): a stand-in for a leaked key
AGENTS = {"a": "cmd:true", "b": "cmd:true", "c": f"cmd:true {SECRET}"}


class Listing:
    """The project of ``h``, listed through the CLI in a child Python that says whether it was a hit."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.root = h.root
        self.tasks = h.root / ".specd" / "tasks"

    def run(self, *args: str) -> tuple[str, str, str]:
        """`specd status *args` piped: (stdout, stderr without the probe's line, "hit" or "miss")."""
        done = subprocess.run([sys.executable, "-c", PROBE, "--project", str(self.root), "status", *args],
                              capture_output=True, text=True, env=self.h.env, cwd=self.root,
                              stdin=subprocess.DEVNULL, timeout=120, check=False)
        *err, probe = done.stderr.splitlines()
        assert probe.startswith("MEMO "), done.stderr
        assert probe.split()[2] == "0", done.stderr
        return done.stdout, "\n".join(err), probe.split()[1]

    def settle(self) -> tuple[str, str]:
        """List until both listings are printed from what was kept (kept once their inputs are 0.1 s old)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            plain = self.run()
            as_json = self.run("--json")
            if plain[2] == as_json[2] == "hit":
                assert self.run() == plain  # a hit is printed again, the same
                return plain[0], as_json[0]
            time.sleep(0.2)
        raise AssertionError("the listing was never printed from what was kept")

    def fresh(self) -> tuple[str, str, str]:
        """Plain output, its stderr and --json output with no cache of any kind."""
        shutil.rmtree(self.root / ".specd" / ".cache", ignore_errors=True)
        out, err, _ = self.run()
        shutil.rmtree(self.root / ".specd" / ".cache", ignore_errors=True)
        return out, err, self.run("--json")[0]

    def follows(self, *, same_order: bool = True) -> tuple[str, str, str]:
        """The listing now, which must be worked out afresh (plain and --json) and equal one with nothing kept
        (with ``same_order`` False, the same JSON, in whatever order each row's keys come)."""
        out, err, how = self.run()
        as_json, json_err, json_how = self.run("--json")
        assert (how, json_how) == ("miss", "miss")
        assert json_err == err
        fresh = self.fresh()
        assert fresh[:2] == (out, err)
        if same_order:
            assert fresh[2] == as_json
        else:
            assert json.loads(fresh[2]) == json.loads(as_json)
        return out, err, as_json

    def never_kept(self) -> None:
        """Listings well after the last change are still worked out afresh: nothing was kept."""
        time.sleep(0.3)  # the inputs are old enough to keep by now
        for args in ((), ("--json",), ()):
            assert self.run(*args)[2] == "miss", args


def rows(as_json: str) -> dict[str, dict[str, object]]:
    return {row["task"]: row for row in json.loads(as_json)["tasks"]}


def lines(out: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split() for line in out.splitlines()[1:]}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project whose three tasks have run to the end, made once: each test lists a copy of it."""
    h = Harness(tmp_path_factory.mktemp("finished"))
    try:
        h.workflow("w.md")
        h.pipeline({"main": [{"name": "first", "workflow": "w.md"}]})
        for task in AGENTS:
            h.new(task)
        runs = [subprocess.Popen(h.argv("continue", task, "--auto", "--agent", agent), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=h.env, cwd=h.root)
                for task, agent in AGENTS.items()]
        for proc in runs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, out + err
        shutil.rmtree(h.root / ".specd" / ".cache", ignore_errors=True)
        yield h.root
    finally:
        h.cleanup()


@pytest.fixture
def listing(h: Harness, finished: Path) -> Listing:
    shutil.copytree(finished, h.root, symlinks=True, dirs_exist_ok=True)
    made = Listing(h)
    out, as_json = made.settle()
    assert {name: row[1] for name, row in lines(out).items()} == dict.fromkeys(AGENTS, "COMPLETE")
    assert rows(as_json)["c"]["agent"] == AGENTS["c"]
    return made


def test_a_config_edited_in_place_shows_at_once(listing: Listing) -> None:
    config = listing.tasks / "b" / "config.json"
    inode = config.stat().st_ino
    with config.open("r+", encoding="utf-8") as handle:  # same inode: the folder's own times do not move
        data = json.loads(handle.read())
        handle.seek(0)
        handle.write(json.dumps({**data, "depends_on": ["a"]}))
        handle.truncate()
    assert config.stat().st_ino == inode
    out, _, as_json = listing.follows()
    assert lines(out)["b"][2] == "a"  # the needs column
    assert rows(as_json)["b"]["needs"] == ["a"]
    listing.settle()  # the same again once it is old enough


def test_a_new_task_is_listed_and_kept_with_its_plan_until_it_runs(listing: Listing) -> None:
    listing.h.new("d")
    out, _, as_json = listing.follows()
    assert lines(out)["d"][1] == "NOT_STARTED"
    assert rows(as_json)["d"]["status"] == "NOT_STARTED"
    out, as_json = listing.settle()  # an unfinished task's row is kept too, with the plan it shows
    assert rows(as_json)["d"]["plan"] == [{"step": "first", "pipeline": "main", "phase": None}]
    assert listing.h.specd("continue", "d", "--auto", "--agent", "cmd:true").returncode == 0
    out, _, _ = listing.follows()
    assert lines(out)["d"][1] == "COMPLETE"
    out, _ = listing.settle()  # every task finished: kept again
    assert set(lines(out)) == {"a", "b", "c", "d"}


def test_a_removed_task_folder_is_gone_at_once(listing: Listing) -> None:
    shutil.rmtree(listing.tasks / "c")
    out, _, as_json = listing.follows()
    assert set(lines(out)) == {"a", "b"}
    assert set(rows(as_json)) == {"a", "b"}
    out, _ = listing.settle()
    assert set(lines(out)) == {"a", "b"}


def test_a_folder_that_gains_a_config_becomes_a_task_at_once(listing: Listing) -> None:
    later = listing.tasks / "later"
    later.mkdir()
    (later / "notes.md").write_text("not a task yet\n", encoding="utf-8")
    out, _, _ = listing.follows()
    assert set(lines(out)) == {"a", "b", "c"}
    listing.settle()  # a folder that is no task does not stop the listing from being kept
    config = json.loads((listing.tasks / "a" / "config.json").read_text(encoding="utf-8"))
    (later / "config.json").write_text(json.dumps({**config, "task_name": "later", "stage": "discussion"}),
                                       encoding="utf-8")
    out, _, as_json = listing.follows()
    assert lines(out)["later"][1] == "NOT_STARTED"
    assert rows(as_json)["later"]["status"] == "NOT_STARTED"
    context = later / "CONTEXT.md"  # specdacular's: an open gray area means it starts at discuss
    context.write_text("# Context\n\n## Gray Areas Remaining\n\n- [ ] which format\n", encoding="utf-8")
    assert rows(listing.follows()[2])["later"]["derived"]["step"] == "discuss"
    listing.settle()  # kept, with its plan
    with context.open("r+", encoding="utf-8") as handle:  # in place: only the file's own times move
        text = handle.read().replace("- [ ]", "- [x]")
        handle.seek(0)
        handle.write(text)
    assert rows(listing.follows()[2])["later"]["derived"]["step"] == "research"


def test_the_pipeline_file_edited_or_broken_shows_at_once(listing: Listing) -> None:
    pipeline = listing.root / ".specd" / "pipeline.json"
    good = pipeline.read_text(encoding="utf-8")
    data = json.loads(good)
    data["pipelines"]["main"].append({"name": "second", "workflow": "w.md"})
    with pipeline.open("r+", encoding="utf-8") as handle:  # in place
        handle.write(json.dumps(data))
        handle.truncate()
    listing.follows()
    listing.settle()
    pipeline.write_text('{"schema_version": "1.0", "pipelines": {', encoding="utf-8")
    # A finished row the status index keeps says the same with the pipeline or without it, though its keys
    # come in the order of the way it was built (the index keeps rows built while the pipeline was broken).
    _, err, _ = listing.follows(same_order=False)
    assert "the pipeline file is broken" in err
    listing.never_kept()  # a broken pipeline: worked out every time
    pipeline.write_text(good, encoding="utf-8")
    _, err, _ = listing.follows(same_order=False)
    assert "pipeline" not in err
    listing.settle()
    (listing.root / ".specd" / "config.json").write_text('{"type": "orchestrator"}', encoding="utf-8")
    _, err, _ = listing.follows()
    assert "orchestrator" in err  # the project's settings are an input too


def test_a_new_secret_is_never_printed_from_what_was_kept(listing: Listing) -> None:
    (listing.root / ".env").write_text(f"SOMETHING={SECRET}\n", encoding="utf-8")
    out, _, as_json = listing.follows()
    assert SECRET not in out + as_json
    assert "[REDACTED]" in rows(as_json)["c"]["agent"]  # type: ignore[operator]
    out, as_json = listing.settle()  # kept again, masked
    assert SECRET not in out + as_json
    assert "[REDACTED]" in as_json
    (listing.root / ".env").unlink()
    listing.settle()
    listing.h.env["MY_SERVICE_TOKEN"] = SECRET
    out, _, as_json = listing.follows()
    assert SECRET not in out + as_json
    assert "[REDACTED]" in as_json
    out, as_json = listing.settle()
    assert SECRET not in out + as_json


def test_a_task_that_runs_or_ran_with_the_lock_is_never_printed_from_what_was_kept(listing: Listing) -> None:
    # The lock of a finished task taken (as `specd continue` takes it), its owner file written: it runs.
    owner = listing.tasks / "a" / ".run.lock.owner"
    fd = os.open(listing.tasks / "a" / ".run.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        owner.write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename}), encoding="utf-8")
        as_json = listing.run("--json")[0]
        assert rows(as_json)["a"]["running"]
        listing.never_kept()
    finally:
        os.close(fd)  # the lock goes with it
    # The owner file a run killed on another host left: the lock is free, so the task is shown as finished,
    # and that may be kept (nothing else can change the row without moving its files' times).
    owner.write_text(json.dumps({"pid": 999_999_999, "host": "elsewhere"}), encoding="utf-8")
    out, _, as_json = listing.follows()
    assert not rows(as_json)["a"]["running"]
    owner.unlink()
    listing.settle()

    h = listing.h
    h.cues(**{"step:first": {"hold": "release"}})
    h.new("e")
    proc = h.start("e")
    held = h.dir / "held-first.json"
    deadline = time.monotonic() + 60
    while not held.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never reached its agent"
        time.sleep(0.05)
    try:
        for args in ((), ("--json",), (), ("--json",)):
            out, _, how = listing.run(*args)
            assert how == "miss"
        assert rows(listing.run("--json")[0])["e"]["status"] == "IN_PROGRESS"
        assert lines(listing.run()[0])["e"][1] == "IN_PROGRESS"
    finally:
        (h.dir / "release").write_text("", encoding="utf-8")
        proc.communicate(timeout=120)
    assert proc.returncode == 0
    out, _, _ = listing.follows()
    assert lines(out)["e"][1] == "COMPLETE"


def test_the_json_plain_and_drawn_memos_are_apart_and_each_kept_with_the_others(listing: Listing) -> None:
    plain, as_json = listing.settle()
    with sqlite3.connect(listing.root / ".specd" / ".cache" / "index.db") as db:
        db.execute("DELETE FROM printed")
    assert listing.run() == (plain, "", "miss")
    assert listing.run() == (plain, "", "hit")  # kept: every input is old
    assert listing.run("--json") == (as_json, "", "miss")  # the plain listing kept no JSON
    assert listing.run("--json") == (as_json, "", "hit")
    assert listing.run() == (plain, "", "hit")

    # On a terminal the table is drawn, then kept beside the piped text and the JSON (the same inputs: each form
    # kept before stays); --json there is kept as piped.
    drawn = []
    for args, expected in (((), "miss"), (("--json",), "hit"), ((), "hit")):
        leader, follower = pty.openpty()
        try:
            with os.fdopen(follower, "wb") as terminal:  # ours is closed once the child has it
                proc = subprocess.Popen([sys.executable, "-c", PROBE, "--project", str(listing.root), "status",
                                         *args], stdout=terminal, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                        text=True, env={**listing.h.env, "COLUMNS": "200"}, cwd=listing.root)
            shown = drain(leader).decode(errors="replace")  # read while it writes: a pty holds little
            _, err = proc.communicate(timeout=120)
        finally:
            os.close(leader)
        assert err.split()[-3:] == ["MEMO", expected, "0"], err
        assert "COMPLETE" in shown
        if not args:
            assert shown.replace("\r\n", "\n") != plain  # the terminal's table, not the piped text
            drawn.append(shown)
    assert drawn[0] == drawn[1]
    assert listing.run() == (plain, "", "hit")
    assert listing.run("--json") == (as_json, "", "hit")


def test_a_task_made_in_features_or_run_in_a_worktree_shows_at_once(listing: Listing) -> None:
    features = listing.root / ".specd" / "features"
    assert not features.exists()  # made below: the folder's mark was "absent"
    config = json.loads((listing.tasks / "a" / "config.json").read_text(encoding="utf-8"))
    (features / "f").mkdir(parents=True)
    (features / "f" / "config.json").write_text(json.dumps({**config, "task_name": "f", "stage": "discussion"}),
                                                encoding="utf-8")
    out, _, as_json = listing.follows()
    assert lines(out)["f"][1] == "NOT_STARTED"
    assert rows(as_json)["f"]["folder"] == ".specd/features/f"
    shutil.rmtree(features / "f")
    out, _, _ = listing.follows()
    assert set(lines(out)) == {"a", "b", "c"}
    listing.settle()

    # `a` run in its worktree (as `specd run` leaves it): shown from there, with its branch, kept under its folder
    # there, and worked out afresh when that folder changes.
    inner = listing.root / ".specd" / "worktrees" / "a" / ".specd" / "tasks" / "a"
    shutil.copytree(listing.tasks / "a", inner)
    (inner / "config.json").write_text(json.dumps({**config, "stage": "in-the-worktree"}), encoding="utf-8")
    # its home record says so (`a` first ran by `specd continue`, which made it the main tree's)
    (listing.root / ".specd" / "homes" / "a.json").write_text(json.dumps(
        {"kind": "worktree", "path": ".specd/worktrees/a", "branch": "specd/a"}), encoding="utf-8")
    _, _, as_json = listing.follows()
    assert rows(as_json)["a"]["stage"] == "in-the-worktree"
    assert rows(as_json)["a"]["branch"]
    listing.settle()
    (inner / "config.json").write_text(json.dumps({**config, "stage": "edited-there"}), encoding="utf-8")  # in place
    _, _, as_json = listing.follows()
    assert rows(as_json)["a"]["stage"] == "edited-there"
    listing.settle()
    record = listing.root / ".specd" / "homes" / "a.json"
    with record.open("r+", encoding="utf-8") as handle:  # in place: homes/ keeps its times; the record is the main
        handle.write(json.dumps({"kind": "main"}))  # tree's now, and the copy there a leftover
        handle.truncate()
    _, _, as_json = listing.follows()
    assert rows(as_json)["a"]["stage"] == config["stage"]
    assert "branch" not in rows(as_json)["a"]
    record.write_text(json.dumps({"kind": "worktree", "path": ".specd/worktrees/a", "branch": "specd/a"}),
                      encoding="utf-8")
    assert rows(listing.follows()[2])["a"]["stage"] == "edited-there"
    listing.settle()
    (listing.root / ".specd" / "homes" / "a.json").unlink()  # no record, and a run in each copy: an error
    out, _, as_json = listing.follows()
    assert lines(out)["a"][1] == "ERROR"
    assert "exists twice" in str(rows(as_json)["a"]["reason"])
    listing.never_kept()  # an error row is worked out again every time, to say what is wrong now
