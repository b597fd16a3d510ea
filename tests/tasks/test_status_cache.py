"""The check that lets the status index and `status --json` skip the walk of redact_obj: whenever redaction
would change a value, the check must say so (it may say so needlessly, never the other way round)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specd.redact import redact_obj
from specd.tasks.readmodel import redaction

SECRET = 'q"uo\\te-s3cret-Ünï'  # a quote, a backslash and non-ASCII: escaped differently in JSON text
# Pieces that make or break a rule's match: boundaries (`task-` vs ` sk-`), escapes before a token, a
# Kelvin sign that lower-cases to `k`, the secret cut in two.
PIECES = ["sk-", "task-", "\n", "\t", "\x01", " ", "é", "\u212a", '"', "\\", "_", "abcdefgh12345678", "Bearer ",
          "password=", "pwd: ", "://user:pw1234@host", "eyJhbGciOi.eyJzdWIiOi.sig", "ghp_" + "a" * 20,
          "AKIA" + "A" * 16, "-----BEGIN RSA PRIVATE KEY-----", "x-api-key: ", "Authorization: ",
          "hooks.slack.com/services/", "ant-", SECRET, SECRET[:7], SECRET[7:], "xoxb-12345678",
          "sk_live_12345678", "npm_", "glpat-"]
KEYS = ["a", "reason", "api_token", "Authorization", "input_tokens", "secret", "x_PWD", "to\u212aen", "note"]

text = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)
values: Any = st.recursive(st.none() | st.integers() | text,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                               st.sampled_from(KEYS) | text, inner, max_size=3), max_leaves=8)


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECD_TEST_SERVICE_PASSWORD", SECRET)


@settings(max_examples=400, deadline=None)
@given(values)
def test_whatever_redaction_changes_the_check_flags(value: Any) -> None:
    if redact_obj(value) != value:
        assert redaction.suspect(redaction.text(value)), value


@settings(max_examples=100, deadline=None)
@given(st.lists(values, max_size=4))
def test_rows_the_check_passes_are_what_redact_obj_gives(rows: list[Any]) -> None:
    assert redaction.redacted_list(rows) == redact_obj(rows)


def test_task_names_alone_are_not_flagged() -> None:
    rows = [{"task": f"task-{i}", "folder": f".specd/tasks/task-{i}", "usage": {"input_tokens": 1}} for i in range(50)]
    assert not redaction.suspect(redaction.text(rows))
    assert redaction.suspect(redaction.text([{"reason": "key sk-abcdefghijkl"}]))
    assert redaction.suspect(redaction.text([{"reason": "line\nsk-abcdefghijkl"}]))


def test_the_listing_json_parses_to_the_envelope() -> None:
    document = {"ok": True, "task": None, "tasks": [{"task": "a", "needs": ["b"]}, {"task": "b"}], "error": None}
    printed = redaction.listing_json(document)
    assert json.loads(printed) == document
    assert printed.splitlines()[5] == '    {"task": "b"}'  # a row a line
    assert redaction.listing_json({**document, "tasks": []}) == json.dumps({**document, "tasks": []}, indent=2)


# The store's write looks at all its new rows' texts in one pass (issue 33): whatever one row alone flags.
@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=5))
def test_the_rows_looked_at_together_are_flagged_whenever_one_is(rows: list[Any]) -> None:
    texts = [redaction.text(row) for row in rows]
    if any(redaction.suspect(one) for one in texts):
        assert redaction.suspect("\n".join(texts))
