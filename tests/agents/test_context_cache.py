"""The preloaded prefix is byte-identical on the call that bootstraps PROJECT.md and on every later one."""

from __future__ import annotations

import json
from typing import Any

from specd.agents.anthropic import context


def test_bootstrapping_call_and_later_calls_send_the_same_bytes(project: Any) -> None:
    (project.task_dir / "config.json").write_text(json.dumps({"description": "Add CSV export to the CLI"}))
    summary = project.root / ".specd" / "PROJECT.md"
    assert not summary.exists()
    first = context.preload(project.request())
    assert summary.exists()
    second = context.preload(project.request())
    assert first == second  # a difference here re-bills the whole cached prefix on step 2
