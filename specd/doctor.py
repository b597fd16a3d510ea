"""`specd doctor`'s checks, as plain data: is this machine and project ready for a run?

Each check says ok, warn (a run works, but something is worse than it could
be) or FAIL (a run would stop). Secrets are reported by presence only. Every
agent backend is reported (specd/agents/needs.py finds what each needs); only
those the project uses (its pipeline, a step's own agent block, a task's
remembered agent) can fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from specd.agents.needs import survey
from specd.errors import SpecdError, listed, machine_error
from specd.pipeline import load_pipeline
from specd.system import jail
from specd.system.gitsafe import OPTIONS
from specd.tasks.project import Project

LOW_SPACE = 200 * 1024 * 1024  # bytes; below this a long run may fill the disk mid-step
VERSION_TIMEOUT = 30.0


@dataclass(frozen=True)
class Check:
    name: str
    level: str  # ok | warn | FAIL
    detail: str
    fix: str | None = None
    backend: dict[str, Any] | None = None  # an agent check's findings, as data (`--json`: `backends`)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "backend"}


def run_checks(project: Project) -> list[Check]:
    checks = _git(project.root)
    checks.append(_writable(project))
    checks.append(_sandbox())
    checks.extend(_environments(project.root))
    checks.append(_children())
    pipeline, backend, agent = _pipeline(project)
    checks.append(pipeline)
    used = _used(project, backend)
    for name, said in _step_used(project).items():
        used[name] = f"{used[name]}; {said}" if name in used else said
    checks.extend(_backends(used, agent))
    return checks


def _run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=VERSION_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _git(root: Path) -> list[Check]:
    version = _run("git", "--version")
    if version is None or version.returncode != 0:
        return [Check("git", "warn", "git is not installed; steps run but nothing is committed",
                      "install git to get one commit per step")]
    checks = [Check("git", "ok", version.stdout.strip())]
    inside = _run("git", "rev-parse", "--show-toplevel", cwd=root)
    if inside is None or inside.returncode != 0:
        checks.append(Check("git repository", "warn", f"{root} is not in a git repository; steps are not "
                            "committed", f"`git init` in {root} to get one commit per step"))
        return checks
    checks.append(Check("git repository", "ok", inside.stdout.strip()))
    identity = {key: (found.stdout.strip() if (found := _run("git", "config", key, cwd=root)) else "")
                for key in ("user.name", "user.email")}
    missing = [key for key, value in identity.items() if not value]
    if missing:
        checks.append(Check("git identity", "FAIL", f"no {' or '.join(missing)} configured, so specd cannot "
                            "commit as you", 'git config --global user.name "Your Name" && '
                            "git config --global user.email you@example.com"))
    else:
        checks.append(Check("git identity", "ok", f"{identity['user.name']} <{identity['user.email']}>"))
    checks.append(_dirty(root))
    return checks


def _dirty(root: Path) -> Check:
    status = _run("git", *OPTIONS, "status", "--porcelain", "-z", "--untracked-files=all",
                  "--ignore-submodules=all", cwd=root)  # runs nothing a submodule names
    if status is None or status.returncode != 0:
        return Check("work tree", "warn", "`git status` failed: " + (status.stderr.strip() if status else "timeout"))
    entries, paths = iter(status.stdout.split("\0")), []
    for entry in entries:
        if len(entry) > 3:
            paths.append(entry[3:])
            if "R" in entry[:2] or "C" in entry[:2]:
                next(entries, None)  # -z gives a rename's old path as an entry of its own
    outside = [p for p in paths if not p.startswith(".specd/")]
    if not outside:
        return Check("work tree", "ok", "no uncommitted changes outside .specd/")
    return Check("work tree", "warn", f"{len(outside)} uncommitted path(s) outside .specd/; specd leaves them "
                 "out of its commits", "see `git status`; commit or stash them to keep step commits clear")


def _writable(project: Project) -> Check:
    folder = project.specd_dir if project.specd_dir.is_dir() else project.root
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tmp-doctor-"):
            pass
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        error = machine_error(exc)
        return Check("disk", "FAIL", error.message if error else f"{folder}: {exc}",
                     error.fix if error else "make the folder writable")
    if free < LOW_SPACE:
        return Check("disk", "warn", f"{folder} is writable but only {free // 2**20} MiB are free",
                     f"free space on the disk holding {folder}")
    return Check("disk", "ok", f"{folder} is writable, {free // 2**30} GiB free")


def _sandbox() -> Check:
    # The same words as the first line of a run, so the two never disagree.
    if jail.active():
        return Check("sandbox", "ok", f"{jail.mode_line()}: agents, hooks and the agent's commands run jailed; "
                     "an agent CLI that signs in by API key, token or claude login gets a stand-in, the key stays "
                     "outside")
    return Check("sandbox", "warn", jail.mode_line(),
                 "install bubblewrap (`apt-get install bubblewrap`) and allow user namespaces, so agents, "
                 "hooks and the agent's commands run jailed")


def _environments(root: Path) -> list[Check]:
    """The tree's environments the jail shows read-only, when there is a jail and there are some."""
    from specd.system import environments

    top = root.resolve()
    found = [str(env.relative_to(top)) for env in environments.found(top)] if jail.active() else []
    if not found:
        return []
    mine = {str(env.relative_to(top)) for env in environments.yours(top, os.environ)}
    held, let = [name for name in found if name not in mine], [name for name in found if name in mine]
    said = [*([f"read-only in the jail: {', '.join(held)}"] if held else []),
            *([f"writable ({environments.WRITE_ENV}): {', '.join(let)}"] if let else [])]
    return [Check("environments", "ok", f"{'; '.join(said)} (git ignores them, and your own tools run their code; a "
                  f"step that installs needs {environments.WRITE_ENV}=<folder>, relative to the project)")]


def _children() -> Check:
    """How a killed specd's children are stopped: the jail, the Linux death signal and subreaper, or only
    psutil finding them by their mark on the next run (macOS), with what is missing."""
    from specd.system.children import protection

    level, missing = protection()
    if level == "jail":
        return Check("children", "ok", "jail: the PID namespace takes every descendant down with specd")
    detail = f"{level}: " + "; ".join(missing)
    if level == "subreaper+death signal":
        return Check("children", "ok", detail)
    return Check("children", "warn", detail, "run on Linux with bubblewrap for the full protection")


def _pipeline(project: Project) -> tuple[Check, str | None, Mapping[str, Any]]:
    """The pipeline's check, the backend its file names (None: it names none) and its agent block."""
    from specd.pipeline.workflows import check_workflow_files

    try:
        config = load_pipeline(project)
        # every step's and hook's workflow file, as `specd pipeline validate` reads them: a hook whose frontmatter
        # does not parse stops the first run that reaches it
        read = check_workflow_files(config, project)
    except SpecdError as exc:
        return Check("pipeline", "FAIL", exc.message, exc.fix), None, {}
    steps = sum(len(s) for s in config.pipelines.values())
    origin = "built-in" if config.builtin else "project"
    detail = f"{config.source} ({origin}): {len(config.pipelines)} pipelines, {steps} steps, {read} workflow files read"
    backend = str(config.agent["backend"]) if config.agent.get("backend") else None  # None: the file sets none
    from specd.pipeline.resolve import pipeline_warnings

    if said := pipeline_warnings(config, project):
        return Check("pipeline", "warn", f"{detail}; " + "; ".join(said)), backend, config.agent
    return Check("pipeline", "ok", detail), backend, config.agent


def _used(project: Project, pipeline_backend: str | None) -> dict[str, str]:
    """The backends this project runs on, each with who uses it: the pipeline file's agent block (a default
    that no file sets counts only while no task says otherwise), and the agent each started task remembers
    (`continue --agent` is remembered by the run, so a project run with `--agent 'cmd:...'` uses that)."""
    from specd.agents.factory import backend_of
    from specd.state.store import StateStore
    from specd.tasks.task import existing_task, list_tasks

    users: dict[str, list[str]] = {}
    for task in list_tasks(project):
        try:
            state = StateStore(existing_task(project, task), task).load(with_history=False)
        except SpecdError:
            continue  # a broken task is `specd status`'s to report
        name = backend_of(state.agent, {}) if state is not None and state.agent else None
        if name:
            users.setdefault(name, []).append(task)
    said = {name: "used by task" + ("s " if len(tasks) > 1 else " ") + listed(tasks) for name, tasks in users.items()}
    if pipeline_backend:
        said[pipeline_backend] = "the pipeline's agent" + (f"; {said[pipeline_backend]}"
                                                           if pipeline_backend in said else "")
    elif not said:  # nothing chosen anywhere: a new task would run on the default
        said["anthropic"] = "the default agent (the pipeline file sets no agent.backend)"
    return said


def _step_used(project: Project) -> dict[str, str]:
    """Backends that steps of the pipeline name for themselves (issue 30): each is used, whatever --agent says."""
    from specd.pipeline.step_agents import step_backends

    try:
        found = step_backends(load_pipeline(project))
    except SpecdError:
        return {}  # the pipeline check above reports it
    return {name: "used by step" + ("s " if len(steps) > 1 else " ") + ", ".join(steps)
            for name, steps in found.items()}


def _backends(used: dict[str, str], agent: Mapping[str, Any]) -> list[Check]:
    """Every backend and whether it works here; one that the project uses and cannot run here fails, one it
    does not use only warns (a `cmd:` project needs no API key)."""
    checks = []
    for found in survey(agent):
        name = found.backend
        ok, detail, fix = found.ready, found.detail, found.fix
        level = "ok" if ok else ("FAIL" if name in used else "warn")
        if name in used:
            detail += f"; {used[name]}"
            fix += " (or choose another: `--agent 'cmd:...'`, or agent.backend in the pipeline file)"
        elif not ok:
            detail += "; not used by this project"
        checks.append(Check(f"agent: {name}", level, detail, None if ok else fix,
                            {**found.as_dict(), "used_by": used.get(name)}))
    return checks
