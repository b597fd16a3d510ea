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

from specd.errors import ConfigError
from specd.pipeline.limits import json_path

OUTPUT_EXAMPLE = '{"type": "object", "properties": {"files": {"type": "array"}}, "required": ["files"]}'


def check_typed(path: Path, data: Mapping[str, Any]) -> None:
    """Raise ConfigError naming every bad ``output`` or ``when`` at its file:line."""
    pipelines: Mapping[str, list[dict[str, Any]]] = data["pipelines"]
    if not any("output" in s or "when" in s for steps in pipelines.values() for s in steps):
        return  # the usual file: nothing to import, nothing to read
    names = {str(step["name"]) for steps in pipelines.values() for step in steps}
    problems: list[str] = []
    for pipeline, steps in pipelines.items():
        for i, step in enumerate(steps):
            if "output" in step and (why := schema_problem(step["output"])):
                problems.append(_at(path, ["pipelines", pipeline, i, "output"], why))
            if "when" in step and (why := expression_problem(step["when"], names)):
                problems.append(_at(path, ["pipelines", pipeline, i, "when"], why))
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


def names_problem(named: Iterable[str], steps: Iterable[str]) -> str | None:
    import difflib

    known = sorted(set(steps))
    for name in named:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (steps: {', '.join(known)})"
            return f"steps.{name}: there is no step named {name!r} in the pipeline{hint}"
    return None


def _at(path: Path, parts: list[Any], why: str) -> str:
    from specd.pipeline.keys import line_of

    line = line_of(path, parts)
    return f"{path}{f':{line}' if line else ''}: {json_path(parts)}: {why}"
