"""`specd ui` as a real process: its first line, what a non-loopback --host says, raw paths and live events."""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from web_harness import DEADLINE, SECRET, Server, Site

ENVELOPE = Draft202012Validator(json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "envelope.schema.json").read_text(encoding="utf-8")))


@pytest.fixture
def server(site: Site) -> Iterator[Server]:
    running = Server(site)
    yield running
    running.stop()


def test_the_first_line_is_the_address_with_the_token(server: Server) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", server.url)
    assert server.request("/").status == 200
    assert server.request("/", signed_in=False).status == 401
    first = server.request(f"/?token={server.token}", signed_in=False)
    assert first.status == 303
    assert "HttpOnly" in (first.getheader("set-cookie") or "")


@pytest.mark.parametrize("path", ["/tasks/done/files/../../../../etc/passwd", "/tasks/../../etc/passwd",
                                  "/tasks/done/files//etc/passwd", "/tasks/done/files/%2e%2e/%2e%2e/config.json",
                                  "/tasks/done/steps/../../../etc/passwd"])
def test_raw_traversal_is_404_on_the_real_server(server: Server, path: str) -> None:
    reply = server.request(path)
    body = reply.read().decode()
    assert reply.status == 404, path
    assert "root:" not in body


def test_a_new_event_reaches_an_open_stream(server: Server, site: Site) -> None:
    journal = site.root / ".specd" / "tasks" / "fresh" / "events.jsonl"
    reply = server.request("/tasks/fresh/events")
    assert reply.status == 200
    assert reply.getheader("content-type", "").startswith("text/event-stream")
    assert _next_event(reply) == ("status", "NOT_STARTED")
    event = {"at": "2026-01-01T00:00:00+00:00", "kind": "notice", "message": f"hello with {SECRET}"}
    with journal.open("a") as handle:
        handle.write(json.dumps(event) + "\n")
    kind, data = _next_event(reply)
    assert kind == "line"
    assert "note: hello with [REDACTED]" in data


def _next_event(reply: http.client.HTTPResponse) -> tuple[str, str]:
    kind, data = "", []
    while True:
        line = reply.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif not line and kind:
            return kind, "\n".join(data)


def test_a_host_beyond_loopback_without_a_token_names_the_risk(site: Site) -> None:
    exposed = Server(site, "--host", "0.0.0.0")
    assert exposed.url.startswith("http://0.0.0.0:")
    err = exposed.stop()
    assert "not loopback" in err
    assert "anyone who can reach this address" in err
    chosen = Server(site, "--host", "0.0.0.0", "--token", "a-long-token-chosen-by-me")
    assert chosen.token == "a-long-token-chosen-by-me"
    assert chosen.request("/").status == 200
    assert "not loopback" not in chosen.stop()


def test_a_short_token_is_refused(site: Site) -> None:
    done = site.specd("ui", "--no-browser", "--token", "short")
    assert done.returncode == 2
    assert "at least 16 characters" in done.stderr


def test_ui_is_lazy_for_other_commands() -> None:
    code = "import sys; from specd.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass\n" \
           "print(sorted(m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=DEADLINE)
    assert done.stdout.strip().endswith("[]")


def test_json_prints_the_address_as_an_envelope_first(site: Site) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "specd", "ui", "--no-browser", "--port", "0", "--json"],
                            cwd=site.root, env=site.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert not list(ENVELOPE.iter_errors(first))  # the one envelope schema every verb's --json follows
        assert first["ok"] is True
        assert first["task"] is None
        assert first["url"].startswith("http://127.0.0.1:")
        assert "?token=" in first["url"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=DEADLINE)
