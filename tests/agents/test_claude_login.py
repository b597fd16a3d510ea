"""A `claude login` (its tokens in ~/.claude/.credentials.json) never reaches the model's commands.

Found by hand, as the model: the task's copy of Claude Code's config folder is in the jail, so
`cat $CLAUDE_CONFIG_DIR/.credentials.json` printed the login's access and refresh tokens. The copy now holds
stand-ins, and specd's key guard signs each request with the token the user's own login holds at that moment.
The real Claude Code CLI runs against the fake Messages API.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import fake_anthropic as fake
import pytest

from specd.agents.base import AgentFailed
from specd.agents.claude_code.options import Options

ACCESS = "sk-ant-oat01-LOGINACCESS-abcdefghijklmnopqrstu"
REFRESH = "sk-ant-ort01-LOGINREFRESH-abcdefghijklmnopqrst"
LOOK = "env; cat $CLAUDE_CONFIG_DIR/.credentials.json; grep -rh sk-ant- $CLAUDE_CONFIG_DIR; true"


@pytest.fixture(autouse=True)
def jailed() -> None:
    from specd.system import jail

    if not jail.active():
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is required in CI (.ci/run installs it)")
        pytest.skip("the key guard is part of the jail; bubblewrap is not available here")


def sign_in(home: Path, access: str, expires_in_s: float) -> Path:
    """What `claude login` leaves on Linux: the tokens in ~/.claude/.credentials.json."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    login = home / ".claude" / ".credentials.json"
    login.write_text(json.dumps({"claudeAiOauth": {
        "accessToken": access, "refreshToken": REFRESH, "expiresAt": int((time.time() + expires_in_s) * 1000),
        "scopes": ["user:inference", "user:profile"], "subscriptionType": "max"}}), encoding="utf-8")
    return login


def step(cc: Any, project: Any, server: Any) -> str:
    """One step whose model looks for the tokens first; what its shell printed."""
    shell = fake.tool("Bash", command=LOOK, description="look for the login")
    server.push(fake.message(shell), fake.message(fake.tool("StructuredOutput", outcome="approve", summary="x")))
    settings = {"allowed_tools": ["Bash"]}
    cc.options = Options.from_settings(settings)
    cc.run(project.request(settings=settings))
    return "\n".join(str(r["content"]) for body in server.bodies for r in fake.tool_results(body)
                     if r["tool_use_id"] == shell["id"])


def test_a_claude_logins_tokens_never_reach_its_commands(cc: Any, project: Any, server: Any, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    login = sign_in(tmp_path / "home", ACCESS, 3600)
    before = login.read_text(encoding="utf-8")
    said = step(cc, project, server)
    assert '"accessToken": "specd-stand-in-' in said  # the command ran, and read the copy: stand-ins only
    assert '"refreshToken": "specd-stand-in-' in said
    for secret in (ACCESS, REFRESH):
        assert secret[12:] not in said  # not even a tail of either token
    calls = [r for r in server.requests if r["path"] != "/"]
    assert len(calls) >= 2
    assert all(r["headers"]["authorization"] == f"Bearer {ACCESS}" for r in calls)  # signed on the way out
    assert login.read_text(encoding="utf-8") == before  # the user's own login is never written
    state = Path(cc_config_dir(said))
    on_disk = b"".join(p.read_bytes() for p in state.rglob("*") if p.is_file())
    assert ACCESS[12:].encode() not in on_disk
    assert REFRESH[12:].encode() not in on_disk

    refreshed = ACCESS.replace("LOGINACCESS", "REFRESHEDBYUSER")  # the user's own `claude` refreshed its login
    sign_in(tmp_path / "home", refreshed, 3600)
    server.requests.clear()
    step(cc, project, server)
    calls = [r for r in server.requests if r["path"] != "/"]
    assert calls
    assert all(r["headers"]["authorization"] == f"Bearer {refreshed}" for r in calls)


def cc_config_dir(said: str) -> str:
    [line] = [line for line in said.splitlines() if line.startswith("CLAUDE_CONFIG_DIR=")]
    return line.partition("=")[2]


def test_an_expired_login_fails_the_step_with_the_fix_and_sends_nothing(cc: Any, project: Any, server: Any,
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    sign_in(tmp_path / "home", ACCESS, -60)
    with pytest.raises(AgentFailed) as failed:
        step(cc, project, server)
    assert "your claude login expired at" in str(failed.value)
    assert "claude auth login" in str(failed.value)
    assert [r for r in server.requests if r["path"] != "/"] == []  # the expired token went nowhere
