"""A remote's token in `.git/config` is not what a jail shows: git's settings are, without the credentials.

`.git` is shown read-only to every jail, since agents run git; its config may hold a remote URL with a token (as
the password, or as the user name), an `http.extraheader` with a bearer token, or a credential in a `[url]`
section's name. Each test reads the config from inside a real jail, on a main tree and on a worktree, and checks
that git still works there; the last ones check the values are masked and held outside the jail too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from inventory_harness import known_outside, needs_bwrap

from specd.system import gitconfig, jail

PASSWORD, USER_TOKEN = "glpat-" + "Zx81kL2mQ9wE4rT6yU8i", "tok3nAsUser" + "987654321AbCd"
HEADER, SECTION = "bearer" + "Value0123456789xyz", "sectionPw" + "55aa66bb77cc"
CONFIG = {"remote.origin.url": f"https://bob:{PASSWORD}@gitlab.example.com/bob/app.git",
          "remote.mirror.url": f"https://{USER_TOKEN}@github.com/bob/app.git",
          "http.https://gitlab.example.com/.extraheader": f"Authorization: Bearer {HEADER}",
          f"url.https://ci:{SECTION}@git.example.org/.insteadOf": "https://git.example.org/"}
SECRETS = (PASSWORD, USER_TOKEN, HEADER, SECTION)


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    needs_bwrap()


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def repository(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for key, value in {"user.email": "t@example.com", "user.name": "T", **CONFIG}.items():
        git(root, "config", key, value)
    (root / "app.py").write_text("print('hi')\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    return root


def jailed(command: str, root: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent / "home")}
    launch = jail.prepare(command, root, jail.Jail("agent", backend="anthropic"), env)
    assert launch.jailed
    done = subprocess.run(launch.args, cwd=root, env=launch.env, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def inside(root: Path, config: Path) -> str:
    return jailed(f"cat {config}; git remote -v; git log --oneline; git status --short; "
                  "git config --get-all remote.origin.url", root)


def assert_shown_without_credentials(seen: str) -> None:
    assert not [secret for secret in SECRETS if secret in seen], seen
    assert "https://gitlab.example.com/bob/app.git" in seen  # the remotes, addressed as before
    assert "https://github.com/bob/app.git" in seen
    assert "initial" in seen  # git works inside
    assert "fatal" not in seen


def test_a_jail_shows_the_config_without_its_credentials(tmp_path: Path) -> None:
    root = repository(tmp_path / "proj")
    before = (root / ".git" / "config").read_bytes()

    assert_shown_without_credentials(inside(root, root / ".git" / "config"))
    assert (root / ".git" / "config").read_bytes() == before  # the user's config as it was, for their own git
    assert PASSWORD in git(root, "config", "--get", "remote.origin.url")


def test_a_worktree_jail_shows_the_common_config_without_its_credentials(tmp_path: Path) -> None:
    root = repository(tmp_path / "proj")
    worktree = tmp_path / "wt"
    git(root, "worktree", "add", "-q", "-b", "specd/t", str(worktree))

    assert_shown_without_credentials(inside(worktree, root / ".git" / "config"))


def test_a_submodules_config_is_shown_without_credentials_too(tmp_path: Path) -> None:
    root = repository(tmp_path / "proj")
    module = root / ".git" / "modules" / "libs" / "core"
    module.mkdir(parents=True)
    (module / "HEAD").write_text("ref: refs/heads/main\n")
    (module / "config").write_text(f'[remote "origin"]\n\turl = https://bob:{PASSWORD}@gitlab.example.com/core\n')

    seen = jailed(f"cat {module / 'config'}", root)
    assert PASSWORD not in seen
    assert "https://gitlab.example.com/core" in seen


def test_a_config_without_credentials_is_shown_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "remote.origin.url", "https://bob@bitbucket.org/team/app.git")  # a user name, no key
    assert gitconfig.binds(gitconfig.git_folders(root, None)) == [
        (root / ".git" / gitconfig.SHOWN / "config", root / ".git" / "config")]  # the user name is left out
    git(root, "config", "remote.origin.url", "git@github.com:team/app.git")
    assert gitconfig.binds(gitconfig.git_folders(root, None)) == []  # nothing to leave out: the file itself


def test_the_credentials_are_masked_and_held_outside_the_jail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              ) -> None:
    """The anthropic agent's file tools read `.git/config` outside any jail: what they read is redacted, and a
    file that copies a credential is not committed."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = repository(tmp_path / "proj")
    shown, held = known_outside(root, SECRETS, {"notes.txt": f"the header: {HEADER}\n",
                                                "bitbucket.txt": "clone as bob from bitbucket\n"})
    assert shown == []
    assert held == {"notes.txt": "a credential in .git/config"}
