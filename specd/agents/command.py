"""The command agent: any shell command, with the contract from DESIGN.md.

The prompt arrives on stdin; SPECD_* variables say where we are; the command
may write {"outcome": ..., "summary": ...} to $SPECD_RESULT. Exit 0 without a
result file means outcome ``done``; a non-zero exit means the step failed.
The command runs in its own process group so an interrupt stops its whole tree.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from specd.agents.base import AgentContext, AgentFailed, AgentRequest, AgentResult, Usage
from specd.agents.proc import run_group, transcript_path
from specd.system.jail import Jail
from specd.system.ownfiles import NotOwnFile, read_regular

TAIL = 2000  # characters of output shown when a command fails
RESULT_LIMIT = 4 << 20  # bytes of $SPECD_RESULT: an outcome, a summary and a typed output


class CommandAgent:
    name = "command"
    holds: tuple[str, ...] = ()  # per-step caps it keeps while a step runs: none, it reports usage at the end

    def __init__(self, command: str, ctx: AgentContext, timeout: float | None = None) -> None:
        self.command = command
        self.ctx = ctx
        self.timeout = timeout

    def run(self, request: AgentRequest) -> AgentResult:
        jail = Jail.for_agent(request.settings, "command", request.task_dir)
        # A read-only step cannot write in the task's folder: its result goes to a folder of its own (issue 30).
        own = request.task_dir / "transcripts" / f".result-{uuid.uuid4().hex[:8]}" if jail.read_only else None
        if own is not None:
            own.mkdir(parents=True)
            jail = replace(jail, writable=(own,))
        result_path = (own or request.task_dir) / f".result-{uuid.uuid4().hex[:8]}.json"
        log = transcript_path(request.task_dir, request.run_id,
                              request.step + ("-hook" if request.kind == "hook" else ""), ".log")
        env = {**os.environ, **self.environment(request, result_path)}
        # Both limits hold: the step's timeout and the agent block's command_timeout.
        timeout = min((t for t in (request.timeout, self.timeout) if t is not None), default=None)
        try:
            outcome = run_group(self.command, cwd=request.project_root, env=env, stdin=request.prompt,
                                log=log, timeout=timeout, jail=jail)
            if outcome.timed_out:
                raise AgentFailed(f"agent command timed out after {timeout or 0:g} s", transcript=log)
            if outcome.returncode != 0:
                raise AgentFailed(f"agent command exited with status {outcome.returncode}: "
                                  f"{outcome.tail(TAIL) or '(no output)'}", transcript=log)
            return self._result(result_path, log)
        finally:
            result_path.unlink(missing_ok=True)
            if own is not None:
                shutil.rmtree(own, ignore_errors=True)

    @staticmethod
    def environment(request: AgentRequest, result_path: Path) -> dict[str, str]:
        # A step's own model/max_turns override the pipeline's `agent:` block, as for every backend.
        return specd_env(task=request.task, task_dir=request.task_dir, step=request.step,
                         pipeline=request.pipeline, phase=request.phase, kind=request.kind, mode=request.mode,
                         workflow=str(request.workflow), result=str(result_path), run_id=request.run_id,
                         attempt=request.attempt, model=request.model or request.settings.get("model"),
                         max_turns=request.max_turns or request.settings.get("max_turns"),
                         outcomes=request.outcomes)

    @staticmethod
    def _result(path: Path, log: Path) -> AgentResult:
        try:  # the agent's own file: a link to a file of the user's is refused, not read into the run
            text = read_regular(path, RESULT_LIMIT).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return AgentResult(transcript=log)
        except NotOwnFile as exc:
            raise AgentFailed(f"$SPECD_RESULT: {exc}; write the JSON object to that path itself",
                              transcript=log) from None
        if not text.strip():
            return AgentResult(transcript=log)
        try:
            data: Any = json.loads(text)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than json can decode
            raise AgentFailed(f"$SPECD_RESULT ({path.name}) is not valid JSON: {exc}; write "
                              '{"outcome": "done", "summary": "..."}', transcript=log) from None
        if not isinstance(data, Mapping) or not isinstance(data.get("outcome", "done"), str):
            raise AgentFailed('$SPECD_RESULT must hold an object like {"outcome": "done", "summary": "..."}',
                              transcript=log)
        try:
            usage = Usage.parse(data["usage"], where="$SPECD_RESULT") if "usage" in data else Usage()
        except ValueError as exc:
            raise AgentFailed(f"{exc} (the agent's usage is not recorded until it is valid)", transcript=log) from None
        extra = {k: v for k, v in data.items() if k not in ("outcome", "summary", "usage")}
        return AgentResult(outcome=data.get("outcome") or "done", summary=str(data.get("summary", "")),
                           usage=usage, transcript=log, data=extra, reported=bool(data.get("outcome")))


def specd_env(*, task: str, task_dir: Path, step: str, pipeline: str, phase: str | None, kind: str, mode: str,
              workflow: str, result: str, run_id: str, attempt: int = 1, model: object = None,
              max_turns: object = None, outcomes: tuple[str, ...] = ()) -> dict[str, str]:
    """The SPECD_* variables of the command-agent contract (also given to `run:` hooks).

    Unset values are empty strings rather than missing, so `${SPECD_MODEL:-default}` works in a shell.
    """
    return {
        "SPECD_TASK": task,
        "SPECD_TASK_DIR": str(task_dir),
        "SPECD_STEP": step,
        "SPECD_PIPELINE": pipeline,
        "SPECD_PHASE": phase or "",
        "SPECD_KIND": kind,
        "SPECD_MODE": mode,
        "SPECD_WORKFLOW": workflow,
        "SPECD_RESULT": result,
        "SPECD_RUN_ID": run_id,
        "SPECD_ATTEMPT": str(attempt),
        "SPECD_MODEL": "" if model is None else str(model),
        "SPECD_MAX_TURNS": "" if max_turns is None else str(max_turns),
        "SPECD_OUTCOMES": ",".join(outcomes),
    }
