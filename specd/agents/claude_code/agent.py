"""The claude_code backend: one ``claude -p`` process per step or hook, read live.

The prompt goes to stdin (argv form, no shell), the working directory is the
project root, and Claude Code's own flags carry the outcome schema, model,
turn limit, permissions, budget remainder and session. The process is run by
agents/cli_run.py, as every agent CLI's is.
"""

from __future__ import annotations

import json
import os
from typing import IO

from specd.agents.base import AgentContext, AgentRequest, AgentResult
from specd.agents.claude_code.options import Options, remaining_budget
from specd.agents.claude_code.sessions import SessionMap, retry_note
from specd.agents.claude_code.stream import StreamLog, read_stream
from specd.agents.claude_code.verdict import verdict
from specd.agents.cli_run import run_cli
from specd.agents.proc import transcript_path
from specd.redact import redact
from specd.system.jail import Jail


class ClaudeCodeAgent:
    name = "claude_code"
    holds = ("max_step_cost_usd",)  # Claude Code's own --max-budget-usd; it has no token cap

    def __init__(self, binary: str, options: Options, ctx: AgentContext) -> None:
        self.binary = binary
        self.options = options
        self.ctx = ctx

    def run(self, request: AgentRequest) -> AgentResult:
        sessions = SessionMap(request.task_dir, request.run_id)
        remaining_budget(request.budget)  # an exhausted budget is refused before a session is opened
        session = sessions.open(request)
        argv = self.options.argv(self.binary, request, session.flags())
        label = request.step + ("-hook" if request.kind == "hook" else "")
        transcript = transcript_path(request.task_dir, request.run_id, label, ".jsonl")
        prompt = retry_note(request, session) + request.prompt
        with transcript.open("w", encoding="utf-8") as sink:
            sink.write(json.dumps({"type": "specd", "argv": [redact(a) for a in argv[1:]],
                                   "session": session.id, "resumed": session.resumed}) + "\n")
            returncode, log, stderr = self._run(argv, prompt, request, sink)
            for line in stderr:  # redacted as they were read
                sink.write(json.dumps({"type": "stderr", "text": line}) + "\n")
        log.errors.extend(stderr)
        return verdict(log, returncode, transcript, log.session_id or session.id)

    def _run(self, argv: list[str], prompt: str, request: AgentRequest,
             sink: IO[str]) -> tuple[int, StreamLog, list[str]]:
        jail = Jail.for_agent(request.settings, "claude_code", request.task_dir)
        # No git snapshot in Claude Code's system prompt: specd commits between steps, so the snapshot would
        # change the cached prefix at every step (specd makes the commits, so Claude Code's git notes are moot).
        env = {**os.environ, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "1"}
        return run_cli(argv, prompt, request.project_root, jail, env, request.timeout,
                       lambda lines: read_stream(lines, sink, self.ctx.events, request.step))
