"""`pipeline validate` reads every workflow a run could reach, so bad frontmatter fails now, not hours in."""

from __future__ import annotations

from pathlib import Path

from specd.errors import ConfigError
from specd.pipeline.model import PipelineConfig
from specd.pipeline.resolve import global_hook, resolve_workflow, step_hook
from specd.pipeline.typed import workflow_problem
from specd.pipeline.workflow import load_workflow
from specd.tasks.project import Project


def check_workflow_files(config: PipelineConfig, project: Project) -> int:
    """Parse each step's and hook's workflow (frontmatter included); raise one error naming every bad file."""
    paths: dict[Path, None] = {}
    for name, steps in config.pipelines.items():
        for step in steps:
            if step.workflow:
                paths[resolve_workflow(step.workflow, project, where=f"{config.source}: {step.where}").path] = None
                for point in ("pre", "post"):
                    hook = step_hook(config, name, step, point, project)
                    if hook is not None and hook.path is not None:
                        paths[hook.path] = None
    for point in ("pre-step", "post-step"):
        hook = global_hook(config, point, project)  # type: ignore[arg-type]
        if hook is not None and hook.path is not None:
            paths[hook.path] = None
    problems: list[ConfigError] = []
    names = {step.name for steps in config.pipelines.values() for step in steps}
    for path in paths:
        try:
            why = workflow_problem(load_workflow(path), names)  # its `output:` and its {{ steps... }} (issue 30)
        except ConfigError as exc:
            problems.append(exc)
            continue
        if why:
            problems.append(ConfigError(why))
    if len(problems) == 1:
        raise problems[0]  # its message and its fix, apart (a --json error carries the fix in its own field)
    if problems:
        raise ConfigError("\n".join(str(problem) for problem in problems),
                          fix="mend each file named above; `specd pipeline validate` reads them all again")
    return len(paths)
