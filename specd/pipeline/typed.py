"""Load-time checks of ``output:`` (a JSON Schema) and ``when:`` (a Jinja2 expression) on steps.

The JSON Schema pass only says ``output`` is an object and ``when`` a string; whether the object is a
schema for an object, and whether the string is an expression naming steps that exist, is checked
here, at the line it is written on, so a broken condition is found when the file loads and not an
hour into a run. A step name is known at load (every step in the file); whether that step will have
run, and what its output holds, is known only at the step (specd.engine.outputs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from specd.errors import ConfigError, closest
from specd.pipeline.limits import json_path
from specd.pipeline.workflow import Workflow

OUTPUT_EXAMPLE = '{"type": "object", "properties": {"files": {"type": "array"}}, "required": ["files"]}'


def check_typed(path: Path, data: Mapping[str, Any]) -> None:
    """Raise ConfigError naming every bad ``output`` or ``when`` at its file:line."""
    from specd.pipeline.groups import every_step

    steps = list(every_step(data["pipelines"]))  # a group's members too
    if not any("output" in s or "when" in s for _, s in steps):
        return  # the usual file: nothing to import, nothing to read
    names = {str(step["name"]) for _, step in steps}
    problems: list[str] = []
    for parts, step in steps:
        for key in ("output", "when"):
            if key in step and "pipeline" in step:  # the cursor enters a reference; nothing would read it
                problems.append(_at(path, [*parts, key], f"'{key}' only works on a step with "
                                    f"'workflow'; put it on the steps inside pipeline {step['pipeline']!r}"))
        if "pipeline" in step:
            continue
        if "output" in step and (why := schema_problem(step["output"])):
            problems.append(_at(path, [*parts, "output"], why))
        if "when" in step and (why := expression_problem(step["when"], names)):
            problems.append(_at(path, [*parts, "when"], why))
    if problems:
        raise ConfigError("\n".join(problems), fix="`output` is a JSON Schema such as " + OUTPUT_EXAMPLE
                          + "; `when` is an expression such as `steps.plan.output.docs` naming steps of this file")


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be a step's output schema, or None: it must be a valid JSON Schema for an object."""
    if not isinstance(schema, Mapping):
        return f"expected a JSON Schema object, got {schema!r}"
    if schema.get("type") != "object":
        return ("the output must be an object (its steps are read as steps.NAME.output.KEY): the schema needs "
                f'"type": "object", not {schema.get("type")!r}')
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = json_path(["output", *exc.absolute_path]) if exc.absolute_path else "output"
        return f"not a valid JSON Schema: {where}: {exc.message}"
    return None


def expression_problem(expression: Any, steps: Iterable[str]) -> str | None:
    """Why ``expression`` cannot be a step's condition, or None."""
    from specd.pipeline.template import TemplateError, parse_expression, step_names

    if not isinstance(expression, str) or not expression.strip():
        return f"expected an expression such as `steps.plan.output.docs`, got {expression!r}"
    try:
        tree = parse_expression(expression)
    except TemplateError as exc:
        return f"{expression!r} is not an expression Jinja2 can read: {exc}"
    return names_problem(step_names(tree), steps)


def text_problem(text: str, steps: Iterable[str]) -> str | None:
    """Why a workflow's text cannot be filled in, or None (text that names no ``steps`` is left as it is)."""
    from specd.pipeline.template import TemplateError, parse, step_names, uses_steps

    if "steps" not in text:
        return None
    try:
        tree = parse(text)
    except TemplateError as exc:
        return f"{exc} (a workflow that names `steps` is read as a Jinja2 template)" if "{{" in text else None
    return names_problem(step_names(tree), steps) if uses_steps(tree) else None


def check_names(path: Path, steps: Iterable[str]) -> None:
    """Raise ConfigError when a project workflow's placeholders name a step the pipeline does not have."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return  # load_workflow reports an unreadable file with its own message when the step runs
    why = text_problem(text, steps) if "{{" in text or "{%" in text else None
    if why:
        line = _line(path, why.split(":")[0]) if why.startswith("steps.") else ""
        raise ConfigError(f"{path}{line}: {why}", fix="name a step of the pipeline file, or put text that is not "
                          "for specd (a CI file's ${{ steps... }}) between {% raw %} and {% endraw %}")


def workflow_problem(workflow: Workflow, steps: Iterable[str]) -> str | None:
    """Why a workflow's frontmatter ``output:`` or its ``{{ steps... }}`` text cannot work, at its line."""
    why = frontmatter_problem(workflow)
    if why:
        return why
    why = text_problem(workflow.body, steps)
    if why and why.startswith("steps."):
        return f"{workflow.path}{_line(workflow.path, why.split(':')[0])}: {why}"
    return f"{workflow.path}: {why}" if why else None


def frontmatter_problem(workflow: Workflow) -> str | None:
    """Why the workflow's frontmatter ``output:`` is not an object schema, at its file:line, or None."""
    if "output" in workflow.meta and (why := schema_problem(workflow.meta["output"])):
        return f"{workflow.path}{_line(workflow.path, 'output:')}: frontmatter output: {why}"
    return None


def _line(path: Path, text: str) -> str:
    try:
        whole = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    at = whole.find(text)
    return f":{whole.count(chr(10), 0, at) + 1}" if at >= 0 else ""


def names_problem(named: Iterable[str], steps: Iterable[str]) -> str | None:
    known = sorted(set(steps))
    for name in named:
        if name not in known:
            close = closest(name, known)
            hint = f"; did you mean {close[0]!r}?" if close else f" (steps: {', '.join(known)})"
            return f"steps.{name}: there is no step named {name!r} in the pipeline{hint}"
    return None


def _at(path: Path, parts: list[Any], why: str) -> str:
    from specd.pipeline.keys import line_of

    line = line_of(path, parts)
    return f"{path}{f':{line}' if line else ''}: {json_path(parts)}: {why}"
