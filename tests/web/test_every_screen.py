"""Every page on every screen and for every reader, and a task page that follows its run, in a real browser.

The project (screens_harness.py) has a task in every state. Each page is loaded at 1280×800 and at 390 px, in
light and dark (the system's preference, emulated): the page never scrolls sideways, and axe-core (injected
from .ci/node/, as CI installs it) finds no serious or critical violation. The live test watches one task's
agent print, finish a step and move on, on a page that is never reloaded. A third test makes the README's
screenshots (to docs/screenshots/ when SPECD_SCREENSHOTS=1, else to .ci/artifacts/).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from screens_harness import Screens, axe_script, in_ci
from test_browser import FLAGS, _chromium
from web_harness import Server

REPO = Path(__file__).resolve().parents[2]
WAIT_MS = 120_000  # the browser's own waits: generous nets, not timings
SCREENS = [("wide", {"width": 1280, "height": 800}), ("narrow", {"width": 390, "height": 844})]
SHOT_MAX = 200 * 1024
BACKGROUND = {"light": "rgb(246, 248, 249)", "dark": "rgb(17, 23, 27)"}  # base.html's --bg: the scheme is followed
# Each table cell whose width is less than its longest word (up to 24 letters: a name, a status, a number): a
# table squeezed onto a phone must scroll inside itself, not write `t01` one letter a line. Free text (td.text: a
# summary, a reason) may break a long run, in a column kept a few words wide.
CUT_WORDS = """() => [...document.querySelectorAll("td:not(.text), th")].filter(cell => {
  const words = cell.innerText.split(/\\s+/).filter(w => w && w.length <= 24);
  if (!words.length || !cell.offsetParent) return false;
  const probe = document.createElement("span");
  probe.style.whiteSpace = "nowrap";
  probe.textContent = words.reduce((a, b) => a.length >= b.length ? a : b);
  cell.appendChild(probe);
  const need = probe.getBoundingClientRect().width;
  probe.remove();
  const style = getComputedStyle(cell);
  return cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) + 1 < need;
}).map(cell => cell.innerText.slice(0, 40))"""


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Screens, Server]]:
    site = Screens(tmp_path_factory.mktemp("screens"))
    server = None
    try:
        site.start("running", "s1")
        site.start("live", "s1", "s2")
        server = Server(site)  # type: ignore[arg-type]
        yield site, server
    finally:
        if server is not None:
            server.stop()
        site.close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    binary = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        binary = None
    if binary is None:
        if in_ci():
            pytest.fail("CI needs Chromium and playwright: .ci/run installs chromium-headless-shell and .[dev]")
        pytest.skip("no Chromium (apt-get install chromium-headless-shell) or no playwright")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=binary, headless=True, args=FLAGS)
        yield launched
        launched.close()


def _signed_in(chromium: Any, server: Server, **options: Any) -> Any:
    context = chromium.new_context(**options)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.goto(server.url)  # the token becomes a cookie
    return page


def _pages(site: Screens) -> list[str]:
    thrice = site.root / ".specd" / "tasks" / "thrice"
    transcript = sorted(p for p in (thrice / "transcripts").rglob("*-s1.log"))[0].relative_to(thrice)
    tasks = ("done", "waits", "thrice", "blocked", "stopped", "checked", "fresh", "running", "hid")
    return ["/", *(f"/tasks/{t}" for t in tasks), "/tasks/done/steps/0", "/tasks/checked/steps/1",
            "/tasks/hid/held/tests/conftest.py",
            f"/tasks/thrice/files/{transcript}",
            "/tasks/done/files/NOTES.md" if (site.root / ".specd/tasks/done/NOTES.md").exists() else "/tasks/done",
            "/tasks/no-such-task"]


def test_failed_attempts_have_rows_with_reason_and_transcript(screens: tuple[Screens, Server]) -> None:
    site, server = screens
    body = server.request("/tasks/thrice").read().decode()
    assert body.count('data-outcome="failed"') == 3, body
    assert "failed this way 3 times" in body
    links = sorted(set(part.split('"')[0] for part in body.split('class="transcript" href="')[1:]))
    assert len(links) == 3, links  # one transcript per attempt, none shared
    for link in links:
        text = server.request(link).read().decode()
        assert "the build broke: 3 tests failed" in text
    checked = server.request("/tasks/checked").read().decode()
    assert checked.count('data-step="s1" data-outcome="done"') == 2, checked  # the agent's two runs
    assert 'data-outcome="failed"' in checked  # and their rounds of checks
    assert 'data-outcome="checks_failed"' in checked
    round_one = server.request("/tasks/checked/steps/1").read().decode()
    assert "checks-fail-$SPECD_TASK" in round_one
    assert "exited with status 1" in round_one
    running = server.request("/tasks/running").read().decode()
    assert 'data-outcome="running"' in running


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_fits_a_phone_and_passes_axe(screens: tuple[Screens, Server], chromium: Any,
                                                 scheme: str) -> None:
    site, server = screens
    axe = axe_script()
    if axe is None:
        if in_ci():
            pytest.fail("CI needs axe-core at .ci/node/node_modules/axe-core (installed by .ci/run)")
        pytest.skip("no axe-core under .ci/node/ (npm install axe-core there)")
    base = server.url.split("?")[0].rstrip("/")
    problems = []
    for name, viewport in SCREENS:
        page = _signed_in(chromium, server, viewport=viewport, color_scheme=scheme)
        for path in _pages(site):
            reply = page.goto(base + path, wait_until="domcontentloaded")
            assert reply is not None
            wide = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
            if wide[0] != wide[1]:
                problems.append(f"{path} at {name} in {scheme}: {wide[0]} px wide in a {wide[1]} px window")
            problems += [f"{path} at {name} in {scheme}: a word cut in a cell: {cell!r}"
                         for cell in page.evaluate(CUT_WORDS)]
            if "text/html" not in (reply.headers.get("content-type") or ""):
                continue  # a plain-text answer (the 404 until it is a page of its own) has nothing for axe
            background = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert background == BACKGROUND[scheme], f"{path} in {scheme}: the body's background is {background}"
            page.add_script_tag(path=str(axe))
            found = page.evaluate("async () => (await axe.run()).violations.filter("
                                  "v => ['serious', 'critical'].includes(v.impact)).map("
                                  "v => [v.id, v.nodes.map(n => n.target.join(' ')).slice(0, 3)])")
            problems += [f"{path} at {name} in {scheme}: {json.dumps(v)}" for v in found]
        page.context.close()
    assert not problems, "\n".join(problems)


def test_screenshots_for_the_readme(screens: tuple[Screens, Server], chromium: Any) -> None:
    site, server = screens
    folder = REPO / "docs" / "screenshots" if os.environ.get("SPECD_SCREENSHOTS") else \
        REPO / ".ci" / "artifacts" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    (REPO / ".ci" / "artifacts" / "screenshots").mkdir(parents=True, exist_ok=True)
    base = server.url.split("?")[0]
    page = _signed_in(chromium, server, viewport={"width": 1280, "height": 800})
    for name, path, ready in (("tasks", "", "#rows"), ("running", "tasks/running", "#output:has-text('waits')"),
                              ("gate", "tasks/waits", "#approve")):
        page.goto(base + path)
        page.wait_for_selector(ready)
        shot = folder / f"{name}.png"
        page.screenshot(path=str(shot))
        assert 0 < shot.stat().st_size < SHOT_MAX, f"{shot}: {shot.stat().st_size} bytes"
    page.context.close()
    phone = _signed_in(chromium, server, viewport={"width": 390, "height": 844}, color_scheme="dark")
    phone.goto(base + "tasks/thrice")  # for people, not for the README: the page on a phone at night
    phone.screenshot(path=str(REPO / ".ci" / "artifacts" / "screenshots" / "thrice-phone-dark.png"))
    phone.context.close()


def test_the_task_page_follows_the_run_without_a_reload(screens: tuple[Screens, Server], chromium: Any) -> None:
    site, server = screens
    page = _signed_in(chromium, server, viewport={"width": 1280, "height": 800})
    page.goto(server.url.split("?")[0] + "tasks/live")
    page.evaluate("window.stillTheSamePage = true")  # gone if the page reloads
    page.wait_for_function("document.getElementById('output').textContent.includes('s1 waits for its hold')")
    # the page may have been drawn before s1 started: its parts follow the run (waited for, not read at once)
    page.wait_for_selector('#steps-table tr[data-step="s1"][data-outcome="running"]')
    page.wait_for_selector('#pipeline rect.current[data-step="s1"]')
    assert page.locator('#steps-table tr[data-outcome="running"]').count() == 1
    assert page.locator("#cost").inner_text() == "$0.0000"

    site.release("live", "s1")  # s1 ends, s2 starts and is held: every part of the page moves
    page.wait_for_selector('#steps-table tr[data-step="s1"][data-outcome="done"]')
    page.wait_for_selector('#pipeline rect.current[data-step="s2"]')
    page.wait_for_function("document.getElementById('cost').textContent === '$0.0125'")
    page.wait_for_function("document.getElementById('at').textContent === 's2'")
    page.wait_for_function("document.getElementById('output').textContent.includes('s2 waits for its hold')")
    assert "s1 done" in page.locator("#output").inner_text()

    site.release("live", "s2")
    page.wait_for_function("document.getElementById('status').textContent === 'COMPLETE'")
    page.wait_for_selector('#steps-table tr[data-step="s2"][data-outcome="done"]')
    page.wait_for_function("document.getElementById('cost').textContent === '$0.0436'")
    # the history's last row and the run's end are two saves: the page may show one before the other, then settles
    page.wait_for_function("document.querySelectorAll('#pipeline rect.current').length === 0")
    assert page.locator('#steps-table tr[data-outcome="running"]').count() == 0
    assert page.evaluate("window.stillTheSamePage === true")
    page.context.close()


def test_every_action_is_reachable_by_keyboard(screens: tuple[Screens, Server], chromium: Any) -> None:
    site, server = screens
    page = _signed_in(chromium, server, viewport={"width": 390, "height": 844})
    page.goto(server.url.split("?")[0] + "tasks/waits")
    reached = set()
    for _ in range(60):  # more stops than the page has: the header's link, each step's, the documents'
        page.keyboard.press("Tab")
        reached.add(page.evaluate("document.activeElement.id || document.activeElement.tagName"))
    wanted = {"approve-note", "approve", "reject-note", "reject", "skip", "rerun-step", "rerun-phase", "rerun",
              "cancel"}
    assert wanted <= reached, sorted(wanted - reached)
    page.context.close()
