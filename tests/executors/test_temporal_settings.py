"""Where Temporal is: a flag beats SPECD_TEMPORAL_*, which beats .specd/config.json; an API key is masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specd.errors import ConfigError
from specd.executors.temporal.settings import Settings, resolve
from specd.redact import redact
from specd.tasks.project import Project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    (tmp_path / ".specd").mkdir()
    config = {"temporal": {"address": "from-config:7233", "namespace": "cfg-ns", "task_queue": "cfg-q"}}
    (tmp_path / ".specd" / "config.json").write_text(json.dumps(config))
    return Project(tmp_path)


def test_flags_then_environment_then_config(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("ADDRESS", "NAMESPACE", "TASK_QUEUE", "API_KEY", "TLS"):
        monkeypatch.delenv(f"SPECD_TEMPORAL_{key}", raising=False)
    settings = resolve(project)
    assert settings is not None
    assert (settings.address, settings.namespace, settings.task_queue) == ("from-config:7233", "cfg-ns", "cfg-q")
    monkeypatch.setenv("SPECD_TEMPORAL_NAMESPACE", "env-ns")
    settings = resolve(project, address="flag:1")
    assert settings is not None
    assert (settings.address, settings.namespace, settings.task_queue) == ("flag:1", "env-ns", "cfg-q")
    assert settings.ui_link("w") == "http://flag:1001/namespaces/env-ns/workflows/w"  # the dev server's UI port


@pytest.mark.parametrize(("address", "ui", "link"), [
    ("localhost:7233", None, "http://localhost:8233/namespaces/default/workflows"),
    ("127.0.0.1:36029", None, "http://127.0.0.1:37029/namespaces/default/workflows"),
    ("ns.acct.tmprl.cloud:7233", None, "https://cloud.temporal.io/namespaces/default/workflows"),
    ("127.0.0.1:36029", "http://ui.example:9000/", "http://ui.example:9000/namespaces/default/workflows"),
])
def test_the_ui_link_follows_the_server_unless_told(address: str, ui: str | None, link: str) -> None:
    """Issue 31: the links printed after a submit named port 8233 whatever the server's port was."""
    assert Settings(address=address, ui=ui).ui_link() == link


def test_no_address_anywhere_means_temporal_is_not_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECD_TEMPORAL_ADDRESS", raising=False)
    assert resolve(Project(tmp_path)) is None
    assert resolve(None) is None


def test_an_api_key_turns_tls_on_and_is_never_printed(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECD_TEMPORAL_API_KEY", "cloud-key-0123456789abcdef")
    settings = resolve(project)
    assert settings is not None
    assert settings.tls
    assert "cloud-key-0123456789abcdef" not in redact("connecting with cloud-key-0123456789abcdef")


def test_a_temporal_section_that_is_not_an_object_names_the_file(tmp_path: Path) -> None:
    (tmp_path / ".specd").mkdir()
    (tmp_path / ".specd" / "config.json").write_text(json.dumps({"temporal": "localhost:7233"}))
    with pytest.raises(ConfigError, match=r"config.json: \"temporal\" must be an object"):
        resolve(Project(tmp_path))


def test_an_api_key_in_config_json_is_refused_naming_the_variable_to_use(tmp_path: Path) -> None:
    """Found by hand: `.specd/config.json` is committed and every jail reads it, and an `api_key` there was taken
    as the key to connect with (the README names only SPECD_TEMPORAL_API_KEY)."""
    (tmp_path / ".specd").mkdir()
    config = {"temporal": {"address": "ns.acct.tmprl.cloud:7233", "api_key": "cloud-key-0123456789abcdef"}}
    (tmp_path / ".specd" / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match=r"config.json: \"temporal\".\"api_key\" holds a secret") as raised:
        resolve(Project(tmp_path))
    assert "SPECD_TEMPORAL_API_KEY" in (raised.value.fix or "")
    assert "cloud-key-0123456789abcdef" not in str(raised.value)
