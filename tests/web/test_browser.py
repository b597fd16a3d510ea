"""The dashboard in a real browser (Debian's headless Chromium, driven by Playwright).

A finished task, a running one (its agent held in step s1 by a file, run by a plain `specd run`), one waiting at
the gate before s2 and one not started. `specd ui` is the project's control plane: approving on the page makes the
task go on with no other command, and the open page follows it running and then its result without a reload; the
Run button starts the task that never ran. A screenshot of each page goes to .ci/artifacts/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_harness import SECRET_NAME, Server, Site

ARTIFACTS = Path(__file__).resolve().parents[2] / ".ci" / "artifacts"
DEADLINE = 120.0
WAIT_MS = 120_000  # the browser's own waits: generous nets, not timings
FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--disable-gpu"]


def _chromium() -> str | None:
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        found = shutil.which(name) or next((str(p) for p in (Path("/usr/lib") / name / name,) if p.exists()), None)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    binary = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        binary = None
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Chromium and playwright: .ci/run installs chromium-headless-shell and .[dev]")
        pytest.skip("no Chromium (apt-get install chromium-headless-shell) or no playwright")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=binary, headless=True, args=FLAGS)
        yield launched
        launched.close()


def _status(site: Site, task: str) -> dict[str, Any]:
    done = site.specd("status", task, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _until(check: Any, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert proc is None or proc.poll() is None, f"the process ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.2)


def test_approve_on_the_page_makes_the_task_go_on_and_run_starts_one(tmp_path: Path, browser: Any) -> None:
    site = Site(tmp_path)
    for task in ("done", "busy", "waits", "fresh"):
        site.new(task)
    site.run_to_end("done")
    # Without the secret, the agent's notes hold none: the runs below wait only where this test answers (a
    # secret in a step's files holds that step too, issue 28; the harness answers those in run_to_end).
    site.env.pop(SECRET_NAME)
    site.run_to_gate("waits")
    # What the control plane starts with no flags: the pipeline's own agent and mode.
    pipeline = site.root / ".specd" / "pipeline.json"
    data = json.loads(pipeline.read_text(encoding="utf-8"))
    data["mode"] = "semi-auto"
    data["agent"] = {**data["agent"], "backend": "command", "command": site.agent().removeprefix("cmd:")}
    pipeline.write_text(json.dumps(data), encoding="utf-8")
    site.git("commit", "-q", "-am", "the pipeline's agent and mode")
    (site.dir / "hold-busy").write_text("")
    run = subprocess.Popen([sys.executable, "-m", "specd", "run", "busy", "--semi-auto", "--agent", site.agent()],
                           cwd=site.root, env=site.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    server = None
    try:
        _until(lambda: (site.tree("busy") / "held-busy-s1").exists(), "busy's agent is in s1", run)
        server = Server(site)
        _drive(browser, server, site)
        out, err = run.communicate(timeout=DEADLINE)
        assert run.returncode == 3, out + err  # the plain run ended at busy's gate; the control plane went on
    finally:
        if run.poll() is None:
            run.kill()
        if server is not None:
            server.stop()
    waits = _status(site, "waits")
    assert waits["status"] == "COMPLETE"
    assert (waits["checkpoints"][-1]["note"], waits["checkpoints"][-1]["via"]) == ("looks good to me", "page")
    assert [h["step"] for h in waits["history"]] == ["s1", "s2"]  # each step once
    assert _status(site, "busy")["status"] == "COMPLETE"
    assert _status(site, "fresh")["status"] == "WAITING_FOR_HUMAN"  # started by Run: s1 ran, the gate before s2


def _drive(browser: Any, server: Server, site: Site) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(WAIT_MS)
    page.goto(server.url)  # the token becomes a cookie; the address bar loses it
    assert "token=" not in page.url
    rows = {row.get_attribute("data-task"): row.get_attribute("data-status")
            for row in page.locator("#rows tr[data-task]").all()}
    assert rows == {"done": "COMPLETE", "busy": "IN_PROGRESS", "waits": "WAITING_FOR_HUMAN", "fresh": "NOT_STARTED"}
    assert page.locator("#rows tr[data-task]").first.get_attribute("data-task") == "waits"  # waiting first
    page.screenshot(path=str(ARTIFACTS / "tasks.png"), full_page=True)

    page.click('#rows a[href="/tasks/waits"]')
    page.wait_for_selector("#approve")
    page.screenshot(path=str(ARTIFACTS / "task-waiting.png"), full_page=True)
    page.click("#reject")  # no note
    assert "reject needs a note" in page.locator("#error").inner_text()
    assert _status(site, "waits")["status"] == "WAITING_FOR_HUMAN"
    page.screenshot(path=str(ARTIFACTS / "task-reject-refused.png"), full_page=True)

    (site.dir / "hold-waits").write_text("")  # s2's agent waits for this file to go: the page sees it run
    page.fill("#approve-note", "looks good to me")
    page.click("#approve")
    page.wait_for_selector("#said")
    assert "control plane" in page.locator("#said").inner_text()
    page.evaluate("window.stillTheSamePage = true")  # gone if the page reloads
    _until(lambda: (site.root / "held-waits-s2").exists(), "the control plane runs waits' s2")
    page.wait_for_function("document.getElementById('status').textContent === 'IN_PROGRESS'")
    page.screenshot(path=str(ARTIFACTS / "task-running.png"), full_page=True)
    (site.dir / "hold-waits").unlink()
    page.wait_for_function("document.getElementById('status').textContent === 'COMPLETE'")
    assert page.evaluate("window.stillTheSamePage === true")
    page.wait_for_function("document.getElementById('events').textContent.includes('run finished: COMPLETE')")
    page.screenshot(path=str(ARTIFACTS / "task-complete.png"), full_page=True)
    page.reload()
    assert "looks good to me" in page.locator("#checkpoints").inner_text()

    page.click('table a:text-is("s2")')  # the step page: transcript (redacted) and commit
    page.wait_for_selector("#diff")
    assert "docs(waits): s2 complete" in page.locator("#diff").inner_text()
    page.screenshot(path=str(ARTIFACTS / "step.png"), full_page=True)

    page.goto(server.url.split("?")[0] + "tasks/fresh")  # never run: the Run button starts it
    page.click("#run")
    page.wait_for_selector("#said")
    page.wait_for_function("document.getElementById('status').textContent === 'WAITING_FOR_HUMAN'")
    assert (site.tree("fresh") / "out-fresh-s1.txt").exists()  # a worktree of its own, as `specd run` makes
    page.screenshot(path=str(ARTIFACTS / "task-run.png"), full_page=True)

    page.goto(server.url.split("?")[0])
    page.evaluate("window.stillTheSamePage = true")
    (site.dir / "hold-busy").unlink()  # busy goes on to its own gate; its row follows on the open page
    page.wait_for_selector('#rows tr[data-task="busy"][data-status="WAITING_FOR_HUMAN"]')
    assert site.specd("approve", "busy").returncode == 0  # answered in the terminal: the control plane goes on
    page.wait_for_selector('#rows tr[data-task="busy"][data-status="COMPLETE"]')
    assert page.evaluate("window.stillTheSamePage === true")
    page.screenshot(path=str(ARTIFACTS / "tasks-live.png"), full_page=True)
    page.close()
