"""The machinery check on real files: what counts as a change, how it is undone, and when it refuses to.

The acceptance tests (tests/git/test_machinery.py, tests/agents/test_machinery_backends.py) drive the
CLI; these pin the corners that an agent would need luck or care to reach.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specd.engine.machinery import Machinery, Tampered
from specd.engine.machinery import snapshot as snap
from specd.events import Event, EventBus
from specd.system import jail


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".specd" / "hooks").mkdir(parents=True)
    (root / ".specd" / "workflows").mkdir()
    (root / ".specd" / "tasks" / "t").mkdir(parents=True)
    (root / ".specd" / "pipeline.json").write_text('{"schema_version": "1.0"}')
    (root / ".specd" / "workflows" / "w.md").write_text("# w\n")
    (root / ".specd" / "tasks" / "t" / "config.json").write_text('{"stage": "plan"}')
    return root


def guarded(root: Path) -> Machinery:
    return Machinery(root, root / ".specd" / "tasks" / "t")


def check(machinery: Machinery, change: object) -> Tampered | None:
    """Run ``change`` (a callable) inside a watch, as an in-process agent writing with specd's own rights
    would; returns the Tampered it raised, if any."""
    seen: list[Event] = []
    try:
        with machinery.watch(EventBus(seen.append), "step 'x'"):
            jail.note_unjailed()
            change()  # type: ignore[operator]
    except Tampered as exc:
        assert [e.kind for e in seen] == ["warning"]
        return exc
    assert seen == []
    return None


def test_a_same_size_rewrite_right_after_the_fingerprint_is_seen(root: Path) -> None:
    # Within the clock's granularity the stat may not move at all: a recent file is read again.
    pipeline = root / ".specd" / "pipeline.json"
    before = pipeline.stat()

    def rewrite() -> None:
        fd = os.open(pipeline, os.O_WRONLY)
        os.write(fd, b'{"schema_version": "9.9"}')
        os.close(fd)
        os.utime(pipeline, ns=(before.st_atime_ns, before.st_mtime_ns))

    tampered = check(guarded(root), rewrite)
    assert tampered is not None
    assert tampered.changed == {".specd/pipeline.json": "changed"}
    assert pipeline.read_text() == '{"schema_version": "1.0"}'


def test_an_unchanged_settled_file_is_not_read_again(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snap, "RACY_NS", 0)  # as if every file had been written long ago
    machinery = guarded(root)
    workflow = root / ".specd" / "workflows" / "w.md"
    first, _ = machinery.take()
    again, _ = machinery.take()
    assert again[workflow] is first[workflow]  # the same entry: its stat did not move, nothing was read
    workflow.write_text("# w, edited\n")
    assert machinery.take()[0][workflow].digest != first[workflow].digest


def test_a_folder_swapped_for_a_copy_with_one_more_file_is_rebuilt(root: Path) -> None:
    hooks = root / ".specd" / "hooks"
    (hooks / "keep.md").write_text("keep")

    def swap() -> None:
        hooks.rename(root / "old-hooks")
        hooks.mkdir()
        (hooks / "keep.md").write_text("keep")
        (hooks / "pre-x.md").write_text("planted")

    tampered = check(guarded(root), swap)
    assert tampered is not None
    assert sorted(p.name for p in hooks.iterdir()) == ["keep.md"]
    assert (hooks / "keep.md").read_text() == "keep"


def test_a_folder_above_the_machinery_replaced_by_a_link_is_never_written_through(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"

    def relink() -> None:
        (root / ".specd").rename(elsewhere)
        (root / ".specd").symlink_to(elsewhere)
        (elsewhere / "pipeline.json").write_text("planted")

    tampered = check(guarded(root), relink)
    assert tampered is not None
    assert ".specd" in tampered.failed
    assert "restore" in str(tampered)
    assert (elsewhere / "pipeline.json").read_text() == "planted"  # left for the human, as the reason says


def test_a_file_too_big_to_copy_is_reported_not_restored(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snap, "MAX_COPY", 16)
    workflow = root / ".specd" / "workflows" / "big.md"
    workflow.write_text("x" * 100)

    tampered = check(guarded(root), lambda: workflow.write_text("y" * 100))
    assert tampered is not None
    assert tampered.failed == [".specd/workflows/big.md"]
    assert "restore it from git or by hand" in str(tampered)


def test_an_interrupted_step_is_undone_and_stays_an_interruption(root: Path) -> None:
    seen: list[Event] = []

    def interrupted() -> None:
        with guarded(root).watch(EventBus(seen.append), "step 'x'"):
            jail.note_unjailed()  # written with specd's own rights
            (root / ".specd" / "hooks" / "pre-x.md").write_text("planted")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert not (root / ".specd" / "hooks" / "pre-x.md").exists()
    assert [e.kind for e in seen] == ["warning"]


def test_a_step_failure_gives_way_to_the_tampering(root: Path) -> None:
    def fail() -> None:
        (root / ".specd" / "tasks" / "t" / "config.json").write_text("{}")
        raise RuntimeError("the agent failed")

    tampered = check(guarded(root), fail)
    assert tampered is not None
    assert tampered.changed == {".specd/tasks/t/config.json": "changed"}
    assert (root / ".specd" / "tasks" / "t" / "config.json").read_text() == '{"stage": "plan"}'


def test_work_outside_the_machinery_is_no_change(root: Path) -> None:
    def work() -> None:
        (root / ".specd" / "tasks" / "t" / "PLAN.md").write_text("plan")
        (root / ".specd" / "tasks" / "t" / "events.jsonl").write_text("{}\n")
        (root / "src.py").write_text("x = 1")

    assert check(guarded(root), work) is None


def test_a_file_specd_appended_to_between_steps_is_kept_whole(root: Path) -> None:
    import hashlib

    history = root / ".specd" / "tasks" / "t" / ".pipeline-state.history.jsonl"
    history.write_text('{"n": 0}\n')
    machinery = guarded(root)
    machinery.take()
    with history.open("a") as handle:  # specd's own save between two steps
        handle.write('{"n": 1}\n')
    entry = machinery.take()[0][history]
    assert entry.data == b'{"n": 0}\n{"n": 1}\n'
    assert entry.digest == hashlib.sha256(entry.data).hexdigest()

    def append() -> None:
        with history.open("a") as handle:
            handle.write('{"n": 2}\n')

    tampered = check(machinery, append)
    assert tampered is not None
    assert history.read_bytes() == b'{"n": 0}\n{"n": 1}\n'


def test_with_everything_jailed_a_change_the_jail_held_read_only_is_kept_and_said(root: Path) -> None:
    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it) but bwrap is missing or cannot run")
        pytest.skip("bubblewrap is not available on this machine")
    pipeline, made = root / ".specd" / "pipeline.json", root / ".specd" / "tasks" / "t" / ".git-pending.json"
    seen: list[Event] = []

    def step() -> None:
        with guarded(root).watch(EventBus(seen.append), "step 'x'"):
            pipeline.write_text('{"schema_version": "1.0", "yours": true}')  # the jail held it: someone outside
            made.write_text("{}")  # a new file in the task folder: the jail let the step make it

    with pytest.raises(Tampered) as raised:
        step()
    assert pipeline.read_text() == '{"schema_version": "1.0", "yours": true}'
    assert not made.exists()
    assert raised.value.changed == {".specd/tasks/t/.git-pending.json": "created"}
    notes = [e.data["message"] for e in seen if e.kind == "notice"]
    assert notes == ["changed while step 'x' ran, from outside the jail (it could not write there): "
                     ".specd/pipeline.json; kept"]
