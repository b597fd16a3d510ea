"""The `notify:` block: where it is read from, checked like the rest of the pipeline file, as one record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.pipeline.model import PipelineConfig
from specd.system.jail import Jail
from specd.tasks.project import Project, read_settings

EVENTS = ("waiting", "failed")
DEFAULT_TIMEOUT = 30.0  # seconds for each target: a chat service that hangs must not hold the run's end


@dataclass(frozen=True)
class NotifySpec:
    source: Path  # the file the block was written in, for messages
    on: tuple[str, ...] = EVENTS
    apprise: tuple[str, ...] = ()
    run: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    jail: Jail = Jail("project", network=True)
    page: str | None = None  # the dashboard's address: each message links to its task's page there

    @classmethod
    def create(cls, source: Path, raw: Mapping[str, Any], where: str) -> NotifySpec:
        if not raw.get("apprise") and not raw.get("run"):
            raise ConfigError(f"{source}: {where}: names nowhere to send a message",
                              fix='add `apprise: ["<url>", ...]` (desktop, chat, mail, json://...) or '
                                  '`run: "<command>"`')
        # A notify command exists to reach a webhook: unlike a `run:` hook it keeps the network unless told not to.
        jail = Jail.for_project({"network": raw.get("network", True), "sandbox": raw.get("sandbox"),
                                 "env_allow": raw.get("env_allow")})
        return cls(source=source, on=tuple(raw.get("on") or EVENTS), apprise=tuple(raw.get("apprise") or ()),
                   run=raw.get("run"), timeout=float(raw.get("timeout") or DEFAULT_TIMEOUT), jail=jail,
                   page=str(raw["page"]).rstrip("/") if raw.get("page") else None)


def notify_spec(project: Project, config: PipelineConfig) -> NotifySpec | None:
    """The pipeline file's block, else ``.specd/config.json``'s (a project file replaces, nothing is merged);
    None when neither has one. A bad block is bad input (exit 2), said before the run starts."""
    if config.notify is not None:
        return NotifySpec.create(config.source, config.notify, "notify")
    raw = read_settings(project).get("notify")
    if raw is None:
        return None
    from specd.pipeline.schema import check_part

    check_part(project.config_file, raw, "notify", ("notify",))
    return NotifySpec.create(project.config_file, raw, "notify")
