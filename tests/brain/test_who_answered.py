"""Who answered, and from where: every checkpoint names its origin (cli, terminal, ...) and the person, shown by
`specd status` (text and --json) and `.pipeline-state.md`; a machine with no git identity still answers."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from pathlib import Path
from typing import Any

import pytest
from brain_harness import Harness
from jsonschema import Draft202012Validator
from test_modes_gates import builtin_shaped
from test_steer_answers import BEFORE_GATE, waiting_at_execute

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "envelope.schema.json").read_text())
IDENTITY_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL")


def repository(h: Harness, *identity: str) -> None:
    """Make the project a git repository; with ``identity`` (name, email), its own config names the user."""
    settings = [("commit.gpgsign", "false"), *zip(("user.name", "user.email"), identity, strict=False)]
    for argv in (["init", "-q"], *(["config", key, value] for key, value in settings)):
        done = subprocess.run(["git", *argv], cwd=h.root, env=h.env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    (h.root / ".git" / "info" / "exclude").write_text(".harness/\n", encoding="utf-8")


def answers(h: Harness, verb: str) -> list[dict[str, Any]]:
    status = h.status("t")
    assert list(Draft202012Validator(SCHEMA).iter_errors(status)) == []
    return [c for c in status["checkpoints"] if c["answer"] == verb]


def test_specd_approve_records_cli_and_the_projects_git_identity_everywhere_it_is_shown(h: Harness) -> None:
    repository(h, "Ada Lovelace", "ada@example.com")  # the project's own config: it wins over the global one
    waiting_at_execute(h)

    approved = h.specd("approve", "t", "--note", "ship the small version")

    assert approved.returncode == 0, approved.stderr
    [row] = answers(h, "approve")
    assert (row["via"], row["by"], row["note"]) == ("cli", "Ada Lovelace <ada@example.com>", "ship the small version")
    text = h.specd("status", "t")  # piped: plain text
    assert text.returncode == 0, text.stderr
    assert "approve  by Ada Lovelace <ada@example.com> via cli  note: ship the small version" in text.stdout
    assert text.stdout.count("answered (approve)") == 1, text.stdout  # said once, then what takes it up
    assert "no process has taken the answer up yet" in text.stdout
    again = h.specd("skip", "t")  # a second answer before any run took the first up
    assert again.returncode == 2
    assert "was answered already (approve)" in again.stderr
    done = h.specd("continue", "t")
    assert done.returncode == 0, done.stderr
    state_md = (h.task_dir("t") / ".pipeline-state.md").read_text(encoding="utf-8")
    assert ("execute — approve — by Ada Lovelace <ada@example.com> via cli — note: ship the small version"
            in state_md)


def test_an_answer_piped_at_a_semi_auto_gate_records_terminal(h: Harness) -> None:
    repository(h, "Grace Hopper", "grace@example.com")
    builtin_shaped(h)
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: Only\n\nThe one phase.\n", encoding="utf-8")
    h.cues(**{"step:review": {"outcomes": ["approve"]}})

    done = h.cont("t", "--semi-auto", input="proceed\n")

    assert done.returncode == 0, done.stderr
    assert h.log() == [*BEFORE_GATE, "step execute 01", "step review 01"]
    [row] = answers(h, "proceed")
    assert (row["step"], row["via"], row["by"]) == ("execute", "terminal", "Grace Hopper <grace@example.com>")
    state_md = (h.task_dir("t") / ".pipeline-state.md").read_text(encoding="utf-8")
    assert "execute — proceed — by Grace Hopper <grace@example.com> via terminal" in state_md


def test_a_gate_nobody_answered_records_no_decision_and_a_typed_stop_does(h: Harness) -> None:
    """End of input at a gate (a script, a Temporal worker's run) is a wait, not someone's decision: no checkpoint
    names the machine's git identity as having stopped the run. A person typing `q` did decide, and is named."""
    repository(h, "Grace Hopper", "grace@example.com")
    builtin_shaped(h)
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text("# Roadmap\n\n### Phase 1: Only\n\nThe one phase.\n", encoding="utf-8")

    ended = h.cont("t", "--semi-auto", input="")

    assert ended.returncode == 3, ended.stderr
    assert h.status("t")["status"] == "WAITING_FOR_HUMAN"
    assert h.status("t")["checkpoints"] == []
    typed = h.cont("t", "--semi-auto", input="q\n")
    assert typed.returncode == 3, typed.stderr
    [row] = answers(h, "stop")
    assert (row["step"], row["via"], row["by"]) == ("execute", "terminal", "Grace Hopper <grace@example.com>")


@pytest.mark.parametrize("login", ["ada-login", None])
def test_with_no_git_identity_an_answer_works_and_records_the_login_name(h: Harness, tmp_path: Path,
                                                                         login: str | None) -> None:
    """A fresh machine: no GIT_* identity, a HOME with no .gitconfig, no system config, a repository without
    user config. The answer goes through; `by` is $USER, else the name the system knows the user by."""
    empty = tmp_path / "empty-home"
    empty.mkdir()
    for name in (*IDENTITY_ENV, "USER", "LOGNAME", "LNAME", "USERNAME"):
        h.env.pop(name, None)
    h.env.update({"HOME": str(empty), "XDG_CONFIG_HOME": str(empty), "GIT_CONFIG_NOSYSTEM": "1"})
    h.env.update({"USER": login} if login else {})
    repository(h)
    waiting_at_execute(h)

    approved = h.specd("approve", "t")

    assert approved.returncode == 0, approved.stderr
    assert "Traceback" not in approved.stderr
    expected = login or pwd.getpwuid(os.getuid()).pw_name
    [row] = answers(h, "approve")
    assert (row["via"], row["by"]) == ("cli", expected)
    assert f"approve  by {expected} via cli" in h.specd("status", "t").stdout
    done = h.specd("continue", "t")
    assert done.returncode == 0, done.stderr
    assert f"approve — by {expected} via cli" in (h.task_dir("t") / ".pipeline-state.md").read_text(encoding="utf-8")


def test_rows_saved_before_who_was_kept_read_as_unknown(h: Harness) -> None:
    waiting_at_execute(h)
    state_path = h.task_dir("t") / ".pipeline-state.json"
    saved = json.loads(state_path.read_text(encoding="utf-8"))
    saved["checkpoints"] = [{"at": "2024-01-01T00:00:00+00:00", "step": "plan", "answer": "proceed", "note": ""}]
    state_path.write_text(json.dumps(saved), encoding="utf-8")

    assert h.specd("approve", "t").returncode == 0  # the old state loads, and takes the new row beside the old

    status = h.status("t")
    assert [(c["answer"], c.get("via")) for c in status["checkpoints"]] == [("proceed", None), ("approve", "cli")]
    assert "plan  proceed  by unknown" in h.specd("status", "t").stdout
