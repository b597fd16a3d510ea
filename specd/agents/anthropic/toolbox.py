"""Carrying out the model's tool calls inside the sandbox.

Each call returns (text for the model, is_error). Problems the model can fix
(a bad path, a missing string, a refused command) are tool errors, never
exceptions: the model reads them and tries something else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specd.agents.anthropic import commands
from specd.agents.anthropic.sandbox import Refused, Sandbox
from specd.agents.base import AgentRequest
from specd.errors import ConfigError
from specd.human import Human
from specd.system import jail as jails

NO_HUMAN = "No human is available: decide, and record the assumption in DECISIONS.md."
MAX_READ = 60_000
MAX_MATCHES = 200


@dataclass
class Completion:
    outcome: str
    summary: str
    data: dict[str, Any] = field(default_factory=dict)


def command_jail(settings: Mapping[str, Any]) -> jails.Jail:
    """run_command's jail (the project tier) as the settings ask, checked against what the machine offers."""
    if settings.get("sandbox") == "bubblewrap" and not jails.active():
        raise ConfigError(f"agent.sandbox is 'bubblewrap' but {jails.mode_line().removeprefix('jail: none — ')}",
                          fix="install the bubblewrap package (apt install bubblewrap), or set agent.sandbox "
                              "to 'auto' to fall back to commands without a shell")
    return jails.Jail.for_project(settings)


class Toolbox:
    def __init__(self, request: AgentRequest, human: Human, allow: Sequence[str], timeout: float,
                 settings: Mapping[str, Any] | None = None) -> None:
        self.request = request
        self.human = human
        self.allow = list(allow)
        self.timeout = timeout
        settings = settings or {}
        self.jail = command_jail(settings).within(request.task_dir)
        self.read_only = settings.get("read_only") is True  # issue 30: run_command's jail is read-only too
        self.sandbox = Sandbox(request.project_root)
        self.outcomes = request.outcomes  # exactly what the step declares: no implicit `done`
        self.completion: Completion | None = None
        self._tools: dict[str, Callable[[dict[str, Any]], str]] = {
            "read_file": self._read, "write_file": self._write, "edit_file": self._edit,
            "list_files": self._list, "search_files": self._search, "run_command": self._command,
            "ask_user": self._ask, "complete_step": self._complete,
        }

    @property
    def someone_there(self) -> bool:
        return self.request.mode != "auto" and self.human.present

    def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        handler = self._tools.get(name)
        if handler is None:
            return f"unknown tool {name!r}; available: {', '.join(self._tools)}", True
        try:
            return handler(args), False
        except Refused as refusal:
            return f"refused: {refusal}", True
        except (OSError, ValueError, KeyError, TypeError, re.error) as err:
            return f"{name} failed: {type(err).__name__}: {err}", True

    def _read(self, args: dict[str, Any]) -> str:
        lines = self.sandbox.read_text(args["path"]).splitlines()
        start = max(int(args.get("offset") or 1), 1)
        limit = int(args.get("limit") or len(lines))
        chunk = "\n".join(lines[start - 1 : start - 1 + limit])
        if len(chunk) > MAX_READ:
            shown = chunk[:MAX_READ].count("\n") + 1
            return f"{chunk[:MAX_READ]}\n[cut at {MAX_READ} characters; read on with offset={start + shown}]"
        return chunk

    def _refuse_writes(self) -> None:
        if self.read_only:
            raise Refused("this step is read-only (read_only: true in the pipeline): it reads and reports, and "
                          "writes no file; put your findings in complete_step's summary")

    def _write(self, args: dict[str, Any]) -> str:
        self._refuse_writes()
        path = self.sandbox.write_text(args["path"], str(args["content"]))
        return f"wrote {self.sandbox.relative(path)} ({len(str(args['content']))} characters)"

    def _edit(self, args: dict[str, Any]) -> str:
        self._refuse_writes()
        self.sandbox.resolve(args["path"], write=True)  # refuse before reading, with the writing reason
        old, new = str(args["old_string"]), str(args["new_string"])
        body = self.sandbox.read_text(args["path"])
        count = body.count(old) if old else 0
        if count != 1:
            raise ValueError(f"old_string occurs {count} times in {args['path']}; it must occur exactly once")
        path = self.sandbox.write_text(args["path"], body.replace(old, new, 1))
        return f"edited {self.sandbox.relative(path)}"

    def _base(self, args: dict[str, Any]) -> Path:
        return self.sandbox.resolve(args["path"]) if args.get("path") else self.sandbox.root

    def _list(self, args: dict[str, Any]) -> str:
        found = [self.sandbox.relative(p) for p in self.sandbox.walk(self._base(args), str(args["pattern"]))]
        more = f"\n[{len(found) - MAX_MATCHES} more not shown]" if len(found) > MAX_MATCHES else ""
        return "\n".join(found[:MAX_MATCHES]) + more if found else "no files match"

    def _search(self, args: dict[str, Any]) -> str:
        regex = re.compile(str(args["regex"]))
        hits: list[str] = []
        for path in self.sandbox.walk(self._base(args), str(args.get("glob") or "**/*")):
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable: not what a text search is for
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{self.sandbox.relative(path)}:{number}: {line[:300]}")
            if len(hits) > MAX_MATCHES:
                break
        more = "\n[more matches not shown; narrow the search]" if len(hits) > MAX_MATCHES else ""
        return "\n".join(hits[:MAX_MATCHES]) + more if hits else "no matches"

    def _command(self, args: dict[str, Any]) -> str:
        command = str(args["command"])
        if reason := commands.escape(command, self.sandbox.root):
            raise Refused(f"{command!r}: {reason}; commands may only name paths inside the project")
        if commands.shell_free(self.jail) and (reason := commands.needs_shell(command)):
            raise Refused(f"{command!r}: {reason}")  # before a human is asked: approving could not help
        if not commands.command_allowed(command, self.allow):
            if not self.someone_there:
                raise Refused(
                    f"{command!r} is not on the allowlist (agent.allow_commands: {self.allow or 'empty'}) and "
                    "no human is present to approve it in auto mode; do without it or use an allowed command"
                )
            if not self.human.approve_command(command):
                raise Refused(f"the human declined {command!r}")
        env = commands.command_env(allow=self.jail.env_allow)  # scrubbed even with the jail off: the model reads it
        report, failed = commands.run(command, self.sandbox.root, self.timeout, env=env, jail=self.jail)
        # A failing command is information, not a tool fault: the model should read it.
        return report if not failed else f"[command failed]\n{report}"

    def _ask(self, args: dict[str, Any]) -> str:
        if not self.someone_there:
            return NO_HUMAN
        answer = self.human.ask(str(args["question"]))
        return answer if answer else "The human gave no answer. " + NO_HUMAN

    def _complete(self, args: dict[str, Any]) -> str:
        outcome = str(args.get("outcome") or "").strip()
        if outcome not in self.outcomes:
            raise ValueError(f"outcome {outcome!r} is not allowed here; use one of: {', '.join(self.outcomes)}")
        data = {key: args[key] for key in ("verdict", "issues", "output") if args.get(key) is not None}
        self.completion = Completion(outcome, str(args.get("summary") or ""), data)
        return f"step completed with outcome {outcome!r}"
