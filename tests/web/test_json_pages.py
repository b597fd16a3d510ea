"""JSON behind every page (the `--json` envelope, at ``<page>.json`` or with ``Accept: application/json``), and the
refusals as pages: a 404 that names the tasks you may have meant, a 401 that says how to get in."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from web_harness import SECRET, TOKEN, Site, csrf

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "envelope.schema.json").read_text())
VALID = Draft202012Validator(SCHEMA)
JSON = {"Accept": "application/json"}
# each page's HTML address, and the same page's JSON address
PAGES = [("/", "/tasks.json"), ("/rows", "/rows.json"), ("/events", "/events.json"),
         ("/tasks/done", "/tasks/done.json"), ("/tasks/done/events", "/tasks/done/events.json"),
         ("/tasks/done/steps/0", "/tasks/done/steps/0.json"),
         ("/tasks/done/files/NOTES.md", "/tasks/done/files/NOTES.md.json")]


# a GET route's parameters, filled with what the harness project has
FILLED = {"task": "done", "n": "0", "path": "NOTES.md"}
# the GET routes that are not pages, and so answer no envelope: why each is left out
EXEMPT = {"/tasks/{task}/{verb}": "the page's buttons post here; a GET changes nothing and is a 404",
          "/tasks/{task}/held/{path:path}": "served only while a wait holds that file: test_held_files.py asks "
                                           "its envelope, by suffix and by header"}


def _get_routes() -> list[str]:
    """Every GET route of the app itself, so a route added later is asked too (or named in EXEMPT)."""
    from starlette.routing import Route

    from specd.tasks.project import Project
    from specd.web.app import create_app

    app = create_app(Project(Path(__file__).resolve().parents[2]), TOKEN)  # routes only: no task is read
    return [r.path for r in app.routes if isinstance(r, Route) and "GET" in (r.methods or ())]


def _envelope(reply: Any, status: int = 200) -> dict[str, Any]:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    data: dict[str, Any] = reply.json()
    errors = [e.message for e in VALID.iter_errors(data)]
    assert errors == [], errors
    return data


@pytest.mark.parametrize(("html", "suffixed"), PAGES)
def test_every_page_answers_the_envelope_by_suffix_and_by_header(signed_in: Any, html: str, suffixed: str) -> None:
    by_header = _envelope(signed_in.get(html, headers=JSON))
    by_suffix = _envelope(signed_in.get(suffixed))
    assert by_header["ok"] is by_suffix["ok"] is True
    assert by_header.keys() == by_suffix.keys()
    for data in (by_header, by_suffix):
        assert SECRET not in json.dumps(data)  # redacted like the pages
        assert data["task"] == ("done" if html.startswith("/tasks/") else None)


@pytest.mark.parametrize("route", _get_routes())
def test_every_get_route_of_the_app_answers_the_envelope(signed_in: Any, route: str) -> None:
    if route in EXEMPT:
        return
    address = re.sub(r"{(\w+)(?::\w+)?}", lambda m: FILLED[m.group(1)], route)
    suffixed = "/tasks.json" if address == "/" else f"{address}.json"
    by_header = _envelope(signed_in.get(address, headers=JSON))
    by_suffix = _envelope(signed_in.get(suffixed))
    assert by_header.keys() == by_suffix.keys()
    assert by_header["ok"] is True
    assert by_header["task"] == ("done" if "{task}" in route else None)


def test_the_exempt_routes_are_still_routes() -> None:
    assert set(EXEMPT) <= set(_get_routes()), "a route left EXEMPT is gone: take it out of the table"


def test_the_live_parts_answer_the_task_page_data(signed_in: Any) -> None:
    live = _envelope(signed_in.get("/tasks/waits/live.json"))
    assert live == _envelope(signed_in.get("/tasks/waits.json"))
    assert live["row"]["status"] == "WAITING_FOR_HUMAN"
    assert signed_in.get("/tasks/waits/live").headers["content-type"].startswith("text/html")


def test_what_each_page_says_as_json(signed_in: Any) -> None:
    listed = signed_in.get("/index.json").json()
    assert [r["task"] for r in listed["tasks"]] == ["waits", "fresh", "done"]
    assert listed["summary"]["counts"]["WAITING_FOR_HUMAN"] == 1
    assert listed["summary"]["waiting"] == 1
    assert {n["task"] for n in listed["graph"]} == {"waits", "fresh", "done"}  # as `status --graph --json`
    assert [r["task"] for r in signed_in.get("/tasks.json?status=COMPLETE").json()["tasks"]] == ["done"]
    task = signed_in.get("/tasks/done.json").json()
    assert (task["row"]["status"], len(task["steps"])) == ("COMPLETE", 2)
    assert not any("svg" in key for key in task)  # drawings are the page's, not the data's
    events = signed_in.get("/tasks/done/events.json").json()
    assert events["events"]
    assert all(isinstance(e, dict) for e in events["events"])
    assert events["offset"] > 0
    step = signed_in.get("/tasks/done/steps/1.json").json()
    assert step["step"]["step"] == "s2"
    assert "docs(done): s2 complete" in step["diff"]
    document = signed_in.get("/tasks/done/files/NOTES.md.json").json()
    assert (document["name"], document["text"]) == ("NOTES.md", "token: [REDACTED]\n")
    marks = signed_in.get("/events.json").json()["marks"]
    assert any(m["file"] == "done/events.jsonl" for m in marks)


def test_a_file_whose_own_name_ends_in_json_is_that_file(signed_in: Any) -> None:
    reply = signed_in.get("/tasks/done/files/config.json")
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/html")
    assert "<h1>config.json</h1>" in reply.text
    assert _envelope(signed_in.get("/tasks/done/files/config.json.json"))["name"] == "config.json"


def test_an_unknown_task_is_a_404_page_naming_the_tasks_you_may_have_meant(signed_in: Any, site: Site) -> None:
    reply = signed_in.get("/tasks/dnoe")
    assert reply.status_code == 404
    assert reply.headers["content-type"].startswith("text/html")
    assert "<h1>404 · not found</h1>" in reply.text
    assert re.search(r'id="suggestions">Did you mean <a href="/tasks/done">done</a>\?', reply.text)
    said = site.specd("status", "dnoe")  # the CLI offers the same name
    assert "did you mean 'done'" in said.stderr + said.stdout
    for address, headers in (("/tasks/dnoe.json", {}), ("/tasks/dnoe", JSON), ("/tasks/dnoe/steps/0.json", {})):
        data = _envelope(signed_in.get(address, headers=headers), 404)
        assert (data["ok"], data["task"], data["http"], data["suggestions"]) == (False, "dnoe", 404, ["done"])
        assert data["error"] == {"code": 2, "message": "no task 'dnoe' in this project",
                                 "fix": "did you mean 'done'?"}
    other = signed_in.get("/nowhere")
    assert other.status_code == 404
    assert '<a href="/">← every task</a>' in other.text
    assert _envelope(signed_in.get("/nowhere", headers=JSON), 404)["error"]["message"] == "nothing at /nowhere"


def test_a_missing_step_of_a_real_task_points_at_the_task(signed_in: Any) -> None:
    reply = signed_in.get("/tasks/done/steps/9")
    assert reply.status_code == 404
    assert "task &#39;done&#39; has nothing at /tasks/done/steps/9" in reply.text


def test_401_says_how_to_get_the_token_and_never_shows_it(client: Any) -> None:
    page = client.get("/tasks/done")
    assert page.status_code == 401
    assert page.headers["content-type"].startswith("text/html")
    assert "<h1>401 · the access token is missing</h1>" in page.text
    assert "specd ui --token T" in page.text
    assert "?token=" in page.text
    data = _envelope(client.get("/tasks/done.json"), 401)
    assert data["error"]["message"].startswith("open the address `specd ui` printed")
    assert _envelope(client.get("/", headers=JSON), 401)["http"] == 401
    for body in (page.text, json.dumps(data)):
        assert TOKEN not in body
        assert csrf() not in body
        assert "waits" not in body
        assert "fresh" not in body


def test_the_answer_api_refuses_in_the_envelope_too(signed_in: Any) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    unknown = _envelope(signed_in.post("/api/tasks/dnoe/approve", json={}, headers=bearer), 404)
    assert unknown["suggestions"] == ["done"]
    assert _envelope(signed_in.post("/api/tasks/waits/approve", json={}), 401)["error"]["message"] == (
        "send the token as `Authorization: Bearer TOKEN`")  # the cookie alone does not answer from a script
    assert _envelope(signed_in.post("/api/tasks/waits/approve", content=b"[1]", headers=bearer), 400)["ok"] is False
    signed_in.cookies.clear()
    refused = _envelope(signed_in.post("/api/tasks/waits/approve", json={}), 401)  # the guard's refusal
    assert refused["error"]["fix"].startswith("open the address `specd ui` printed")


@pytest.mark.parametrize("bad", ["..%2F..%2Fetc%2Fpasswd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "%2Fetc%2Fpasswd",
                                 "%2e%2e"])
def test_traversal_asked_as_json_is_the_same_404(signed_in: Any, bad: str) -> None:
    for path in (f"/tasks/{bad}.json", f"/tasks/{bad}/steps/0.json", f"/tasks/done/files/{bad}.json",
                 f"/tasks/{bad}/events.json"):
        reply = signed_in.get(path)
        assert reply.status_code == 404, path
        assert "root:" not in reply.text
        assert _envelope(signed_in.get(path, headers=JSON), 404)["ok"] is False
