"""The gemini backend: one ``gemini -p`` process per step or hook, read live, in the agent tier of the jail.

The prompt goes to stdin (argv form, no shell), the working directory is the project root, and the CLI's
flags carry the model, the approval mode and the session; its settings file carries the rest
(``specd.agents.gemini.options``). The CLI takes no output schema, so the prompt asks for a final JSON
object and specd checks it: a final answer that is not one is sent back once, in the same session, before
the step falls back to its verdict file like every backend's unreported step.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import IO

from specd.agents.base import AgentContext, AgentRequest, AgentResult, Usage
from specd.agents.claude_code.options import remaining_budget
from specd.agents.cli_run import run_cli
from specd.agents.gemini import prices
from specd.agents.gemini.options import Options, report_note
from specd.agents.gemini.sessions import SessionMap
from specd.agents.gemini.stream import StreamLog, read_stream
from specd.agents.gemini.verdict import answer, failure, result_of
from specd.agents.proc import transcript_path
from specd.redact import redact
from specd.system.agent_state import seed_state
from specd.system.jail import Jail, backend_state

# GEMINI_SANDBOX: the CLI's own sandbox stays off even when the user's shell or the project's settings turn it
# on (the variable wins over settings). GEMINI_CLI_NO_RELAUNCH: the CLI would start node a second time only to
# raise its heap limit to half the machine's memory; one process starts twice as fast and is what specd stops.
CHILD_ENV = {"GEMINI_SANDBOX": "false", "GEMINI_CLI_NO_RELAUNCH": "true"}
# TMPDIR: the CLI makes a folder of its own in the temporary folder for each shell call; pointed into the task's
# config folder, what it leaves stays with the task instead of in the jail's /tmp the model's commands share.


class GeminiAgent:
    name = "gemini"
    holds = ()  # the CLI reports what a step used only at its end: the run-wide caps hold, per-step ones cannot

    def __init__(self, binary: str, options: Options, ctx: AgentContext) -> None:
        self.binary = binary
        self.options = options
        self.ctx = ctx
        self.unpriced: set[str] = set()

    def run(self, request: AgentRequest) -> AgentResult:
        remaining_budget(request.budget)  # an exhausted budget is refused before the CLI starts
        sessions = SessionMap(request.task_dir, request.run_id)
        label = request.step + ("-hook" if request.kind == "hook" else "")
        transcript = transcript_path(request.task_dir, request.run_id, label, ".jsonl")
        prompt = _retry_note(request) + request.prompt + report_note(request.outcomes, request.output_schema)
        with transcript.open("w", encoding="utf-8") as sink:
            log, usage = self._invoke(request, prompt, sessions.resume(request), sink, transcript)
            session = log.session_id or ""
            if session:
                sessions.remember(request, session)
            found, problem = answer(log.final_text, request.outcomes, request.output_schema)
            # Asked again once, in the same session, saying what was wrong; not past a budget the first
            # invocation used up (the run then stops at its budget before the next step, as it should).
            if found is None and session and request.budget.check(usage) is None:
                again = (f"specd could not read your outcome: {problem}. Reply now with only the JSON object "
                         "described above, and nothing else." + report_note(request.outcomes,
                                                                           request.output_schema))
                log, more = self._invoke(request, again, session, sink, transcript, spent=usage)
                usage = usage + more
                found, _ = answer(log.final_text, request.outcomes, request.output_schema)
        return result_of(found, log.final_text, usage, transcript, session)

    def _invoke(self, request: AgentRequest, prompt: str, resume: str | None, sink: IO[str], transcript: Path,
                spent: Usage | None = None) -> tuple[StreamLog, Usage]:
        jail = Jail.for_agent(request.settings, "gemini", request.task_dir)
        state = backend_state(replace(jail, enabled=True))
        assert state is not None  # the agent tier with a task folder always has one
        home = seed_state("gemini", state[1], os.environ)
        self.options.write_settings(home, request, os.environ)
        # The CLI's temporary files (each shell call's): a folder per invocation, since steps of a parallel
        # group share the task's config folder; removed when the invocation ends.
        (home / "tmp").mkdir(exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"{request.step}-", dir=home / "tmp"))
        argv = self.options.argv(self.binary, request, resume)
        sink.write(json.dumps({"type": "specd", "argv": [redact(a) for a in argv[1:]], "resumed": resume}) + "\n")
        env = {**os.environ, **CHILD_ENV, state[0]: str(home), "TMPDIR": str(scratch)}
        try:
            returncode, log, stderr = self._run(argv, prompt, request, jail, env, sink)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        for line in stderr:  # redacted as they were read
            sink.write(json.dumps({"type": "stderr", "text": line}) + "\n")
        log.errors.extend(stderr)
        usage = Usage()
        if log.result is not None and isinstance(log.result.get("stats"), dict):
            usage, unknown = prices.usage_from(log.result["stats"], request.settings)
            self._tell_unpriced(unknown)
        failure(log, returncode, (spent or Usage()) + usage, transcript)
        return log, usage

    def _tell_unpriced(self, models: list[str]) -> None:
        for model in models:
            if model not in self.unpriced:  # said once per model and run, not every step
                self.unpriced.add(model)
                self.ctx.events.emit("notice", message=f"no price known for Gemini model {model}: its tokens "
                                     "are counted at the dearest known rate (set agent.pricing to price it)")

    def _run(self, argv: list[str], prompt: str, request: AgentRequest, jail: Jail, env: dict[str, str],
             sink: IO[str]) -> tuple[int, StreamLog, list[str]]:
        # As claude_code's: in the agent tier of the jail, with the CLI's config folder named in its environment
        # even when the jail is off (`sandbox: false`).
        return run_cli(argv, prompt, request.project_root, jail, env, request.timeout,
                       lambda lines: read_stream(lines, sink, self.ctx.events, request.step, request.project_root))


def _retry_note(request: AgentRequest) -> str:
    if request.kind != "step" or request.attempt <= 1:
        return ""
    return (f"Note: this is attempt {request.attempt} of this step. An earlier attempt did not finish. Files may "
            "already hold part of its work: check them before redoing anything.\n\n")
