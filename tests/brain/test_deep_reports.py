"""What an agent reports is the model's to shape: a report nested too deep fails the step, never specd, and a
summary too long is kept cut.

Found by hand, as the model: `$SPECD_RESULT` holding 200,000 nested brackets gave a traceback (json's
RecursionError is no ValueError), and an output 700 levels deep decoded, then broke the recursive redaction
of the history row with a traceback. Either way the step fails with a line that says why, the run stops
resumable, and nothing already saved is lost.
"""

from __future__ import annotations

from brain_harness import Harness


def two_steps(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": n, "workflow": "work.md"} for n in ("a", "b")]})
    h.new("t")


def nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_a_report_nested_deeper_than_json_decodes_fails_the_step_with_a_line(h: Harness) -> None:
    two_steps(h)
    h.cues(**{"step:b": {"raw": "[" * 200_000 + "]" * 200_000}})
    result = h.cont("t")
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert "step 'b' failed: $SPECD_RESULT" in result.stderr
    assert "is not valid JSON: maximum recursion depth exceeded" in result.stderr
    assert [e["step"] for e in h.status("t")["history"] if e["kind"] == "step"] == ["a"]


def test_an_output_nested_past_the_limit_fails_the_step_and_one_within_it_is_kept(h: Harness) -> None:
    two_steps(h)
    h.cues(**{"step:b": {"report": {"output": nested(700)}}})
    result = h.cont("t")
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    assert "step 'b' failed: the agent's report is nested 701 levels deep (at most 100)" in result.stderr
    h.cues(**{"step:b": {"report": {"output": nested(90)}}})
    again = h.cont("t")
    assert again.returncode == 0, again.stderr
    assert h.status("t")["status"] == "COMPLETE"
    assert h.log() == ["step a", "step b", "step b"]  # a ran once; b again after its refusal


def test_a_summary_of_a_million_characters_is_kept_cut_and_says_so(h: Harness) -> None:
    """Found by hand: a 3.5 MB summary went whole into the history, the journal and so into git, at every step;
    `status` then read megabytes. A summary is a paragraph or a few."""
    two_steps(h)
    h.cues(**{"step:a": {"summary": "word " * 200_000}})
    result = h.cont("t")
    assert result.returncode == 0, result.stderr
    [first, _] = [e for e in h.status("t")["history"] if e["kind"] == "step"]
    assert first["summary"].startswith("word word ")
    assert first["summary"].endswith(" … (cut: 1,000,000 characters)")
    assert len(first["summary"]) < 4_100
    task = h.task_dir("t")
    assert (task / "events.jsonl").stat().st_size < 100_000
    assert (task / ".pipeline-state.history.jsonl").stat().st_size < 100_000


def test_an_outcome_of_a_million_characters_fails_the_step_in_one_short_line(h: Harness) -> None:
    """Found by hand: it was refused as undeclared, but quoted whole: 3 MB on the terminal, 6 MB of history."""
    two_steps(h)
    h.cues(**{"step:a": {"outcomes": ["x" * 1_000_000]}})
    result = h.cont("t")
    assert result.returncode == 1
    assert "step 'a' failed: the agent reported an outcome of 1,000,000 characters ('xxxx" in result.stderr
    assert len(result.stderr) < 5_000
    task = h.task_dir("t")
    assert max(path.stat().st_size for path in task.iterdir() if path.is_file()) < 100_000
