"""What an agent says cannot drive the user's terminal.

A step's summary, a question, a command it asks to run and its transcript are printed on the user's terminal.
A model that controls them could put escape sequences there: erase a line and write another (a command shown
for approval that is not the one that runs), set the window title, or write the clipboard (OSC 52). Every
control character but newline and tab is shown as its picture (ESC as ␛); a transcript keeps its colours.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specd.commands.terminal.console import ShownConsole
from specd.commands.terminal.human import StreamHuman
from specd.system.visible import visible

OSC52 = "\x1b]52;c;ZWNobyBvd25lZA==\x07"  # "set the clipboard to `echo owned`"
ERASE = "\x1b[2K\r"
AGENT = f'''
import json, os, sys
sys.stdin.read()
print("\\x1b[32mtests passed\\x1b[0m \\x1b]0;a new window title\\x07")  # its transcript
json.dump({{"outcome": "done", "summary": "ok " + {json.dumps(OSC52 + ERASE)} + "[red]looks fine[/red]"}},
          open(os.environ["SPECD_RESULT"], "w"))
'''


@pytest.fixture
def ran(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    root = tmp_path / "proj"
    root.mkdir()
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    specd = [sys.executable, "-m", "specd"]
    for argv in ([*specd, "init"], [*specd, "new", "t"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
    agent = f"cmd:{sys.executable} {tmp_path / 'agent.py'}"
    run = subprocess.run([*specd, "continue", "t", "--auto", "--agent", agent], cwd=root, env=env,
                         capture_output=True, text=True, check=False)
    return root, env, run.stdout + run.stderr


def _specd(root: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "specd", *args], cwd=root, env=env, capture_output=True, text=True,
                          check=False)
    return done.stdout + done.stderr


def test_a_summary_with_escape_sequences_is_shown_not_obeyed(ran: tuple[Path, dict[str, str], str]) -> None:
    root, env, printed = ran
    for output in (printed, _specd(root, env, "status", "t"), _specd(root, env, "status")):
        assert "\x1b" not in output  # piped: rich adds no codes of its own, so any would be the model's
        assert "\x07" not in output
    assert "␛]52;c;ZWNobyBvd25lZA==␇" in printed
    assert "␛[2K␍" in _specd(root, env, "status", "t")
    assert "[red]looks fine[/red]" in printed  # rich markup in it is text too


def test_a_transcript_sets_no_window_title(ran: tuple[Path, dict[str, str], str]) -> None:
    root, env, _ = ran
    shown = _specd(root, env, "logs", "t")
    assert "tests passed ␛]0;a new window title␇" in shown
    assert "\x1b" not in shown


def test_the_console_keeps_its_own_styles_around_what_it_shows() -> None:
    sink = io.StringIO()
    console = ShownConsole(file=sink, force_terminal=True, color_system="standard", width=200, highlight=False)
    console.print(f"[bold]step[/bold] {ERASE}done")
    printed = sink.getvalue()
    assert "\x1b[1m" in printed  # rich's own bold
    assert "\x1b[2K" not in printed
    assert "␛[2K␍done" in printed


def test_a_question_and_a_command_for_approval_are_shown_as_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    sink = io.StringIO()
    from specd.commands.terminal import human

    monkeypatch.setattr(human, "err", lambda: ShownConsole(file=sink, force_terminal=True, width=200,
                                                           highlight=False))
    person = StreamHuman(io.StringIO("n\n"))
    assert person.approve_command(f"rm -rf ~{ERASE}ls [green]-la[/green]") is False
    shown = sink.getvalue()
    assert f"rm -rf ~{visible(ERASE)}ls [green]-la[/green]" in shown


def test_visible_leaves_plain_text_alone_and_shows_each_control_as_one_character() -> None:
    plain = "a\tb\nc — ü 日本"
    assert visible(plain) is plain
    mixed = "\x00\x1b\x7f\x9b"
    assert visible(mixed) == "␀␛␡\ufffd"
    assert len(visible(mixed)) == len(mixed)
    assert visible("\x1b[1;31mred\x1b[0m\x1b]2;t\x07", colours=True) == "\x1b[1;31mred\x1b[0m␛]2;t␇"


def test_a_command_for_approval_with_bidirectional_controls_is_shown_in_the_order_it_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """"Trojan Source": U+202E reverses what follows on a terminal that applies bidi, so `rm -rf ~ #‮ls` could read
    as harmless; each such control is shown as U+FFFD, one character for one."""
    sink = io.StringIO()
    from specd.commands.terminal import human

    monkeypatch.setattr(human, "err", lambda: ShownConsole(file=sink, force_terminal=True, width=200,
                                                           highlight=False))
    assert StreamHuman(io.StringIO("n\n")).approve_command("echo hi #\u202e; rm -rf ~\u2066") is False
    shown = sink.getvalue()
    assert "\u202e" not in shown
    assert "\u2066" not in shown
    assert "echo hi #\ufffd; rm -rf ~\ufffd" in shown
    assert visible("a\u202ab\u2069") == "a\ufffdb\ufffd"
    assert visible("عربى \u200f") == "عربى \u200f"  # a right-to-left mark alone changes no order: kept
