"""A secret file committed once and deleted since: the jail shows the work tree, but `.git` holds every version,
and the agent reads it. The run names each such file on its first lines (never a value), masks the values those
versions held in everything it writes, and holds a commit that copies one."""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path

import pytest
from git_harness import GitProject, warnings

from specd.system import pastfiles

OLD = "past-" + "Vq93Lx2Rk8Tz4Wm1a7"  # generated-looking: a commit holding it is held
OLDER = "older-" + "Pz71Qs4Nd9Xc2Bv8e5"
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"


def _history(g: GitProject) -> dict[str, str]:
    """A `.env` committed twice then deleted, a key and a certificate committed on a side branch; the commits."""
    g.write("apps/web/.env", f"API_TOKEN={OLDER}\n")
    g.git("add", "-f", "apps/web/.env")
    g.git("commit", "-q", "-m", "the mistake")
    first = g.git("rev-parse", "HEAD").strip()
    g.write("apps/web/.env", f"API_TOKEN={OLD}\n")
    g.git("commit", "-q", "-am", "the mistake again")
    second = g.git("rev-parse", "HEAD").strip()
    g.git("rm", "-q", "--cached", "apps/web/.env")
    g.git("commit", "-q", "-m", "the fix that is not one")
    (g.root / "apps/web/.env").unlink()
    g.git("checkout", "-q", "-b", "side")
    g.write("deploy/server.pem", KEY)
    g.write("deploy/ca.pem", CERT)
    g.git("add", "-f", "deploy")
    g.git("commit", "-q", "-m", "keys on a branch")
    side = g.git("rev-parse", "HEAD").strip()
    g.git("rm", "-q", "-r", "deploy")
    g.git("commit", "-q", "-m", "gone from the branch")
    g.git("checkout", "-q", "-")
    return {"first": first, "second": second, "side": side}


def test_the_run_names_each_secret_file_in_the_history_masks_its_values_and_holds_a_copy(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a",))
    commits = _history(g)
    g.new("t")
    # The attack: read the history and keep what it shows in the step's work.
    # And the attack on the search: its record of what was searched, which the jail holds read-only.
    peek = ("git log --all -p > notes.txt; git show HEAD~1:apps/web/.env; "
            f"if echo '{{}}' > .git/{pastfiles.CACHE}; then echo written; else echo refused; fi > tamper.txt; true")
    run = g.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(peek)}")

    said = [line for line in warnings(run) if "history" in line]
    assert said == [
        f"warning: apps/web/.env is in git's history (last committed in {commits['second'][:12]}) though git no "
        f"longer tracks it: the agent can read what it held (git show {commits['second'][:12]}:apps/web/.env); "
        "change those values, and take the file out of the history (git filter-repo)",
        f"warning: deploy/server.pem is in git's history (last committed in {commits['side'][:12]}) though git no "
        f"longer tracks it: the agent can read what it held (git show {commits['side'][:12]}:deploy/server.pem); "
        "change those values, and take the file out of the history (git filter-repo)"]  # not ca.pem: no key
    # The copy is held from the commit, named by where its value came from; no value is shown or written.
    assert run.returncode == 3, run.stdout + run.stderr
    assert "notes.txt" not in g.git("ls-files")
    held = f"the value of API_TOKEN in apps/web/.env as committed in {commits['second'][:12]}"
    assert held in run.stdout + run.stderr
    assert OLD in (g.root / "notes.txt").read_text()  # what the warning is about: the agent did read it
    written = [p for p in (g.root / ".specd").rglob("*") if p.is_file()]
    for value in (OLD, OLDER):
        assert value not in run.stdout + run.stderr
        assert not [p for p in written if value in p.read_text(errors="replace")]
    assert (g.root / "tamper.txt").read_text() == "refused\n"
    # The cache of the search holds paths and commits, never a value.
    cache = (g.root / ".git" / pastfiles.CACHE).read_text()
    assert commits["first"] in cache
    assert OLD not in cache
    assert OLDER not in cache


def test_a_later_search_looks_only_at_new_commits_and_a_lost_cache_is_searched_again(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a",))
    commits = _history(g)
    first = pastfiles.search(g.root)
    assert {v.path for v in first.versions} == {"apps/web/.env", "deploy/server.pem"}
    assert first.complete
    cache = g.root / ".git" / pastfiles.CACHE
    kept = json.loads(cache.read_text())
    # Only what holds a secret is kept, each version looked at once: not the certificate.
    assert sorted(map(tuple, kept["found"])) == sorted([(commits["first"], "apps/web/.env"),
                                                        (commits["second"], "apps/web/.env"),
                                                        (commits["side"], "deploy/server.pem")])
    # A new commit; the commits searched before are not searched again (shown by a cache that forgot the key).
    kept["found"] = [f for f in kept["found"] if f[1] != "deploy/server.pem"]
    cache.write_text(json.dumps(kept))
    g.write("ops/.netrc", "machine h login me password netrc-Hs82Kd0Qw\n")
    g.git("add", "-f", "ops/.netrc")
    g.git("commit", "-q", "-m", "one more")
    pastfiles._memo.clear()
    second = pastfiles.search(g.root)
    assert {v.path for v in second.versions} == {"apps/web/.env", "ops/.netrc"}
    # Deleted or broken, the cache is a miss: the whole history is searched again.
    cache.write_text("{not json")
    pastfiles._memo.clear()
    third = pastfiles.search(g.root)
    assert {v.path for v in third.versions} == {"apps/web/.env", "deploy/server.pem", "ops/.netrc"}
    assert "deploy/server.pem" in cache.read_text()


def test_a_history_too_long_to_search_in_time_is_said_and_what_was_found_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    g = GitProject(tmp_path, steps=("a",))
    commits = _history(g)
    # A git whose log writes one whole record and part of another, then never ends (as on a huge history).
    real = next(Path(p) / "git" for p in os.environ["PATH"].split(os.pathsep) if (Path(p) / "git").is_file())
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    record = f"\\001{commits['second']}\\000\\napps/web/.env\\000\\001{commits['first']}\\000\\napps/"
    wrapper.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = log ] && {{ printf "{record}"; exec sleep 60; }}; '
                       f'done\nexec {shlex.quote(str(real))} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(pastfiles, "LIMIT", 1.0)
    pastfiles._memo.clear()

    past = pastfiles.search(g.root)

    assert not past.complete
    assert [(v.commit, v.path) for v in past.versions] == [(commits["second"], "apps/web/.env")]  # the cut one left
    assert OLD in past.versions[0].text
    assert json.loads((g.root / ".git" / pastfiles.CACHE).read_text())["complete"] is False


def test_outside_a_repository_nothing_is_searched(tmp_path: Path) -> None:
    assert pastfiles.search(tmp_path) == pastfiles.Past((), True)
    assert not (tmp_path / ".specd").exists()


def test_a_ref_seen_before_and_gone_for_good_makes_the_search_start_again(tmp_path: Path) -> None:
    g = GitProject(tmp_path, steps=("a",))
    _history(g)
    assert {v.path for v in pastfiles.search(g.root).versions} == {"apps/web/.env", "deploy/server.pem"}
    # The branch with the key deleted and its commits pruned: its tip, kept as seen, is no object any more.
    g.git("branch", "-D", "side")
    g.git("reflog", "expire", "--expire=now", "--all")
    g.git("gc", "-q", "--prune=now")
    g.write("ops/.netrc", "machine h login me password netrc-Hs82Kd0Qw\n")
    g.git("add", "-f", "ops/.netrc")
    g.git("commit", "-q", "-m", "one more")
    pastfiles._memo.clear()

    past = pastfiles.search(g.root)

    assert {v.path for v in past.versions} == {"apps/web/.env", "ops/.netrc"}  # the key went with its commits
    assert past.complete
