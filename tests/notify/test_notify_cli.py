"""Notifications through the real CLI: one message per wait or failure, redacted, never sent twice.

apprise's ``json://`` target posts to a small HTTP server in the test (offline); the command hook runs
in the jail like a `run:` hook and writes what it received into the project.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from brain_harness import Harness

TOKEN = "tok-live-4f9a8b7c6d5e4f3a"  # in the environment under a secret-looking name
DOTENV = "dotenv-value-9876543210"  # only in the project's .env file
ALLOWED = "hook-url-secret-1a2b3c4d5e"  # a secret-named variable the command hook is allowed to see


class Inbox:
    """A local HTTP server that keeps every JSON body posted to it."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
                size = int(self.headers.get("Content-Length") or 0)
                inbox.posts.append(json.loads(self.rfile.read(size)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_port}/hook"


@pytest.fixture
def inbox() -> Iterator[Inbox]:
    box = Inbox()
    yield box
    box.server.shutdown()


def _offline(h: Harness) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        h.env.pop(name, None)  # the local server is reached directly, whatever the machine's proxy
    h.env["NO_PROXY"] = h.env["no_proxy"] = "127.0.0.1,localhost"


def _gated(h: Harness, **top: Any) -> None:
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "a", "workflow": "work.md", "pause_in_semi_auto": True},
                         {"name": "b", "workflow": "work.md", "pause_in_semi_auto": True}]}, **top)
    h.new("t")


def test_a_waiting_gate_sends_one_message_however_often_continue_runs(h: Harness, inbox: Inbox) -> None:
    _offline(h)
    _gated(h, notify={"apprise": [inbox.url]})

    first = h.cont("t", "--semi-auto")  # stdin is /dev/null: EOF at the gate, the run waits
    again = h.cont("t", "--semi-auto")  # the same gate asked again, the same EOF
    bare = h.specd("continue", "t")  # held: refused before anything runs

    assert [first.returncode, again.returncode, bare.returncode] == [3, 3, 3], first.stderr
    assert len(inbox.posts) == 1
    [post] = inbox.posts
    assert post["type"] == "warning"
    assert "task t is waiting" in post["title"]
    assert "the gate before 'a'" in post["message"]
    assert "specd continue t --approve" in post["message"]
    assert "sent a notification to 1 target(s)" in first.stdout + first.stderr

    answered = h.run_hint("specd continue t --semi-auto --approve")  # a then waits at the gate before b: news

    assert answered.returncode == 3, answered.stderr
    assert len(inbox.posts) == 2
    assert "the gate before 'b'" in inbox.posts[1]["message"]


def test_a_command_hook_gets_the_task_and_the_answer_and_no_secret(h: Harness) -> None:
    h.env.update(SPECD_TEST_TOKEN=TOKEN, NOTIFY_WEBHOOK_TOKEN=ALLOWED)
    (h.root / ".env").write_text(f"DOTENV_SECRET={DOTENV}\n")
    hook = "env > .harness/notify-env.txt; cat > .harness/notify-stdin.txt"
    (h.root / ".specd" / "config.json").write_text(json.dumps(
        {"notify": {"run": hook, "env_allow": ["NOTIFY_WEBHOOK_TOKEN"], "on": ["failed"]}}))
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "build", "workflow": "work.md"}]})
    h.new("t")
    leaky = f"cmd:echo \"leaking $SPECD_TEST_TOKEN and {DOTENV}\"; exit 1"

    run = h.specd("continue", "t", "--auto", "--agent", leaky)
    again = h.specd("continue", "t")  # BLOCKED is resumable: the step fails again, the same way

    assert run.returncode == 1, run.stderr
    env = dict(line.split("=", 1) for line in (h.dir / "notify-env.txt").read_text().splitlines() if "=" in line)
    stdin = (h.dir / "notify-stdin.txt").read_text()
    assert env["SPECD_TASK"] == "t"
    assert env["SPECD_NOTIFY_EVENT"] == "failed"
    assert env["SPECD_NOTIFY_STATUS"] == "BLOCKED"
    assert env["SPECD_NOTIFY_ANSWER"] == "specd continue t"
    assert env["SPECD_STEP"] == "build"
    assert "specd continue t" in stdin
    assert "leaking" in stdin  # the failure's reason is there ...
    everything = (h.dir / "notify-env.txt").read_text() + stdin
    assert TOKEN not in everything  # ... but not the secrets in it, nor the variable itself
    assert DOTENV not in everything
    assert "SPECD_TEST_TOKEN" not in env
    assert env["NOTIFY_WEBHOOK_TOKEN"] == ALLOWED  # env_allow: the hook's own webhook secret gets through
    assert again.returncode == 1
    assert "sent a notification" in again.stdout + again.stderr  # a new failure (attempt 2) is news


def test_a_target_that_fails_is_a_warning_and_the_run_stops_as_it_would(h: Harness) -> None:
    _offline(h)
    _gated(h, notify={"apprise": ["json://127.0.0.1:1/nobody-listens", "nonsense://x"]})

    run = h.cont("t", "--semi-auto")

    assert run.returncode == 3, run.stderr
    said = run.stdout + run.stderr
    assert "notify: json:// did not take the message" in said
    assert "notify: nonsense:// is not a URL apprise can send to" in said
    assert h.status("t")["status"] == "WAITING_FOR_HUMAN"
    state = json.loads((h.root / ".specd" / "tasks" / "t" / ".pipeline-state.json").read_text())
    assert state["notified"] == []  # nobody got it: not recorded as sent


@pytest.mark.parametrize(("where", "block", "said"), [
    ("pipeline", {"run": "true", "on": ["wait"]},
     "notify.on[0]: 'wait' is not allowed; expected one of: waiting, failed"),
    ("pipeline", {}, "notify: names nowhere to send a message"),
    ("config", {"apprise": "json://x"}, "notify.apprise: expected array"),
    ("config", {"run": "true", "netwrok": True}, "notify.netwrok: unknown key 'netwrok'; did you mean 'network'?"),
    ("config", {"run": "true", "timeout": 0}, "notify.timeout:"),
])
def test_a_bad_notify_block_is_bad_input_naming_its_file_and_place(h: Harness, where: str, block: dict[str, Any],
                                                                   said: str) -> None:
    h.workflow("work.md")
    if where == "pipeline":
        h.pipeline({"main": [{"name": "a", "workflow": "work.md"}]}, notify=block)
    else:
        h.pipeline({"main": [{"name": "a", "workflow": "work.md"}]})
        (h.root / ".specd" / "config.json").write_text(json.dumps({"notify": block}))
    h.new("t")

    run = h.cont("t")
    checked = h.specd("pipeline", "validate")

    for result in (run, checked):
        assert result.returncode == 2
        assert said in result.stderr
        assert ("pipeline.json" if where == "pipeline" else "config.json") in result.stderr
        assert "Traceback" not in result.stderr
    assert h.log() == []  # nothing ran


def test_a_message_says_what_waits_in_the_users_words_and_links_to_the_page(h: Harness, inbox: Inbox) -> None:
    """A phase loop with no phases waits for a roadmap: said so, never "(no_phases) ... (pipeline None)"; with
    `page:` set, the message links to the task's page (without the access token)."""
    _offline(h)
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "plan", "workflow": "work.md"},
                         {"name": "phases", "pipeline": "phase", "foreach": "phases"}],
                "phase": [{"name": "execute", "workflow": "work.md"}]},
               notify={"apprise": [inbox.url], "page": "http://127.0.0.1:8765/"})
    h.new("t")
    stopped = h.cont("t")
    assert stopped.returncode == 3, stopped.stderr
    [post] = inbox.posts
    assert "waiting for phases to run: 'phases' runs once per phase, and ROADMAP.md lists none yet" in post["message"]
    assert "None" not in post["message"]
    assert "no_phases" not in post["message"]
    assert "Open: http://127.0.0.1:8765/tasks/t" in post["message"]
    assert "token" not in post["message"]


def test_the_models_words_in_a_message_ping_nobody_and_link_nowhere(h: Harness, inbox: Inbox) -> None:
    """A failure's reason ends with the agent's output; a chat would act on `@everyone` and the like in it."""
    _offline(h)
    (h.root / ".specd" / "config.json").write_text(json.dumps({"notify": {"apprise": [inbox.url], "on": ["failed"]}}))
    h.workflow("work.md")
    h.pipeline({"main": [{"name": "build", "workflow": "work.md"}]})
    h.new("t")
    words = "@everyone @here <!channel> <@U123> see <https://evil.example/|your bank> or [it](https://x.example/)"
    words += " notes\u202edm.py"
    loud = f"cmd:echo '{words}'; exit 1"

    run = h.specd("continue", "t", "--auto", "--agent", loud)

    assert run.returncode == 1, run.stderr
    [post] = inbox.posts
    message = post["message"]
    for order in ("@everyone", "@here", "<!channel>", "<@U123>", "<https://", "](https://"):
        assert order not in message  # before: each as the model wrote it
    assert "\u202e" not in message  # `notes‮dm.py` would show as `notesyp.md`
    assert message.replace("\u200b", "").count(words.replace("\u202e", "[U+202E]")) == 1  # it reads the same
