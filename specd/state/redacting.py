"""The run-state snapshot, redacted on every save by walking only what changed since the last save.

Every byte specd writes passes ``redact``. A top-level field whose JSON is unchanged since the last save
reuses its redacted value. (The cursor arrives packed, ``state/packing.py``: small at any step.) Redaction
is a pure function of the value and the secrets in force, so a change of secrets (the environment) starts
over.
"""

from __future__ import annotations

import json
from typing import Any

from specd.redact import redact, redact_obj, secrets_in_force


class SnapshotRedactor:
    def __init__(self) -> None:
        self._secrets: tuple[str, ...] | None = None
        self._fields: dict[str, tuple[str, Any]] = {}  # field → (its raw JSON, its redacted value)

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        secrets = secrets_in_force()
        if secrets != self._secrets:
            self._secrets = secrets
            self._fields.clear()
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[redact(key)] = self._field(key, value)
        return out

    def _field(self, key: str, value: Any) -> Any:
        raw = json.dumps(value, default=str)
        seen = self._fields.get(key)
        if seen is not None and seen[0] == raw:
            return seen[1]
        clean = redact_obj(value)
        self._fields[key] = (raw, clean)
        return clean
