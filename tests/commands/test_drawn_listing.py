"""`specd status` on a terminal: the table rich drew is kept, and drawn again only when something it shows changed.

A person at a shell lists the tasks on a terminal, where the table is drawn by rich (its colours, its width).
The piped text was kept while nothing changed; the drawn table was worked out and drawn again every time. Now it
is kept too, with the size of the terminal it was drawn for. Each test runs the real CLI with its stdout on a
pseudo-terminal, in a child Python that says whether the listing was worked out (a miss) or printed from what was
kept (a hit, which imports neither ``specd.tasks.status`` nor rich), and compares the bytes with a listing drawn
with no cache at all.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

from brain_harness import Harness
from terminal_reads import drain

PROBE = ("import sys\nfrom specd.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
         "    code = done.code\nloaded = 'specd.tasks.status' in sys.modules or 'rich' in sys.modules\n"
         "print('MEMO', 'miss' if loaded else 'hit', code, file=sys.stderr)\n")


def _drawn(h: Harness, *args: str, columns: int = 150, rows: int = 40) -> tuple[bytes, str, str]:
    """`specd status *args` with stdout on a terminal of ``columns`` x ``rows`` (its size set on the terminal
    itself, no COLUMNS): (what the terminal got, stderr without the probe's line, "hit" or "miss")."""
    import fcntl
    import struct
    import termios

    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    try:
        proc = subprocess.Popen([sys.executable, "-c", PROBE, "--project", str(h.root), "status", *args],
                                stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE, env=_env(h),
                                cwd=h.root)
        os.close(follower)
        shown = drain(leader)
        _, err = proc.communicate(timeout=120)
    finally:
        os.close(leader)
    *said, probe = err.decode(errors="replace").splitlines()
    assert probe.split()[:1] == ["MEMO"], err
    assert probe.split()[2] == "0", err
    return shown, "\n".join(said), probe.split()[1]


def _env(h: Harness) -> dict[str, str]:
    """The harness's environment as a person's shell has it: no COLUMNS (the terminal says its size), colours."""
    env = {key: value for key, value in h.env.items() if key not in ("COLUMNS", "LINES", "NO_COLOR")}
    return {**env, "TERM": "xterm-256color"}


def _piped(h: Harness, *args: str) -> str:
    """`specd status *args` into a pipe, from the same shell as ``_drawn``'s."""
    done = subprocess.run([sys.executable, "-m", "specd", "--project", str(h.root), "status", *args], env=_env(h),
                          cwd=h.root, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _settled(h: Harness, *args: str, columns: int = 150) -> bytes:
    """Draw until the table is printed from what was kept (kept once its inputs are 0.1 s old); the table."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown, _, how = _drawn(h, *args, columns=columns)
        if how == "hit":
            return shown
        time.sleep(0.2)
    raise AssertionError("the drawn listing was never printed from what was kept")


def _fresh(h: Harness, *args: str, columns: int = 150) -> bytes:
    shutil.rmtree(h.root / ".specd" / ".cache", ignore_errors=True)
    shown, _, how = _drawn(h, *args, columns=columns)
    assert how == "miss"
    return shown


def _project(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "first", "workflow": "w.md"}]})
    for task in ("a", "b"):
        h.new(task)
        done = h.specd("continue", task, "--auto", "--agent", "cmd:true")
        assert done.returncode == 0, done.stderr
    h.new("c")  # not started: kept with its plan


def test_the_drawn_table_is_kept_for_the_terminal_size_it_was_drawn_for(h: Harness) -> None:
    _project(h)
    fresh = _fresh(h)
    assert b"\x1b[" in fresh
    assert b"COMPLETE" in fresh
    assert b"NOT_STARTED" in fresh
    assert _settled(h) == fresh  # byte for byte what a drawing with no cache draws
    assert _drawn(h)[2] == "hit"

    narrow, _, how = _drawn(h, columns=60)  # another size: drawn for it, then kept for it
    assert how == "miss"
    assert narrow != fresh
    assert max(map(len, re.sub("\x1b\\[[0-9;]*m", "", narrow.decode()).splitlines())) <= 60
    assert _settled(h, columns=60) == narrow == _fresh(h, columns=60)
    assert _drawn(h, "--json")[2] == "miss"  # the terminal's listing kept no JSON
    assert "NOT_STARTED" in _piped(h)  # the piped text was kept with the drawing: the same rows
    assert _drawn(h, columns=60)[2] == "hit"  # and the drawing stayed beside it


def test_a_drawn_table_follows_a_config_edited_in_place_and_a_pipeline_edit(h: Harness) -> None:
    _project(h)
    _fresh(h)
    _settled(h)
    config = h.root / ".specd" / "tasks" / "b" / "config.json"
    with config.open("r+", encoding="utf-8") as handle:  # the same inode: the folder's times do not move
        data = json.loads(handle.read())
        handle.seek(0)
        handle.write(json.dumps({**data, "depends_on": ["a"]}))
        handle.truncate()
    shown, _, how = _drawn(h)
    assert how == "miss"
    assert shown == _fresh(h)
    assert any(b" b " in line and b" a " in line for line in shown.splitlines())  # b needs a
    _settled(h)

    h.pipeline({"main": [{"name": "zeroth", "workflow": "w.md"}, {"name": "first", "workflow": "w.md"}]})
    shown, _, how = _drawn(h)
    assert how == "miss"
    assert shown == _fresh(h)
    assert b"zeroth" in shown  # c, not started, starts at the new first step


def test_a_table_drawn_beside_a_warning_is_never_kept(h: Harness) -> None:
    _project(h)
    (h.root / ".specd" / "tasks" / "c" / "config.json").write_text("{not json", encoding="utf-8")
    for _ in range(3):
        shown, said, how = _drawn(h)
        assert how == "miss"
        assert "c" in said
        assert "does not load" in said
        assert b"ERROR" in shown
        time.sleep(0.2)


def test_a_kept_table_that_would_drive_the_terminal_further_than_colours_is_drawn_afresh(h: Harness) -> None:
    import sqlite3

    _project(h)
    fresh = _fresh(h)
    _settled(h)
    db = sqlite3.connect(h.root / ".specd" / ".cache" / "index.db")
    try:
        drawn = json.loads(db.execute("SELECT drawn FROM printed").fetchone()[0])
        assert drawn[1].replace("\n", "\r\n").encode() == fresh  # the bytes drawn, as kept
        for forged in ("\x1b]0;owned\x07", "\x1b[2J", "\x9b31m", "a\rb"):
            db.execute("UPDATE printed SET drawn = ?", (json.dumps([drawn[0], forged + drawn[1]]),))
            db.commit()
            shown, _, how = _drawn(h)
            assert (how, shown) == ("miss", fresh), repr(forged)
    finally:
        db.close()


def test_one_task_drawn_on_a_terminal_is_kept_beside_its_piped_answer_and_follows_a_run(h: Harness) -> None:
    _project(h)
    fresh = _fresh(h, "a")
    assert b"first" in fresh
    assert b"COMPLETE" in fresh
    assert b"\x1b[" in fresh
    assert _settled(h, "a") == fresh
    piped = [_piped(h, "a") for _ in range(2)]
    assert piped[0] == piped[1]
    assert "COMPLETE" in piped[0]
    assert _drawn(h, "a")[2] == "hit"  # the piped answer kept the drawing beside it: the same inputs
    assert _drawn(h, "a", columns=70)[2] == "miss"

    fresh_c = _fresh(h, "c")
    assert b"NOT_STARTED" in fresh_c
    _settled(h, "c")
    done = h.specd("continue", "c", "--auto", "--agent", "cmd:true")
    assert done.returncode == 0, done.stderr
    shown, _, how = _drawn(h, "c")
    assert how == "miss"
    assert b"COMPLETE" in shown
    assert shown == _fresh(h, "c")


def test_what_is_kept_of_a_drawing_is_what_was_written_masked(h: Harness) -> None:
    # A value in a step's summary, saved before any file named it a secret; then a .env names it. The value holds a
    # double quote, which the store's JSON escapes: a drawing kept before masking would no longer match it there.
    value = 'zq7"quoted-secret9'
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "first", "workflow": "w.md"}]})
    h.new("a")
    (h.root / ".harness").mkdir(exist_ok=True)
    (h.root / ".harness" / "result.json").write_text(json.dumps({"outcome": "done", "summary": f"saw {value}"}),
                                                     encoding="utf-8")
    done = h.specd("continue", "a", "--auto", "--agent", 'cmd:cp .harness/result.json "$SPECD_RESULT"')
    assert done.returncode == 0, done.stderr
    assert value.encode() in _fresh(h, "a")  # no file names it: shown as it was saved
    (h.root / ".env").write_text(f"MADE_LATER='{value}'\n", encoding="utf-8")
    time.sleep(0.2)  # the .env's marks are settled: what is drawn next is kept
    first = _drawn(h, "a")
    assert first[2] == "miss"
    assert b"[REDACTED]" in first[0]
    assert value.encode() not in first[0]
    again = _settled(h, "a")
    assert again == first[0]
    assert value.encode() not in again
