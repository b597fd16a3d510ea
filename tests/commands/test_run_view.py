"""What `specd run` prints, piped: a line per task's start and end, and the jail every run of one machine shares
said once, not once a task."""

from __future__ import annotations

import pytest

from specd.commands.terminal.many import RunView

JAILED = "jail: bubblewrap (user namespace, no capabilities)"
NONE = "jail: none — agent.sandbox is false: the agent runs with your whole environment and machine"


def test_a_jail_every_task_shares_is_said_once_and_one_that_differs_by_its_task(
        capsys: pytest.CaptureFixture[str]) -> None:
    view = RunView(as_json=False)
    for task in ("a", "b", "c"):
        view(task, {"kind": "task_started", "worktree": f".specd/worktrees/{task}"})
    view("a", {"kind": "notice", "message": JAILED})
    view("b", {"kind": "notice", "message": JAILED})
    view("c", {"kind": "notice", "message": NONE})
    view("b", {"kind": "notice", "message": "no price known for model m: its tokens are counted, not priced"})
    view("c", {"kind": "notice", "message": NONE})
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "a: started in .specd/worktrees/a", "b: started in .specd/worktrees/b", "c: started in .specd/worktrees/c",
        f"{JAILED} (a; said again only for a task whose jail differs)",
        f"{NONE} (c; said again only for a task whose jail differs)",
        "b: no price known for model m: its tokens are counted, not priced",  # a task's own notice: every time
    ]


def test_json_keeps_every_tasks_notice(capsys: pytest.CaptureFixture[str]) -> None:
    view = RunView(as_json=True)
    view("a", {"kind": "notice", "message": JAILED})
    view("b", {"kind": "notice", "message": JAILED})
    assert capsys.readouterr().out.count(JAILED) == 2  # a program reading the events learns each task's jail
