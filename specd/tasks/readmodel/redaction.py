"""The check that lets the read model's rows that hold nothing to mask skip the walk of ``redact_obj`` (a
second at 10,000 rows), and the listing's JSON text.

``redact_obj`` changes a row only where one of its strings holds a secret value, where one holds a hint of a
token rule (``redact_rules``: every rule runs only on text holding its hint), or where a key names a secret.
Each of those leaves a trace in the row's JSON text (not ASCII-escaped): a string's text is its characters
one by one, with only quotes, backslashes and control characters escaped, none of which is in a hint, so a
secret shows as its own JSON text and a hint as itself once lower-cased. The check looks for those traces in
one pass over the text of all the rows; only rows where one shows are walked. False alarms cost only time.
"""

from __future__ import annotations

import json
from typing import Any

from specd.redact import redact_obj, secrets_in_force
from specd.redact_rules import RULES
from specd.system.lazyre import lazy

HINTS = tuple(sorted({hint for hints, _ in RULES for hint in hints} - {"sk-"}))
# `sk-` masks only after a word boundary, and every `task-…` name holds it: what may precede a masked one in
# the JSON text is anything but an ASCII word character, or the end of an escape (`\n`, `\u001b`).
# The literal first, so the scan jumps from one `sk-` to the next instead of trying every position.
SK = lazy(r"sk-(?:(?<=[^a-z0-9_]sk-)|(?<=\\[a-z]sk-)|(?<=\\u[0-9a-f]{4}sk-))")
# A key whose whole string value redact_obj masks (redact._secret_key), as it ends in the JSON text.
KEYS = ('token":', 'secret":', 'password":', 'passwd":', 'pwd":', '"x-api-key":', '"authorization":', '"api_key":',
        '"api-key":')


# One encoder for every row: ``json.dumps`` with options makes a new one per call, a third of a small row's cost.
text = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def suspect(text: str) -> bool:
    """Whether redaction might change anything in the data whose JSON text (``text(...)``) this is."""
    return has_secret(text) or shaped(text)


def has_secret(text: str) -> bool:
    """Whether a secret value in force now shows in the text (a .env value may be newer than the index)."""
    return any(secret in text or json.dumps(secret, ensure_ascii=False)[1:-1] in text
               for secret in secrets_in_force())


def shaped(text: str) -> bool:
    """Whether a token rule's hint or a secret-named key shows in the text: the same whatever secrets are known."""
    lowered = text.lower()
    return (any(hint in lowered for hint in HINTS) or ("sk-" in lowered and SK.search(lowered) is not None)
            or any(key in lowered for key in KEYS))


def redacted_list(rows: list[Any]) -> list[Any]:
    """The same for a list: what `specd status --json` prints, redacted as ``redact_obj`` would."""
    if not suspect(text(rows)):
        return rows
    return [redact_obj(row) if suspect(text(row)) else row for row in rows]


def listing_json(document: dict[str, Any]) -> str:
    """``document`` as ``json.dumps(indent=2)`` prints it, but each row of its ``tasks`` on one line: indented
    JSON is encoded in pure Python (half a second at 10,000 rows), a line each by the C encoder, and a row a
    line reads (and greps) better in a long listing."""
    parts = []
    for key, value in document.items():
        if key == "tasks" and isinstance(value, list) and value:
            rows = ",\n".join("    " + json.dumps(row, default=str) for row in value)
            parts.append(f'  {json.dumps(key)}: [\n{rows}\n  ]')
        else:
            parts.append(f"  {json.dumps(key)}: " + json.dumps(value, indent=2, default=str).replace("\n", "\n  "))
    return "{\n" + ",\n".join(parts) + "\n}"
