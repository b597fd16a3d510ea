"""The claude_code backend: one ``claude -p`` process per step or hook, read live.

The prompt goes to stdin (argv form, no shell), the working directory is the
project root, and Claude Code's own flags carry the outcome schema, model,
turn limit, permissions, budget remainder and session. The process runs in
its own session so an interrupt stops it and everything it started.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from specd.agents import lines
from specd.agents.base import AgentContext, AgentFailed, AgentRequest, AgentResult
from specd.agents.claude_code.options import Options, remaining_budget
from specd.agents.claude_code.sessions import SessionMap, retry_note
from specd.agents.claude_code.stream import StreamLog, read_stream
from specd.agents.claude_code.verdict import verdict
from specd.agents.proc import popen_child, stop_group, transcript_path
from specd.redact import redact
from specd.system import children
from specd.system.jail import Jail, prepare

STDERR_LINES = 200  # the last lines of Claude Code's stderr kept (it explains a failure; the rest is noise)
# A stream-json line holds a whole message (a long final report, a big tool result): it is parsed whole up to
# this size; a longer one is cut like any output line and recorded as unparseable.
JSON_LIMIT = 4 * 1024 * 1024


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
        try:
            jail = Jail.for_agent(request.settings, "claude_code", request.task_dir)
            proc = _spawn(argv, request.project_root, jail)
        except OSError as exc:  # the binary vanished or lost its execute bit since the start-up check
            raise AgentFailed(f"could not start {argv[0]}: {exc.strerror or exc}") from None
        stderr: list[str] = []
        helpers = [threading.Thread(target=_feed, args=(proc, prompt), daemon=True),
                   threading.Thread(target=_drain, args=(proc, stderr), daemon=True)]
        for helper in helpers:
            helper.start()
        # The step's timeout stops the whole group; the stream then ends and the wait returns.
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            stop_group(proc)

        watchdog = threading.Timer(request.timeout, expire) if request.timeout else None
        if watchdog:
            watchdog.daemon = True
            watchdog.start()
        try:
            log = read_stream(_lines(proc), sink, self.ctx.events, request.step)
            proc.wait()
        except BaseException:
            stop_group(proc)  # Ctrl-C or SIGTERM: Claude Code and its tool processes go with us
            raise
        finally:
            children.ended(proc.pid)
            if watchdog:
                watchdog.cancel()
        for helper in helpers:
            helper.join(timeout=5)
        if timed_out.is_set():
            raise AgentFailed(f"timed out after {request.timeout:g} s")
        return proc.returncode, log, [line for line in stderr if line.strip()]


def _spawn(argv: list[str], cwd: Path, jail: Jail) -> subprocess.Popen[bytes]:
    # Like every child of specd: its own session, dies with specd, recorded in the lock's owner file;
    # and in the agent tier of the jail, so what the model does cannot reach specd's machinery.
    if shutil.which(argv[0]) is None:  # said plainly here; inside the jail it would be bwrap's execvp error
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    # No git snapshot in Claude Code's system prompt: specd commits between steps, so the snapshot would
    # change the cached prefix at every step (specd makes the commits, so Claude Code's git notes are moot).
    launch = prepare(argv, cwd, jail, {**os.environ, "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "1"})
    return popen_child(launch.args, cwd=cwd, env=launch.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)


def _lines(proc: subprocess.Popen[bytes]) -> Iterator[str]:
    assert proc.stdout is not None
    for line in lines.read_lines(proc.stdout, JSON_LIMIT):  # capped: a huge line is cut, never held whole
        yield lines.text_of(line, str, JSON_LIMIT)  # redacted by read_stream, before it is written


def _feed(proc: subprocess.Popen[bytes], prompt: str) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(prompt.encode("utf-8"))
        proc.stdin.close()
    except OSError:
        pass  # Claude Code exited before reading (a bad flag); its stderr says why


def _drain(proc: subprocess.Popen[bytes], into: list[str]) -> None:
    assert proc.stderr is not None
    clean = lines.Redactor()
    for line in lines.read_lines(proc.stderr):
        into.append(lines.text_of(line, clean))
        del into[:-STDERR_LINES]
