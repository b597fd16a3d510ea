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
        # field -> (its raw JSON, its redacted value, that value's JSON): a field unchanged since the last save
        # costs one ``json.dumps`` (to see that it is unchanged), not three.
        self._fields: dict[str, tuple[str, Any, str]] = {}

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        return {redact(key): self._field(key, value)[1] for key, value in self._fresh(data).items()}

    def texts(self, data: dict[str, Any]) -> dict[str, str]:
        """Each field's redacted value as JSON text, keyed by its redacted name: for a flat write
        (``atomic.write_flat``), which then need not encode the snapshot a second time."""
        return {redact(key): self._field(key, value)[2] for key, value in self._fresh(data).items()}

    def _fresh(self, data: dict[str, Any]) -> dict[str, Any]:
        secrets = secrets_in_force()
        if secrets != self._secrets:
            self._secrets = secrets
            self._fields.clear()
        return data

    def _field(self, key: str, value: Any) -> tuple[str, Any, str]:
        raw = json.dumps(value, default=str)
        seen = self._fields.get(key)
        if seen is not None and seen[0] == raw:
            return seen
        clean = redact_obj(value)
        kept = self._fields[key] = (raw, clean, json.dumps(clean, default=str))
        return kept
