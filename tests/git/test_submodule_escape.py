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

import subprocess
from pathlib import Path

import pytest
from git_harness import GitProject
from test_machinery import AGENT, attack, unjail

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
