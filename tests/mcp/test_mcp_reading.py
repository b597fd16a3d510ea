"""`specd mcp` reading a task (its log, its documents), cancelling one, and refusing bad requests with the fix.

A refusal is a tool error (or, for a resource, a protocol error) saying what was wrong and how to fix it; the
server goes on serving after each one, and nothing it writes to stderr is a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_harness import Mcp, Project

from specd.tasks import home
from specd.tasks.project import Project as TaskProject


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """waits: at the gate before s2; fresh: not started; remote: recorded as run by Temporal; each with the starter
    documents of `specd new`."""
    project = Project(tmp_path_factory.mktemp("mcp"))
    project.to_gate("waits")
    project.new("fresh")
    project.new("remote")
    home.move(TaskProject(project.root), "remote", home.Home("temporal", workflow_id="wf-remote",
                                                             address="127.0.0.1:7233"))
    phase = project.root / ".specd" / "tasks" / "waits" / "phases" / "phase-01"
    phase.mkdir(parents=True)
    (phase / "PLAN.md").write_text("# Phase 1 plan\n", encoding="utf-8")
    (project.root / ".specd" / "tasks" / "waits" / "outside.md").symlink_to(project.root / "README.md")
    return project


def test_logs_show_a_steps_events_and_transcript(project: Project) -> None:
    with Mcp(project) as client:
        whole = client.ok("logs", task="waits")
        one = client.ok("logs", task="waits", step="s1")
        text, error = client.refused("logs", task="waits", step="s3")
    assert whole["events"] > one["events"] > 0  # the run's and the gate's events besides s1's own
    assert {record.get("step") for record in one["records"]} == {"s1"}
    assert [(t["step"], t["outcome"]) for t in one["transcripts"]] == [("s1", "done")]
    assert "s1" in "\n".join(one["lines"])
    assert "no step 's3'" in text, text
    assert "fix: name one of: s1, s2" in text, text
    assert error["task"] == "waits"
    assert error["error"]["code"] == 2


def test_the_tasks_documents_are_resources(project: Project) -> None:
    with Mcp(project) as client:
        listed = client.portal.call(client.session.list_resources).resources
        uris = {str(resource.uri) for resource in listed}
        plan = client.portal.call(client.session.read_resource, "specd://tasks/waits/phases/phase-01/PLAN.md")
        refused = []
        for uri in ("specd://tasks/waits/outside.md", "specd://tasks/waits/../../README.md",
                    "specd://tasks/nope/FEATURE.md", "file:///etc/passwd"):
            with pytest.raises(MCPError) as caught:
                client.portal.call(client.session.read_resource, uri)
            refused.append(caught.value.message)
        templates = client.portal.call(client.session.list_resource_templates).resource_templates
    starters = sorted(p.name for p in (project.root / ".specd" / "tasks" / "fresh").glob("*.md"))
    assert starters, "specd new writes starter documents"
    assert {f"specd://tasks/fresh/{name}" for name in starters} <= uris
    assert "specd://tasks/waits/phases/phase-01/PLAN.md" in uris
    assert not any("outside.md" in uri or ".pipeline-state" in uri for uri in uris), uris  # a link out, a hidden file
    assert plan.contents[0].text == "# Phase 1 plan\n"
    assert "has no document 'outside.md'" in refused[0]
    assert "fix:" in refused[0]
    assert "has no document" in refused[1]
    assert "no task 'nope'" in refused[2]
    assert "not a task document's address" in refused[3]
    assert templates[0].uri_template == "specd://tasks/{task}/{path}"


def test_bad_requests_are_tool_errors_with_the_fix(project: Project) -> None:
    with Mcp(project) as client:
        unknown, envelope = client.refused("show_task", task="wait")
        not_held, _ = client.refused("approve", task="fresh")
        no_note, _ = client.refused("reject", task="waits", note="  ")
        missing, _ = client.refused("approve")
        extra, _ = client.refused("show_task", task="waits", colour="red")
        no_tool, _ = client.refused("merge", task="waits")
        nothing, _ = client.refused("continue_task", task="waits")  # held: an answer moves it, not a start
        remote, _ = client.refused("continue_task", task="remote")  # its workflow's: no second copy here
        unreachable, _ = client.refused("approve", task="remote")  # sent by signal, but no Temporal listens
        still = client.ok("show_task", task="waits")
    assert "no task 'wait'" in unknown, unknown
    assert "did you mean 'waits'" in unknown, unknown
    assert "fix:" in unknown, unknown
    assert envelope == {"ok": False, "task": "wait", "error": envelope["error"]}
    assert envelope["error"]["fix"]
    assert "has not started yet" in not_held or "not waiting" in not_held, not_held
    assert "reject needs a note" in no_note
    assert "'task' is a required property" in missing, missing
    assert "task (required, string)" in missing, missing
    assert "colour" in extra
    assert "no tool 'merge'" in no_tool
    assert "list_tasks" in no_tool
    assert "WAITING_FOR_HUMAN" in nothing, nothing
    assert "approve" in nothing, nothing
    assert "runs on Temporal (workflow wf-remote)" in remote, remote
    assert "second copy" in remote, remote
    assert "`specd run remote --move`" in remote, remote  # the way to run it here, as the CLI's refusal names it
    assert "cannot reach Temporal at 127.0.0.1:7233" in unreachable, unreachable
    assert "fix:" in unreachable, unreachable
    assert still["status"] == "WAITING_FOR_HUMAN"  # nothing refused changed the task
    assert "Traceback" not in (project.dir / "mcp-stderr.txt").read_text()


def test_cancel_is_recorded_as_from_mcp(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.to_gate("task")
    with Mcp(project) as client:
        cancelled = client.ok("cancel", task="task")
        view = client.ok("show_task", task="task")
        again, _ = client.refused("continue_task", task="task")
    assert cancelled["status"] == "CANCELLED"
    assert view["status"] == "CANCELLED"
    assert (view["checkpoints"][-1]["answer"], view["checkpoints"][-1]["via"]) == ("cancel", "mcp")
    assert "rerun" in again
