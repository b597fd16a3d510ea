"""A link the agent made in a folder it writes never leads specd, outside the jail, to a file of the user's.

Inside the jail the user's files are out of sight, but a link to one can still be made: as ``$SPECD_RESULT``
(read by specd, its fields kept in the run state and committed), as a file of a backend's state folder (written
by specd before each step), as ``FEATURE.md`` (sent to the model). Each is read or written by specd, as the user,
outside the jail: each here holds without following the link.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from specd.agents.anthropic.context import _task_description
from specd.agents.codex.agent import _seed
from specd.agents.gemini.options import Options
from specd.system import jail
from specd.system.ownfiles import NotOwnFile, read_regular

MARK = "S3CRET-of-the-user-0123456789"


@pytest.fixture
def users_file(tmp_path: Path) -> Path:
    """A JSON file of the user's, outside the project, shaped like a result, as a cloud login's would be."""
    path = tmp_path / "home" / ".config" / "creds.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"outcome": "done", "summary": "ok", "refresh_token": MARK}), encoding="utf-8")
    return path


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "proj"
    root.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@e", "NO_COLOR": "1"}
    specd = [sys.executable, "-m", "specd"]
    for argv in (["git", "init", "-q"], [*specd, "init"], [*specd, "new", "t"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "initial"]):
        subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
    return root, env


def _continue(root: Path, env: dict[str, str], script: str) -> subprocess.CompletedProcess[str]:
    agent = f"cmd:sh -c {json.dumps('cat >/dev/null; ' + script)}"
    return subprocess.run([sys.executable, "-m", "specd", "continue", "t", "--auto", "--agent", agent], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def test_a_result_file_made_a_link_to_a_users_file_is_refused_and_nothing_of_it_is_kept(
        tmp_path: Path, users_file: Path) -> None:
    root, env = _project(tmp_path)

    run = _continue(root, env, f'ln -sf {users_file} "$SPECD_RESULT"')

    assert run.returncode == 1, run.stdout + run.stderr
    assert "$SPECD_RESULT" in run.stdout + run.stderr
    assert "is a link" in run.stdout + run.stderr
    kept = [str(p) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts and MARK in p.read_text(
        encoding="utf-8", errors="replace")]
    assert kept == []
    log = subprocess.run(["git", "log", "--all", "-p"], cwd=root, capture_output=True, text=True, check=True).stdout
    assert MARK not in log


def test_a_result_file_made_a_fifo_fails_the_step_instead_of_hanging_specd(tmp_path: Path) -> None:
    root, env = _project(tmp_path)

    run = _continue(root, env, 'rm -f "$SPECD_RESULT"; mkfifo "$SPECD_RESULT"')

    assert run.returncode == 1, run.stdout + run.stderr
    assert "not a regular file" in run.stdout + run.stderr


def test_codex_seeding_replaces_links_in_its_folder_instead_of_writing_through_them(tmp_path: Path) -> None:
    project = tmp_path / "proj" / ".specd" / "codex"
    (project / "prompts").mkdir(parents=True)
    (project / "config.toml").write_text('model = "gpt-5"\n', encoding="utf-8")
    (project / "prompts" / "review.md").write_text("review\n", encoding="utf-8")
    outside = tmp_path / "users"
    outside.mkdir()
    (outside / ".bashrc").write_text("the user's shell\n", encoding="utf-8")
    home = tmp_path / "state" / "codex"
    home.mkdir(parents=True)
    (home / "config.toml").symlink_to(outside / ".bashrc")  # left by the model's commands in the last step
    (home / "prompts").symlink_to(outside)

    _seed(home, project)

    assert (outside / ".bashrc").read_text(encoding="utf-8") == "the user's shell\n"
    assert sorted(p.name for p in outside.iterdir()) == [".bashrc"]
    assert not (home / "config.toml").is_symlink()
    assert (home / "config.toml").read_text(encoding="utf-8") == 'model = "gpt-5"\n'
    assert not (home / "prompts").is_symlink()
    assert (home / "prompts" / "review.md").read_text(encoding="utf-8") == "review\n"


def test_gemini_settings_are_not_written_through_a_linked_folder(tmp_path: Path) -> None:
    outside = tmp_path / "users-editor"
    outside.mkdir()
    home = tmp_path / "state" / "gemini"
    home.mkdir(parents=True)
    (home / ".gemini").symlink_to(outside)

    path = Options().write_settings(home, SimpleNamespace(max_turns=None), {})  # type: ignore[arg-type]

    assert list(outside.iterdir()) == []
    assert path == home / ".gemini" / "settings.json"
    assert not (home / ".gemini").is_symlink()
    assert "security" in json.loads(path.read_text(encoding="utf-8"))


def test_a_feature_file_made_a_link_is_not_sent_as_the_task_description(tmp_path: Path, users_file: Path) -> None:
    task = tmp_path / "task"
    task.mkdir()
    (task / "config.json").write_text("{}", encoding="utf-8")
    (task / "FEATURE.md").symlink_to(users_file)

    assert MARK not in _task_description(task)
    (task / "FEATURE.md").unlink()
    (task / "FEATURE.md").write_text("# Export\n\nCSV export.\n", encoding="utf-8")
    assert _task_description(task) == "# Export\n\nCSV export."


def test_read_regular_refuses_what_is_too_big(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    assert read_regular(big, 11) == b"x" * 11
    with pytest.raises(NotOwnFile, match="larger than 10 bytes"):
        read_regular(big, 10)


def test_the_heartbeat_and_appended_notes_make_a_link_in_their_place_a_file_of_their_own(
        tmp_path: Path, users_file: Path) -> None:
    from specd.state.atomic import append_text
    from specd.state.checkpoint import Origin, ask_cancel
    from specd.state.store import Heartbeat

    before = users_file.read_text(encoding="utf-8")
    task = tmp_path / "task"
    task.mkdir()
    for name in (".heartbeat", "CHANGELOG.md", ".cancel-requested"):  # specd writes these while the agent runs
        (task / name).symlink_to(users_file)

    with Heartbeat(task / ".heartbeat", every=3600):
        pass
    append_text(task / "CHANGELOG.md", "\n### Hook failure\n")
    ask_cancel(task, Origin("cli", "me"))

    assert users_file.read_text(encoding="utf-8") == before
    for name in (".heartbeat", "CHANGELOG.md", ".cancel-requested"):
        assert not (task / name).is_symlink()
    assert (task / "CHANGELOG.md").read_text(encoding="utf-8") == "\n### Hook failure\n"
    assert json.loads((task / ".cancel-requested").read_text(encoding="utf-8")) == {"via": "cli", "by": "me"}
    fifo = task / "fifo"
    os.mkfifo(fifo)
    append_text(fifo, "x\n")  # no reader: made a file, not a hang
    assert fifo.read_text(encoding="utf-8") == "x\n"


def test_a_review_file_made_a_fifo_or_a_link_to_an_endless_file_is_no_verdict_and_no_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "REVIEW.md"
    os.mkfifo(fifo)
    (tmp_path / "OTHER.md").symlink_to("/dev/zero")
    code = ("import sys; from pathlib import Path; from specd.engine.verdict import _last_verdict, _stamp; "
            "print([_last_verdict(Path(p)) for p in sys.argv[1:]], [_stamp(Path(p)) for p in sys.argv[1:]])")
    done = subprocess.run([sys.executable, "-c", code, str(fifo), str(tmp_path / "OTHER.md")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[None, None] [None, None]"


def test_a_task_document_or_an_env_file_made_a_fifo_does_not_hang_status(tmp_path: Path) -> None:
    root, env = _project(tmp_path)
    os.mkfifo(root / ".specd" / "tasks" / "t" / "ROADMAP.md")  # read for the task's phases
    os.mkfifo(root / ".env.local")  # read for the values to redact
    (root / ".env").symlink_to(tmp_path / "shared.env")  # a linked .env is common: still read
    (tmp_path / "shared.env").write_text("API_TOKEN=abc123-linked-secret-value\n", encoding="utf-8")

    done = subprocess.run([sys.executable, "-m", "specd", "status", "t"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOT_STARTED" in done.stdout
    from specd.tasks.secret_values import values_in

    assert ("API_TOKEN", "abc123-linked-secret-value") in values_in(root / ".env")
    assert values_in(root / ".env.local") == []


def test_a_capped_read_asks_for_what_is_there_and_reads_on_when_the_file_grew() -> None:
    import io

    from specd.system.ownfiles import read_capped

    class Counting(io.BytesIO):
        asked: list[int] = []

        def read(self, size: int | None = -1) -> bytes:
            self.asked.append(-1 if size is None else size)
            return super().read(size)

    grown = Counting(b"abcdef")
    assert read_capped(grown, 3, 1 << 30) == b"abcdef"  # it was 3 bytes when looked at; 6 now
    assert grown.asked[0] == 4  # not a gigabyte's buffer for a file of three bytes
    assert read_capped(io.BytesIO(b"abcdef"), 6, 4) == b"abcde"  # one past the limit: the caller refuses it


@pytest.mark.skipif(not (jail.active() or os.environ.get("CI")), reason="bubblewrap is not available here")
def test_in_the_jail_the_lock_owner_file_cannot_be_rewritten_to_aim_a_cancel_elsewhere(tmp_path: Path) -> None:
    root, env = _project(tmp_path)
    owner = '.specd/tasks/t/.run.lock.owner'
    forged = json.dumps({"pid": 1, "host": "x", "since": "x", "mark": "x"})
    run = _continue(root, env, f"echo '{forged}' > {owner} || echo refused-write; "
                                f"echo '{forged}' > /tmp/o && mv /tmp/o {owner} || echo refused-move; exit 1")

    assert run.returncode == 1, run.stdout + run.stderr
    assert "refused-write" in run.stdout + run.stderr
    assert "refused-move" in run.stdout + run.stderr
    assert not (root / owner).exists()  # the run ended and took it away: it was specd's, not the agent's


def test_a_big_env_file_or_feature_file_is_read_from_its_start_not_dropped(tmp_path: Path) -> None:
    """Refusing what is too big is for files specd acts on whole; a .env past 1 MB still has its secrets masked,
    and a long FEATURE.md still describes the task."""
    from specd.tasks.secret_values import values_in

    env = tmp_path / ".env"
    env.write_text("API_TOKEN=abc123-first-line-secret\n" + "# padding\n" * 200_000, encoding="utf-8")
    assert env.stat().st_size > 1 << 20
    assert ("API_TOKEN", "abc123-first-line-secret") in values_in(env)
    (tmp_path / "FEATURE.md").write_text("Add CSV export.\n" + "x" * 100_000, encoding="utf-8")
    assert _task_description(tmp_path).startswith("Add CSV export.")
    assert read_regular(env, 10, head=True) == b"API_TOKEN="
