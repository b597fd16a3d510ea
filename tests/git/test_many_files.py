"""Issue 28, item 7: a step that writes 200,000 files is committed whole, in bounded memory.

Path lists reach git on stdin, never as argv: 200,000 names as arguments fail with "Argument list too long",
and git's own matching of that many pathspecs takes quadratic time.

The project lies on a RAM file system when the machine has one with room: what is tested is how specd handles
the count, not the disk. On this CI's virtual disk, creating the files and git's objects took most of the
test's two and a half minutes, and kept one of the two test workers busy all that time.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from git_harness import GitProject, warnings

FILES = 200_000
LIMIT_KB = 200 * 1024  # the peak RSS of specd and of each process it waited for (git, the agent)
TIMEOUT = 900.0  # a safety net only: on 2 busy cores the run took 60-150 s, most of it creating files and git objects
# 200 folders of 10 of 100 files each; every file one line, so the test's cost is the file count
AGENT = """
import os, sys
sys.stdin.read()
for a in range(200):
    for b in range(10):
        folder = f"gen/d{a}/e{b}"
        os.makedirs(folder)
        for c in range(100):
            with open(f"{folder}/f{c}.txt", "w") as out:
                out.write(f"{a} {b} {c}\\n")
"""
ROOM = 4 << 30  # bytes of RAM file system the run may take: 400,000 files and objects of a page each, 1.6 GB


def _ram_folder() -> Path | None:
    """/dev/shm when it has room for the run and the machine the memory to back it, else None."""
    try:
        fs = os.statvfs("/dev/shm")
        with Path("/proc/meminfo").open(encoding="ascii") as info:
            free = next(int(line.split()[1]) * 1024 for line in info if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return None
    return Path("/dev/shm") if fs.f_bavail * fs.f_frsize >= ROOM and free >= 2 * ROOM else None


# specd as the only child of a fresh process, so RUSAGE_CHILDREN holds specd and what it waited for
MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:])
print(f"maxrss-kb {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
sys.exit(done.returncode)
"""


def test_a_step_writing_200000_files_commits_them_all_in_bounded_memory(tmp_path: Path) -> None:
    ram = _ram_folder()
    base = Path(tempfile.mkdtemp(prefix="specd-many-files-", dir=ram)) if ram else tmp_path
    gp = GitProject(base, steps=("execute",))
    agent = f"cmd:{shlex.quote(sys.executable)} -c {shlex.quote(AGENT)}"
    try:
        gp.new("big")
        started = time.monotonic()
        result = subprocess.run([sys.executable, "-c", MEASURE, *gp.argv("continue", "big", "--auto", "--agent",
                                                                        agent)],
                                cwd=gp.root, capture_output=True, text=True, env=gp.env, stdin=subprocess.DEVNULL,
                                timeout=TIMEOUT, check=False)
        took = time.monotonic() - started
        assert result.returncode == 0, result.stdout + result.stderr
        assert "COMPLETE" in result.stderr, result.stderr
        assert not [line for line in warnings(result) if "git" in line], warnings(result)
        subjects = gp.git("log", "--format=%H %s").splitlines()
        step = next(line.split()[0] for line in subjects if line.endswith("docs(big): execute complete"))
        in_commit = gp.git("diff-tree", "-r", "--no-commit-id", "--name-only", "-z", step, "--", "gen")
        assert in_commit.count("\0") == FILES
        assert gp.git("ls-files", "-z", "--", "gen").count("\0") == FILES
        assert gp.git("status", "--porcelain", "--", "gen") == ""
        peak = int(result.stdout.rsplit("maxrss-kb ", 1)[1])
        assert peak < LIMIT_KB, f"peak RSS {peak // 1024} MB (limit {LIMIT_KB // 1024} MB), run took {took:.1f} s"
        print(f"200,000 files: {took:.1f} s, peak RSS {peak // 1024} MB")
    finally:
        # 400,000 files with git's objects, 1.6 GB of blocks: pytest would keep them among its last tmp folders
        shutil.rmtree(gp.root if base == tmp_path else base, ignore_errors=True)
