"""`specd demo`: a sample project, a task, and the built-in pipeline played by the scripted agent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from specd import git
from specd.errors import UsageError
from specd.resources import builtin
from specd.tasks.project import Project
from specd.tasks.setup import init_project
from specd.tasks.task import create_task

TASK = "word-count"
DESCRIPTION = ("Add a word_count(text) function and a `python -m textstats` CLI that prints the word count "
               "of stdin.")
SCRIPT = Path(__file__).resolve().parent / "scenario.yaml"
SAMPLE = {
    "README.md": "# textstats\n\nTiny text statistics for the command line.\n",
    "textstats/__init__.py": '"""Tiny text statistics."""\n',
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    # Its own pytest settings, so pytest never picks up a parent folder's configuration.
    "pyproject.toml": '[project]\nname = "textstats"\nversion = "0.1.0"\n\n'
                      '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
}


def create_demo_project(folder: Path) -> Project:
    """Make the sample project (a git repo) with specd set up for the scripted agent."""
    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"{folder} already exists and is not empty",
                         fix="pass --dir with a new or empty folder, or remove that one")
    folder.mkdir(parents=True, exist_ok=True)
    project = Project(folder.resolve())
    for rel, text in SAMPLE.items():
        path = project.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    init_project(project)
    shutil.copyfile(SCRIPT, project.specd_dir / "demo-script.yaml")
    pipeline = json.loads(builtin("pipelines", "default.json").read_text(encoding="utf-8"))
    pipeline["description"] = "The built-in pipeline, played by specd's scripted agent for the demo."
    pipeline["agent"] = {"backend": "scripted", "script": ".specd/demo-script.yaml"}
    (project.specd_dir / "pipeline.json").write_text(json.dumps(pipeline, indent=2) + "\n", encoding="utf-8")
    create_task(project, TASK, DESCRIPTION)
    if shutil.which("git"):
        git.git(project.root, "init", "-q")
        git.git(project.root, "add", "-A")
        identity = [] if git.git(project.root, "config", "user.email").stdout.strip() else git.FALLBACK_IDENTITY
        git.git(project.root, *identity, "commit", "-q", "-m", "textstats: initial sample project")
    return project
