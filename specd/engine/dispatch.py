"""Turning a step or a hook into work: agent requests, `run:` subprocesses, results.

The brain decides *what* runs; this module knows *how*.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from specd.agents.base import Agent, AgentFailed, AgentRequest, AgentResult, Budget, Kind, Usage
from specd.agents.command import specd_env
from specd.agents.proc import run_group, transcript_path
from specd.agents.prompt import render_prompt
from specd.engine import outputs, verdict
from specd.engine.step_agent import StepAgents, step_budget
from specd.pipeline.limits import MAX_DEPTH, nesting
from specd.pipeline.model import DEFAULT_HOOK_TIMEOUT, DEFAULT_STEP_TIMEOUT, PipelineConfig, Step
from specd.pipeline.resolve import ResolvedHook, Workflows
from specd.pipeline.step_agents import settings_for
from specd.pipeline.step_checks import OUTCOME as CHECKS_FAILED
from specd.pipeline.workflow import Workflow, load_workflow
from specd.system import environments
from specd.system.ownpath import unseen
from specd.tasks.project import Project

OUTCOME_CHARS = 200  # an outcome is a word the pipeline declares; a longer one is refused before it is recorded
SUMMARY_CHARS = 4_000  # of a summary as specd keeps it (a paragraph or a few); longer ones are cut, and say so


@dataclass(frozen=True)
class HookResult:
    ok: bool
    reason: str = ""
    output: str = ""
    usage: Usage = field(default_factory=Usage)


@dataclass
class Dispatcher:
    project: Project
    task: str
    task_dir: Path
    config: PipelineConfig
    agent: Agent
    mode: str
    run_id: str
    budget: Callable[[], Budget]
    extra: Callable[[Step, str | None], dict[str, str]] = lambda step, phase: {}
    note: str = ""  # a human's note for the step being dispatched (approve/reject --note)
    # Typed outputs (issue 30): what templates and `run:` hooks read (set by the brain: (phase, attempt) →
    # values), and why the step's last output was refused, for its next attempt's prompt.
    facts: Callable[[str | None, int], dict[str, Any]] | None = None
    output_error: str = ""
    feedback: str = ""  # the step's check that failed after its last attempt (engine/checks.py)
    # An agent per step (issue 30): when set, each step runs on the agent of its own block (else `agent`).
    agents: StepAgents | None = None

    _workflows: dict[tuple[Path, int], Workflow] = field(default_factory=dict)
    _paths: Workflows = field(init=False)

    def __post_init__(self) -> None:
        self._paths = Workflows(self.project)

    def workflow(self, step: Step) -> Workflow:
        """The step's workflow, read again only when the file changed (the gate, the request and the
        stage all ask for it)."""
        assert step.workflow is not None
        where = f"{self.config.source}: {step.where}.workflow"
        path = self._paths.resolve(step.workflow, where=where).path
        key = (path, path.stat().st_mtime_ns)
        if key not in self._workflows:
            self._workflows[key] = load_workflow(path)
        return self._workflows[key]

    def allowed(self, step: Step) -> tuple[str, ...]:
        """The workflow's outcomes (`done` when it declares none), plus the keys of the step's `outcomes` map:
        the map routes outcomes and adds to them, never takes `done` away from a workflow that has only it;
        a workflow that declares its own (the built-in review) can never pass by reporting `done`.
        `checks_failed` is specd's to report (engine/checks.py), never the agent's."""
        declared = [*(self.workflow(step).outcomes or ("done",)), *(o for o in step.outcomes if o != CHECKS_FAILED)]
        return tuple(dict.fromkeys(declared))

    def output_schema(self, step: Step) -> Mapping[str, Any] | None:
        return outputs.schema_of(step, self.workflow(step)) if step.workflow else None

    def agent_for(self, step: Step) -> Agent:
        return self.agents.for_step(self.config, step) if self.agents else self.agent

    def _filled(self, workflow: Workflow, phase: str | None, attempt: int) -> Workflow:
        if not self.facts or "steps" not in workflow.body:
            return workflow  # nothing to fill: the history is not walked for the facts (it grows every step)
        return outputs.filled(workflow, self.facts(phase, attempt), "fix the workflow, or run the steps it names first")

    def step(self, step: Step, pipeline: str, phase: str | None, conversation: str, attempt: int,
             allowed: tuple[str, ...] = ()) -> AgentResult:
        """Run the step's agent; ``allowed`` (a group member's: its group's combine outcomes) replaces the
        step's own outcomes."""
        workflow = self._filled(self.workflow(step), phase, attempt)
        request = self._request(step, pipeline, phase, "step", workflow, allowed or self.allowed(step), conversation,
                                attempt)
        before = verdict.look(request)
        # Every backend gets the same fallback: an unreported outcome is read from the verdict file.
        result = verdict.settle(request, kept(self.agent_for(step).run(request), request.outcomes), before)
        if self.agents is None:
            return result
        # The history row (and so the cost row) names the backend the step ran on.
        return replace(result, data={**result.data, "backend": self.agents.backend(self.config, step)})

    def hook(self, hook: ResolvedHook, step: Step, pipeline: str, phase: str | None,
             conversation: str) -> HookResult:
        if hook.spec.run:
            return self._run_hook(hook, step, pipeline, phase)
        assert hook.path is not None
        if not hook.path.is_file():  # removed after the run started: a failed hook, not bad input
            return HookResult(False, f"hook workflow {hook.path} is missing (removed after the run started)")
        conv = conversation if hook.spec.mode == "inline" else f"{conversation}.{hook.point}-hook"
        try:
            workflow = self._filled(load_workflow(hook.path), phase, 1)
            request = self._request(step, pipeline, phase, "hook", workflow, ("done", "fail"), conv, 1)
            result = kept(self.agent_for(step).run(request), request.outcomes)
        except AgentFailed as exc:
            return HookResult(False, exc.reason, usage=exc.usage)
        ok = result.outcome != "fail"
        return HookResult(ok, "" if ok else (result.summary or "the hook reported outcome fail"),
                          result.summary, result.usage)

    def _request(self, step: Step, pipeline: str, phase: str | None, kind: Kind, workflow: Workflow,
                 outcomes: tuple[str, ...], conversation: str, attempt: int) -> AgentRequest:
        schema = outputs.schema_of(step, workflow) if kind == "step" else None
        prompt = render_prompt(task=self.task, task_dir=self.task_dir, project_root=self.project.root,
                               step=step.name, pipeline=pipeline, phase=phase, kind=kind, workflow=workflow,
                               outcomes=outcomes, mode=self.mode, extra=self._extra(step, phase, kind),
                               backend=self.agent_for(step).name, output_schema=schema)
        return AgentRequest(
            task=self.task, task_dir=self.task_dir, project_root=self.project.root, step=step.name,
            pipeline=pipeline, phase=phase, kind=kind, workflow=workflow.path, prompt=prompt, outcomes=outcomes,
            mode=self.mode, run_id=self.run_id, conversation=conversation, attempt=attempt,
            budget=step_budget(self.budget(), step),
            model=step.model, max_turns=step.max_turns, context_files=workflow.context,
            settings=self.settings(step), frontmatter=workflow.meta, timeout=self.timeout(step),
            output_schema=schema,
        )

    def settings(self, step: Step) -> Mapping[str, Any]:
        """The step's agent settings; a read-only step's say so, for every backend's jail and tools (issue 30)."""
        settings = settings_for(self.config, step)
        return {**settings, "read_only": True} if step.read_only else settings

    def _extra(self, step: Step, phase: str | None, kind: Kind) -> dict[str, str]:
        extra = self.extra(step, phase)
        if self.note and kind == "step":
            extra = {**extra, "Note from the human (answer this first)": self.note}
        if self.output_error and kind == "step":
            extra = {**extra, "Your last report was refused (fix what this names and report again)": self.output_error}
        if self.feedback and kind == "step":
            extra = {**extra, "Checks failed, so this step runs again": self.feedback}
        return extra

    def timeout(self, step: Step) -> float:
        """Seconds before the step's agent is stopped: the step's, else the agent block's, else an hour."""
        agent = settings_for(self.config, step)
        value: Any = step.timeout or agent.get("timeout") or DEFAULT_STEP_TIMEOUT
        return float(value)

    def _run_hook(self, hook: ResolvedHook, step: Step, pipeline: str, phase: str | None) -> HookResult:
        assert hook.spec.run is not None
        timeout = hook.spec.timeout or DEFAULT_HOOK_TIMEOUT
        log = transcript_path(self.task_dir, self.run_id, f"{step.name}-{hook.point}-hook", ".log")
        env = {**os.environ, **specd_env(task=self.task, task_dir=self.task_dir, step=step.name, pipeline=pipeline,
                                         phase=phase, kind="hook", mode=self.mode, workflow="", result="",
                                         run_id=self.run_id),
               **outputs.hook_env(self.facts(phase, 1) if self.facts else None)}
        outcome = run_group(hook.spec.run, cwd=self.project.root, env=env, stdin=None, log=log, timeout=timeout,
                            jail=hook.spec.jail.within(self.task_dir))
        output = outcome.tail(4000)
        if outcome.timed_out:
            return HookResult(False, f"timed out after {timeout:g} s", output)
        if outcome.returncode != 0:
            hint = (unseen(hook.spec.run, self.project.root) if outcome.returncode == 127
                    else environments.hint(output, self.project.root.resolve()))
            return HookResult(False, f"exited with status {outcome.returncode}{hint}", output)
        return HookResult(True, "", output)


def kept(result: AgentResult, allowed: Sequence[str] = ()) -> AgentResult:
    """What an agent reported, as specd may keep it: the model shapes it, and every record of the step holds it
    (the history, the journal, git). A report nested too deep (the redaction and the checks walk it recursively)
    or an outcome longer than any word a step declares fails the step before anything records it; a summary past
    SUMMARY_CHARS is cut, and says so."""
    if (depth := nesting(result.data)) > MAX_DEPTH:
        raise AgentFailed(f"the agent's report is nested {depth} levels deep (at most {MAX_DEPTH}); report the "
                          "outcome, a summary and an output a few levels deep", result.usage, result.transcript)
    if len(result.outcome) > OUTCOME_CHARS and result.outcome not in allowed:
        raise AgentFailed(f"the agent reported an outcome of {len(result.outcome):,} characters ("
                          f"{result.outcome[:40]!r}…); an outcome is one of the words the step declares",
                          result.usage, result.transcript)
    if len(result.summary) <= SUMMARY_CHARS:
        return result
    return replace(result, summary=f"{result.summary[:SUMMARY_CHARS]} … (cut: {len(result.summary):,} characters)")
