"""The machine's credential files that everyone may read show no key inside a jail.

A team's machine often holds a key in a file in /etc or /usr that every user may read: a private index's password
in pip.conf, a registry's token in the global npmrc, an `export NPM_TOKEN=` in /etc/profile.d, a netrc. Each test
points specd's list of such files at files of its own (shown in the jail through SPECD_JAIL_READ, as /etc is) and
reads them from inside a real jail, then checks the values are masked and held outside it too.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from inventory_harness import known_outside, needs_bwrap

from specd.system import binds, etcfiles, jail

INDEX, NPM, EXPORTED, NETRC = ("idx" + "Pw7781aaQQzz", "reg" + "Token0099XYZabc", "exp" + "Orted4455kkLL",
                               "net" + "rcPass1234ZZ")
SECRETS = (INDEX, NPM, EXPORTED, NETRC)


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    needs_bwrap()
    etc = tmp_path / "machine" / "etc"
    (etc / "profile.d").mkdir(parents=True)
    (etc / "pip.conf").write_text(f"[global]\nindex-url = https://ci:{INDEX}@pypi.example.com/simple\n"
                                  "cert = /etc/ssl/certs/ca-certificates.crt\n")
    (etc / "npmrc").write_text(f"registry=https://npm.example.com/\n//npm.example.com/:_authToken={NPM}\n")
    (etc / "profile.d" / "tokens.sh").write_text(f'export NPM_TOKEN="{EXPORTED}"\nexport EDITOR=vi\n')
    (etc / "profile.d" / "plain.sh").write_text("export PAGER=less\n")
    (etc / "netrc").write_text(f"machine git.example.com login ci password {NETRC}\n")
    monkeypatch.setattr(etcfiles, "SETTINGS", (str(etc / "pip.conf"), str(etc / "npmrc"), str(etc / "profile.d/*")))
    monkeypatch.setattr(etcfiles, "PURE", (str(etc / "netrc"),))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    binds._machine_keys.cache_clear()
    yield etc
    binds._machine_keys.cache_clear()


def test_a_jail_shows_the_machines_settings_without_their_keys(machine: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "SPECD_JAIL_READ": str(machine.parent)}
    launch = jail.prepare(f"cat {machine}/pip.conf {machine}/npmrc {machine}/profile.d/*.sh; "
                          f"echo netrc: $(wc -c < {machine}/netrc)", project, jail.Jail("agent"), env)
    assert launch.jailed
    seen = subprocess.run(launch.args, cwd=project, env=launch.env, capture_output=True, text=True).stdout

    assert [secret for secret in SECRETS if secret in seen] == []
    for kept in ("https://pypi.example.com/simple", "cert = /etc/ssl/certs/ca-certificates.crt",
                 "registry=https://npm.example.com/", "//npm.example.com/:_authToken=", "export EDITOR=vi",
                 "export PAGER=less", "netrc: 0"):
        assert kept in seen, seen
    assert NPM in (machine / "npmrc").read_text()  # the machine's file as it was


def test_the_machines_keys_are_masked_and_held_outside_the_jail(machine: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    shown, held = known_outside(project, SECRETS, {"copied.txt": f"token {NPM}\n"})
    assert shown == []
    assert held == {"copied.txt": f"the value of //npm.example.com/:_authToken in {machine / 'npmrc'}"}


def test_a_file_without_a_key_is_shown_as_it_is() -> None:
    for text in ("[global]\ncert = /etc/ssl/certs/ca.crt\n", "registry=https://npm.example.com/\n",
                 "[http]\n\tsslVerify = true\n", "export PATH=/opt/tool/bin:$PATH\n"):
        assert etcfiles.scrubbed(text) == text


NVM_TOKEN, VENV_PW, PREFIX_TOKEN = ("nvm" + "Global5566ppRR", "venv" + "Index8822mmNN", "pre" + "fixToken3311ssTT")
MAVEN_PW = "mvn" + "Deploy7744qqWW"
TOOL_SECRETS = (NVM_TOKEN, VENV_PW, PREFIX_TOKEN, MAVEN_PW)


@pytest.fixture
def tool_installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """Tools installed as people do, each with its own settings file holding a key: a node under nvm in HOME
    (`npm config set -g` writes the prefix's etc/npmrc), a venv made with `pip config --site`, a node prefix on
    PATH outside HOME."""
    needs_bwrap()
    home = tmp_path / "home"
    nvm = home / ".nvm" / "versions" / "node" / "v22.1.0"
    venv = tmp_path / "venv"
    prefix = tmp_path / "opt-node"
    for folder in (nvm / "etc", nvm / "bin", venv / "bin", prefix / "etc", prefix / "bin"):
        folder.mkdir(parents=True)
    maven = home / ".sdkman" / "candidates" / "maven" / "current" / "conf"
    maven.mkdir(parents=True)
    files = {"nvm": nvm / "etc" / "npmrc", "venv": venv / "pip.conf", "prefix": prefix / "etc" / "npmrc",
             "maven": maven / "settings.xml"}
    files["maven"].write_text(f"<settings><!-- <password>an-example</password> --><servers><server><id>corp</id>"
                              f"<username>ci</username><password>{MAVEN_PW}</password></server></servers>"
                              "</settings>\n")
    files["nvm"].write_text(f"prefix={nvm}\n//registry.npmjs.org/:_authToken={NVM_TOKEN}\n")
    files["venv"].write_text(f"[global]\nindex-url = https://dev:{VENV_PW}@pypi.corp.example/simple\n")
    files["prefix"].write_text(f"//npm.corp.example/:_authToken={PREFIX_TOKEN}\nfund=false\n")
    path = f"{nvm / 'bin'}:{venv / 'bin'}:{prefix / 'bin'}:/usr/bin:/bin"
    for name, value in (("HOME", str(home)), ("PATH", path), ("VIRTUAL_ENV", str(venv))):
        monkeypatch.setenv(name, value)
    binds._tool_keys.cache_clear()
    yield files
    binds._tool_keys.cache_clear()


def test_a_jail_shows_a_tools_own_settings_without_their_keys(tool_installs: dict[str, Path], tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {name: os.environ[name] for name in ("HOME", "PATH", "VIRTUAL_ENV")}
    launch = jail.prepare(" ; ".join(f"cat {path}" for path in tool_installs.values()), project, jail.Jail("agent"),
                          env)
    assert launch.jailed
    seen = subprocess.run(launch.args, cwd=project, env=launch.env, capture_output=True, text=True).stdout

    assert [secret for secret in TOOL_SECRETS if secret in seen] == []
    for kept in ("//registry.npmjs.org/:_authToken=", "https://pypi.corp.example/simple", "fund=false",
                 "<username>ci</username>"):
        assert kept in seen, seen
    assert PREFIX_TOKEN in tool_installs["prefix"].read_text()  # the tool's file as it was


def test_a_tools_own_keys_are_masked_and_held_outside_the_jail(tool_installs: dict[str, Path], tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    shown, held = known_outside(project, TOOL_SECRETS, {"copied.txt": f"pw {VENV_PW}\n", "pom.txt": f"{MAVEN_PW}\n"})
    assert shown == []
    assert held == {"copied.txt": f"the value of index-url in {tool_installs['venv']}",
                    "pom.txt": "the value of password in ~/.sdkman/candidates/maven/current/conf/settings.xml"}


def test_a_bin_folder_of_another_project_on_path_is_shown_alone(tmp_path: Path) -> None:
    """A PATH entry `X/bin` shows the install `X` it belongs to, unless `X` is a project (a repository, a folder
    with `.env` files): then its own keys and sources stay out, and its `bin` still runs."""
    needs_bwrap()
    other = tmp_path / "other-project"
    (other / "bin").mkdir(parents=True)
    (other / ".git").mkdir()
    (other / ".env").write_text("SECRET_KEY=" + "other" + "ProjectKey5511\n")
    (other / "config").mkdir()
    (other / "config" / "master.key").write_text("ab" * 16)
    (other / "bin" / "tool").write_text("#!/bin/sh\necho tool-ran\n")
    (other / "bin" / "tool").chmod(0o755)
    project = tmp_path / "proj"
    project.mkdir()
    env = {"PATH": f"{other / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    launch = jail.prepare(f"tool; cat {other}/.env {other}/config/master.key", project, jail.Jail("agent"), env,
                          model=True)  # the model's command: the files it names are not shown for it
    done = subprocess.run(launch.args, cwd=project, env=launch.env, capture_output=True, text=True)
    assert "tool-ran" in done.stdout
    assert "ProjectKey5511" not in done.stdout
    assert "ab" * 16 not in done.stdout
