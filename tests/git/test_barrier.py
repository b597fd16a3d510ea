"""The barrier's own rules, on a real repository: what holds a file, what it is named, what lets it through."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from specd.disguises import base64_forms
from specd.git import tree
from specd.git.barrier import Barrier
from specd.git.repo import Repo
from specd.tasks.secrets import known_secrets, looks_generated

AWS_ID, AWS_SECRET = "AKIA" + "Q3EXAMPLE7MNOPQR", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
TOKEN = "ghp_" + "0123456789abcdefABCDEF0123456789abcd"


def _repo(root: Path) -> Repo:
    for args in (("init", "-q"), ("config", "user.email", "t@example.com"), ("config", "user.name", "T")):
        subprocess.run(["git", *args], cwd=root, check=True)
    (root / "fixture.py").write_text(f"OLD = {TOKEN!r}\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "initial"], cwd=root, check=True)
    repo = Repo.open(root)
    assert repo is not None
    return repo


def _look(barrier: Barrier, repo: Repo, *paths: str) -> dict[str, str]:
    barrier.look(set(paths), tree.take(repo, "."))
    return {hit.path: hit.holds for hit in barrier.holds()}


@pytest.fixture
def barrier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Barrier, Repo]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the user's own credential files: none
    monkeypatch.setenv("DEPLOY_TOKEN", "deploy-" + "Vx81kL2mQ9")
    repo = _repo(tmp_path)
    return Barrier(repo, tmp_path, ".specd/tasks/t", ".specd"), repo


def test_values_and_shapes_are_named_never_shown(barrier: tuple[Barrier, Repo], tmp_path: Path) -> None:
    gate, repo = barrier
    (tmp_path / "svc/a/b/c/d/e").mkdir(parents=True)
    (tmp_path / "svc/a/b/c/d/e/.env").write_text("STRIPE=sk_test_" + "NotAShape\nSESSION_SALT=9fK2mQ7xLp4Rt8Wz\n")
    (tmp_path / "env.txt").write_text("deploy-Vx81kL2mQ9\n")
    (tmp_path / "salt.txt").write_text("salt 9fK2mQ7xLp4Rt8Wz\n")
    (tmp_path / "aws.csv").write_text(f"me,,{AWS_ID},{AWS_SECRET}\n")
    (tmp_path / "prose.md").write_text("password = input()\npostgres://user:pass@localhost/db\nsk-learn-compatible\n")

    held = _look(gate, repo, "env.txt", "salt.txt", "aws.csv", "prose.md")

    assert held == {"env.txt": "the value of the environment variable DEPLOY_TOKEN",
                    "salt.txt": "the value of SESSION_SALT in svc/a/b/c/d/e/.env",
                    "aws.csv": "an AWS access key id, an AWS secret access key"}


def test_a_tracked_file_is_held_only_for_what_head_did_not_hold(barrier: tuple[Barrier, Repo],
                                                                 tmp_path: Path) -> None:
    gate, repo = barrier
    (tmp_path / "fixture.py").write_text(f"OLD = {TOKEN!r}\nNEW = 1\n")
    assert _look(gate, repo, "fixture.py") == {}
    (tmp_path / "fixture.py").write_text(f"OLD = {TOKEN!r}\nNEW = {TOKEN[:-4] + 'wxyz'!r}\n")
    assert _look(gate, repo, "fixture.py") == {"fixture.py": "a GitHub token"}


def test_an_approval_is_of_one_content(barrier: tuple[Barrier, Repo], tmp_path: Path) -> None:
    gate, repo = barrier
    (tmp_path / "loot.txt").write_text(f"{TOKEN}\n")
    assert list(_look(gate, repo, "loot.txt")) == ["loot.txt"]
    gate.approve([hit.as_dict() for hit in gate.holds()])
    assert _look(gate, repo, "loot.txt") == {}
    (tmp_path / "loot.txt").write_text(f"{TOKEN}\nand more\n")  # changed since: checked again
    assert list(_look(gate, repo, "loot.txt")) == ["loot.txt"]
    (tmp_path / "loot.txt").unlink()
    assert _look(gate, repo, "loot.txt") == {}


def test_a_value_encoded_is_held_as_what_it_is_and_how(barrier: tuple[Barrier, Repo], tmp_path: Path) -> None:
    """A Kubernetes Secret holds its values base64-encoded, wherever the value starts in what was encoded."""
    gate, repo = barrier
    value = "deploy-" + "Vx81kL2mQ9"
    for shift, prefix in enumerate(("", "u", "us")):  # each of base64's three alignments
        encoded = base64.b64encode(f"{prefix}{value}\n".encode()).decode()
        (tmp_path / f"secret{shift}.yaml").write_text(f"kind: Secret\ndata:\n  DEPLOY: {encoded}\n")
    (tmp_path / "url.txt").write_text(base64.urlsafe_b64encode(f"?t={value}".encode()).decode())
    (tmp_path / "hex.txt").write_text(value.encode().hex().upper())
    (tmp_path / "other.yaml").write_text(f"DEPLOY: {base64.b64encode(b'deploy-Vx81KL2mQ9').decode()}\n")  # one letter

    held = _look(gate, repo, "secret0.yaml", "secret1.yaml", "secret2.yaml", "url.txt", "hex.txt", "other.yaml")

    named = "the value of the environment variable DEPLOY_TOKEN"
    assert held == {**{f"secret{shift}.yaml": f"{named}, base64-encoded" for shift in range(3)},
                    "url.txt": f"{named}, base64-encoded", "hex.txt": f"{named}, hex-encoded"}


def test_any_text_around_a_value_still_shows_it_once_encoded() -> None:
    value = b"9fK2mQ7xLp4Rt8Wz"
    forms = base64_forms(value)
    for before in range(7):
        for after in range(4):
            text = b"<" * before + value + b">" * after
            for encoded in (base64.b64encode(text), base64.urlsafe_b64encode(text)):
                assert any(form in encoded for form in forms), (before, after)
    assert min(map(len, forms)) >= 18  # 16 bytes: long enough never to turn up by chance


def test_specds_own_files_are_not_read(barrier: tuple[Barrier, Repo], tmp_path: Path) -> None:
    gate, repo = barrier
    task = tmp_path / ".specd/tasks/t"
    task.mkdir(parents=True)
    (task / ".pipeline-state.json").write_text(TOKEN)  # written through redaction; never holds one
    (task / "NOTES.md").write_text(TOKEN)  # an agent's own document: read like any file
    held = _look(gate, repo, ".specd/tasks/t/.pipeline-state.json", ".specd/tasks/t/NOTES.md")
    assert list(held) == [".specd/tasks/t/NOTES.md"]


def test_env_values_that_are_settings_hold_nothing(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("NODE_ENV=development\nREGION=us-east-1-prod-cluster-01\nAPI_KEY=short\n"
                                   "WEBHOOK_URL=https://hooks.example.com/abc\nSIGNING=4f9a8c7e6d5b4a39\n")
    known = known_secrets(tmp_path, environ={})
    assert known == {"https://hooks.example.com/abc": "the value of WEBHOOK_URL in .env",
                     "4f9a8c7e6d5b4a39": "the value of SIGNING in .env"}
    assert not looks_generated("my-app-production-2024")
    assert looks_generated("3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b")
