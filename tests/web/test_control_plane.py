"""`specd ui` is the project's control plane: an answer given anywhere moves the task, with no other command.

Real processes throughout: a `specd ui` server, `specd approve` in another process, and `specd approve --server
URL` from a `git clone` of the project. Each answer must start the task's next step (its agent's ledger line
appears); the time it took is printed, never asserted (the deadline is only a safety net).
"""

from __future__ import annotations

import http.client
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from executor_harness import Repo
from web_harness import DEADLINE, Server

from specd.executors import claim
from specd.tasks.project import Project

SAFETY = 180.0  # seconds: a net for a busy machine, never a timing the test checks


def _flags(repo: Repo) -> tuple[str, ...]:
    return ("--semi-auto", "--agent", repo.agent())


def _to_gate(repo: Repo, task: str) -> None:
    repo.new(task)
    done = repo.specd("continue", task, *_flags(repo))
    assert done.returncode == 3, done.stdout + done.stderr


def _status(repo: Repo, task: str) -> dict[str, Any]:
    done = repo.specd("status", task, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _ledger(tree: Path, task: str) -> list[str]:
    path = tree / f"ledger-{task}.txt"
    return [line.split()[1] for line in path.read_text().splitlines()] if path.exists() else []


def _until(check: Any, what: str, server: Server) -> float:
    """Seconds until ``check()`` holds; the deadline is a safety net, not a timing."""
    start = time.monotonic()
    while not check():
        assert server.proc.poll() is None, f"specd ui ended: {server.proc.communicate()}"
        assert time.monotonic() - start < SAFETY, f"never: {what}"
        time.sleep(0.05)
    return time.monotonic() - start


def page_post(server: Server, path: str, fields: dict[str, str]) -> http.client.HTTPResponse:
    """A form the task page posts, as the browser sends it: the cookie and the page's CSRF token."""
    from specd.web.auth import csrf_token

    body = urlencode({"csrf": csrf_token(server.token), **fields})
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=DEADLINE)
    connection.request("POST", path, body=body, headers={
        "Cookie": f"specd_ui={server.token}", "Content-Type": "application/x-www-form-urlencoded"})
    return connection.getresponse()


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path, steps=("s1", "s2"), pause="s2")


def test_an_answer_from_the_page_a_terminal_or_another_clone_starts_the_next_step(repo: Repo, tmp_path: Path) -> None:
    for task in ("a", "b", "c"):
        _to_gate(repo, task)
    server = Server(repo)  # type: ignore[arg-type]  # a project like the web harness's, with a plainer agent
    took: dict[str, float] = {}
    try:
        reply = page_post(server, "/tasks/a/approve", {"note": "from the page"})
        assert reply.status == 303, reply.read()
        took["page"] = _until(lambda: _ledger(repo.root, "a") == ["s1", "s2"], "a's s2 ran", server)

        answered = repo.specd("approve", "b", "--note", "from a terminal")
        assert answered.returncode == 0, answered.stderr
        assert "the control plane `specd ui` (pid" in answered.stdout  # its next: line names who runs it
        took["terminal"] = _until(lambda: _ledger(repo.root, "b") == ["s1", "s2"], "b's s2 ran", server)

        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True, env=repo.env)
        for key, value in (("user.name", "Other Person"), ("user.email", "other@example.com")):
            subprocess.run(["git", "config", key, value], cwd=clone, check=True)
        sent = subprocess.run([sys.executable, "-m", "specd", "approve", "c", "--note", "from a clone"], cwd=clone,
                              env={**repo.env, "SPECD_SERVER": server.url}, capture_output=True, text=True,
                              timeout=DEADLINE, check=False)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert "control plane serving this address runs it now" in sent.stdout, sent.stdout
        assert "specd status c` in its clone" in sent.stdout, sent.stdout
        assert "this page" not in sent.stdout  # said to a terminal, which has no page
        took["clone"] = _until(lambda: _ledger(repo.root, "c") == ["s1", "s2"], "c's s2 ran", server)
        _until(lambda: all(_status(repo, t)["status"] == "COMPLETE" for t in "abc"), "all complete", server)
    finally:
        server.stop()
    print("answer to next step, seconds:", {k: round(v, 2) for k, v in took.items()})
    rows = {t: _status(repo, t)["checkpoints"][-1] for t in "abc"}
    assert (rows["a"]["via"], rows["a"]["note"]) == ("page", "from the page")
    assert (rows["b"]["via"], rows["b"]["by"], rows["b"]["note"]) == ("cli", "T <t@example.com>", "from a terminal")
    assert (rows["c"]["via"], rows["c"]["by"], rows["c"]["note"]) == ("clone", "Other Person <other@example.com>",
                                                                       "from a clone")
    assert not (tmp_path / "clone" / ".specd" / "tasks" / "c" / "ledger-c.txt").exists()  # ran in its home only
    assert not (repo.root / ".specd" / "worktrees").exists()  # each went on where it lived: the main tree


def test_a_second_control_plane_is_refused_naming_the_first(repo: Repo) -> None:
    repo.new("a")
    first = Server(repo)  # type: ignore[arg-type]
    try:
        record = repo.root / ".specd" / "control.json"
        data = json.loads(record.read_text())
        assert (data["pid"], data["command"], data["url"]) == (first.proc.pid, "specd ui",
                                                               f"http://127.0.0.1:{first.port}/")
        assert first.token not in record.read_text()  # .specd/ is in every jail: the model would read it there
        kept = claim.private(Project(repo.root))
        assert kept is not None
        assert not kept.is_relative_to(repo.root)
        assert json.loads(kept.read_text())["url"] == first.url  # the whole address, for `specd mcp` to ask with
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert claim.running(Project(repo.root)).url == first.url  # type: ignore[union-attr]
        assert repo.git("check-ignore", ".specd/control.json").strip() == ".specd/control.json"
        for argv in (("ui", "--no-browser", "--port", "0"), ("serve", "--port", "0"),
                     ("run", "a", "--keep-waiting", *_flags(repo))):
            refused = repo.specd(*argv)
            said = refused.stdout + refused.stderr
            assert refused.returncode == 2, (argv, said)
            assert f"`specd ui` (pid {first.proc.pid}" in said, said
            assert f"http://127.0.0.1:{first.port}/" in said
            assert first.token not in said  # the address is named; its token stays in the 0600 record
            assert f"kill {first.proc.pid}" in said
            assert "Traceback" not in said
        assert first.request("/").status == 200  # the first one is untouched
    finally:
        first.stop()
    assert not (repo.root / ".specd" / "control.json").exists()  # a clean stop takes its record away
    assert not kept.exists()  # and the whole address with it


def test_a_stale_record_is_taken_over_and_keep_waiting_holds_the_role_too(repo: Repo) -> None:
    repo.new("a")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record = repo.root / ".specd" / "control.json"
    record.write_text(json.dumps({"pid": dead.pid, "command": "specd ui", "started": "then",
                                  "host": os.uname().nodename, "url": "http://127.0.0.1:1/?token=old"}))
    server = Server(repo)  # type: ignore[arg-type]
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert json.loads(record.read_text())["pid"] == server.proc.pid
    finally:
        server.stop()

    (repo.dir / "hold-a-s1").write_text("")
    waiting = subprocess.Popen([sys.executable, "-m", "specd", "run", "a", "--keep-waiting", *_flags(repo)],
                               cwd=repo.root, env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + DEADLINE
        while not (repo.tree("a") / "held-a-s1").exists():
            assert waiting.poll() is None, waiting.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.1)
        refused = repo.specd("ui", "--no-browser", "--port", "0")
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"`specd run --keep-waiting a` (pid {waiting.pid}" in refused.stderr
    finally:
        (repo.dir / "hold-a-s1").unlink()
        waiting.terminate()
        waiting.communicate(timeout=DEADLINE)


@pytest.mark.parametrize(("url", "said"), [
    ("not-a-url", "is not an http:// address"),
    ("http://127.0.0.1:9/", "carries no token"),
    ("http://127.0.0.1:9/?token=abcdefabcdefabcdef", "cannot reach the control plane at http://127.0.0.1:9"),
])
def test_a_bad_server_address_is_bad_input_with_its_fix(repo: Repo, url: str, said: str) -> None:
    done = repo.specd("approve", "a", "--server", url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    assert "fix:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_wrong_token_or_task_is_named_by_the_server(repo: Repo) -> None:
    _to_gate(repo, "a")
    server = Server(repo)  # type: ignore[arg-type]
    try:
        base = server.url.split("?")[0]
        wrong = repo.specd("approve", "a", "--server", base + "?token=not-the-token-at-all")
        assert wrong.returncode == 2
        assert "refused the token" in wrong.stderr
        missing = repo.specd("approve", "nope", "--server", server.url)
        assert missing.returncode == 2
        assert "has no task 'nope'" in missing.stderr
        skipped = repo.specd("reject", "a", "--note", " ", "--server", server.url)
        assert skipped.returncode == 2
        assert "reject needs a note" in skipped.stderr
    finally:
        server.stop()
    assert _status(repo, "a")["status"] == "WAITING_FOR_HUMAN"  # nothing was recorded


def test_it_never_starts_a_task_another_process_holds_or_one_on_temporal(repo: Repo) -> None:
    from specd.state.lock import TaskLock

    for task in ("held", "remote", "free"):
        _to_gate(repo, task)
        assert repo.specd("approve", task).returncode == 0  # answered before any control plane runs
    # As `specd run --executor temporal` leaves it: the task's workflow runs it, not this machine.
    repo.write(".specd/homes/remote.json", json.dumps({"kind": "temporal", "address": "127.0.0.1:7233",
                                                       "workflow_id": "specd-x-remote"}))
    lock = TaskLock(repo.root / ".specd" / "tasks" / "held", "held")
    with lock:  # another process runs it (this one, as far as the lock can tell)
        server = Server(repo)  # type: ignore[arg-type]
        try:
            _until(lambda: _status(repo, "free")["status"] == "COMPLETE", "free went on", server)
            # free ran its s2 from start to end: the plane looked at every task many times meanwhile
            assert _ledger(repo.root, "held") == ["s1"]
            assert _ledger(repo.root, "remote") == ["s1"]
        finally:
            if server.proc.poll() is not None:
                server.stop()
    try:
        _until(lambda: _status(repo, "held")["status"] == "COMPLETE", "held went on once let go", server)
    finally:
        server.stop()
    assert _ledger(repo.root, "held") == ["s1", "s2"]
    assert _ledger(repo.root, "remote") == ["s1"]  # never, however long the plane ran


def test_a_broken_task_graph_does_not_keep_the_page_down(repo: Repo) -> None:
    repo.new("a", "nowhere")  # depends_on a task that does not exist: `specd run` refuses the graph
    server = Server(repo)  # type: ignore[arg-type]
    try:
        assert server.request("/").status == 200
        assert server.request("/tasks/a").status == 200
    finally:
        err = server.stop()
    assert "depends_on names 'nowhere'" in err
    assert "Traceback" not in err


def _until_stopped(repo: Repo, tasks: tuple[str, ...]) -> None:
    """Until each task's run is gone (its lock freed), leaving it saved IN_PROGRESS: STOPPED."""
    deadline = time.monotonic() + SAFETY
    while any(_status(repo, task).get("idle") != "stopped" for task in tasks):
        assert time.monotonic() < deadline, {task: _status(repo, task) for task in tasks}
        time.sleep(0.1)


def test_a_run_whose_control_plane_died_is_taken_up_by_the_next_one_and_no_other(repo: Repo) -> None:
    """A control plane killed mid-step (kill -9, a lost machine) leaves the task it ran stopped, with the answer
    that started it already taken up: the next control plane goes on with it. A run no plane started, killed,
    waits for a person to ask (Run on the page, `specd continue`)."""
    for task in ("a", "b"):
        _to_gate(repo, task)
        (repo.dir / f"hold-{task}-s2").write_text("")
    mine = subprocess.Popen([*repo.specd_argv(), "continue", "b", "--approve", *_flags(repo)], cwd=repo.root,
                            env=repo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + SAFETY
    while not (repo.root / "held-b-s2").exists():
        assert mine.poll() is None, mine.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    mine.kill()  # kill -9 of a terminal's run: its agent dies with it
    mine.communicate(timeout=DEADLINE)

    first = Server(repo)  # type: ignore[arg-type]
    assert repo.specd("approve", "a").returncode == 0
    _until(lambda: (repo.root / "held-a-s2").exists(), "a's s2 started", first)
    record = json.loads((repo.root / ".specd" / "homes" / "a.json").read_text())
    assert record["plane"].split()[0] == str(first.proc.pid)  # the run says which plane started it
    first.proc.kill()  # kill -9: its zygote, the run and the agent die with it
    first.proc.communicate(timeout=DEADLINE)
    _until_stopped(repo, ("a", "b"))
    for task in ("a", "b"):
        (repo.dir / f"hold-{task}-s2").unlink()

    second = Server(repo)  # type: ignore[arg-type]
    try:
        _until(lambda: _status(repo, "a")["status"] == "COMPLETE", "a complete", second)
    finally:
        said = second.stop()
    assert f"a: goes on: the control plane that ran it (pid {first.proc.pid})" in said
    assert _ledger(repo.root, "a") == ["s1", "s2"]  # s2 was killed before its line, then ran whole
    b = _status(repo, "b")
    assert (b["status"], b["idle"]) == ("IN_PROGRESS", "stopped")  # nobody asked for it: it still waits
    assert _ledger(repo.root, "b") == ["s1"]


def test_a_jailed_agent_finds_no_token_of_the_control_plane(repo: Repo) -> None:
    """Found by hand: `.specd/` is in every jail (read-only), and `.specd/control.json` held the dashboard's address
    with its token. An agent's `cat` put it in the transcript, and so in what the model reads: with the page reachable
    (`--host` for a phone), the model could approve its own gates. Now the project holds the address alone, and the
    token lives under HOME, which no jail shows."""
    repo.new("probe")
    server = Server(repo)  # type: ignore[arg-type]
    try:
        # what the agent saw, said in words of its own: a token in a transcript is masked, but the model is not
        look = ("grep -q token= .specd/control.json && echo SAW-TOKEN-IN-RECORD; "
                "cat \"$HOME\"/.local/state/specd/planes/*.json 2>/dev/null | grep -q token= && echo SAW-KEPT-TOKEN; "
                "grep -q 127.0.0.1 .specd/control.json && echo SAW-RECORD; true")
        ran = repo.specd("continue", "probe", "--auto", "--agent", f"cmd:sh -c '{look}'")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        said = "\n".join(path.read_text() for path in (repo.root / ".specd" / "tasks" / "probe").rglob("*.log"))
        assert "SAW-RECORD" in said  # it read the record, which names the plane
        assert "SAW-TOKEN-IN-RECORD" not in said
        assert "SAW-KEPT-TOKEN" not in said  # HOME is not the jail's
    finally:
        server.stop()
