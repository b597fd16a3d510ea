"""Issue 8, point 1: a step commit holds the task folder and what that step changed, nothing else."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import time

from git_harness import GitProject, warnings

SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-marker-0001"
NOTES = "notes-marker-0002: my own scratch notes"
EDIT = "edit-marker-0003: half-finished work of the user"
DIRTY = "uncommitted changes (see `git status`)"


def test_user_files_and_edits_stay_out_of_every_commit(gp: GitProject) -> None:
    gp.write(".env", SECRET + "\n")
    gp.write("notes.txt", NOTES + "\n")
    gp.write("README.md", "# the user's project\n" + EDIT + "\n")
    gp.rules({"execute": {"write": {"src/app.py": "print('changed by the agent')\n"}}})
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    history = gp.git("log", "-p", "--all")
    for marker in (SECRET, NOTES, EDIT, "notes.txt", ".env"):
        assert marker not in history
    commits = dict(gp.commits())
    assert "src/app.py" in commits["docs(t): execute complete"]
    assert "changed by the agent" in gp.git("show", "HEAD:src/app.py")
    # the one warning says how many paths and where to look
    dirty = [line for line in warnings(result) if DIRTY in line]
    assert len(dirty) == 1, warnings(result)
    assert "3 paths outside .specd/" in dirty[0]
    # the user's work is untouched, still uncommitted
    status = gp.git("status", "--porcelain", "--", ".env", "notes.txt", "README.md").splitlines()
    assert sorted(status) == [" M README.md", "?? .env", "?? notes.txt"]
    assert EDIT in (gp.root / "README.md").read_text(encoding="utf-8")


def test_every_commit_holds_only_the_task_folder_and_the_steps_own_files(gp: GitProject) -> None:
    gp.rules({"plan": {"write": {"docs/plan-notes.md": "plan\n"}},
              "execute": {"write": {"src/app.py": "print(2)\n", "src/new_module.py": "x = 1\n"}}})
    (gp.root / "README.md").unlink()  # the user's own deletion, before the run
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    commits = gp.commits()
    outside = {subject: [f for f in files if not f.startswith(".specd/tasks/t/")] for subject, files in commits}
    assert outside["docs(t): plan complete"] == ["docs/plan-notes.md"]
    assert sorted(outside["docs(t): execute complete"]) == ["src/app.py", "src/new_module.py"]
    others = {s: files for s, files in outside.items() if s not in ("docs(t): plan complete",
                                                                     "docs(t): execute complete")}
    assert others
    assert not any(others.values()), others
    assert gp.git("status", "--porcelain").splitlines() == [" D README.md"]  # still the user's to commit


def test_a_step_that_deletes_a_file_commits_the_deletion(gp: GitProject) -> None:
    gp.new("t")
    # a `run:` hook changes files as a step does: its change goes into the next commit
    pipeline = json.loads((gp.root / ".specd/pipeline.json").read_text(encoding="utf-8"))
    pipeline["pipelines"]["main"][2]["hooks"] = {"post": {"run": "rm src/app.py"}}
    gp.write(".specd/pipeline.json", json.dumps(pipeline))
    gp.git("commit", "-q", "-am", "a hook that deletes")

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "src/app.py" not in gp.git("ls-files").splitlines()
    assert gp.git("status", "--porcelain") == ""


def test_a_file_the_user_had_edited_is_committed_only_when_the_step_changes_it(gp: GitProject) -> None:
    gp.write("src/app.py", "print('user edit')\n")
    gp.write("README.md", "# user edit, untouched by the step\n")
    gp.rules({"execute": {"write": {"src/app.py": "print('user edit')\nprint('agent edit')\n"}}})
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    assert "src/app.py" in dict(gp.commits())["docs(t): execute complete"]
    assert not [subject for subject, files in gp.commits() if "README.md" in files]
    said = [line for line in warnings(result) if "committed src/app.py" in line]
    assert len(said) == 1
    assert "uncommitted edits from before the step" in said[0]
    assert gp.git("status", "--porcelain").splitlines() == [" M README.md"]


def test_secret_looking_files_a_step_creates_are_never_committed_and_warned_once(gp: GitProject) -> None:
    gp.write("config/app.key", "tracked-key-v1\n")  # tracked already: the user's choice, kept committing
    gp.git("add", "config/app.key")
    gp.git("commit", "-q", "-m", "tracked key")
    gp.rules({
        "plan": {"write": {".env.local": "TOKEN=marker-plan\n", "server.pem": "-----BEGIN marker-pem",
                           ".specd/tasks/{task}/id_rsa": "marker-id-rsa", "src/ok.py": "ok = 1\n"}},
        # server.pem again: warned once. (.env.local is read-only to a jailed agent once it exists: its keys.)
        "execute": {"write": {"server.pem": "-----BEGIN marker-pem-2", "config/app.key": "tracked-key-v2\n",
                              "deploy/credentials-prod.json": "{{}}", "certs/client.p12": "p12"}},
    })
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    tracked = gp.git("ls-files").splitlines()
    for name in (".env.local", "server.pem", ".specd/tasks/t/id_rsa", "deploy/credentials-prod.json",
                 "certs/client.p12"):
        assert name not in tracked
        said = [line for line in warnings(result) if "not committing" in line and name in line]
        assert len(said) == 1, (name, warnings(result))
    assert "marker" not in gp.git("log", "-p", "--all")
    assert "src/ok.py" in tracked
    assert "tracked-key-v2" in gp.git("show", "HEAD:config/app.key")


def test_a_step_commits_no_file_the_jail_hides_by_name_and_does_commit_templates_and_public_keys(
        gp: GitProject) -> None:
    # A PKCS#12 store is binary and holds no value specd could know: only its name keeps it out.
    gp.rules({"plan": {"write": {"certs/client.pfx": "pfx-marker",
                                 ".netrc": "machine h login me password netrc-marker\n",
                                 ".env.example": "API_KEY=\n", "id_rsa.pub": "ssh-rsa AAAA me@host\n",
                                 "src/id_map.py": "ids = dict()\n"}}})
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    tracked = gp.git("ls-files").splitlines()
    for name in ("certs/client.pfx", ".netrc"):
        assert name not in tracked
        said = [line for line in warnings(result) if "not committing" in line and name in line]
        assert len(said) == 1, (name, warnings(result))
        assert "the name looks like a secret" in said[0]
    assert "marker" not in gp.git("log", "-p", "--all")
    for name in (".env.example", "id_rsa.pub", "src/id_map.py"):
        assert name in tracked


def test_transcripts_stay_out_of_git_by_default(gp: GitProject) -> None:
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    transcripts = list((gp.root / ".specd/tasks/t/transcripts").rglob("*.log"))
    assert transcripts, "the command agent's output is kept in the task folder"
    assert not [p for p in gp.git("ls-files").splitlines() if "/transcripts/" in p]
    assert gp.git("status", "--porcelain") == ""


def test_commit_transcripts_option_commits_them(gp: GitProject) -> None:
    config = json.loads((gp.root / ".specd/config.json").read_text(encoding="utf-8"))
    gp.write(".specd/config.json", json.dumps({**config, "commit_transcripts": True}))
    gp.git("commit", "-q", "-am", "commit transcripts")
    gp.new("t")
    # an agent CLI's own state beside the transcripts (Claude Code's CLAUDE_CONFIG_DIR): its sign-in and its
    # sessions as it wrote them, never redacted by specd
    state = gp.root / ".specd/tasks/t/transcripts/.agent/claude_code"
    (state / "projects").mkdir(parents=True)
    (state / ".claude.json").write_text('{"primaryApiKey": "sk-ant-api03-not-a-real-key"}\n')
    (state / "projects" / "s.jsonl").write_text('{"type": "assistant"}\n')

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    on_disk = {p.relative_to(gp.root).as_posix() for p in (gp.root / ".specd/tasks/t/transcripts").rglob("*.log")}
    committed = {p for p in gp.git("ls-files").splitlines() if "/transcripts/" in p}
    assert len(on_disk) == 3
    assert committed == on_disk  # the logs, and nothing of the CLI's state


def test_an_older_gitignore_gets_the_missing_lines(gp: GitProject) -> None:
    old = "*.lock\n*.lock.owner\n**/.heartbeat\n**/.result-*.json\n**/.tmp-*\nmy-own-line"
    gp.write(".specd/.gitignore", old)
    gp.git("commit", "-q", "-am", "an older specd's gitignore")
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    lines = (gp.root / ".specd/.gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:6] == old.splitlines()
    assert "tasks/*/transcripts/" in lines
    assert len(lines) == len(set(lines))
    assert not [p for p in gp.git("ls-files").splitlines() if "/transcripts/" in p]


def test_rules_that_are_not_utf8_are_kept_as_they_are_and_the_missing_lines_added(gp: GitProject) -> None:
    old = b"# caf\xe9, in Latin-1\n*.lock\n"  # git's rules are bytes; before, every run ended in a traceback here
    (gp.root / ".specd/.gitignore").write_bytes(old)
    gp.git("commit", "-q", "-am", "rules in Latin-1")
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    kept = (gp.root / ".specd/.gitignore").read_bytes()
    assert kept.startswith(old)
    assert b"tasks/*/transcripts/" in kept
    assert kept.count(b"*.lock\n") == 1


def test_a_failing_commit_is_a_visible_warning_and_its_work_is_committed_later(gp: GitProject) -> None:
    # specd's commits run no repository hooks, so the failure comes from a git in front of the real one.
    real = shutil.which("git")
    assert real is not None
    marker, bin_dir = gp.dir / "fail-next-commit", gp.dir / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        f"  if [ \"$arg\" = commit ] && [ -e '{marker}' ]; then rm '{marker}'; echo 'hook says no' >&2; exit 1; fi\n"
        "done\n"
        f'exec {shlex.quote(real)} "$@"\n', encoding="utf-8")
    fake.chmod(0o755)
    gp.env["PATH"] = f"{bin_dir}{os.pathsep}{gp.env['PATH']}"
    gp.rules({"execute": {"write": {"src/app.py": "print('agent')\n", str(marker): "x"}}})
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    failed = [line for line in warnings(result) if "git" in line and "commit" in line and "hook says no" in line]
    assert len(failed) == 1, warnings(result)
    commits = dict(gp.commits())
    assert "docs(t): execute complete" not in commits
    assert "src/app.py" in commits["docs(t): run state COMPLETE"]
    assert gp.git("status", "--porcelain") == ""


def test_a_step_interrupted_by_a_crash_is_committed_by_its_rerun(gp: GitProject) -> None:
    gp.write("notes.txt", NOTES + "\n")
    gp.new("t")
    gp.rules({"execute": {"write": {"src/app.py": "print('agent')\n"}, "hold": True}})
    proc = gp.start("t")
    deadline = time.monotonic() + 120
    while not (gp.dir / "held").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # specd dies in the middle of the step, after the agent wrote its file
    proc.communicate(timeout=120)
    assert proc.returncode == -9
    assert not any("src/app.py" in files for _, files in gp.commits())

    gp.rules({"execute": {"write": {"src/app.py": "print('agent')\n"}}})  # the re-run writes the same again
    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "src/app.py" in dict(gp.commits())["docs(t): execute complete"]
    dirty = [line for line in warnings(result) if DIRTY in line]
    assert len(dirty) == 1
    assert "1 path outside .specd/ has" in dirty[0]  # notes.txt only: the step's own file is not the user's
    assert NOTES not in gp.git("log", "-p", "--all")


def test_a_transient_index_lock_is_retried(gp: GitProject) -> None:
    # A git in front of the real one: its first two commits meet a lock held by "someone else".
    real = shutil.which("git")
    assert real is not None
    bin_dir, count = gp.dir / "bin", gp.dir / "commit-failures"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(
        "#!/bin/sh\n"
        'for arg in "$@"; do\n'
        '  if [ "$arg" = commit ]; then\n'
        f"    n=$(cat '{count}' 2>/dev/null || echo 0)\n"
        '    if [ "$n" -lt 2 ]; then\n'
        f"      echo $((n + 1)) > '{count}'\n"
        "      echo \"fatal: Unable to create '$PWD/.git/index.lock': File exists.\" >&2\n"
        "      exit 128\n"
        "    fi\n"
        "  fi\n"
        "done\n"
        f'exec {shlex.quote(real)} "$@"\n', encoding="utf-8")
    fake.chmod(0o755)
    gp.rules({"execute": {"write": {"src/app.py": "print('agent')\n"}}})
    gp.new("t")
    gp.env["PATH"] = f"{bin_dir}{os.pathsep}{gp.env['PATH']}"

    result = gp.run("t")

    assert result.returncode == 0, result.stdout + result.stderr
    assert count.read_text(encoding="utf-8").strip() == "2"
    assert warnings(result) == []
    subjects = [subject for subject, _ in gp.commits()]
    assert subjects[0] == "docs(t): starting discuss"
    assert "src/app.py" in dict(gp.commits())["docs(t): execute complete"]


def test_auto_commit_code_false_commits_the_task_folder_only(gp: GitProject) -> None:
    config = json.loads((gp.root / ".specd/config.json").read_text(encoding="utf-8"))
    gp.write(".specd/config.json", json.dumps({**config, "auto_commit_code": False}))
    gp.git("commit", "-q", "-am", "no code commits")
    gp.rules({"execute": {"write": {"src/app.py": "print('agent')\n"}}})
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 0, result.stderr
    commits = gp.commits()
    assert [s for s, _ in commits][-1] == "docs(t): run state COMPLETE"
    assert all(f.startswith(".specd/tasks/t/") for s, files in commits if s.startswith("docs(t)") for f in files)
    assert gp.git("status", "--porcelain").splitlines() == [" M src/app.py"]


def test_a_step_that_fails_commits_its_work_so_far_under_a_subject_that_says_so(gp: GitProject) -> None:
    gp.agent.write_text(
        "import os, sys\nfrom pathlib import Path\nsys.stdin.read()\n"
        "if os.environ['SPECD_STEP'] == 'plan':\n    Path('NOTES.md').write_text('half a plan\\n')\n    sys.exit(3)\n"
        "Path(os.environ['SPECD_RESULT']).write_text('{\"outcome\": \"done\"}')\n", encoding="utf-8")
    gp.new("t")

    result = gp.run("t")

    assert result.returncode == 1, result.stdout + result.stderr
    commits = dict(gp.commits())
    assert "NOTES.md" in commits["docs(t): run state BLOCKED (with the unfinished work of plan)"]
    assert "NOTES.md" not in commits["docs(t): starting plan"]
