"""No secret in a commit, whatever the file: the bytes of every path a commit would take are checked first.

A file's name says little: an agent's ``loot.txt`` may hold an ssh key, a ``.env`` value or a token. So before each
commit (and when a step or hook closes, so the run can stop right there) every changed file the commit would take
is read, its first ``MAX_BYTES``, and searched for the secret values specd knows of (secret-named environment
variables, the values in the project's secret files and the user's: ``specd.tasks.secrets``), plain or base64- or
hex-encoded (``disguises``), and for the token shapes (``specd.redact_rules.SHAPES``). A file with a hit is
withheld from every commit, the run's last one included, until a person answers: the brain stops the run
(WAITING_FOR_HUMAN) naming the file and what the secret is, never its value. `specd approve` approves that file's
content as it is then; `specd reject` sends the step back. A tracked file is held only for what it did not hold at
HEAD: a key a test fixture has always had is not this step's doing.

specd's own files in the task folder are not read: they are written through redaction, and an agent that
changes them is undone (machinery). A file is read again only when its content changed (``Snapshot`` digests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from specd.disguises import disguised
from specd.git import hidden
from specd.git.journal import NAME as JOURNAL
from specd.git.repo import Repo, blob
from specd.git.tree import BIG_FILE, GONE, Entry, Snapshot, inside, is_secret, unfit
from specd.redact_rules import SHAPE_HINTS, SHAPES, may_hold
from specd.state.history import HISTORY_FILE, SEALED_DIR
from specd.state.store import HEARTBEAT, SHAPE_JSON, STATE_JSON, STATE_MD
from specd.system import children
from specd.system.ownfiles import read_regular
from specd.tasks.secrets import known_secrets

REJECTED = "rejected"  # a Hit's rule: a file hidden from git that a person rejected, which the step left as it was
SEEN = 8  # the held files whose start the run state keeps for the page (``Hit.seen``)
MAX_BYTES = 4 << 20  # a secret pasted into a huge file is near its start; 4 MB take about 0.2 s to check
# specd's own writes in the task folder, all redacted: the run state, its history, the journals, config.json.
OWN = frozenset({STATE_JSON, STATE_MD, SHAPE_JSON, HEARTBEAT, HISTORY_FILE, SEALED_DIR, JOURNAL, ".git-baseline.json",
                 "config.json"})


# Why a path is left out of every commit until a person commits it: by its name (``envfiles.never_added``), or by
# what it is (``tree.unfit``).
WITHHELD = {
    "name": "the name looks like a secret and git does not track it (commit it yourself if it belongs in the "
            "repository)",
    "special": "not a file, a link or a folder (a FIFO or a socket), which git cannot hold",
    "link": "a link out of the project, which leads nowhere in another clone and names a place on this machine "
            "(commit it yourself if it belongs in the repository)",
    "big": f"over {BIG_FILE >> 20} MB, which GitHub and most hosts refuse in a push (commit it yourself, with git "
           "lfs, if it belongs in the repository, or list it in .gitignore)",
}


@dataclass(frozen=True)
class Hit:
    path: str  # relative to the repository's top, as git names it
    # What the secret is (`the value of the environment variable X`, `a private key block`). Not called
    # `secret`: redaction masks the whole value of a key named so, and this is what a person needs to read.
    holds: str
    digest: str  # the content held: an approval is of this content only
    kind: str = "secret"  # or "hidden": source hidden from git by a rule of the step's (``specd.git.hidden``)
    rule: str = ""  # for "hidden": what hides it (``hidden.why`` says it in words)
    # for "hidden": the start of the file as the step left it, for a person on the page where the file is not (a
    # task on Temporal keeps it on its worker); never for a secret, which the run state must not hold
    seen: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "holds": self.holds, "digest": self.digest, "kind": self.kind,
                **({"seen": self.seen} if self.seen else {})}


class Barrier:
    def __init__(self, repo: Repo, root: Path, folder: str, specd: str) -> None:
        self.repo, self.root, self.folder, self.specd = repo, root, folder, specd  # the task's, and .specd/
        self.held: dict[str, Hit] = {}  # paths withheld now, until approved, changed or gone
        self.hidden: dict[str, Hit] = {}  # source a step hid from git, until approved (never committed: ignored)
        self.approved: set[tuple[str, str]] = set()  # (path, digest) a person let through
        self.rejected: set[tuple[str, str, str]] = set()  # (path, digest, what held it) a person turned down
        self._seen: dict[tuple[str, str], str] = {}  # (path, digest) -> what it holds ("" for nothing)
        self._known: dict[bytes, str] | None = None  # for this event (see ``refresh``)
        self._last: dict[bytes, str] = {}
        self._withheld: dict[str, set[str]] = {kind: set() for kind in WITHHELD}  # since the last ``news``
        self._told: set[str] = set()

    def approve(self, files: Iterable[dict[str, str]]) -> None:
        self.approved |= {(str(f.get("path")), str(f.get("digest"))) for f in files}

    def reject(self, files: Iterable[dict[str, str]]) -> None:
        """Files hidden from git that a person turned down: the step runs again, and one it leaves as it was is held
        again at every close until it is gone, changed (then held as new) or approved (``hide``)."""
        self.rejected |= {(str(f.get("path")), str(f.get("digest")), str(f.get("holds") or "")) for f in files}

    def refresh(self) -> None:
        """Between events the secret files may have changed: the known values are read again when next needed."""
        self._known = None

    def withhold(self, paths: set[str], untracked: Callable[[str], bool]) -> set[str]:
        """The paths never added, each said once: an ``untracked`` one named like a secret, and any ``tree.unfit``
        (the reasons: ``WITHHELD``)."""
        kinds = {path: "name" if untracked(path) and is_secret(path) else unfit(self.repo.top, path) for path in paths}
        for path, kind in kinds.items():
            if kind:
                self._withheld[kind].add(path)
        return {path for path, kind in kinds.items() if kind}

    def news(self, task: str) -> list[str]:
        """What was withheld and not said yet: each file once, and again only when its content changed."""
        said: list[str] = []
        for kind, why in WITHHELD.items():
            if paths := sorted(self._withheld[kind] - self._told):
                said.append(f"not committing {', '.join(paths)}: {why}")
                self._told |= set(paths)
            self._withheld[kind].clear()
        for hit in self.holds():
            if f"{hit.path}:{hit.digest}" not in self._told:
                said.append(f"not committing {hit.path}: it holds {hit.holds}; take the secret out of the file, or "
                            f"answer the run's hold with `specd approve {task}` to commit it as it is")
        self._told |= {f"{hit.path}:{hit.digest}" for hit in self.held.values()}
        return said

    def holds(self) -> list[Hit]:
        return sorted(self.held.values(), key=lambda hit: hit.path)

    def hide(self, found: dict[str, str]) -> None:
        """Hold the source files ``found`` hidden from git (each with the rule hiding it), but those approved, and
        those a person rejected that are still there as they were."""
        for path, rule in found.items():
            digest = hidden.digest(self.repo.top / path)
            if (path, digest) not in self.approved:
                seen = hidden.excerpt(self.repo.top / path) if len(self.hidden) < SEEN else ""
                self.hidden[path] = Hit(path, hidden.why(rule), digest, "hidden", rule, seen)
        for path, digest, holds in self.rejected:
            if path not in self.hidden and (path, digest) not in self.approved and \
                    hidden.digest(self.repo.top / path) == digest:
                self.hidden[path] = Hit(path, f"{holds}, rejected and left as it was", digest, "hidden", REJECTED,
                                        hidden.excerpt(self.repo.top / path))

    def waits(self) -> list[Hit]:
        """What the run waits on: the files held for a secret, and the source hidden from git."""
        return self.holds() + sorted(self.hidden.values(), key=lambda hit: hit.path)

    def look(self, paths: Iterable[str], now: Snapshot) -> set[str]:
        """Check ``paths`` as they are in ``now``; returns those to withhold (see ``held``)."""
        for path in paths:
            entry = now.get(path)
            if entry is None or not _content(entry) or self._own(path) or (path, entry.digest) in self.approved:
                self.held.pop(path, None)
                continue
            secret = self._secret(path, entry)
            if secret:
                self.held[path] = Hit(path, secret, entry.digest)
            else:
                self.held.pop(path, None)
        return {path for path in paths if path in self.held}

    def _own(self, path: str) -> bool:
        """specd's own files in the task folder, and the rest of .specd/ (other tasks, config: never committed)."""
        if not path.startswith(self.folder.rstrip("/") + "/"):
            return inside(path, self.specd)
        first = PurePosixPath(path[len(self.folder.rstrip("/")) + 1:]).parts[0]
        return first in OWN

    def _secret(self, path: str, entry: Entry) -> str:
        key = (path, entry.digest)
        self._values()  # first: what was seen with fewer known values is seen again
        if key not in self._seen:
            data = _head_of(self.repo.top / path)
            found = self._found(data)
            if found and entry.tracked and entry.status[0] != "A":  # only what HEAD's version did not hold
                before = self._found(_at_head(self.repo, path))
                found = {name: matches - before.get(name, set()) for name, matches in found.items()}
            self._seen[key] = ", ".join(sorted(name for name, matches in found.items() if matches))
        return self._seen[key]

    def _found(self, data: bytes) -> dict[str, set[bytes]]:
        """What ``data`` holds: each secret's name, with the matches that make it one."""
        if not data:
            return {}
        found: dict[str, set[bytes]] = {}
        for value, name in self._values().items():
            if value in data:
                found.setdefault(name, set()).add(value)
        text = data.decode("latin-1")  # one character a byte: the shapes are ASCII
        lowered = text.lower()
        for rule in SHAPES if may_hold(lowered, SHAPE_HINTS) else ():
            if any(hint in lowered for hint in rule.hints):
                for match in rule.pattern.finditer(text):
                    found.setdefault(rule.name, set()).add(match.group(0).encode("latin-1"))
        return found


    def _values(self) -> dict[bytes, str]:
        if self._known is None:
            # made between steps, with nothing running, this search is the next step's jail's too
            found = known_secrets(self.root, hand_on=not children.running())
            known = {value.encode(): name for value, name in found.items()}
            known.update(disguised(known))  # base64 and hex: a manifest's `data:` holds the key as well
            if known != self._last:
                self._seen.clear()
            self._known = self._last = known
        return self._known


def _content(entry: Entry) -> bool:
    """Whether the path is a file with content to read (not gone, a link, a nested repository, unreadable)."""
    return entry.digest != GONE and entry.digest != "dir" and not entry.digest.startswith(
        ("link:", "unreadable:", "special:"))


def _head_of(path: Path) -> bytes:
    try:  # a regular file only, never through a link: a FIFO would block specd
        return read_regular(path, MAX_BYTES, head=True)
    except OSError:
        return b""


def _at_head(repo: Repo, path: str) -> bytes:
    return blob(repo.top, f"HEAD:{path}", MAX_BYTES) or b""
