"""The first line of every run: which jail is in force, and every agent or hook the pipeline let out of it.

A jail turned off (`sandbox: false`) or missing (no usable bubblewrap) is said
as a warning, so it shows even with --quiet; a jail in force is a notice.
"""

from __future__ import annotations

from pathlib import Path

from specd.errors import ConfigError
from specd.pipeline.model import HookSpec, PipelineConfig
from specd.system import findfiles, jail, pastfiles
from specd.system.envfiles import tracked_secrets


def first_line(config: PipelineConfig) -> tuple[str, str]:
    """(event kind, message) for the run's first line; ConfigError when the pipeline requires bubblewrap
    and this machine cannot give it."""
    line = jail.mode_line()
    if config.agent.get("sandbox") == "bubblewrap" and not jail.active():
        raise ConfigError(f"{config.source}: agent.sandbox is 'bubblewrap' but {line.removeprefix('jail: none — ')}",
                          fix="install the bubblewrap package (apt install bubblewrap), or set agent.sandbox to "
                              "'auto' to run with the fallback")
    off = opted_out(config)
    if off:
        line += "; jail OFF (sandbox: false) for " + ", ".join(off)
    if config.agent.get("network") is True:
        line += "; the agent's NETWORK is the host's, open (agent.network: true)"
    elif isinstance(config.agent.get("network"), list) and config.agent["network"]:
        line += "; network: the agent's API and " + ", ".join(map(str, config.agent["network"]))
    open_net = config.agent.get("network") is True
    return ("notice" if jail.active() and not off and not open_net else "warning"), line


def opted_out(config: PipelineConfig) -> list[str]:
    """Who runs outside the jail because the pipeline said so, as a reader finds them in the file."""
    found = [] if jail.enabled(config.agent.get("sandbox")) else ["the agent (agent.sandbox)"]
    hooks: list[tuple[str, HookSpec | None]] = [(f"hooks.{point}", spec) for point, spec in config.hooks.items()]
    for name, steps in config.pipelines.items():
        hooks += [(f"pipelines.{name}.{step.name}.hooks.{point}", spec)
                  for step in steps for point, spec in step.hooks.items()]
    found += [f"{where} (run: {spec.run})" for where, spec in hooks
              if spec is not None and spec.run and not spec.sandbox]
    return found


def committed_secrets(root: Path) -> list[str]:
    """A warning for each secret file git tracks (found by the run's search as it started): the jail shows it
    empty, but its committed content is in `.git`, which every agent may read; then those of ``past_secrets``."""
    tracked = [path for path in tracked_secrets(root) if path.is_relative_to(root)]
    return [f"{path.relative_to(root)} is tracked by git: the jail shows it empty, but what was committed of it "
            f"is in .git, which the agent can read (git show HEAD:{path.relative_to(root)}); take it out of git "
            f"(git rm --cached, and out of the history) and change the values it held"
            for path in tracked] + past_secrets(root)


def past_secrets(root: Path) -> list[str]:
    """A warning for each secret file git's history holds and git no longer tracks (``specd.system.pastfiles``),
    named by its newest version."""
    top = findfiles.top(root)
    tracked = {path.relative_to(top).as_posix() for path in tracked_secrets(root) if top and path.is_relative_to(top)}
    past = pastfiles.search(root)
    newest = {version.path: version.commit[:12] for version in reversed(past.versions)}
    said = [f"{path} is in git's history (last committed in {commit}) though git no longer tracks it: the agent "
            f"can read what it held (git show {commit}:{path}); change those values, and take the file out of the "
            f"history (git filter-repo)" for path, commit in sorted(newest.items()) if path not in tracked]
    if not past.complete:
        said.append(f"the history is too long to search for secret files in {pastfiles.LIMIT:g} s: only its newest "
                    "commits were searched, and the agent can read all of it")
    return said
