"""A submodule's git folder is the agent's to point anywhere: nothing it names runs outside the jail.

A submodule's checkout holds ``sub/.git``, a file naming its git folder (or, in older clones, the folder itself).
Both lie in the tree the agent writes. An agent that points it at a git folder of its own, whose config defines
a clean filter, and marks the submodule's files with that filter (``sub/.gitattributes``), gets its filter run
by any `git status` of the project that looks into the submodule and finds a file whose times changed: by
specd's own status after each step, outside the jail, and by the user's next `git status` (or their editor's).

specd's git calls never look inside a submodule (``specd.system.gitsafe``), and the jail shows the git folder
pointers of the project's submodules read-only.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from git_harness import GitProject
from test_machinery import AGENT, attack, unjail

from specd.system import jail, submodules

POINT_ELSEWHERE = '''
import shutil
shutil.copytree(".git/modules/sub", "evilgit")
config = Path("evilgit/config")
config.write_text(config.read_text().replace("../../../sub", "../sub")
                  + '[filter "x"]\\n\\tclean = touch {marker} && cat\\n')
Path("sub/.gitattributes").write_text("* filter=x\\n")
Path("sub/.git").write_text("gitdir: ../evilgit\\n")
st = os.stat("sub/lib.txt")
os.utime("sub/lib.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # same size, new time: git must look
'''


@pytest.fixture
def with_submodule(gp: GitProject, tmp_path: Path) -> GitProject:
    lib = tmp_path / "lib"
    lib.mkdir()
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "lib"]):
        if args[0] == "add":
            (lib / "lib.txt").write_text("the library\n", encoding="utf-8")
        subprocess.run(["git", *args], cwd=lib, env=gp.env | {"GIT_AUTHOR_NAME": "L", "GIT_AUTHOR_EMAIL": "l@e",
                                                              "GIT_COMMITTER_NAME": "L", "GIT_COMMITTER_EMAIL": "l@e"},
                       check=True, capture_output=True)
    gp.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    gp.git("commit", "-q", "-m", "a submodule")
    assert (gp.root / "sub/.git").read_text(encoding="utf-8").startswith("gitdir:")
    gp.agent.write_text(AGENT, encoding="utf-8")
    gp.new("a")
    gp.new("b")
    return gp


def test_a_filter_in_a_submodule_git_folder_the_agent_made_never_runs_from_specds_git(
        with_submodule: GitProject, tmp_path: Path) -> None:
    gp = with_submodule
    unjail(gp)  # the write succeeds: what stands is that specd's git never looks inside the submodule
    marker = tmp_path / "filter-ran"
    attack(gp, POINT_ELSEWHERE.format(marker=marker))

    held = gp.run("a")

    # the pointer the step rewrote holds the run (git/nested.py): the user's own `git status` would run the filter
    assert held.returncode == 3, held.stdout + held.stderr
    assert "sub/.git (in sub/, a git repository of its own" in " ".join(held.stdout.split() + held.stderr.split())
    assert not marker.exists()
    assert gp.specd("approve", "a").returncode == 0  # a person looked, and lets it be
    first = gp.run("a")
    assert first.returncode == 0, first.stdout + first.stderr
    assert (gp.root / "sub/.git").read_text(encoding="utf-8") == "gitdir: ../evilgit\n"  # the attack took
    attack(gp, "")
    second = gp.run("b")
    assert second.returncode == 0, second.stdout + second.stderr
    assert not marker.exists(), "specd's git ran a clean filter the agent planted in a submodule"
    doctor = gp.specd("doctor")
    assert "Traceback" not in doctor.stdout + doctor.stderr
    assert not marker.exists(), "`specd doctor`'s git status ran the planted filter"
    # The attack is real: the user's own `git status` runs it (which the jail's read-only pointer prevents).
    subprocess.run(["git", "status", "--porcelain"], cwd=gp.root, env=gp.env, check=True, capture_output=True)
    assert marker.exists()


ATTACKS = {  # name -> (the attack, the folder whose files must be as they were)
    "pointer rewritten": (POINT_ELSEWHERE, "sub"),
    "folder moved aside and made anew": ("os.rename('sub', 'sub-moved'); os.mkdir('sub'); "
                                         "Path('sub/.git').write_text('gitdir: ../evilgit')", "sub"),
    "a folder above it moved aside": ("os.rename('libs', 'libs-moved'); os.makedirs('libs/inner'); "
                                      "Path('libs/inner/.git').write_text('gitdir: ../../evilgit')", "libs"),
    "pointer made where none was checked out": ("Path('idle/.git').write_text('gitdir: ../evilgit')", "idle"),
}


def pointers(folder: Path) -> dict[str, bytes]:
    """Every ``.git`` under ``folder``, where it is and what it says (a submodule's content is the agent's)."""
    return {str(path.relative_to(folder)): path.read_bytes() if path.is_file() else b"folder"
            for path in sorted(folder.rglob(".git"))}


@pytest.mark.skipif(not (jail.active() or os.environ.get("CI")), reason="bubblewrap is not available here")
@pytest.mark.parametrize("name", list(ATTACKS))
def test_in_the_jail_a_submodules_git_folder_pointer_stays_as_it_was(
        with_submodule: GitProject, tmp_path: Path, name: str) -> None:
    gp = with_submodule
    lib = tmp_path / "lib"
    gp.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "libs/inner")
    gp.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "idle")
    gp.git("commit", "-q", "-m", "two more")
    gp.git("submodule", "deinit", "-q", "-f", "idle")  # in the index, not checked out: an empty folder
    assert list((gp.root / "idle").iterdir()) == []
    marker = tmp_path / "filter-ran"
    code, folder = ATTACKS[name]
    before = pointers(gp.root / folder)
    attack(gp, code.format(marker=marker))

    result = gp.run("a")

    assert result.returncode == 1, result.stdout + result.stderr
    state = json.loads((gp.root / ".specd/tasks/a/.pipeline-state.json").read_text(encoding="utf-8"))
    assert "Read-only file system" in state["reason"] or "Device or resource busy" in state["reason"], state
    assert pointers(gp.root / folder) == before
    subprocess.run(["git", "status", "--porcelain"], cwd=gp.root, env=gp.env, check=True, capture_output=True)
    assert not marker.exists()


def test_the_guards_pin_each_folder_on_the_way_and_leave_specds_folders_and_links_alone(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "a/b/sub").mkdir(parents=True)
    (root / "a/b/sub/.git").write_text("gitdir: x", encoding="utf-8")
    (root / "idle").mkdir()
    (root / "elsewhere").mkdir()
    (root / "linked").symlink_to(root / "elsewhere")
    links = [root / "a/b/sub", root / "idle", root / "gone", root / "linked/sub", root / ".specd/x", tmp_path / "out"]

    args = submodules.guards(root, links)

    assert args == [
        "--bind", str(root / "a"), str(root / "a"), "--bind", str(root / "a/b"), str(root / "a/b"),
        "--bind", str(root / "a/b/sub"), str(root / "a/b/sub"),
        "--ro-bind", str(root / "a/b/sub/.git"), str(root / "a/b/sub/.git"),
        "--dir", str(root / "gone"), "--ro-bind", str(root / "gone"), str(root / "gone"),  # made, as git makes it
        "--ro-bind", str(root / "idle"), str(root / "idle"),  # not checked out: read-only whole
    ]  # nothing for a path through a link, in specd's own folders, or outside the project


def test_every_git_call_of_specds_turns_submodules_off_whatever_the_users_config(gp: GitProject) -> None:
    from specd.git.repo import git
    from specd.system.findfiles import GIT

    for key, value in (("submodule.recurse", "true"), ("fetch.recurseSubmodules", "yes"),
                       ("push.recurseSubmodules", "on-demand"), ("diff.ignoreSubmodules", "none")):
        gp.git("config", key, value)  # the user's own settings, which specd's calls must not follow
    said = {key: git(gp.root, "config", "--get", key).stdout.strip()
            for key in ("submodule.recurse", "fetch.recurseSubmodules", "push.recurseSubmodules",
                        "diff.ignoreSubmodules", "core.fsmonitor", "core.hooksPath")}
    assert said == {"submodule.recurse": "false", "fetch.recurseSubmodules": "false",
                    "push.recurseSubmodules": "no", "diff.ignoreSubmodules": "all", "core.fsmonitor": "false",
                    "core.hooksPath": "/dev/null"}
    listed = subprocess.run([*GIT, "config", "--get", "fetch.recurseSubmodules"], cwd=gp.root, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert listed == "false"  # the secret search's listings carry the same options


def test_a_secret_file_inside_a_submodule_is_found_from_the_index_not_from_gitmodules(
        with_submodule: GitProject) -> None:
    from specd.system import envfiles, findfiles

    gp = with_submodule
    (gp.root / "sub" / ".env").write_text("SUB_TOKEN=inside-the-submodule-1234\n", encoding="utf-8")
    (gp.root / ".gitmodules").unlink()  # an agent may edit it: the index still says where the submodule is
    findfiles._walks.clear()

    hidden = envfiles.secret_files(gp.root)

    assert gp.root / "sub" / ".env" in hidden
    assert findfiles.gitlinks(gp.root) == [gp.root / "sub"]
