"""`specd pipeline validate|show`."""

from __future__ import annotations

from pathlib import Path

import click

from specd.commands.common import project_from, warn
from specd.commands.envelope import emit, json_option
from specd.pipeline import load_pipeline, load_pipeline_file
from specd.pipeline.describe import pipeline_view
from specd.pipeline.resolve import pipeline_warnings
from specd.pipeline.workflows import check_workflow_files


@click.group()
def pipeline() -> None:
    """Validate or show the effective pipeline.

    The effective pipeline is .specd/pipeline.json, else .specd/pipeline.yaml
    (or .yml), else specd's built-in default. A project file replaces the
    default whole; nothing is merged.
    """


@pipeline.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@json_option()
@click.pass_context
def validate(ctx: click.Context, file: Path | None, as_json: bool) -> int:
    """Check the effective pipeline (or FILE): version, schema, references,
    cycles, and that every workflow file (steps and hooks) exists and its
    frontmatter parses. Exit 0 if valid, 2 if not."""
    project = project_from(ctx)
    config = load_pipeline_file(file, project) if file else load_pipeline(project)
    warnings = pipeline_warnings(config, project)
    if not as_json:  # --json carries the warnings in its one document
        warn(warnings)
    workflows = check_workflow_files(config, project)
    from specd.notify.spec import notify_spec

    notify_spec(project, config)  # the `notify:` block, the pipeline's or .specd/config.json's
    steps = sum(len(s) for s in config.pipelines.values())
    origin = "built-in" if config.builtin else "project"
    if as_json:
        emit(None, source=str(config.source), origin=origin, pipelines=len(config.pipelines), steps=steps,
             workflow_files=workflows, warnings=warnings)
        return 0
    click.echo(f"ok: {config.source} ({origin}): {len(config.pipelines)} pipelines, {steps} steps, "
               f"{workflows} workflow files read")
    return 0


@pipeline.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> int:
    """Show the resolved pipeline: its source, mode, every step with its
    workflow file (and whether it is the project's or built-in) and hooks."""
    project = project_from(ctx)
    config = load_pipeline(project)
    view = pipeline_view(config, project)
    if as_json:
        emit(None, **view)
        return 0
    warn(config.warnings)
    from specd.commands.terminal.pipeline import render_pipeline

    render_pipeline(view)
    return 0
