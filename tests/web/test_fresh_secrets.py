"""A page that runs for days redacts with the secret files the project holds now, not those it found at its start.

A step printed a value, then wrote it into a `.env` (a key the model made and saved): the run wrote the
transcript before the file existed, and a page started before the step showed the value on every look at that
step, on the phone it was opened on, for as long as the page ran."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from web_harness import TOKEN, Site

VALUE = "brisk-otter-58-staging-zq"  # no shape redaction knows: only the .env says it is a secret
MAKER = ("import os, pathlib, sys\n"
         f"print('made the new one: {VALUE}', flush=True)\n"
         "pathlib.Path(os.environ['SPECD_RESULT']).write_text('{\"outcome\": \"done\"}')\n")


def test_a_value_a_later_env_holds_is_masked_on_the_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.testclient import TestClient

    from specd.tasks import secrets
    from specd.tasks.project import Project
    from specd.web.app import create_app

    site = Site(tmp_path)
    (site.dir / "maker.py").write_text(MAKER)
    site.new("mk")
    done = site.specd("continue", "mk", "--auto", "--agent", f"cmd:{sys.executable} {site.dir / 'maker.py'}")
    assert done.returncode in (0, 3), done.stdout + done.stderr
    with TestClient(create_app(Project(site.root), TOKEN), base_url="http://127.0.0.1:8765") as client:
        client.cookies.set("specd_ui", TOKEN)
        assert VALUE in client.get("/tasks/mk/steps/1").text  # no secret file says so yet: shown as printed
        (site.root / ".env").write_text(f"STAGING_PASSWORD={VALUE}\n", encoding="utf-8")  # as the step's next move
        monkeypatch.setattr(secrets, "REFRESH_EVERY", 0.0, raising=False)  # looked for at most once a second
        for path in ("/tasks/mk/steps/1", "/tasks/mk/steps/1.json", "/tasks/mk"):
            page = client.get(path)
            assert page.status_code == 200, path
            assert VALUE not in page.text, path
        assert "[REDACTED]" in client.get("/tasks/mk/steps/1").text
