"""Find workflow and hook files, the way DESIGN.md promises users.

- A bare name is looked up in the project's folder first, then the built-ins.
- A name with ``/`` is relative to the project root.
- A step's hook: explicit spec → ``.specd/hooks/pre-<step>.md`` → none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from specd.errors import ConfigError, closest
from specd.pipeline.model import HookSpec, PipelineConfig, Step
from specd.resources import builtin_dir
from specd.tasks.project import Project

Origin = Literal["project", "builtin"]
HookSource = Literal["explicit", "convention", "global"]
HookPoint = Literal["pre-step", "pre", "post", "post-step"]


@dataclass(frozen=True)
class Resolved:
    path: Path
    origin: Origin


@dataclass(frozen=True)
class ResolvedHook:
    point: HookPoint
    spec: HookSpec
    source: HookSource
    path: Path | None  # the .md for workflow hooks; None for run: hooks

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.spec.label


def candidates(name: str, project: Project, *, hook: bool = False) -> list[tuple[Path, Origin]]:
    if "/" in name or "\\" in name:
        return [(project.root / name, "project")]
    local = [project.hooks_dir, project.workflows_dir] if hook else [project.workflows_dir]
    shipped = [builtin_dir("hooks"), builtin_dir("workflows")] if hook else [builtin_dir("workflows")]
    return [(d / name, "project") for d in local] + [(d / name, "builtin") for d in shipped]


def resolve_workflow(name: str, project: Project, *, where: str, hook: bool = False) -> Resolved:
    tried = candidates(name, project, hook=hook)
    for path, origin in tried:
        try:
            if path.is_file():
                return Resolved(path.resolve(), origin)
        except (OSError, ValueError) as exc:  # a name too long for the file system, or holding a NUL byte
            shown = name if len(name) <= 60 else f"{name[:40]}…({len(name)} characters)"
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ConfigError(f"{where}: workflow name {shown!r} cannot name a file ({why})",
                              fix=f"use a shorter file name at {where} (at most 255 bytes per path part)") from None
    listing = "\n".join(f"    - {path}" for path, _ in tried)
    raise ConfigError(
        f"{where}: workflow file {name!r} not found; tried:\n{listing}",
        fix=f"create one of those files, or correct the name at {where}",
    )


class Workflows:
    """``resolve_workflow`` for one run, asked again only when it could answer otherwise: a step asks for its
    workflow five or six times (its gate, its stage, its request, its outcomes), and each answer was a look at
    every candidate, a ``resolve`` and a ``stat``. An answer stands while each folder searched up to the one
    that held the file is the same folder, unchanged (a workflow added to `.specd/workflows/` shadows a built-in
    one, and a link retargeted changes its folder) and the file is still there."""

    def __init__(self, project: Project) -> None:
        self.project = project
        # name -> (the folders searched, each one's marks then, the answer)
        self._known: dict[str, tuple[list[Path], tuple[tuple[int, int] | None, ...], Resolved]] = {}

    def resolve(self, name: str, *, where: str) -> Resolved:
        known = self._known.get(name)
        if known is not None and _marks(known[0]) == known[1] and known[2].path.is_file():
            return known[2]
        found = resolve_workflow(name, self.project, where=where)
        tried = candidates(name, self.project)
        searched = next((i + 1 for i, (path, _) in enumerate(tried) if path.is_file()), len(tried))
        folders = [path.parent for path, _ in tried[:searched]]
        self._known[name] = (folders, _marks(folders), found)
        return found


def _marks(folders: list[Path]) -> tuple[tuple[int, int] | None, ...]:
    """Each folder's inode and change time (a link retargeted is another inode); None where there is none."""
    marks: list[tuple[int, int] | None] = []
    for folder in folders:
        try:
            st = folder.stat()
        except OSError:
            marks.append(None)
        else:
            marks.append((st.st_ino, st.st_mtime_ns))
    return tuple(marks)


def step_hook(config: PipelineConfig, pipeline: str, step: Step, point: Literal["pre", "post"],
              project: Project) -> ResolvedHook | None:
    """The hook that runs at ``point`` of ``step``; disabled steps run no hooks."""
    if not step.enabled:
        return None
    if point in step.hooks:
        spec = step.hooks[point]
        if spec is None:  # written as null: explicitly no hook, not even by convention
            return None
        return _resolved(point, spec, "explicit", project, f"{config.source}: {step.where}.hooks.{point}")
    conventional = project.hooks_dir / f"{point}-{step.name}.md"
    if conventional.is_file():
        return ResolvedHook(point, HookSpec(workflow=str(conventional)), "convention", conventional.resolve())
    return None


def global_hook(config: PipelineConfig, point: Literal["pre-step", "post-step"],
                project: Project) -> ResolvedHook | None:
    spec = config.hooks.get(point)
    if spec is None:
        return None
    return _resolved(point, spec, "global", project, f"{config.source}: hooks.{point}")


def _resolved(point: HookPoint, spec: HookSpec, source: HookSource, project: Project,
              where: str) -> ResolvedHook:
    if spec.run:
        return ResolvedHook(point, spec, source, None)
    assert spec.workflow is not None  # the schema guarantees one of run/workflow
    try:
        path = resolve_workflow(spec.workflow, project, where=where, hook=True).path
    except ConfigError:
        # Loading checked every hook file; this one went away since. Running it fails the hook (an optional
        # one only warns), rather than ending the run as bad input with the step left IN_PROGRESS.
        path = candidates(spec.workflow, project, hook=True)[0][0]
    return ResolvedHook(point, spec, source, path)


def pipeline_warnings(config: PipelineConfig, project: Project) -> list[str]:
    """What a command that checks the pipeline says before it goes on: the file's own warnings (kept with the
    loaded file), then its project's hook files that run nowhere (looked for anew: the folder changes apart)."""
    return [*config.warnings, *stray_hooks(config, project)]


def stray_hooks(config: PipelineConfig, project: Project) -> list[str]:
    """A warning for each ``.specd/hooks/pre-<name>.md`` or ``post-<name>.md`` that runs nowhere: no step is
    named ``<name>`` (a typo, or a step renamed since) and no hook setting names the file."""
    try:
        files = sorted(p for p in project.hooks_dir.iterdir() if p.suffix == ".md" and p.is_file()
                       and p.name.startswith(("pre-", "post-")))
    except OSError:
        return []
    steps = sorted({step.name for steps in config.pipelines.values() for step in steps})
    specs = [*config.hooks.values(), *(s for steps in config.pipelines.values() for st in steps
                                      for s in st.hooks.values())]
    named = {Path(spec.workflow).name for spec in specs if spec is not None and spec.workflow}
    said = []
    for path in files:
        point, _, name = path.stem.partition("-")
        if name not in steps and path.name not in named:
            close = closest(name, steps)
            said.append(f"{project.rel(path)} never runs: no step is named {name!r}"
                        + (f"; did you mean {point}-{close[0]}.md?" if close else "")
                        + f" (a {point}-<step>.md hook runs {'before' if point == 'pre' else 'after'} the step it "
                          "names; rename it, or name it in the pipeline file's hooks)")
    return said
