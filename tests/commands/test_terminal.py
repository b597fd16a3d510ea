"""What a person (or a pipe) sees: no wrapping, did-you-mean, misuse refused with exit 2, step k of N, no-key hints.

Every case drives the real CLI in a subprocess with stderr piped, as a log file or CI would read it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import forked
import pytest
from brain_harness import Harness


@pytest.fixture
def two_steps(h: Harness) -> Harness:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "b", "workflow": "w.md"}]})
    h.new("word-count")
    return h


def bare(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`specd ARGS` in ``cwd`` with no --project: what a user types in a folder."""
    return forked.run([sys.executable, "-m", "specd", *args], env=env, cwd=cwd, timeout=60)


def test_piped_stderr_is_not_wrapped(two_steps: Harness) -> None:
    h = two_steps
    h.env.pop("COLUMNS", None)  # the harness sets a wide terminal; a pipe has none
    summary = " ".join(["every word of this summary stays on the one line it was printed on"] * 2)[:99]
    agent = f"""cmd:printf '{{"outcome": "done", "summary": "{summary}"}}' > "$SPECD_RESULT\""""
    result = h.specd("continue", "word-count", "--auto", "--agent", agent)
    assert result.returncode == 0, result.stderr
    (finished,) = [line for line in result.stderr.splitlines() if line.startswith("✔ a")]
    assert finished.endswith(summary)  # 80 columns would have cut it after a word, mid-sentence
    assert len(finished) > 100


def test_did_you_mean_a_command(tmp_path: Path, h: Harness) -> None:
    result = bare("contineu", cwd=tmp_path, env=h.env)
    assert result.returncode == 2
    assert "did you mean 'continue'?" in result.stderr


def test_did_you_mean_a_task(two_steps: Harness) -> None:
    result = two_steps.specd("status", "wrod-count")
    assert result.returncode == 2
    assert "did you mean 'word-count'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_did_you_mean_a_step_for_from_and_step(two_steps: Harness) -> None:
    h = two_steps
    assert h.cont("word-count").returncode == 0
    rerun = h.specd("rerun", "word-count", "--from", "aa", "--auto")
    assert rerun.returncode == 2
    assert "did you mean 'a'?" in rerun.stderr
    logs = h.specd("logs", "word-count", "--step", "bb")
    assert logs.returncode == 2
    assert "did you mean 'b'?" in logs.stderr
    unknown = h.specd("logs", "word-count", "--step", "nope")
    assert unknown.returncode == 2
    assert "no step 'nope'" in unknown.stderr
    assert "a, b" in unknown.stderr  # names the steps there are
    assert unknown.stdout == ""


def test_two_modes_are_refused(two_steps: Harness) -> None:
    h = two_steps
    result = h.specd("continue", "word-count", "--semi-auto", "--auto", "--agent", h.agent_spec())
    assert result.returncode == 2
    assert "--semi-auto and --auto contradict each other" in result.stderr
    assert h.log() == []  # nothing ran
    same = h.specd("continue", "word-count", "--auto", "--auto", "--agent", h.agent_spec())
    assert same.returncode == 0, same.stderr  # the same flag twice is no contradiction


def test_status_outside_a_project(tmp_path: Path, h: Harness) -> None:
    outside = tmp_path / "plain-folder"
    outside.mkdir()
    result = bare("status", cwd=outside, env=h.env)
    assert result.returncode == 2
    assert "not a specd project" in result.stderr
    assert "specd init" in result.stderr


def test_step_k_of_n_in_the_live_line_and_in_status(two_steps: Harness) -> None:
    h = two_steps
    shown = h.specd("status", "word-count")
    assert shown.returncode == 0, shown.stderr
    assert "step 1 of 2: a" in shown.stdout
    run = h.cont("word-count")
    assert run.returncode == 0, run.stderr
    assert "▶ a (step 1 of 2)" in run.stderr
    assert "▶ b (step 2 of 2)" in run.stderr


def _no_key(h: Harness, path: str) -> str:
    env = {**h.env, "PATH": path}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    env.pop("SPECD_CLAUDE_BIN", None)
    result = subprocess.run(h.argv("continue", "word-count", "--auto", "--agent", "anthropic"), capture_output=True,
                            text=True, env=env, cwd=h.root, stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert result.returncode == 2, result.stderr
    fix = result.stderr[result.stderr.index("fix:"):]
    assert "--agent anthropic" not in fix  # never the backend that just failed
    assert "'cmd:" in fix
    assert "'scripted:" in fix
    return fix


def test_no_key_names_backends_that_work_here(two_steps: Harness, tmp_path: Path) -> None:
    h = two_steps
    tools = tmp_path / "bin"
    tools.mkdir()
    git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    (tools / "git").symlink_to(git)
    assert "claude_code" not in _no_key(h, str(tools))
    claude = tools / "claude"
    claude.write_text("#!/bin/sh\necho 2.0.0\n", encoding="utf-8")
    claude.chmod(0o755)
    assert "--agent claude_code" in _no_key(h, f"{tools}{os.pathsep}/usr/bin")


def test_the_top_level_help_names_every_exit_code(tmp_path: Path) -> None:
    from specd import errors

    shown = " ".join(bare("--help", cwd=tmp_path, env={**os.environ, "COLUMNS": "200"}).stdout.split())
    codes = {getattr(errors, name) for name in dir(errors) if name.startswith("EXIT_")}
    assert codes == {0, 1, 2, 3, 4, 130}
    for code in codes:
        assert f" {code} " in shown, code
    assert "4 cancelled" in shown


def _steps_shown(stderr: str) -> list[str]:
    return [line.strip().removeprefix("▶ ") for line in stderr.splitlines() if line.lstrip().startswith("▶ ")]


def test_step_k_of_n_counts_the_whole_plan_at_every_depth(h: Harness) -> None:
    """A nested pipeline's steps count in place of the step naming it, and a phase loop's once per phase."""
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "a", "workflow": "w.md"}, {"name": "middle", "pipeline": "mid"},
                         {"name": "e", "workflow": "w.md"}],
                "mid": [{"name": "b", "workflow": "w.md"}, {"name": "inner", "pipeline": "leaf"},
                        {"name": "d", "workflow": "w.md"}],
                "leaf": [{"name": "c1", "workflow": "w.md"}, {"name": "c2", "workflow": "w.md"}]})
    h.new("nested")
    run = h.cont("nested")
    assert run.returncode == 0, run.stderr
    shown = _steps_shown(run.stderr)
    assert [line.split(" (")[0] for line in shown] == ["a", "b", "c1", "c2", "d", "e"]
    assert [f"step {k} of 6" in line for k, line in enumerate(shown, 1)] == [True] * 6, shown


def test_step_k_of_n_counts_every_phase_of_the_roadmap(h: Harness) -> None:
    h.workflow("w.md")
    h.pipeline({"main": [{"name": "plan", "workflow": "w.md"},
                         {"name": "phases", "pipeline": "per-phase", "foreach": "phases"}],
                "per-phase": [{"name": "execute", "workflow": "w.md"}, {"name": "review", "workflow": "w.md"}]})
    h.new("t")
    (h.task_dir("t") / "ROADMAP.md").write_text(
        "# Roadmap\n\n### Phase 1: A\n\nA.\n\n### Phase 2: B\n\nB.\n", encoding="utf-8")
    assert "step 1 of 5: plan" in h.specd("status", "t").stdout
    run = h.cont("t")
    assert run.returncode == 0, run.stderr
    shown = _steps_shown(run.stderr)
    assert len(shown) == 5, shown
    assert [f"step {k} of 5" in line for k, line in enumerate(shown, 1)] == [True] * 5, shown
