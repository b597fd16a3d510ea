"""Frozen, typed records of a validated pipeline file.

Nothing outside ``specd.pipeline`` sees the raw dicts; by the time a record
exists, the schema and the semantic checks have passed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from specd.system.jail import Jail  # imported where a hook runs: `status` reads pipelines, never runs them

HookMode = Literal["inline", "subagent"]
DEFAULT_HOOK_TIMEOUT = 300.0
DEFAULT_STEP_TIMEOUT = 3600.0  # a hung agent is stopped, never waited on forever
# Outcome targets with a fixed meaning; anything else must name a step in the same pipeline.
TARGETS = ("next", "end", "repeat", "stop", "fail")


GLOBAL_POINTS = ("pre-step", "post-step")
STEP_POINTS = ("pre", "post")


def hook_specs(raw: Mapping[str, Any] | None, points: tuple[str, ...]) -> dict[str, Any]:
    """Only the hook points specd knows; others were already reported as unknown keys."""
    return {point: spec for point, spec in (raw or {}).items() if point in points}


def frozen_map(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(data or {}))


@dataclass(frozen=True)
class HookSpec:
    workflow: str | None = None
    run: str | None = None
    mode: HookMode = "inline"
    optional: bool = False
    timeout: float | None = None
    # A `run:` hook's jail (the project tier): `sandbox: false` opts a trusted script out, loudly.
    sandbox: bool = True
    network: bool | tuple[str, ...] = False  # true: the host's network; hosts: only those, via the proxy
    env_allow: tuple[str, ...] = ()

    @classmethod
    def create(cls, raw: str | Mapping[str, Any]) -> HookSpec:
        if isinstance(raw, str):
            return cls(workflow=raw)
        timeout = raw.get("timeout")
        return cls(
            workflow=raw.get("workflow"),
            run=raw.get("run"),
            mode=raw.get("mode", "inline"),
            optional=bool(raw.get("optional", False)),
            timeout=float(timeout) if timeout is not None else None,
            sandbox=raw.get("sandbox", True) is not False,
            network=tuple(raw["network"]) if isinstance(raw.get("network"), list) else bool(raw.get("network")),
            env_allow=tuple(str(name) for name in raw.get("env_allow") or ()),
        )

    @property
    def label(self) -> str:
        return f"run: {self.run}" if self.run else str(self.workflow)

    @property
    def jail(self) -> Jail:
        from specd.system.jail import Jail

        return Jail.for_project({"sandbox": self.sandbox, "network": self.network, "env_allow": self.env_allow})

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode, "optional": self.optional}
        if self.run:
            out["run"] = self.run
            out["timeout"] = self.timeout or DEFAULT_HOOK_TIMEOUT
            if not self.sandbox:  # only what differs from the default jail, so older output stays as it was
                out["sandbox"] = False
            if self.network:
                out["network"] = list(self.network) if isinstance(self.network, tuple) else True
            if self.env_allow:
                out["env_allow"] = list(self.env_allow)
        else:
            out["workflow"] = self.workflow
        return out


@dataclass(frozen=True)
class Step:
    name: str
    where: str  # JSON path of this step in its file, for messages
    workflow: str | None = None
    pipeline: str | None = None
    enabled: bool = True
    pause_in_semi_auto: bool = False
    description: str | None = None
    # Only hooks written in the file; a key present with None means "explicitly none".
    hooks: Mapping[str, HookSpec | None] = field(default_factory=lambda: frozen_map(None))
    model: str | None = None
    max_turns: int | None = None
    outcomes: Mapping[str, str] = field(default_factory=lambda: frozen_map(None))
    max_visits: int | None = None
    foreach: str | None = None
    stage: str | None = None
    timeout: float | None = None  # seconds; None: the agent block's timeout, else DEFAULT_STEP_TIMEOUT
    on_reject: str | None = None  # where `specd reject` sends the run; None: the previous step
    # Typed outputs and conditions (issue 30): the JSON Schema the agent's output must match (else the
    # workflow's frontmatter `output:`), and a Jinja2 expression that skips the step when false.
    output: Mapping[str, Any] | None = None
    when: str | None = None
    # `checks:` (run by specd/engine/checks.py): commands run in the project tier after the agent finishes, and
    # how often the step may run before its outcome is `checks_failed` (None: DEFAULT_ATTEMPTS).
    checks: tuple[HookSpec, ...] = ()
    attempts: int | None = None
    # An agent per step (issue 30): keys that replace the pipeline's `agent:` block for this step only.
    agent: Mapping[str, Any] | None = None
    # Read-only steps side by side (issue 30, specd/engine/group.py): a step whose jail binds the task's tree
    # read-only; a group's members (each read-only) run at the same time and `combine` turns their outcomes
    # into the group's: (outcome, "any" | "all") rules tried in the order written (pipeline/groups.py).
    read_only: bool = False
    members: tuple[Step, ...] = ()
    combine: tuple[tuple[str, str], ...] = ()
    combine_rule: str | Mapping[str, str] | None = None  # as written in the file, for `pipeline show`

    @property
    def group(self) -> bool:
        return bool(self.members)

    def target(self, outcome: str) -> str:
        """Where an outcome sends the run; unmapped outcomes go to the next step."""
        if outcome in self.outcomes:
            return self.outcomes[outcome]
        return {"fail": "fail", "stop": "stop", "repeat": "repeat"}.get(outcome, "next")


@dataclass(frozen=True)
class PipelineConfig:
    source: Path  # the file it came from
    builtin: bool
    schema_version: str
    mode: str | None
    hooks: Mapping[str, HookSpec | None]  # "pre-step" / "post-step"
    pipelines: Mapping[str, tuple[Step, ...]]
    agent: Mapping[str, Any]
    digest: str  # sha256 of the canonical JSON, so a run can tell the file changed
    warnings: tuple[str, ...] = ()
    notify: Mapping[str, Any] | None = None  # the `notify:` block as validated (specd.notify reads it)

    def steps(self, pipeline: str) -> tuple[Step, ...]:
        return self.pipelines[pipeline]

    def step(self, pipeline: str, name: str) -> Step:
        found = self._by_name[pipeline].get(name)
        if found is None:
            raise KeyError(f"{pipeline}.{name}")
        return found

    def index_of(self, pipeline: str, name: str) -> int:
        return list(self._by_name[pipeline]).index(name)

    def names(self, pipeline: str) -> list[str]:
        """The step names of ``pipeline`` in file order (a fresh list: the caller may keep or change it)."""
        return list(self._by_name[pipeline])

    @cached_property
    def _by_name(self) -> dict[str, dict[str, Step]]:
        """Each pipeline's steps by name, in file order: looked up at every step of a run, at any position."""
        return {name: {step.name: step for step in steps} for name, steps in self.pipelines.items()}
