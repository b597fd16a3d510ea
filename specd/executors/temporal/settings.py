"""Where Temporal is: flags, then ``SPECD_TEMPORAL_*`` variables, then ``.specd/config.json`` ("temporal": {...}),
and how a worker runs what it takes from there (its own flags only).

TLS material and a Temporal Cloud API key are read from the same places and kept in memory only: nothing here
ever writes a file, and the API key is masked like any other secret-named value.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from specd.errors import ConfigError
from specd.redact import add_secrets
from specd.tasks.project import Project, read_settings

DEFAULT_NAMESPACE = "default"
DEFAULT_QUEUE = "specd"
KEYS = ("address", "namespace", "task_queue", "tls", "tls_cert", "tls_key", "tls_ca", "api_key", "ui",
        "heartbeat_timeout", "remote")


@dataclass(frozen=True)
class Settings:
    address: str
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = DEFAULT_QUEUE
    tls: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    api_key: str | None = None
    ui: str | None = None  # the Temporal UI's base URL, for the links printed after a submit
    heartbeat_timeout: float = 30.0  # how long a silent worker is trusted before its step runs elsewhere
    remote: str = "origin"  # the shared repository the submitter pushes task branches to

    @property
    def heartbeat(self) -> timedelta:
        return timedelta(seconds=self.heartbeat_timeout)

    def ui_link(self, workflow_id: str | None = None) -> str:
        """The Temporal UI's page for the namespace's workflows (or one of them). Without `ui` set: Temporal
        Cloud's UI for a *.tmprl.cloud address, else the port the dev server gives its UI by default, the
        frontend's + 1000 (7233 -> 8233); set `ui` (SPECD_TEMPORAL_UI, or "ui" in config.json) for anything else."""
        host, _, port = self.address.rpartition(":")
        host = host or "localhost"
        if self.ui:
            base = self.ui
        elif host.endswith(".tmprl.cloud"):
            base = "https://cloud.temporal.io"
        else:
            base = f"http://{host}:{int(port) + 1000 if port.isdigit() else 8233}"
        base = base.rstrip("/")
        tail = f"/workflows/{workflow_id}" if workflow_id else "/workflows"
        return f"{base}/namespaces/{self.namespace}{tail}"


@dataclass(frozen=True)
class Behaviour:
    """How this worker runs every task it takes: its own `specd worker --agent/--auto/--max-cost`. None leaves it
    to the task's run (what it was started with) and the pipeline file committed on the remote. Never a job's:
    anyone who reaches the Temporal server can start one."""

    agent: str | None = None
    mode: str | None = None
    max_cost: float | None = None  # the most a task's run may cost; a job's run-wide budget can only lower it


def configured(project: Project | None) -> dict[str, Any]:
    """What the project's config.json says about Temporal (an empty dict when nothing)."""
    if project is None:
        return {}
    section = read_settings(project).get("temporal") or {}
    if not isinstance(section, dict):
        raise ConfigError(f"{project.config_file}: \"temporal\" must be an object",
                          fix='write it as {"temporal": {"address": "HOST:PORT", "namespace": "default"}}')
    if section.get("api_key"):  # a key in a file every clone shares and every agent's jail reads: never used
        raise ConfigError(f"{project.config_file}: \"temporal\".\"api_key\" holds a secret in a file that is "
                          "committed with the project and that every agent's jail can read",
                          fix="remove it from the file (and from git's history if it was committed: rotate the key), "
                              "and set SPECD_TEMPORAL_API_KEY where the commands and workers that reach Temporal run")
    return section


def resolve(project: Project | None, **flags: Any) -> Settings | None:
    """The settings in force, or None when no address is given anywhere (Temporal is not in use)."""
    section = configured(project)
    values: dict[str, Any] = {}  # flags, then the environment, then config.json
    for key in KEYS:
        given = flags.get(key)
        env = os.environ.get(f"SPECD_TEMPORAL_{key.upper()}")
        value = given if given not in (None, "") else env if env not in (None, "") else section.get(key)
        if value not in (None, ""):
            values[key] = value
    if "address" not in values:
        return None
    values["tls"] = str(values.get("tls", "")).lower() in ("1", "true", "yes", "on") or bool(values.get("api_key"))
    if "heartbeat_timeout" in values:
        try:
            values["heartbeat_timeout"] = float(values["heartbeat_timeout"])
        except ValueError:
            raise ConfigError(f"heartbeat_timeout {values['heartbeat_timeout']!r} is not a number of seconds",
                              fix="set SPECD_TEMPORAL_HEARTBEAT_TIMEOUT (or temporal.heartbeat_timeout) to, say, 30"
                              ) from None
    if values.get("api_key"):
        add_secrets([str(values["api_key"])])  # whatever its variable's name, it is never printed or recorded
    values.update((k, str(v)) for k, v in list(values.items()) if k not in ("tls", "heartbeat_timeout"))
    return Settings(**values)


def tls_config(settings: Settings) -> Any:
    """The SDK's TLS settings, from files named in the settings (read here, never copied)."""
    if not settings.tls:
        return False
    from temporalio.service import TLSConfig

    def read(path: str | None) -> bytes | None:
        return Path(path).read_bytes() if path else None

    return TLSConfig(server_root_ca_cert=read(settings.tls_ca), client_cert=read(settings.tls_cert),
                     client_private_key=read(settings.tls_key))
