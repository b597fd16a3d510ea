"""Issue 8: many `specd continue` processes on different tasks in one repository.

Each run's commits must exist, and hold only its own task folder and its own agent's files,
however the runs' steps interleave.
"""

from __future__ import annotations

from pathlib import Path

from git_harness import GitProject

TASKS = [f"task{n:02d}" for n in range(20)]
STEPS = ("discuss", "research", "plan", "execute", "review")


def test_twenty_parallel_runs_commit_each_their_own_work(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=STEPS)
    gp.rules({"*": {"write": {"src/{task}-{step}.txt": "{task} {step}\n"}, "report": True}})
    for task in TASKS:
        gp.new(task)

    procs = {task: gp.start(task) for task in TASKS}
    outputs = {task: proc.communicate(timeout=300) for task, proc in procs.items()}

    for task, (out, err) in outputs.items():
        assert procs[task].returncode == 0, f"{task}:\n{out}\n{err}"
        text = (out + err).lower()
        for word in ("warning", "error", "fatal", "index.lock"):
            assert word not in text, f"{task}:\n{out}\n{err}"
    commits = gp.commits()
    for task in TASKS:
        mine = [(subject, files) for subject, files in commits if subject.startswith(f"docs({task}):")]
        subjects = [subject for subject, _ in mine]
        expected = [f"docs({task}): {kind}" for step in STEPS for kind in (f"starting {step}", f"{step} complete")]
        assert subjects == [*expected, f"docs({task}): run state COMPLETE"]
        for subject, files in mine:
            own = [f for f in files if not f.startswith(f".specd/tasks/{task}/")]
            step = subject.split(": ", 1)[1].removesuffix(" complete")
            assert own == ([f"src/{task}-{step}.txt"] if subject.endswith(" complete") else []), (subject, files)
    assert len(commits) == len(TASKS) * (2 * len(STEPS) + 1)
    assert gp.git("status", "--porcelain") == ""


def test_parallel_runs_whose_agents_name_no_files_still_commit_everything_once(tmp_path: Path) -> None:
    gp = GitProject(tmp_path, steps=STEPS[:3])
    gp.rules({"*": {"write": {"src/{task}-{step}.txt": "{task} {step}\n"}}})  # no "files" in the result
    tasks = TASKS[:6]
    for task in tasks:
        gp.new(task)

    procs = {task: gp.start(task) for task in tasks}
    outputs = {task: proc.communicate(timeout=300) for task, proc in procs.items()}

    for task, (out, err) in outputs.items():
        assert procs[task].returncode == 0, f"{task}:\n{out}\n{err}"
        assert "warning" not in (out + err).lower(), f"{task}:\n{out}\n{err}"
    touched: list[str] = []
    for subject, files in gp.commits():
        task = subject.split("(", 1)[1].split(")", 1)[0]
        specd_files = [f for f in files if f.startswith(".specd/")]
        assert all(f.startswith(f".specd/tasks/{task}/") for f in specd_files), (subject, files)
        touched += [f for f in files if not f.startswith(".specd/")]
    # which run commits a file another run's step may also have written is a guess; that each is committed once is not
    assert sorted(touched) == sorted(f"src/{task}-{step}.txt" for task in tasks for step in STEPS[:3])
    assert gp.git("status", "--porcelain") == ""
