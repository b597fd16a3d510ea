"""Which files the jail shows empty and the anthropic tools refuse: secret files at any depth, found cheaply.

The same project is checked as a git repository (git lists the project's own files, the walk only what git
ignores: node_modules, a collapsed dot-folder) and as a plain folder (the walk alone).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specd.system import envfiles, findfiles, jail

PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
PEM_CERT = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG\n-----END CERTIFICATE-----\n"
HIDDEN = [".devcontainer/.env", ".env", ".npmrc", "a/b/c/d/e/f/.env.local", "apps/web/.env", "deploy/server.pem",
          "home/.ssh/id_ed25519", "node_modules/pkg/lib/deep/.env", "ops/.git-credentials", "ops/.netrc",
          "ops/.pypirc", "ops/id_deploy", "ops/tls.key", "sub/.env", "vendored/config/secrets.yml",
          "ops/tls.p12", "ops/client.pfx", "gcp/credentials.json", "gcp/credentials-prod.json", "db/.pgpass"]
SHOWN = [".env.example", "apps/web/.env.sample", "deploy/cert.pem", "home/.ssh/id_ed25519.pub", "src/id_map.py",
         "ops/plain.key", "tools/.env/bin/python", "README.md", "package.json", "docs/credentials.md"]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(root: Path, *, git: bool) -> Path:
    files = {name: f"SECRET_VALUE_{i}=v{i}-abcdefgh\n" for i, name in enumerate(HIDDEN)}
    files |= {name: "TEMPLATE=put-yours-here\n" for name in SHOWN}
    files |= {"deploy/server.pem": PEM_KEY + PEM_CERT, "ops/id_deploy": PEM_KEY, "ops/tls.key": PEM_KEY,
              "deploy/cert.pem": PEM_CERT, "home/.ssh/id_ed25519": "anything: the name says it",
              "ops/plain.key": "a license key file, no PEM block\n", "src/id_map.py": "ID_MAP = {}\n"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    if git:
        _git(root, "init", "-q")
        (root / ".gitignore").write_text("node_modules/\n.env\n.devcontainer/\n")
        _git(root / "sub", "init", "-q")  # a nested repository of its own
        _git(root, "add", "-f", "apps/web/.env")  # a tracked one is hidden all the same
    return root


@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_secret_files_are_hidden_at_any_depth_and_nothing_else(tmp_path: Path, git: bool) -> None:
    if git and shutil.which("git") is None:
        pytest.fail("git is required for this test")
    root = _project(tmp_path, git=git)

    hidden = [p.relative_to(root).as_posix() for p in envfiles.hidden_from_agents(root)]

    assert hidden == sorted(HIDDEN)
    for name in HIDDEN:
        assert envfiles.is_hidden(root, root / name), name
    for name in SHOWN:
        assert not envfiles.is_hidden(root, root / name), name
    assert not envfiles.is_hidden(root / "apps", root / ".env")  # outside the root it is asked about
    # the tracked one, which the run names on its first lines (its committed content is in .git)
    assert envfiles.tracked_secrets(root) == ([root / "apps/web/.env"] if git else [])


def test_the_values_of_a_pgpass_and_a_cloud_key_file_are_known_secrets(tmp_path: Path) -> None:
    from specd.tasks.secret_values import values_in

    (tmp_path / ".pgpass").write_text("# host:port:db:user:password\ndb.internal:5432:app:app:pg-Secret-9931x\n")
    (tmp_path / "credentials.json").write_text(json.dumps({
        "type": "service_account", "client_id": "1234", "private_key": PEM_KEY,
        "installed": {"client_secret": "GOCSPX-abcdefghijklmnop"}}))
    assert values_in(tmp_path / ".pgpass") == [("password", "pg-Secret-9931x")]
    assert sorted(values_in(tmp_path / "credentials.json")) == [("client_secret", "GOCSPX-abcdefghijklmnop"),
                                                                  ("private_key", PEM_KEY)]


def test_env_files_lists_every_depth_with_the_templates(tmp_path: Path) -> None:
    root = _project(tmp_path, git=True)

    found = [p.relative_to(root).as_posix() for p in envfiles.env_files(root)]

    assert ".env.example" in found
    assert "node_modules/pkg/lib/deep/.env" in found
    assert "tools/.env/bin/python" not in found  # a virtualenv named .env is a folder


def test_a_walk_has_a_bound_and_is_kept_while_the_folder_is_unchanged(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path, git=True)
    for i in range(30):  # dependencies: more folders than the bound allows
        (root / "node_modules" / f"dep{i:02}" / "lib").mkdir(parents=True)
    monkeypatch.setattr(findfiles, "MAX_FOLDERS", 8)
    findfiles._walks.clear()

    first = envfiles.hidden_from_agents(root)

    assert root / ".devcontainer/.env" in first  # the project's own ignored folder is walked before node_modules
    assert root / "node_modules/pkg/lib/deep/.env" not in first  # past the bound
    monkeypatch.setattr(findfiles, "MAX_FOLDERS", 10_000)
    assert envfiles.hidden_from_agents(root) == first  # kept: node_modules itself did not change
    (root / "node_modules" / "new-dep").mkdir()
    assert root / "node_modules/pkg/lib/deep/.env" in envfiles.hidden_from_agents(root)


def test_without_dependencies_node_modules_is_left_out_and_the_rest_is_not(tmp_path: Path) -> None:
    root = _project(tmp_path, git=True)

    found = [p.relative_to(root).as_posix() for p in envfiles.secret_files(root, dependencies=False)]

    assert found == sorted(name for name in HIDDEN if not name.startswith("node_modules/"))


def test_a_runs_first_jail_takes_the_runs_own_search_and_every_later_one_searches_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path, git=True)
    found = envfiles.secret_files(root, hand_on=True)  # as the run's start makes it (load_project_secrets)
    assert root / ".env" in found
    (root / "late" / ".env").parent.mkdir()
    (root / "late" / ".env").write_text("LATE=value-abcdefgh\n")  # what only a new search can find
    assert envfiles.hidden_from_agents(root) == found  # the first jail: the run's list, no search of its own
    assert root / "late" / ".env" in envfiles.hidden_from_agents(root)  # taken once: the next one searches
    # another tree, or a list older than HANDOFF, is never taken
    envfiles.secret_files(root, hand_on=True)
    assert envfiles.hidden_from_agents(root / "late") == [root / "late" / ".env"]  # its own search
    (root / "later" / ".env").parent.mkdir()
    (root / "later" / ".env").write_text("LATER=value-abcdefgh\n")
    assert root / "later" / ".env" in envfiles.hidden_from_agents(root)
    envfiles.secret_files(root, hand_on=True)
    (root / "latest" / ".env").parent.mkdir()
    (root / "latest" / ".env").write_text("LATEST=value-abcdefgh\n")
    monkeypatch.setattr(envfiles, "HANDOFF", -1.0)
    assert root / "latest" / ".env" in envfiles.hidden_from_agents(root)
    # a search without hand_on (a status, a commit's check) hands nothing on
    envfiles.secret_files(root)
    (root / "last" / ".env").parent.mkdir()
    (root / "last" / ".env").write_text("LAST=value-abcdefgh\n")
    monkeypatch.setattr(envfiles, "HANDOFF", 2.0)
    assert root / "last" / ".env" in envfiles.hidden_from_agents(root)
    # anything launched outside the jail in between (a `sandbox: false` pre hook running `vercel env pull`) may
    # have made a secret file: the first jail then searches for itself
    envfiles.secret_files(root, hand_on=True)
    assert not jail.prepare("true", root, jail.Jail("project", enabled=False), {"PATH": "/usr/bin:/bin"}).jailed
    (root / "pulled" / ".env").parent.mkdir()
    (root / "pulled" / ".env").write_text("PULLED=value-abcdefgh\n")
    assert root / "pulled" / ".env" in envfiles.hidden_from_agents(root)


@pytest.mark.parametrize("git", [True, False], ids=["git", "no-git"])
def test_git_lists_a_repository_and_is_not_asked_about_a_folder_outside_any(tmp_path: Path, git: bool,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside any repository, git would only fail (two processes on every search, `specd status` included):
    it is not run, and the walk finds the same files. In a repository, git lists it, both ways at once."""
    real = shutil.which("git")
    assert real is not None, "git is required for this test"
    root = _project(tmp_path / "project", git=git)
    spy = tmp_path / "bin"
    spy.mkdir()
    (spy / "git").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "asked"}\nexec {real} "$@"\n')
    (spy / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{spy}:/usr/bin:/bin")
    monkeypatch.delenv("GIT_DIR", raising=False)
    findfiles._walks.clear()

    hidden = [p.relative_to(root).as_posix() for p in envfiles.hidden_from_agents(root)]

    assert hidden == sorted(HIDDEN)
    asked = (tmp_path / "asked").read_text().splitlines() if (tmp_path / "asked").exists() else []
    if git:
        assert sum("ls-files" in line for line in asked) >= 2  # the project's listing (and the nested one's)
    else:
        assert asked == []


def test_a_pgpass_password_with_an_escaped_colon_or_backslash_is_known_whole(tmp_path: Path) -> None:
    from specd.tasks.secret_values import values_in

    # .pgpass escapes ':' and '\' inside a field: the password is everything after the fourth unescaped colon
    (tmp_path / ".pgpass").write_text("h:5432:db:u:pa\\:ss\\\\word-77\n*:*:*:ops:plain-pass-88\n")
    assert values_in(tmp_path / ".pgpass") == [("password", "pa\\:ss\\\\word-77"), ("password", "pa:ss\\word-77"),
                                               ("password", "plain-pass-88")]


def _maybe_secret_by_every_rule(name: str) -> bool:
    """The rules of `maybe_secret`, each tested in turn: what its quick rejection must agree with."""
    if name.startswith(".env"):
        return not name.endswith(envfiles.TEMPLATES)
    return (name in envfiles.CREDENTIALS or name.endswith((".pem", ".key", ".p12", ".pfx"))
            or (name.startswith("credentials") and name.endswith(".json"))
            or (name.startswith("id_") and not name.endswith(".pub")))


_PIECES = sorted({*envfiles.CREDENTIALS, *envfiles.SSH_KEYS, ".env", "credentials", "id_", ".pem", ".key", ".p12",
                  ".pfx", ".pub", ".json", ".example", ".local", "a", ".", "_", "pe", "m", "ke", "y", "en", "v"})


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join) | st.text(max_size=12))
def test_the_quick_rejection_of_a_name_agrees_with_every_rule(name: str) -> None:
    assert envfiles.maybe_secret(name) == _maybe_secret_by_every_rule(name), name


def test_a_credentials_file_nested_past_jsons_depth_gives_no_values_and_no_error(tmp_path: Path) -> None:
    """The agent writes the project's files: a `credentials.json` of 200,000 brackets is read for secrets at
    commit time, and json's RecursionError (no ValueError) used to escape."""
    from specd.tasks.secret_values import values_in

    (tmp_path / "credentials.json").write_text("[" * 200_000 + "]" * 200_000)
    assert values_in(tmp_path / "credentials.json") == []
