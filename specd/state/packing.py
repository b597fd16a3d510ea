"""The cursor's ``done`` lists and visit counts, packed against the pipeline's shape so the snapshot stays small.

Within one pipeline iteration ``done`` gains a name and ``visits`` an entry at every step: written out whole,
the snapshot (and the bytes git adds for it at every commit) grew with the run. Packed, a ``done`` list is
runs of consecutive positions in the shape's order (``[first, count]``), names the shape does not hold
stay names, and a visit count is written only where it is not the usual one (1, for a finished step).
A straight run of 2,000 steps packs to ``[[0, 2000]]`` and an empty map.

The snapshot names the shape it was packed against by digest (``shape_digest``); the shape file keeps the
previous shape too, so a kill between writing a new shape and the snapshot still unpacks right.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import islice
from typing import Any

from specd.state.decode import Bad
from specd.system.digest import sha256

Shape = dict[str, list[str]]
ABSENT = None  # a finished step with no visit count (a pipeline reference, finished by the loop)


def digest(shape: Shape) -> str:
    return sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class _Packed:
    pipeline: str
    names: list[str]  # the done list as packed (a copy)
    finished: set[str]  # the same, as a set (grown in place)
    runs: list[Any]  # the packed done list
    counts: dict[str, Any]  # the visit counts as packed (a copy)
    visits: dict[str, Any]  # the packed counts


class Packer:
    """Packs frames at every save, going on from the last save's result when a frame only grew since.

    Between two saves a frame gains a finished step at most, and the count of the step it entered: what
    is compared to find that out runs at C speed (list and dict equality, copies), never name by name."""

    def __init__(self) -> None:
        self._ranks: tuple[Shape, dict[str, dict[str, int]]] | None = None
        self._last: dict[int, _Packed] = {}

    def __call__(self, frames: list[dict[str, Any]], shape: Shape) -> list[dict[str, Any]]:
        if self._ranks is None or self._ranks[0] is not shape:
            self._ranks = (shape, {p: {name: i for i, name in enumerate(order)} for p, order in shape.items()})
            self._last.clear()
        out = []
        for i, frame in enumerate(frames):
            packed = self._frame(self._last.get(i), frame, self._ranks[1].get(frame["pipeline"], {}))
            self._last[i] = packed
            out.append({**frame, "done": [list(r) if isinstance(r, list) else r for r in packed.runs],
                        "visits": dict(packed.visits)})
        return out

    @staticmethod
    def _frame(last: _Packed | None, frame: dict[str, Any], rank: dict[str, int]) -> _Packed:
        names, counts = frame["done"], frame["visits"]
        grew = last is not None and last.pipeline == frame["pipeline"] and names[:len(last.names)] == last.names
        if last is None or not grew:
            last = _Packed(frame["pipeline"], [], set(), [], {}, {})
        added = names[len(last.names):]
        runs = [list(r) if isinstance(r, list) else r for r in last.runs]
        for name in added:
            at = rank.get(name)
            tail = runs[-1] if runs else None
            if at is not None and isinstance(tail, list) and tail[0] + tail[1] == at:
                tail[1] += 1
            else:
                runs.append([at, 1] if at is not None else name)
        finished = last.finished
        finished.update(added)
        # What changed in the counts: the names finished now, new entries, and the step the frame points at
        # (entered again, or reset by an approve); checked by rebuilding the old map with just those.
        changed = {*added, *islice(reversed(counts), max(0, len(counts) - len(last.counts))), frame.get("step")}
        probe = dict(last.counts)
        probe.update((k, counts[k]) for k in changed if k in counts)
        visits = dict(last.visits)
        if probe != counts or any(k not in counts and k in last.counts for k in changed):
            changed, visits = set(counts) | finished, {}  # anything else: all of them again
        for name in changed:
            visits.pop(name, None)
            if name in counts and not (counts[name] == 1 and name in finished):
                visits[name] = counts[name]
            elif name not in counts and name in finished:
                visits[name] = ABSENT
        return _Packed(frame["pipeline"], list(names), finished, runs, dict(counts), visits)


def unpack(frame: Any, shape: Shape, where: str) -> Any:
    """A saved frame with its names and counts back; anything not a packed frame is left for the decoder."""
    if not isinstance(frame, dict) or not isinstance(frame.get("pipeline"), str):
        return frame
    order = shape.get(frame["pipeline"], [])
    done: list[Any] = []
    for i, item in enumerate(frame.get("done", [])) if isinstance(frame.get("done"), list) else ():
        if not isinstance(item, list):
            done.append(item)  # a name (the decoder checks it is text)
            continue
        if (len(item) != 2 or not all(type(n) is int for n in item) or item[0] < 0 or item[1] < 1
                or item[0] + item[1] > len(order)):
            raise Bad(f"{where}.done[{i}]", f"must be a name or [first, count] within the "
                             f"{len(order)} steps the run saw in pipeline {frame['pipeline']!r}")
        done.extend(order[item[0]:item[0] + item[1]])
    saved = frame.get("visits", {})
    if not isinstance(saved, dict):
        return {**frame, "done": done}
    visits: dict[str, Any] = {name: 1 for name in done if isinstance(name, str)}
    for name, count in saved.items():
        if count is ABSENT:
            visits.pop(name, None)
        else:
            visits[name] = count
    return {**frame, "done": done, "visits": visits}
