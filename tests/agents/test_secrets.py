"""Secrets never reach the task folder: the redaction filter and a full run with a key set."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest

from specd.redact import MASK, redact, redact_obj

SECRET_PART = "SECRET123"


def _files_containing(folder: Path, needle: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_text(errors="replace")]


def test_no_secret_under_specd_after_a_run(project: Any, server: Any, make_agent: Any) -> None:
    # The model is handed the key three ways: a file it reads, a command's output, its own text.
    (project.root / "config.env").write_text("ANTHROPIC_API_KEY=sk-ant-test-SECRET123\n")
    server.push(
        fake.message("Found sk-ant-test-SECRET123 in the env file.", fake.tool("read_file", path="config.env")),
        fake.message(fake.tool("run_command", command="python -c \"import os; print(os.environ.get('X'))\"")),
        fake.message(fake.tool("write_file", path="NOTES.md", content="key: sk-ant-test-SECRET123")),
        fake.sse_error(),
        fake.complete("approve", "key is sk-ant-test-SECRET123"),
    )
    make_agent().run(project.request())
    assert _files_containing(project.root / ".specd", SECRET_PART) == []
    # The model may still write it into project files it was asked to write: that is the user's code.
    assert SECRET_PART in (project.root / "NOTES.md").read_text()


def test_failure_messages_are_redacted(project: Any, server: Any, make_agent: Any) -> None:
    server.push(fake.error(400))
    with pytest.raises(Exception) as failure:  # noqa: PT011 - AgentFailed; the point is its text
        make_agent().run(project.request())
    assert SECRET_PART not in str(failure.value)
    assert _files_containing(project.task_dir, SECRET_PART) == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("key sk-ant-api03-AbC_dEf-123 here", "key [REDACTED] here"),
        ("sk-proj-abcdefghijklmnop", MASK),
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer [REDACTED]"),
        ('{"x-api-key": "k-123"}', '{"x-api-key": "[REDACTED]"}'),
        ("x-api-key: k-123", "x-api-key: [REDACTED]"),
        ("task-list and risk-free ask-me", "task-list and risk-free ask-me"),
        ("", ""),
    ],
)
def test_redact_patterns(text: str, kept: str) -> None:
    assert redact(text) == kept


def test_redact_env_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-12345678")
    monkeypatch.setenv("SHORT_SECRET", "abc")  # too short to mask without mangling ordinary text
    assert redact("got tok-12345678 and abc") == f"got {MASK} and abc"


def test_a_secret_value_encoded_is_masked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a step prints or reports may hold a secret it read base64-encoded (a manifest) or in hex."""
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-12345678")
    encoded = base64.b64encode(b"Bearer tok-12345678").decode()  # the value three bytes in: another alignment
    shown = redact(f"data: {encoded} hex {b'tok-12345678'.hex()}")
    assert shown.count(MASK) == 2
    assert encoded not in shown
    assert "746f6b2d3132333435363738" not in shown
    assert shown.startswith(f"data: {encoded[:10]}")  # "Bearer " is not masked: only what holds the value
    assert redact(base64.b64encode(b"tok-12345679 is another").decode()).count(MASK) == 0


def test_redact_obj_is_deep_and_masks_secret_keys() -> None:
    data = {"headers": {"x-api-key": "anything", "Authorization": "Basic zzz"},
            "list": ["sk-ant-x1", ("Bearer t",)], "n": 3, "input_tokens": 12}
    assert redact_obj(data) == {"headers": {"x-api-key": MASK, "Authorization": MASK},
                                "list": [MASK, (f"Bearer {MASK}",)], "n": 3, "input_tokens": 12}


SHAPES = [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",  # torn: no END line
    "sk-ant-api03-AbC_dEf-123",
    "sk-proj-abcdefghijklmnop",
    "ghp_" + "a1B2" * 5,
    "ghs_" + "Z9y8" * 5,
    "github_pat_" + "x1_" * 8,
    "AKIA" + "ABCDEFGH12345678",
    "ASIA" + "ZYXWVUTS87654321",
    "xoxb-1234-5678-abcdefgh",
    "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    "BEARER abc.def-ghi",
    "X-Api-Key=k-123456",
    "authorization: Basic dXNlcjpwYXNz",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "rk_live_51Hx0abcdEFGH",
    "sk_test_51Hx0abcdEFGH",
    "glpat-xYz12_abc-DEF3456789",
    "npm_" + "a1B2c3D4e5" * 3 + "f6G7h8",
    "AIza" + "SyA-1234567890_abcdefghijklmnopqrst",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    "postgres://app:hunter2pass@db.example.com:5432/app",
    "redis://:pw@cache",
    "Password: hunter2",
    "DB_PASSWD=hunter2",
    "pwd = hunter2",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_token_shape_is_masked_and_its_rule_hint_is_in_it(shape: str) -> None:
    import specd.redact as module

    assert MASK in redact(f"before {shape} after")
    matching = [hints for hints, pattern in module._RULES if pattern.search(shape)]
    assert matching, shape
    # A rule runs only when one of its hints occurs: every text a rule matches must hold one.
    assert all(any(hint in shape.lower() for hint in hints) for hints in matching)


def test_a_changed_secret_value_is_masked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "first-value-1")
    assert redact("x first-value-1") == f"x {MASK}"
    monkeypatch.setenv("DEPLOY_TOKEN", "other-value-2")  # same name, same length: the cache must notice
    assert redact("x other-value-2 first-value-1") == f"x {MASK} first-value-1"
