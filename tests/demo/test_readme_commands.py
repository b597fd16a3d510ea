"""Every `specd` command of README.md's shell blocks, read from the README itself: run as written, or parsed.

The tour's blocks run in test_readme_tour.py. Every other command line is either in RUN (run as written, in the
README's order, by bash with `specd` on PATH, no API key and no network, in a scratch folder or a prepared
project, and held to what the README says of it) or in PARSE_ONLY (with the reason it cannot run here). Every
line, in a table or not, goes through click's parser as well, so a renamed verb or option fails here even where
the command cannot run. A README command in neither table fails, saying where to add it. The `specd ...` spans of
the prose (shorthand such as `specd approve|reject|skip TASK`) are held to real verbs and options.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from readme_commands import README, Line, inline_commands, invocations, parse, readme_commands, unknown_words

TOUR = "A five-minute tour"  # run block by block in test_readme_tour.py
SCHEMA = json.loads((README.parent / "schemas" / "envelope.schema.json").read_text(encoding="utf-8"))
CLICK_REFUSALS = ("Usage:", "No such option", "No such command", "Got unexpected extra argument", "Traceback")
# the scratch project's pipeline: two built-in workflows, and the README's own smallest command agent as its agent,
# so the commands that name no agent run too (without a key the default, Anthropic's, refuses)
PIPELINE = {"schema_version": "1.0", "agent": {"backend": "command",
                                                "command": "echo '{\"outcome\": \"done\"}' > \"$SPECD_RESULT\""},
            "pipelines": {"main": [{"name": "discuss", "workflow": "discuss.md"},
                                   {"name": "plan", "workflow": "plan.md"}]}}


def _json(out: str, project: Path) -> None:
    data = json.loads(out)
    assert [e.message for e in Draft202012Validator(SCHEMA).iter_errors(data)] == []


def _status_json(out: str, project: Path) -> None:
    _json(out, project)
    assert json.loads(out)["status"] == "COMPLETE"


def _after_api(out: str, project: Path) -> None:
    config = json.loads((project / ".specd" / "tasks" / "ui" / "config.json").read_text(encoding="utf-8"))
    assert config["depends_on"] == ["api"]  # "ui needs api first (depends_on in its config.json)"


def _landed(*tasks: str) -> Callable[[str, Path], None]:
    def check(out: str, project: Path) -> None:
        merges = _git(project, "log", "--merges", "--format=%s", "--grep", "land task").splitlines()
        assert sorted(merges) == sorted(f"Merge specd/{t}: land task {t}" for t in tasks)  # "(a merge commit)"

    return check


@dataclass(frozen=True)
class Run:
    where: str  # "scratch" (an empty folder), a folder under it, or "project" (the prepared project)
    codes: tuple[int, ...]  # the exit codes the README allows
    says: str = ""  # words the output must hold
    instead: str = ""  # what runs, when the line does more than this test may (the entry says why)
    before: tuple[str, ...] = ()  # shell lines that bring the project to the state the command needs
    check: Callable[[str, Path], None] | None = None  # the README's other words about it


CMD_AGENT = """specd continue my-task --auto --agent 'cmd:echo "{\\"outcome\\": \\"done\\"}" > "$SPECD_RESULT"'"""
RUN = {
    # the venv and the editable install are this test run's own environment; the demo runs as written
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[dev]' && specd demo":
        Run("scratch", (0,), "COMPLETE", instead="specd demo"),
    "specd status word-count": Run("scratch/specd-demo", (0,), "word-count  COMPLETE"),
    "specd demo --semi-auto --dir gated < /dev/null": Run("scratch", (3,), "waiting for you"),
    "cd gated && yes proceed | specd continue word-count --semi-auto": Run("scratch", (0,), "COMPLETE"),
    " ".join(CMD_AGENT.split()): Run("project", (0,), "COMPLETE"),
    "specd status": Run("project", (0,), "my-task  COMPLETE"),
    "specd status my-task": Run("project", (0,), "COMPLETE"),
    "specd status my-task --json": Run("project", (0,), check=_status_json),
    'specd new api --description "the HTTP API"': Run("project", (0,), "created .specd/tasks/api/"),
    'specd new ui --description "the screens" --after api': Run("project", (0,), check=_after_api),
    "specd run ui --semi-auto": Run("project", (0,), "COMPLETE"),
    "specd land api": Run("project", (0,), check=_landed("api")),
    # the README's "... or" is the other way to the same end: a task that completes in this run lands, the tasks
    # it needs first (ui, finished above and not landed)
    "specd run --all --auto --land": Run("project", (0,), "landed docs", before=(
        "specd new docs --description 'the docs' --after ui",), check=_landed("api", "ui", "docs")),
    "specd run --all --semi-auto": Run("project", (0,)),
    'specd approve t1 --note "ship it"': Run("project", (0,), "next:", before=(
        "specd new t1 --description 'one task'", "specd continue t1 < /dev/null; test $? -eq 3")),
    "specd status api": Run("project", (0,), "COMPLETE"),
    "specd doctor": Run("project", (0, 1), "specd doctor:"),  # 1 when a check FAILs on this machine
    "specd doctor --json": Run("project", (0, 1), check=_json),
}
SIGNED_IN = "needs that agent's CLI signed in to its service: an account and the network"
TEMPORAL = "needs the Temporal server the README starts by hand (tests/executors/temporal runs one of its own)"
PARSE_ONLY = {
    "specd continue my-task --agent claude_code": SIGNED_IN,
    "specd continue my-task --agent codex": SIGNED_IN,
    "specd continue my-task --agent gemini": SIGNED_IN,
    "specd run --all --auto -j 4 --agent claude_code": SIGNED_IN,
    "specd ui": "a long-lived server that opens a browser (tests/web runs `specd ui --no-browser`)",
    "specd ui --no-browser": "a long-lived server (tests/web runs it, on a free port)",
    "specd approve t2 --server 'http://127.0.0.1:8765/?token=...'": "answers a `specd ui` the README started by hand",
    "claude mcp add specd -- specd mcp": "changes the user's Claude Code settings; `specd mcp` is a stdio server",
    "specd worker --temporal localhost:7233 --remote git@example.com:team/repo.git --workdir ~/specd-work -j 4 "
    "--agent claude_code --semi-auto": TEMPORAL,
    "specd run --all --executor temporal --temporal localhost:7233": TEMPORAL,
    "specd run --all --executor temporal --temporal localhost:7233 --wait": TEMPORAL,
    'specd approve api --note "ship it"': TEMPORAL + "; the local answer runs above (approve t1)",
    "specd cancel api": TEMPORAL,
}
HOW = ("add it to RUN in tests/demo/test_readme_commands.py (where it runs, its exit codes, what it says) or, if it "
       "cannot run in a test, to PARSE_ONLY with the reason")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SPECD_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1",
               COLUMNS="200", GIT_AUTHOR_NAME="Read Me", GIT_AUTHOR_EMAIL="readme@example.com",
               GIT_COMMITTER_NAME="Read Me", GIT_COMMITTER_EMAIL="readme@example.com")
    return env


def _bash(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300,
                          check=False)


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, env=_env(), capture_output=True, text=True, timeout=60,
                          check=True).stdout


def _project(root: Path) -> Path:
    """A git repository after `specd init`, its pipeline committed, with the tour's my-task made."""
    project = root / "project"
    project.mkdir()
    _git(project, "init", "-q", "-b", "main")
    assert _bash("specd init", project).returncode == 0
    (project / ".specd" / "pipeline.json").write_text(json.dumps(PIPELINE, indent=2), encoding="utf-8")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "the project")
    assert _bash('specd new my-task --description "Add CSV export"', project).returncode == 0
    return project


def test_every_readme_command_is_run_or_named() -> None:
    keys = [line.key for line in readme_commands() if line.section != TOUR]
    assert keys, "no `specd` command found in README.md's shell blocks: is the extraction broken?"
    missing = [key for key in keys if key not in RUN and key not in PARSE_ONLY]
    assert missing == [], f"README commands neither run nor named: {missing}; {HOW}"
    assert not set(RUN) & set(PARSE_ONLY)
    stale = sorted((set(RUN) | set(PARSE_ONLY)) - set(keys))
    assert stale == [], f"these are no longer in README.md: take them out of the tables: {stale}"


@pytest.mark.parametrize("line", readme_commands(), ids=lambda line: line.key[:60])
def test_every_readme_command_parses(line: Line) -> None:
    text = line.text
    argvs = invocations(text)
    assert argvs, text
    for argv in argvs:
        assert parse(argv).startswith("specd "), argv  # a UsageError names the option or verb that is gone


def test_the_readme_commands_run_as_written(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    project = _project(tmp_path)
    for line in readme_commands():
        run = RUN.get(line.key)
        if line.section == TOUR or run is None:
            continue
        cwd = project if run.where == "project" else tmp_path / run.where
        for step in run.before:
            ready = _bash(step, cwd)
            assert ready.returncode == 0, f"{step}: {ready.stdout}{ready.stderr}"
        done = _bash(run.instead or line.text, cwd)
        said = done.stdout + done.stderr
        assert done.returncode in run.codes, f"{line.text} exited {done.returncode}:\n{said}"
        assert not any(refusal in said for refusal in CLICK_REFUSALS), f"{line.text}:\n{said}"
        assert run.says in said, f"{line.text} does not say {run.says!r}:\n{said}"
        if run.check is not None:
            run.check(done.stdout, project)


def test_the_commands_in_the_readmes_prose_name_real_verbs_and_options() -> None:
    spans = inline_commands()
    assert len(spans) > 20, "the README's `specd ...` spans were not found: is the extraction broken?"
    wrong = {span: unknown for span in spans if (unknown := unknown_words(span))}
    assert wrong == {}, f"README.md names verbs or options specd does not have: {wrong}"
