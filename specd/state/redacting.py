"""The run-state snapshot, redacted on every save by walking only what changed since the last save.

Every byte specd writes passes ``redact``. Walked whole, the snapshot cost a save more and more as a long
pipeline iteration went on: the cursor's ``done`` list and ``visits`` map grow by a step each time. Here a
top-level field whose JSON is unchanged reuses its redacted value; the cursor's ``done`` list redacts only
the names appended since, and ``visits`` only the entries that changed. Redaction is a pure function of the
value and the secrets in force, so a change of secrets (the environment) starts over.
"""

from __future__ import annotations

import json
from typing import Any

from specd.redact import redact, redact_obj, secrets_in_force


class SnapshotRedactor:
    def __init__(self) -> None:
        self._secrets: tuple[str, ...] | None = None
        self._fields: dict[str, tuple[str, Any]] = {}  # field → (its raw JSON, its redacted value)
        self._done: dict[int, tuple[list[str], list[Any]]] = {}  # frame → (raw names, redacted names)
        self._visits: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}  # frame → (raw, redacted)

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        secrets = secrets_in_force()
        if secrets != self._secrets:
            self._secrets = secrets
            self._fields.clear()
            self._done.clear()
            self._visits.clear()
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[redact(key)] = self._cursor(value) if key == "cursor" else self._field(key, value)
        return out

    def _field(self, key: str, value: Any) -> Any:
        raw = json.dumps(value, default=str)
        seen = self._fields.get(key)
        if seen is not None and seen[0] == raw:
            return seen[1]
        clean = redact_obj(value)
        self._fields[key] = (raw, clean)
        return clean

    def _cursor(self, frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for i, frame in enumerate(frames):
            rest = {k: v for k, v in frame.items() if k not in ("done", "visits")}
            clean = redact_obj(rest)
            if "done" in frame:
                clean["done"] = self._names(i, frame["done"])
            if "visits" in frame:
                clean["visits"] = self._counts(i, frame["visits"])
            out.append({k: clean[k] for k in frame})  # the field order of the frame, as written before
        return out

    def _names(self, i: int, names: list[str]) -> list[Any]:
        seen = self._done.get(i)
        if seen is not None and names[:len(seen[0])] == seen[0]:
            clean = seen[1] + redact_obj(names[len(seen[0]):])
        else:
            clean = redact_obj(names)
        self._done[i] = (list(names), clean)
        return list(clean)

    def _counts(self, i: int, visits: dict[str, Any]) -> dict[str, Any]:
        raw, old = self._visits.get(i, ({}, {}))
        try:  # set operations on the items run at C speed: only what changed is walked in Python
            fresh = None if raw.keys() - visits.keys() else visits.items() - raw.items()
        except TypeError:  # a value that cannot be hashed (a hand-edited state): walk it all
            fresh = None
        clean = dict(old) if fresh is not None else {}
        for name, count in (visits.items() if fresh is None else fresh):
            clean.update(redact_obj({name: count}))
        self._visits[i] = (dict(visits), clean)
        return dict(clean)
