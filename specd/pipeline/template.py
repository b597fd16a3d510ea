"""Placeholders and conditions over what earlier steps returned: Jinja2's sandbox, never ``eval``.

A workflow's text may say ``{{ steps.plan.output.files }}`` and a step may say ``when: steps.plan.output.docs``.
Both are read by one sandboxed Jinja2 environment with ``StrictUndefined``: a name that is not there is an
error, never an empty string that would quietly change the prompt or the path of the run. The sandbox refuses
attribute access to Python internals, so a pipeline file or a workflow cannot reach beyond the values given.

The names a template may use are ``steps`` (per step: ``output``, ``outcome``, ``summary``), the task's facts
(``task``, ``phase``, ``attempt``, ``mode``) and ``env`` (the ``SPECD_*`` environment values only).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jinja2 is imported only where a template or a condition is really read
    from jinja2 import nodes
    from jinja2.sandbox import SandboxedEnvironment

ROOTS = ("steps", "task", "phase", "attempt", "mode", "env")


class TemplateError(Exception):
    """A template or condition that cannot be read, or names something that is not there."""


@cache
def environment() -> SandboxedEnvironment:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    # Markdown is not HTML: no autoescape. Lists and dicts print as JSON-like text through `tojson` if wanted.
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def parse(source: str) -> nodes.Template:
    from jinja2 import TemplateSyntaxError

    try:
        return environment().parse(source)
    except TemplateSyntaxError as exc:
        raise TemplateError(f"line {exc.lineno}: {exc.message}") from None


def parse_expression(expression: str) -> nodes.Expr:
    """The expression's tree; an unreadable one raises TemplateError (it is checked when the file loads)."""
    from jinja2 import TemplateSyntaxError, nodes

    try:
        tree = environment().parse("{{ (" + expression + ") }}")
    except TemplateSyntaxError as exc:
        raise TemplateError(exc.message or "not a valid expression") from None
    outputs = [node for node in tree.body if isinstance(node, nodes.Output)]
    if len(outputs) != 1 or len(outputs[0].nodes) != 1 or not isinstance(outputs[0].nodes[0], nodes.Expr):
        raise TemplateError("not a single expression")
    try:
        environment().compile_expression(expression)  # what the step will run, so it must compile too
    except TemplateSyntaxError as exc:
        raise TemplateError(exc.message or "not a valid expression") from None
    return outputs[0].nodes[0]


def step_names(tree: nodes.Node) -> Iterator[str]:
    """Every step named as ``steps.NAME`` or ``steps['NAME']`` in a template or expression, in order."""
    from jinja2 import nodes

    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        inner = getattr(node, "node", None)
        if not (isinstance(inner, nodes.Name) and inner.name == "steps"):
            continue
        if isinstance(node, nodes.Getattr):
            yield node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            yield node.arg.value


def uses_steps(tree: nodes.Node) -> bool:
    from jinja2 import meta

    return "steps" in meta.find_undeclared_variables(tree)  # type: ignore[arg-type]


def evaluate(expression: str, values: Mapping[str, Any]) -> Any:
    from jinja2 import TemplateSyntaxError, UndefinedError
    from jinja2.exceptions import SecurityError

    try:
        compiled = environment().compile_expression(expression, undefined_to_none=False)
        value = compiled(**values)
        bool(value)  # a StrictUndefined result raises only when it is used
    except TemplateSyntaxError as exc:
        raise TemplateError(exc.message or "not a valid expression") from None
    except (UndefinedError, SecurityError, TypeError, ValueError, ArithmeticError) as exc:
        raise TemplateError(_said(exc)) from None
    return value


def render(source: str, values: Mapping[str, Any]) -> str:
    from jinja2 import TemplateSyntaxError, UndefinedError
    from jinja2.exceptions import SecurityError

    try:
        return environment().from_string(source).render(**values)
    except TemplateSyntaxError as exc:
        raise TemplateError(f"line {exc.lineno}: {exc.message}") from None
    except (UndefinedError, SecurityError, TypeError, ValueError, ArithmeticError) as exc:
        raise TemplateError(_said(exc)) from None


def _said(exc: Exception) -> str:
    """Jinja2's words for a missing name, in the terms of a pipeline."""
    text = re.sub(r"'dict object' has no attribute ('[^']*')", r"nothing named \1 is recorded", str(exc))
    return text.replace("'None' has", "null has") or type(exc).__name__
