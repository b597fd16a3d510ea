"""The tasks page as the place to run the day from (issue 31): counts, the banner, answers on each waiting row,
the project's totals, failure waits in red with their reason, and the task graph drawn, linked and escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from every_state import ATTACK, EveryState
from web_harness import TOKEN, Site, csrf

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EveryState]:
    site = EveryState(tmp_path_factory.mktemp("zoo"))
    site.start_busy()
    site.add_attack()
    try:
        yield site
    finally:
        site.release_busy()


@pytest.fixture(scope="module")
def page(zoo: EveryState) -> Iterator[Any]:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    with TestClient(create_app(Project(zoo.root), TOKEN)) as client:
        client.cookies.set("specd_ui", TOKEN)
        yield client


def _rows(html: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-task="([^"]+)" data-status="([^"]+)">', html))


def _row(html: str, task: str) -> str:
    found = re.search(rf'<tr data-task="{re.escape(task)}".*?</tr>', html, re.DOTALL)
    assert found, task
    return found.group(0)


def test_every_filter_counts_the_tasks_it_shows(page: Any) -> None:
    html = page.get("/").text
    counts = {s: int(n) for s, n in re.findall(r'<span class="count" data-status="([A-Z_]*)">(\d+)</span>', html)}
    assert counts[""] == len(_rows(html)) == 9
    for status, count in counts.items():
        if status:
            shown = _rows(page.get(f"/?status={status}").text)
            assert len(shown) == count, status
            assert set(shown.values()) <= {status}
    assert (counts["WAITING_FOR_HUMAN"], counts["BLOCKED"], counts["IN_PROGRESS"], counts["CANCELLED"],
            counts["COMPLETE"], counts["NOT_STARTED"]) == (2, 1, 1, 1, 1, 3)


def test_the_banner_says_how_many_wait_and_the_totals_what_the_project_spent(page: Any) -> None:
    html = page.get("/?status=COMPLETE").text  # the banner and totals speak for the project, not the filter
    banner = re.search(r'<div class="banner failing" id="banner".*?</div>', html, re.DOTALL)
    assert banner
    text = " ".join(unescape(re.sub(r"<[^>]+>", "", banner.group(0))).split())
    assert text.startswith("2 tasks wait for you, 1 because something failed")
    assert 'href="/?status=WAITING_FOR_HUMAN"' in banner.group(0)
    totals = re.search(r'<p id="totals">(.*?)</p>', html, re.DOTALL)
    assert totals
    # done: 2 steps, waits: 1 step, each 1,500 tokens; $0.0125 + $0.0311 + $0.0125
    assert re.sub(r"<[^>]+>", "", totals.group(1)) == "Project total: 4,500 tokens, $0.0561 over 9 tasks."


def test_a_failure_wait_is_red_with_its_reason_and_a_gate_is_not(page: Any) -> None:
    html = page.get("/").text
    failed = _row(html, "thrice")
    assert 'class="status s-WAITING_FOR_HUMAN failing"' in failed
    assert '<td class="text failure">a decision on repeated failures before s1' in failed
    assert "the build is broken" in failed
    gate = _row(html, "waits")
    assert 'class="status s-WAITING_FOR_HUMAN"' in gate
    assert "failing" not in gate
    blocked = _row(html, "broken")  # a failed step: red with its reason, and no "wait" made of the step's kind
    assert re.search(r'<td class="text failure"><div class="reason">step &#39;s1&#39; failed: agent command '
                     r"exited with status 1: the build is broken; fix the cause", blocked)
    assert "failure" not in gate
    assert list(_rows(html))[:2] == ["thrice", "waits"]  # what waits for a person comes first
    clusters = re.search(r"<h2>Failure clusters</h2>.*?</table>", page.get("/tasks/thrice").text, re.DOTALL)
    assert clusters  # the task page's table says the reason too (it read a field clusters do not have)
    assert re.search(r'<td class="num">3</td><td class="text">step &#39;s1&#39; failed: agent command exited with '
                     r"status 1: the build is broken</td>", clusters.group(0))


def test_each_waiting_row_and_only_those_offer_approve_reject_and_skip(page: Any) -> None:
    html = page.get("/").text
    for task, status in _rows(html).items():
        row = _row(html, task)
        forms = re.findall(r'action="/tasks/[^"]+/(approve|reject|skip)"', row)
        if status == "WAITING_FOR_HUMAN":
            assert forms == ["approve", "reject", "skip"], task
            assert row.count(f'name="csrf" value="{csrf()}"') >= 3
            assert re.search(r'<input name="note"[^>]* required', row)  # reject needs a note here too
        else:
            assert forms == [], task


@pytest.fixture
def gated(tmp_path: Path) -> tuple[Site, Any]:
    from starlette.testclient import TestClient

    from specd.tasks.project import Project
    from specd.web.app import create_app

    site = Site(tmp_path)
    site.env.pop("SERVICE_API_TOKEN")
    site.new("waits")
    site.run_to_gate("waits")
    client = TestClient(create_app(Project(site.root), TOKEN))
    client.cookies.set("specd_ui", TOKEN)
    return site, client


def test_an_answer_on_a_row_is_recorded_as_the_task_page_records_it_and_returns_to_the_list(
        gated: tuple[Site, Any]) -> None:
    site, client = gated
    assert client.post("/tasks/waits/approve", data={"back": "list"}).status_code == 403  # no CSRF token
    refused = client.post("/tasks/waits/reject", data={"csrf": csrf(), "back": "list", "note": " "})
    assert refused.status_code == 400
    assert "reject needs a note" in refused.text  # said on the task page, whose form keeps a longer note
    done = client.post("/tasks/waits/approve", data={"csrf": csrf(), "back": "list"}, follow_redirects=False)
    assert done.status_code == 303
    assert done.headers["location"] == "/?done=approve&task=waits"
    listed = client.get(done.headers["location"]).text
    assert re.search(r'<div class="said" id="said">waits: approve recorded\. `specd continue waits` goes on\.', listed)
    assert 'id="banner"' not in listed  # nothing waits now
    status = site.specd("status", "waits", "--json")
    assert '"answer": "approve"' in status.stdout
    assert '"via": "page"' in status.stdout
    finished = site.specd("continue", "waits")  # the answer moves the run, as after `specd approve`
    assert finished.returncode == 0, finished.stderr
    # a forged "back" goes nowhere else, and a made-up notice says nothing
    assert 'id="said"' not in client.get("/?done=approve&task=../../x").text


def test_the_graph_is_drawn_coloured_linked_and_escaped(page: Any) -> None:
    html = page.get("/").text
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    svg = re.search(r'<svg [^>]*id="graph-svg".*?</svg>', html, re.DOTALL)
    assert svg
    root = ET.fromstring(svg.group(0))  # well-formed: a name cannot break out of an attribute or element
    nodes = {a.get("data-task"): a for a in root.iter(f"{SVG}a")}
    assert set(nodes) == {"done", "child", "grandchild", "waits", ATTACK}  # only tasks on some edge
    assert nodes[ATTACK].get("href") == "/tasks/%3Cscript%3Ealert%281%29%3Cimg%20src%3Dx%20onerror%3Dalert%282%29%3E"
    for name in ("done", "child", "grandchild", "waits"):
        assert nodes[name].get("href") == f"/tasks/{name}"
        assert page.get(nodes[name].get("href")).status_code == 200
    from specd.web.graph_svg import COLOURS

    for name, status in (("done", "COMPLETE"), ("waits", "WAITING_FOR_HUMAN"), ("child", "NOT_STARTED")):
        rect = nodes[name].find(f"{SVG}rect")
        assert rect is not None
        assert (rect.get("stroke"), rect.get("fill")) == COLOURS[status], name
        assert nodes[name].get("data-status") == status
    assert len(list(root.iter(f"{SVG}line"))) == 4  # done→child, child→grandchild, waits→grandchild, done→attack
    assert "waiting_for_human" in "".join(nodes["waits"].itertext())  # the status in words, not colour alone


def _luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_legend_and_the_nodes_text_are_readable(page: Any) -> None:
    from specd.web.graph_svg import COLOURS, TEXT

    for border, fill in COLOURS.values():  # every colour a box can have, drawn or not
        assert contrast(TEXT, fill) >= 4.5, fill
        assert contrast(border, "#ffffff") >= 3.0, border  # the border is a graphic: 3:1 against the page
    html = page.get("/").text
    legend = re.findall(r'<span class="swatch" style="background:(#\w+);border-color:#\w+;color:(#\w+)">([^<]+)',
                        html)
    assert {words for _, _, words in legend} == {"complete", "waiting_for_human", "not_started"}
    for fill, text, _ in legend:
        assert contrast(text, fill) >= 4.5
    assert contrast("#1c2730", "#ffffff") >= 4.5  # the status words under each name
    assert contrast("#c62828", "#fde7e7") >= 4.5  # a failing row's red on its tint
    assert contrast("#b71c1c", "#fde7e7") >= 4.5


def test_every_arrow_points_right_and_a_source_sits_next_to_what_needs_it() -> None:
    from specd.web.graph_svg import columns, draw

    rows = [{"task": "done", "needs": []}, {"task": "waits", "needs": []}, {"task": "child", "needs": ["done"]},
            {"task": "grandchild", "needs": ["child", "waits"]}]
    column = columns(rows)
    assert column == {"done": 0, "child": 1, "waits": 1, "grandchild": 2}  # waits' arrow crosses no column
    for row in rows:
        assert all(column[need] < column[row["task"]] for need in row["needs"])
    cycle = [{"task": "a", "needs": ["b"], "status": "NOT_STARTED"}, {"task": "b", "needs": ["a"], "status": "ERROR"}]
    assert draw(cycle).count('<a class="node"') == 2  # a cycle (said elsewhere) still draws
    assert draw([{"task": "alone", "needs": [], "status": "COMPLETE"}]) == ""  # no edge, no graph
