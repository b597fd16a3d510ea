"""A read-only step (issue 30) on the backends with their own file tools: writes are refused, reads are not."""

from __future__ import annotations

from typing import Any

from specd.agents.anthropic.toolbox import Toolbox
from specd.agents.claude_code.options import Options


def test_the_anthropic_tools_refuse_every_write_of_a_read_only_step(project: Any, scripted_human: Any) -> None:
    request = project.request(settings={"read_only": True})
    toolbox = Toolbox(request, scripted_human(), [], 10.0, request.settings)
    said, failed = toolbox.call("write_file", {"path": "src/new.py", "content": "x = 1\n"})
    assert failed
    assert "refused: this step is read-only" in said
    said, failed = toolbox.call("edit_file", {"path": "src/app.py", "old_string": "1", "new_string": "2"})
    assert failed
    assert "read-only" in said
    assert not (project.root / "src" / "new.py").exists()
    assert (project.root / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    said, failed = toolbox.call("read_file", {"path": "src/app.py"})
    assert not failed
    assert "return 1" in said
    assert toolbox.jail.read_only  # run_command's jail binds the tree read-only


def test_an_ordinary_step_still_writes(project: Any, scripted_human: Any) -> None:
    toolbox = Toolbox(project.request(), scripted_human(), [], 10.0, {})
    said, failed = toolbox.call("write_file", {"path": "src/new.py", "content": "x = 1\n"})
    assert not failed, said
    assert not toolbox.jail.read_only


def test_claude_code_is_told_no_file_tool_for_a_read_only_step(project: Any) -> None:
    options = Options.from_settings({})
    denied_of = lambda argv: argv[argv.index("--disallowedTools") + 1:]  # noqa: E731
    read_only = denied_of(options.argv("claude", project.request(settings={"read_only": True}), []))
    ordinary = denied_of(options.argv("claude", project.request(), []))
    assert {"Write", "Edit", "MultiEdit", "NotebookEdit"} <= set(read_only)
    assert not {"Write", "Edit"} & set(ordinary)
