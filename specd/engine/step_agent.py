"""The agent each step runs on (issue 30): one agent per distinct agent block, built when first needed.

A run used to build one agent. With a step's own ``agent:`` block, the dispatcher asks this cache for
the step's agent instead: steps whose effective block (and spec) are the same share one agent, so a
backend's per-run state (Claude Code's config copy, the anthropic client) is made once, and a pipeline
that never names a step agent builds exactly the one agent it always did. Which backend wins where is
written down in specd.pipeline.step_agents.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from specd.agents.base import Agent, AgentContext, Budget
from specd.agents.factory import backend_of, check_caps, make_agent
from specd.pipeline.model import PipelineConfig, Step
from specd.pipeline.step_agents import own_backend, settings_for


@dataclass
class StepAgents:
    """``spec`` is the run's `--agent` (None: the pipeline's block decides); ``wrap`` dresses every agent
    handed out (the git recorder's ReportingAgent, set once the recorder exists), so the files each backend
    reports reach the step's commit."""

    spec: str | None
    ctx: AgentContext
    root: Path
    wrap: Callable[[Agent], Agent] = lambda agent: agent
    _built: dict[str, Agent] = field(default_factory=dict)

    def first(self, config: PipelineConfig) -> Agent:
        """Build every agent the enabled steps need now, so a backend that cannot run here (no API key, no
        `claude`) is bad input before any step starts, as it always was. Returns the run's own agent, or,
        when every step names its own backend, the first step's (the run's default is then never built: a
        file whose steps all run on Claude Code needs no API key)."""
        steps = self._steps(config)
        agents = [self.for_step(config, step) for step in steps]
        if not agents or any(own_backend(step) is None for step in steps):
            return self.wrap(self._get(self.spec, config.agent))
        return agents[0]

    def check_caps(self, config: PipelineConfig, limits: Budget) -> None:
        """Each step's per-step caps against the agent it runs on (factory.check_caps): refused before the run
        starts, naming the step when its own block set the agent or the cap."""
        for step in self._steps(config):
            source = f"{config.source}: {step.where}" if step.agent else config.source
            check_caps(self.for_step(config, step), step_budget(limits, step), source)

    @staticmethod
    def _steps(config: PipelineConfig) -> list[Step]:
        return [member for name in _reachable(config) for step in config.steps(name) if step.enabled
                for member in (step, *step.members) if member.workflow and member.enabled]  # a group's members

    def for_step(self, config: PipelineConfig, step: Step) -> Agent:
        spec = None if own_backend(step) else self.spec  # a backend the step names wins over --agent
        return self.wrap(self._get(spec, settings_for(config, step)))

    def backend(self, config: PipelineConfig, step: Step) -> str:
        """The backend the step's agent is (for its history row)."""
        spec = None if own_backend(step) else self.spec
        return backend_of(spec, settings_for(config, step)) or "agent"

    def _get(self, spec: str | None, settings: Mapping[str, Any]) -> Agent:
        key = json.dumps([spec, dict(settings)], sort_keys=True, default=str)
        agent = self._built.get(key)
        if agent is None:
            agent = self._built[key] = make_agent(spec, settings, self.ctx, self.root)
        return agent


def _reachable(config: PipelineConfig) -> list[str]:
    """The pipelines a run can enter from ``main``, in the order first met (one that never runs needs no agent)."""
    found, todo = [], ["main"]
    while todo:
        name = todo.pop(0)
        if name in found or name not in config.pipelines:
            continue
        found.append(name)
        todo += [step.pipeline for step in config.steps(name) if step.pipeline and step.enabled]
    return found


STEP_BUDGETS = ("max_step_cost_usd", "max_step_tokens")


def step_budget(budget: Budget, step: Step) -> Budget:
    """The run's budget, with the step's own per-step limits where its agent block sets them."""
    own = {key: step.agent[key] for key in STEP_BUDGETS if step.agent and key in step.agent}
    return replace(budget, **own) if own else budget
