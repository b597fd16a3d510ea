"""Nobody else gets in: the token on every path, CSRF and same-origin on every POST, only task folders served,
and no secret on any page."""

from __future__ import annotations

import json
from typing import Any

import pytest
from web_harness import SECRET, TOKEN, Site, csrf

from specd.web.actions import ACTIONS

GETS = ["/", "/rows", "/events", "/tasks/done", "/tasks/done/events", "/tasks/done/live", "/tasks/done/steps/0",
        "/tasks/done/files/NOTES.md", "/nowhere", "/tasks/../../etc/passwd", "/static/app.js"]
POSTS = [f"/tasks/waits/{verb}" for verb in ("approve", "reject", "skip", "cancel", "retry", "rerun")] + ["/"]


@pytest.mark.parametrize("path", GETS)
def test_every_get_without_the_token_is_401(client: Any, path: str) -> None:
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer wrong-token-0000000000"}).status_code == 401
    client.cookies.set("specd_ui", "wrong-token-0000000000")
    assert client.get(path).status_code == 401


@pytest.mark.parametrize("path", POSTS)
def test_every_post_without_the_token_is_401(client: Any, path: str, site: Site) -> None:
    assert client.post(path, data={"csrf": csrf(), "note": "x"}).status_code == 401
    assert _answers(site) == []


def test_the_token_in_the_url_becomes_an_httponly_cookie(client: Any) -> None:
    assert client.get("/?token=nope", follow_redirects=False).status_code == 401
    reply = client.get(f"/tasks/done?token={TOKEN}", follow_redirects=False)
    assert reply.status_code == 303
    assert reply.headers["location"] == "/tasks/done"  # the token leaves the address bar
    cookie = reply.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=strict" in cookie
    assert client.get("/tasks/done").status_code == 200  # the cookie alone lets the browser in now


def test_a_post_without_the_csrf_token_is_403(signed_in: Any, site: Site) -> None:
    assert signed_in.post("/tasks/waits/approve", data={"note": "x"}).status_code == 403
    assert signed_in.post("/tasks/waits/approve", data={"note": "x", "csrf": "0" * 40}).status_code == 403
    assert _answers(site) == []


@pytest.mark.parametrize("headers", [{"Origin": "http://evil.example"}, {"Origin": "null"},
                                     {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}])
def test_a_cross_site_post_is_403_even_with_the_tokens(signed_in: Any, site: Site, headers: dict[str, str]) -> None:
    reply = signed_in.post("/tasks/waits/approve", data={"note": "x", "csrf": csrf()}, headers=headers)
    assert reply.status_code == 403
    assert _answers(site) == []


def test_a_get_never_changes_anything(signed_in: Any, site: Site) -> None:
    assert signed_in.get(f"/tasks/waits/approve?csrf={csrf()}").status_code in (404, 405)
    assert _answers(site) == []


TRAVERSALS = ["../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "%2Fetc%2Fpasswd",
              "%2e%2e", "/etc/passwd"]  # (a bare ".." is resolved by every client before it is sent)


@pytest.mark.parametrize("bad", TRAVERSALS)
def test_traversal_in_every_path_parameter_is_404(signed_in: Any, bad: str) -> None:
    for path in (f"/tasks/{bad}", f"/tasks/{bad}/events", f"/tasks/{bad}/live", f"/tasks/{bad}/steps/0",
                 f"/tasks/{bad}/files/NOTES.md", f"/tasks/done/files/{bad}", f"/tasks/done/steps/{bad}"):
        reply = signed_in.get(path)
        assert reply.status_code == 404, path
        assert "root:" not in reply.text
    reply = signed_in.post(f"/tasks/{bad}/approve", data={"csrf": csrf()})
    assert reply.status_code in (404, 405)


def test_symlinks_out_of_the_task_folder_are_404(signed_in: Any) -> None:
    assert signed_in.get("/tasks/done/files/escape.md").status_code == 404
    assert signed_in.get("/tasks/done/files/outside/README.md").status_code == 404
    assert signed_in.get("/tasks/done/files/outside/.specd/tasks/done/NOTES.md").status_code == 404
    assert signed_in.get("/tasks/done/files/alias.md").status_code == 200  # a link that stays inside is fine
    assert signed_in.get("/tasks/done/files/config.json").status_code == 200


def test_no_page_shows_the_secret_the_agent_printed(signed_in: Any, site: Site) -> None:
    # On disk and in git it is there (the agent wrote it into a task document the step committed) ...
    assert SECRET in (site.root / ".specd" / "tasks" / "done" / "NOTES.md").read_text()
    assert SECRET in site.git("log", "-p")
    pages = ["/", "/rows", "/?status=COMPLETE", "/tasks/done", "/tasks/done/live", "/tasks/waits", "/tasks/fresh",
             "/tasks/done/files/NOTES.md", "/tasks/done/files/alias.md"]
    pages += [f"/tasks/{task}/steps/{n}" for task in ("done", "waits") for n in range(2)]
    shown = {}
    for path in pages:
        reply = signed_in.get(path)
        if reply.status_code != 404:  # waits has one finished step only
            assert reply.status_code == 200, path
            shown[path] = reply.text
    assert len(shown) == len(pages) - 1
    for path, html in shown.items():
        assert SECRET not in html, path
    # ... and the pages that show it say it was there
    assert "[REDACTED]" in shown["/tasks/done/files/NOTES.md"]
    assert "[REDACTED]" in shown["/tasks/done/steps/0"]  # transcript and commit diff


def _answers(site: Site) -> list[dict[str, Any]]:
    """The answers recorded for the waiting task (its gate's own stop row, and the harness's approval of the hold
    for the secret its agent wrote, aside)."""
    state = json.loads((site.root / ".specd" / "tasks" / "waits" / ".pipeline-state.json").read_text())
    return [row for row in state.get("checkpoints") or [] if row.get("answer") in ACTIONS
            and row.get("waiting") != "secret"]


def test_a_task_folder_that_is_a_symlink_out_is_404(signed_in: Any, site: Site, tmp_path: Any) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "config.json").write_text("{}")
    (outside / "secret.md").write_text("not yours\n")
    link = site.root / ".specd" / "tasks" / "elsewhere"
    link.symlink_to(outside)
    try:
        assert signed_in.get("/tasks/elsewhere").status_code == 404
        assert signed_in.get("/tasks/elsewhere/files/secret.md").status_code == 404
        assert signed_in.get("/tasks/elsewhere/events").status_code == 404
    finally:
        link.unlink()


def test_a_huge_file_in_a_task_folder_is_read_only_as_far_as_the_page_shows(signed_in: Any, site: Site) -> None:
    # The agent makes the task folder's files: a sparse one of 8 GB took the whole file into memory to show 200 KB.
    from specd.web import detail

    huge = site.root / ".specd" / "tasks" / "done" / "HUGE.md"
    with huge.open("wb") as handle:
        handle.write(b"# head\n" + b"x" * 100)
        handle.truncate(8 << 30)
    reply = signed_in.get("/tasks/done/files/HUGE.md.json")
    assert reply.status_code == 200
    text = reply.json()["text"]
    assert text.startswith("# head\n")
    assert len(text) <= detail.MAX_TEXT
