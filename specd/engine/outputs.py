"""Typed outputs and conditions at run time (issue 30): what a step returned, checked, kept and read.

A step with an output schema (its own ``output:``, else its workflow's frontmatter) must return an object
that matches it. One that does not is refused: the refusal is a history row of its own (``kind: attempt``)
and the step runs again with the validation error in its prompt, up to the step's attempts (3 unless
``attempts:`` says otherwise); after the last, the step fails with the error. The output that matches is
kept in the step's history row before anything reads it, so a resumed run (kill -9 included) reads the
same values: ``steps.NAME.output`` in later workflows' text and ``when:`` conditions, and
``SPECD_OUTPUT_<NAME>`` (its JSON) in a ``run:`` hook's environment.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from specd.agents.base import AgentFailed, AgentResult
from specd.errors import ConfigError
from specd.pipeline import template
from specd.pipeline.limits import json_path
from specd.pipeline.model import Step
from specd.pipeline.typed import frontmatter_problem
from specd.pipeline.workflow import Workflow
from specd.state.model import RunState

DEFAULT_ATTEMPTS = 3


def values(state: RunState, mode: str, phase: str | None, attempt: int) -> dict[str, Any]:
    """What a template or a condition may name: the steps so far, the task's facts, the SPECD_* environment."""
    return {"steps": recorded(state.history), "task": state.task, "phase": phase or "", "attempt": attempt,
            "mode": mode, "env": {k: v for k, v in os.environ.items() if k.startswith("SPECD_")}}


def recorded(history: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per step name, its latest finished row (superseded rows and refused attempts do not count)."""
    steps: dict[str, dict[str, Any]] = {}
    for row in history:
        if row.get("kind") == "step" and not row.get("superseded"):
            steps[str(row["step"])] = {"output": row.get("output"), "outcome": row.get("outcome"),
                                       "summary": row.get("summary", "")}
    return steps


def schema_of(step: Step, workflow: Workflow) -> Mapping[str, Any] | None:
    """The step's own ``output:`` wins over its workflow's; the frontmatter one is checked here, at the step."""
    if step.output is not None:
        return step.output
    schema = workflow.meta.get("output")
    if schema is None:
        return None
    why = frontmatter_problem(workflow)
    if why:
        raise ConfigError(why,
                          fix='write a JSON Schema for an object, e.g. `output: {type: object, properties: '
                              '{files: {type: array}}}`')
    return dict(schema)


def filled(workflow: Workflow, facts: dict[str, Any] | None, where: str) -> Workflow:
    """The workflow with its ``{{ steps... }}`` placeholders filled in; text that names no step is left alone."""
    if facts is None or "steps" not in workflow.body:
        return workflow
    try:
        tree = template.parse(workflow.body)
    except template.TemplateError:
        return workflow  # not a template at all (load-time checks report one that names steps)
    if not template.uses_steps(tree):
        return workflow
    try:
        return replace(workflow, body=template.render(workflow.body, facts))
    except template.TemplateError as exc:
        raise AgentFailed(f"{workflow.path}: {exc} (known so far: {known(facts)}); {where}") from None


def hook_env(facts: dict[str, Any] | None) -> dict[str, str]:
    """``SPECD_OUTPUT_<STEP>``: each step's output as JSON, for a ``run:`` hook (non-name characters as ``_``)."""
    steps = (facts or {}).get("steps") or {}
    return {f"SPECD_OUTPUT_{re.sub(r'[^A-Za-z0-9]', '_', name).upper()}": json.dumps(row["output"])
            for name, row in steps.items() if row.get("output") is not None}


UNDECLARED = "reported outcome"  # how a refusal of an outcome the step does not declare begins


def refusal(schema: Mapping[str, Any] | None, result: AgentResult, allowed: Sequence[str] = ()) -> str | None:
    """Why ``result`` is refused: an outcome the step does not declare (``allowed``; a backend whose schema
    holds the outcome as a plain string, like Claude Code's shared one, relies on this), or an output that
    does not match ``schema`` (the first error, at its path). None when it stands."""
    if allowed and result.outcome not in allowed:
        return f"{UNDECLARED} {result.outcome!r}; allowed: {', '.join(allowed)}"
    if schema is None:
        return None
    if "output" not in result.data:
        return "no output was returned; the step must return an object matching its output schema"
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(schema).iter_errors(result.data["output"]))
    if error is None:
        return None
    return f"{json_path(['output', *error.absolute_path])}: {error.message}"


def attempts(step: Step) -> int:
    """The step's ``attempts:`` (issue 30, item 1) where the pipeline model has it, else DEFAULT_ATTEMPTS."""
    value = getattr(step, "attempts", None)
    return int(value) if isinstance(value, int) and value > 0 else DEFAULT_ATTEMPTS


def known(facts: Mapping[str, Any]) -> str:
    names = sorted(facts.get("steps") or {})
    return ", ".join(f"steps.{n}" for n in names) or "no step has finished yet"
