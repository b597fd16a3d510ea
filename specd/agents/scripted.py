"""The scripted agent: replays outcomes and file writes from a YAML/JSON script.

It ships in the package so tests and `specd demo` drive the real loop with a
deterministic agent. For each request, the first unconsumed entry whose
``match`` fits is used and then consumed (unless ``sticky``). Which entry
served which request is kept in the task folder, so a resumed run picks up
where the last one stopped, and a step re-run after a crash replays its own
entry instead of taking the next one.
"""

from __future__ import annotations

import json
import threading
from datetime import date
from pathlib import Path
from string import Template
from typing import Any

import yaml

from specd.agents.base import AgentContext, AgentFailed, AgentRequest, AgentResult, Usage
from specd.errors import ConfigError
from specd.state import atomic
from specd.system import jail

PROGRESS = ".scripted-agent.json"
_SERVING = threading.Lock()


def load_script(path: Path) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the agent script ({exc})",
                          fix="check the path given to --agent scripted:<path>") from None
    entries = data.get("entries") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: expected a list of entries (or a mapping with `entries:`)",
                          fix="see specd/demo/scenario.yaml for the format")
    return entries


class ScriptedAgent:
    name = "scripted"
    holds: tuple[str, ...] = ()  # per-step caps it keeps while a step runs: none

    def __init__(self, script: Path, ctx: AgentContext) -> None:
        self.script = script
        self.entries = load_script(script)
        self.ctx = ctx

    def run(self, request: AgentRequest) -> AgentResult:
        with _SERVING:  # a parallel group's members ask from threads of their own: one entry is served at a time
            return self._serve(request)

    def _serve(self, request: AgentRequest) -> AgentResult:
        progress = request.task_dir / PROGRESS
        served = _read_served(progress)
        key = f"{request.kind}:{request.conversation}:{request.step}"
        index = served.get(key)
        entry = self.entries[index] if index is not None and index < len(self.entries) else None
        if entry is None:
            index, entry = self._match(request, set(served.values()))
        values = {"task": request.task, "task_dir": str(request.task_dir.relative_to(request.project_root)),
                  "phase": request.phase or "", "today": date.today().isoformat()}

        def expand(text: str) -> str:
            return Template(text).safe_substitute(values)

        if entry.get("writes") or entry.get("appends"):
            jail.note_unjailed()  # written with specd's own rights: the machinery check must judge them
        for raw_path, content in (entry.get("writes") or {}).items():
            target = request.project_root / expand(raw_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(expand(str(content)), encoding="utf-8")
        for raw_path, content in (entry.get("appends") or {}).items():
            target = request.project_root / expand(raw_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a", encoding="utf-8") as handle:
                handle.write(expand(str(content)))
        try:
            usage = Usage.parse(entry["usage"], where=f"{self.script}: entry {index}") if "usage" in entry else Usage()
        except ValueError as exc:
            raise AgentFailed(str(exc)) from None
        if usage.total_tokens:
            self.ctx.events.emit("usage", step=request.step, **usage.as_dict())
        if not entry.get("sticky"):
            atomic.write_json(progress, {"script": str(self.script), "served": {**served, key: index}})
        if entry.get("fail"):
            raise AgentFailed(expand(str(entry["fail"])), usage)
        return AgentResult(outcome=str(entry.get("outcome", "done")), summary=expand(str(entry.get("summary", ""))),
                           usage=usage, data=dict(entry.get("data") or {}), reported="outcome" in entry)

    def _match(self, request: AgentRequest, consumed: set[int]) -> tuple[int, dict[str, Any]]:
        seen = {"step": request.step, "pipeline": request.pipeline, "phase": request.phase or "",
                "kind": request.kind}
        for index, entry in enumerate(self.entries):
            if index in consumed and not entry.get("sticky"):
                continue
            wanted = entry.get("match") or {}
            if all(str(seen.get(key)) == str(value) for key, value in wanted.items()):
                return index, entry
        raise AgentFailed(f"the agent script {self.script} has no entry left for {request.kind} "
                          f"{request.step!r} (pipeline {request.pipeline}, phase {request.phase or '-'})")


def _read_served(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): int(v) for k, v in data.get("served", {}).items()}
    except (OSError, ValueError, RecursionError, AttributeError):
        return {}
