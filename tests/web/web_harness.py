"""The dashboard tests' harness: a real project whose agent leaks a secret, and a real `specd ui` server.

The command agent prints a secret-named environment value and writes it into a task document. The step is
held for it (issue 28: no secret in a commit) and the harness approves, as a person would who wants it there: the
secret is then on disk and in git, and only the dashboard's redaction keeps it off pages.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "executors"))

from executor_harness import Repo  # noqa: E402

SECRET_NAME, SECRET = "SERVICE_API_TOKEN", "sk-live-9f8e7d6c5b4a39281706"
TOKEN = "test-token-0123456789abcdef"
DEADLINE = 60.0  # a safety net for reads from a real server
AGENT = r'''
import json, os, sys, time
from pathlib import Path
HERE = Path(__file__).resolve().parent
task, step = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"]
sys.stdin.read()
print("calling the service with", os.environ.get("SERVICE_API_TOKEN", "(none)"), flush=True)
Path(os.environ["SPECD_TASK_DIR"], "NOTES.md").write_text("token: " + os.environ.get("SERVICE_API_TOKEN", "") + "\n")
hold = HERE / f"hold-{task}"
if hold.exists():
    Path(f"held-{task}-{step}").write_text("held")
    while hold.exists():
        time.sleep(0.1)
Path(f"out-{task}-{step}.txt").write_text(f"{task} {step}\n")
usage = {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.0125 if step == "s1" else 0.0311}
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "summary": f"{step} of {task}",
                                                        "usage": usage}))
'''


class Site(Repo):
    """The harness project, with the leaking agent and a pipeline whose s2 has a gate in semi-auto."""

    def __init__(self, tmp_path: Path) -> None:
        super().__init__(tmp_path, steps=("s1", "s2"), pause="s2")
        (self.dir / "agent.py").write_text(AGENT, encoding="utf-8")
        self.env[SECRET_NAME] = SECRET
        # The agent is given the service's key on purpose (a jailed agent sees no secret its block does not name).
        pipeline = self.root / ".specd" / "pipeline.json"
        data = json.loads(pipeline.read_text(encoding="utf-8"))
        data["agent"] = {**data.get("agent", {}), "env_allow": [SECRET_NAME]}
        pipeline.write_text(json.dumps(data), encoding="utf-8")
        self.git("commit", "-q", "-am", "the agent may use the service's key")

    def run_to_end(self, task: str) -> None:
        done = self._through_holds(task, "--auto")
        assert done.returncode == 0, done.stdout + done.stderr

    def run_to_gate(self, task: str) -> None:
        done = self._through_holds(task, "--semi-auto")
        assert done.returncode == 3, done.stdout + done.stderr
        assert "gate" in done.stdout + done.stderr, done.stdout + done.stderr

    def _through_holds(self, task: str, mode: str) -> subprocess.CompletedProcess[str]:
        done = self.specd("continue", task, mode, "--agent", self.agent())
        while done.returncode == 3 and "not committed: " in done.stdout + done.stderr:  # the secret's hold
            assert SECRET not in done.stdout + done.stderr
            approved = self.specd("approve", task)
            assert approved.returncode == 0, approved.stdout + approved.stderr
            done = self.specd("continue", task, mode)
        return done


def csrf() -> str:
    from specd.web.auth import csrf_token

    return csrf_token(TOKEN)


class Server:
    def __init__(self, site: Site, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "specd", "ui", "--no-browser", "--port", "0", *args],
                                     cwd=site.root, env=site.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()  # the first line, whatever else is printed
        parts = urlsplit(self.url)
        self.host, self.port = parts.hostname or "", parts.port or 0
        self.token = parts.query.removeprefix("token=")

    def request(self, path: str, signed_in: bool = True) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        connection.putrequest("GET", path, skip_accept_encoding=True)  # sent as given: no client tidies ".."
        if signed_in:
            connection.putheader("Cookie", f"specd_ui={self.token}")
        connection.endheaders()
        return connection.getresponse()

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=DEADLINE)
        return err
