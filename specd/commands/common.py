"""Small helpers every command shares."""

from __future__ import annotations

import json
from typing import Any

import click

from specd.project import Project, find_project
from specd.redact import redact, redact_obj


def project_from(ctx: click.Context) -> Project:
    root = ctx.find_root().obj or {}
    return find_project(explicit=root.get("project_dir"))


def warn(messages: tuple[str, ...] | list[str]) -> None:
    for message in messages:
        click.echo(redact(f"specd: warning: {message}"), err=True)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(redact_obj(data), indent=2, default=str))
