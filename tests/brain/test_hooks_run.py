"""Hooks as the loop runs them: order, convention, disabled steps, failures, timeouts, resume."""

from __future__ import annotations

import json
import re
from typing import Any

from brain_harness import Harness


def step(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "workflow": "work.md", **extra}


def test_hook_order_convention_hook_and_disabled_step(h: Harness) -> None:
    h.workflow("work.md")
    for name in ("global-pre.md", "global-post.md", "build-pre.md", "pre-test.md", "pre-lint.md"):
        h.hook(name)
    h.pipeline(
        {"main": [
            step("build", hooks={"pre": "build-pre.md", "post": {"run": h.append_log("run build post")}}),
            step("lint", enabled=False, hooks={"pre": "build-pre.md", "post": {"run": h.append_log("run lint")}}),
            step("test"),  # .specd/hooks/pre-test.md applies by convention
        ]},
        hooks={"pre-step": "global-pre.md", "post-step": "global-post.md"},
    )
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.log() == [
        "hook build @global-pre", "hook build @build-pre", "step build", "run build post",
        "hook build @global-post",
        "hook test @global-pre", "hook test @pre-test", "step test", "hook test @global-post",
    ]
    history = h.status("t")["history"]
    assert not [e for e in history if e["step"] == "lint"]
    assert [(e["step"], e["kind"], e["hook"]) for e in history] == [
        ("build", "hook", "pre-step: global-pre.md"), ("build", "hook", "pre: build-pre.md"),
        ("build", "step", None), ("build", "hook", "post: run: " + h.append_log("run build post")),
        ("build", "hook", "post-step: global-post.md"),
        ("test", "hook", "pre-step: global-pre.md"), ("test", "hook", "pre: pre-test.md"),
        ("test", "step", None), ("test", "hook", "post-step: global-post.md"),
    ]


def test_failing_required_pre_hook_blocks_then_resumes_from_the_hook(h: Harness) -> None:
    h.workflow("work.md")
    h.hook("global-pre.md")
    check = "test -f ok.flag && " + h.append_log("run b pre")
    h.pipeline({"main": [step("a"), step("b", hooks={"pre": {"run": check}}), step("c")]},
               hooks={"pre-step": "global-pre.md"})
    h.new("t")

    blocked = h.cont("t")

    assert blocked.returncode == 1, blocked.stderr
    assert h.log() == ["hook a @global-pre", "step a", "hook b @global-pre"]  # b itself never ran
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    assert status["next"]["step"] == "b"
    assert "exited with status" in status["reason"]

    (h.root / "ok.flag").write_text("", encoding="utf-8")
    resumed = h.cont("t")

    assert resumed.returncode == 0, resumed.stderr
    # the finished global pre-step hook of b and everything of a stay done; the failed hook is retried
    assert h.log() == ["hook a @global-pre", "step a", "hook b @global-pre",
                       "run b pre", "step b", "hook c @global-pre", "step c"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [e["outcome"] for e in status["history"] if (e["hook"] or "").startswith("pre: ")] == ["failed", "done"]


def test_failing_optional_hook_is_logged_in_changelog_and_run_goes_on(h: Harness) -> None:
    h.workflow("work.md")
    failing = {"run": "echo WHY-IT-FAILED; exit 4", "optional": True}
    h.pipeline({"main": [step("a", hooks={"post": failing}), step("b")]})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 0, result.stderr
    assert h.log() == ["step a", "step b"]
    assert h.status("t")["status"] == "COMPLETE"
    changelog = (h.task_dir("t") / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^### \d{4}-\d{2}-\d{2} .*Hook failure$", changelog, re.MULTILINE)
    entry = changelog[changelog.index("Hook failure"):]
    assert "run: echo WHY-IT-FAILED; exit 4" in entry
    assert "**Step:** a" in entry
    assert "exited with status 4" in entry
    assert "WHY-IT-FAILED" in result.stderr  # a failing hook's output is shown


def test_run_hook_past_its_timeout_says_timed_out(h: Harness) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [step("a", hooks={"pre": {"run": "sleep 30", "timeout": 1}}), step("b")]})
    h.new("t")

    result = h.cont("t")

    assert result.returncode == 1, result.stderr
    assert "timed out after 1 s" in result.stderr
    assert h.log() == []
    status = h.status("t")
    assert status["status"] == "BLOCKED"
    summaries = [e["summary"] for e in status["history"] if e["kind"] == "hook"]
    assert summaries == ["timed out after 1 s"]
    events = [json.loads(line) for line in
              (h.task_dir("t") / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    finished = [e for e in events if e["kind"] == "hook_finished"]
    assert [e["reason"] for e in finished] == ["timed out after 1 s"]
    assert "exited with status" not in finished[0]["reason"]


def test_failing_required_post_hook_blocks_without_rerunning_the_step(h: Harness) -> None:
    h.workflow("work.md")
    check = "test -f ok.flag && " + h.append_log("run b post")
    h.pipeline({"main": [step("a"), step("b", hooks={"post": {"run": check}}), step("c")]})
    h.new("t")

    blocked = h.cont("t")

    assert blocked.returncode == 1, blocked.stderr
    assert h.log() == ["step a", "step b"]
    assert h.status("t")["status"] == "BLOCKED"

    again = h.cont("t")  # not fixed yet: the hook fails again, the step still does not re-run

    assert again.returncode == 1, again.stderr
    assert h.log() == ["step a", "step b"]

    (h.root / "ok.flag").write_text("", encoding="utf-8")
    resumed = h.cont("t")

    assert resumed.returncode == 0, resumed.stderr
    assert h.log() == ["step a", "step b", "run b post", "step c"]
    status = h.status("t")
    assert status["status"] == "COMPLETE"
    assert [e["step"] for e in status["history"] if e["kind"] == "step"] == ["a", "b", "c"]
