"""Issue 32 with issue 28: the jail inventory taken from a shell call of every backend in ``contract.BACKENDS``.

The model's one action is ``Shell("python3 probe.py NAME")``, run by the backend's own shell tool (the
anthropic and openai backends' run_command in the project tier, an agent CLI's shell in the agent tier);
the host around it and the judgement are ``tests/system``'s, unchanged: the same ``Host`` full of keys,
sockets and listeners, and the same ``findings``. HOME stays the host's fake one, as a user's would be;
the secret-named variables the probe may see are the backend's own sign-in keys (``jail.BACKEND_KEYS``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from contract import BACKENDS
from contract.base import SCRUB, Finish, Shell

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "system"))

from inventory_harness import Host, Project, hosting  # noqa: E402
from test_inventory import findings  # noqa: E402

from specd.redact import is_secret_name  # noqa: E402
from specd.system.jail import BACKEND_KEYS  # noqa: E402


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    yield from hosting(tmp_path)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_a_shell_call_of_the_backend_sees_nothing_of_the_machine(name: str, host: Host, tmp_path: Path) -> None:
    backend = BACKENDS[name]()
    backend.require()
    backend.start(tmp_path)
    try:
        project = Project(host, tmp_path / "proj", agent=backend.agent(network=[host.listed]))
        project.env = {k: v for k, v in project.env.items() if k not in SCRUB}
        project.env.update({**backend.env(), "HOME": str(host.home)})
        backend.script([[Shell(f"python3 probe.py {name}"), Finish("done", "inventory taken")]])
        project.new()
        run = project.specd("continue", "t", "--auto")
        answered = len(backend.requests())
    finally:
        backend.stop()
    assert run.returncode == 0, run.stdout + run.stderr
    assert answered == 2  # the shell call's result went back to the model, which then finished
    keys = {key for key in BACKEND_KEYS.get(name, ()) if key in project.env and is_secret_name(key)}
    keys |= set(getattr(backend, "own_env", ()))  # secret-named only by their names, set by the CLI itself
    assert findings(project.inventory(name), host, env=keys, own=backend.own_folders) == []
