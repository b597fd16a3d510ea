"""The tasks page in a real browser (Debian's headless Chromium): the day run from one page.

A project with a task in every state (every_state.py) served by `specd ui`, the control plane. The page counts
each status, says what waits for a person, shows the failure wait red with its reason, and draws the graph with
links; approving a waiting row makes that task go on with no other command and the open page follows it. A
task named with markup shows as text and runs no script. A 404 offers the task meant, and the 401 says how to get in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from every_state import ATTACK, EveryState
from test_browser import ARTIFACTS, WAIT_MS, browser
from web_harness import Server

__all__ = ["browser"]  # the fixture, shared with test_browser.py


def test_the_tasks_page_runs_the_day(tmp_path: Path, browser: Any) -> None:
    site = EveryState(tmp_path)
    site.start_busy()
    server = None
    try:
        server = Server(site)
        _drive(browser, server, site)
    finally:
        site.release_busy()
        said = server.stop() if server is not None else ""
    assert "Traceback" not in said, said
    waits = site.state("waits")
    assert waits["status"] == "COMPLETE"  # approved on its row; the control plane ran the rest
    checkpoints = waits["checkpoints"]
    assert isinstance(checkpoints, list)
    assert (checkpoints[-1]["answer"], checkpoints[-1]["via"]) == ("approve", "page")


def _drive(browser: Any, server: Server, site: EveryState) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    home = server.url.split("?")[0]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(WAIT_MS)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server.url)
    counts = {span.get_attribute("data-status"): int(span.inner_text())
              for span in page.locator("#filters .count").all()}
    assert (counts[""], counts["WAITING_FOR_HUMAN"], counts["IN_PROGRESS"], counts["BLOCKED"],
            counts["COMPLETE"], counts["CANCELLED"], counts["NOT_STARTED"]) == (8, 2, 1, 1, 1, 1, 2)
    assert page.locator("#banner").inner_text().startswith("2 tasks wait for you, 1 because something failed")
    failed = page.locator('#rows tr[data-task="thrice"]')
    red = _theme(page, "--bad")
    assert failed.locator(".status").evaluate("e => getComputedStyle(e).color") == red  # the theme's failure red
    assert "the build is broken" in failed.locator("td.failure .reason").inner_text()
    gate = page.locator('#rows tr[data-task="waits"] .status')
    assert gate.evaluate("e => getComputedStyle(e).color") == _theme(page, "--wait") != red  # a plain gate: amber
    page.screenshot(path=str(ARTIFACTS / "tasks-needs-you.png"), full_page=True)

    page.click('#graph-svg a.node[data-task="child"]')  # a node is a link to its task
    page.wait_for_url("**/tasks/child")
    assert page.locator("h1").inner_text().startswith("child")
    page.go_back()

    page.click('#rows tr[data-task="waits"] button.approve')
    page.wait_for_selector("#said")
    assert page.locator("#said").inner_text().startswith("waits: approve recorded.")
    page.evaluate("window.stillTheSamePage = true")  # gone if the page reloads
    page.wait_for_selector('#rows tr[data-task="waits"][data-status="COMPLETE"]')  # live, as the plane runs it
    page.wait_for_function("document.querySelector('#graph-svg a.node[data-task=\"waits\"]')"
                           ".getAttribute('data-status') === 'COMPLETE'")
    assert page.evaluate("window.stillTheSamePage === true")
    assert page.locator("#banner").inner_text().startswith("1 task waits for you, 1 because something failed")
    page.screenshot(path=str(ARTIFACTS / "tasks-answered.png"), full_page=True)

    site.add_attack()  # a task named with markup (a new folder, no run: the page shows it when next loaded)
    page.reload()
    assert page.locator(f'#graph-svg a.node[data-task="{ATTACK}"]').count() == 1
    assert page.locator(f'#rows tr[data-task="{ATTACK}"] td a').inner_text() == ATTACK  # as text
    page.screenshot(path=str(ARTIFACTS / "tasks-graph.png"), full_page=True)
    assert dialogs == []  # and no script ran

    missing = page.goto(home + "tasks/wiats")
    assert missing is not None
    assert missing.status == 404
    page.click('#suggestions a[href="/tasks/waits"]')
    page.wait_for_url("**/tasks/waits")
    page.close()

    stranger = browser.new_context().new_page()  # no cookie: the 401 page, with no token on it
    refused = stranger.goto(home + "tasks/waits")
    assert refused is not None
    assert refused.status == 401
    assert "specd ui --token T" in stranger.locator("#fix").inner_text()
    assert server.token not in stranger.content()
    stranger.screenshot(path=str(ARTIFACTS / "unauthorised.png"), full_page=True)
    stranger.context.close()


def _theme(page: Any, name: str) -> str:
    """The page theme's colour ``name`` (a CSS variable, light or dark), as getComputedStyle writes colours."""
    value = page.evaluate("name => getComputedStyle(document.documentElement).getPropertyValue(name).trim()", name)
    return "rgb({}, {}, {})".format(*(int(value[i:i + 2], 16) for i in (1, 3, 5)))
