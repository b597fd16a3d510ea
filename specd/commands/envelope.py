"""The one shape every `--json` answer has: ``{"ok", "task", ...what changed..., "error"}``.

Scripts and editors read one envelope from any verb (schemas/envelope.schema.json).
Streaming verbs (`continue`, `retry`, `rerun`, `logs`) print their event lines
first and end with one envelope line; everything else prints one document.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from specd.redact import redact_obj

# The task a command was asked about, noted as its argument is parsed, so the
# error handler in cli.py can name it in an error envelope it prints later.
SEEN: dict[str, str | None] = {"task": None}


def note_task(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        SEEN["task"] = value
    return value


def envelope(task: str | None, *, error: dict[str, Any] | None = None, **changed: Any) -> dict[str, Any]:
    return {"ok": error is None, "task": task, **changed, "error": error}


def error_body(code: int, message: str, fix: str | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "fix": fix}


def emit(task: str | None, *, indent: int | None = 2, error: dict[str, Any] | None = None, **changed: Any) -> None:
    click.echo(json.dumps(redact_obj(envelope(task, error=error, **changed)), indent=indent, default=str))


def wants_json(argv: list[str] | None) -> bool:
    """Whether the command line asked for --json (before ``--``, where options end)."""
    args = sys.argv[1:] if argv is None else argv
    head = args[: args.index("--")] if "--" in args else args
    return "--json" in head


def print_error(code: int, message: str, fix: str | None) -> None:
    """The error envelope on stdout, one line: what a script reads when a --json command fails."""
    emit(SEEN["task"], indent=None, error=error_body(code, message, fix))


def json_option(text: str = "Print one JSON envelope on stdout (schemas/envelope.schema.json).",
                ) -> Callable[[click.decorators.FC], click.decorators.FC]:
    return click.option("--json", "as_json", is_flag=True, help=text)
