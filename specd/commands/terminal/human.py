"""The person at the other end of a gate: a terminal, or lines on stdin for scripts.

When stdin is not a terminal, answers are read one line at a time, so a run
can be driven by `printf 'proceed\nskip\n' | specd continue t`. EOF means
stop: the state is saved and the run waits for a human (exit 3).
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.markup import escape

from specd.commands.terminal.console import err, pause_spinner
from specd.human import GateAnswer, GateInfo

CHOICES = "[p]roceed  [s]kip  [b]ack  [j]ump <step>  [q] stop"
ACTIONS = {"": "proceed", "p": "proceed", "proceed": "proceed", "y": "proceed", "yes": "proceed",
           "s": "skip", "skip": "skip", "b": "back", "back": "back", "j": "jump", "jump": "jump",
           "q": "stop", "stop": "stop", "n": "stop", "no": "stop"}


class StreamHuman:
    present = True

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin
        self.tty = self.stream.isatty()

    def _line(self, prompt: str) -> str | None:
        spinner = pause_spinner()
        try:
            err().print(prompt, end="")
            line = self.stream.readline()
        finally:
            if spinner is not None:
                spinner.start()
        if not line:
            err().print("[dim](no answer: end of input)[/dim]")
            return None
        if not self.tty:
            err().print(line.rstrip("\n"), markup=False)  # echo scripted answers so logs read naturally
        return line.strip()

    def gate(self, info: GateInfo) -> GateAnswer:
        where = f"pipeline {info.pipeline}" + (f", phase {info.phase}" if info.phase else "")
        err().print(f"\n[bold yellow]gate[/bold yellow] before [bold]{info.step}[/bold] ({where})")
        err().print(f"  {info.position}")
        if info.description:
            err().print(f"  next: {info.description}", markup=False)
        err().print(f"  workflow: {info.workflow}", markup=False)
        while True:
            line = self._line(f"  {escape(CHOICES)} > ")
            if line is None:  # end of input: nobody answered, so no one's decision is recorded
                return GateAnswer("stop", unanswered=True)
            word, _, rest = line.partition(" ")
            action = ACTIONS.get(word.lower())
            if action == "jump":
                target = rest.strip()
                if target in info.steps:
                    return GateAnswer("jump", target)
                err().print(f"  jump where? steps here: {', '.join(info.steps)}")
                continue
            if action:
                return GateAnswer(action)  # type: ignore[arg-type]
            err().print(f"  not an answer: {line!r}", markup=False)

    def ask(self, question: str) -> str | None:
        err().print(f"\n[bold cyan]the agent asks:[/bold cyan] {escape(question)}", highlight=False)
        return self._line("  answer > ")

    def approve_command(self, command: str) -> bool:
        err().print(f"\n[bold cyan]the agent wants to run:[/bold cyan] {escape(command)}", highlight=False)
        answer = self._line(f"  allow? {escape('[y/N]')} > ")
        return answer is not None and answer.lower() in ("y", "yes")
