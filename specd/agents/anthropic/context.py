"""The system prompt and the first user turn: the workflow plus the task's files.

The system prompt depends only on the project and task folder, never on the
step, so it is cached once and read by every step of a run. Everything that
varies per step sits in the first user turn, after the preloaded files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from specd.agents.anthropic.sandbox import Refused, Sandbox
from specd.agents.base import AgentRequest
from specd.state import atomic
from specd.system.ownfiles import read_regular

DEFAULT_CONTEXT = ("FEATURE.md", "CONTEXT.md", "DECISIONS.md", "STATE.md", "ROADMAP.md", "RESEARCH.md")
FILE_CAP = 16_000  # characters per preloaded file
TOTAL_CAP = 80_000  # characters of preloaded files per step
PROJECT_SUMMARY = Path(".specd") / "PROJECT.md"

SYSTEM = """\
You are the agent of specd, an interpreter of spec-driven development pipelines. You carry out one \
step of a task's pipeline: the user turn gives you the step's workflow, which you follow exactly.

Project root: {root}
Task folder: {task_dir} (relative: {task_rel})

Tools:
- Paths are relative to the project root. Paths outside it, .git/ and specd's run state \
(.pipeline-state.*, events.jsonl, transcripts/, locks) are refused.
- Prefer edit_file for small changes to existing files; write_file replaces the whole file.
- run_command runs in the project root with a timeout; commands not on the allowlist need the human's \
approval, and in auto mode they are refused.
- ask_user reaches a human only in interactive and semi-auto mode. When none is available, decide \
yourself and record the assumption in DECISIONS.md.

Finishing:
- End every step by calling complete_step exactly once, with an outcome from the step's allowed \
outcomes and a short summary. For review steps also give the verdict and the issues found.
- Do not stop without calling complete_step; a step that ends without it is treated as failed.
"""


def system_prompt(request: AgentRequest) -> str:
    task_rel = request.task_dir.resolve().relative_to(request.project_root.resolve()).as_posix()
    return SYSTEM.format(root=request.project_root, task_dir=request.task_dir, task_rel=task_rel)


def step_header(request: AgentRequest) -> str:
    outcomes = ", ".join(request.outcomes)
    phase = f", phase {request.phase}" if request.phase else ""
    return (
        f"Step: {request.step} ({request.kind}; pipeline {request.pipeline}{phase}; mode {request.mode})\n"
        f"Allowed outcomes for complete_step: {outcomes}\n"
    )


def first_turn(request: AgentRequest) -> list[dict[str, Any]]:
    """Content blocks of the first user message: [preloaded files, step + workflow]."""
    files = preload(request)
    return [
        {"type": "text", "text": files},
        {"type": "text", "text": f"{step_header(request)}\n<workflow>\n{request.prompt}\n</workflow>"},
    ]


def preload(request: AgentRequest) -> str:
    sandbox = Sandbox(request.project_root)
    names = list(request.context_files if request.context_files is not None else DEFAULT_CONTEXT)
    if request.phase:
        # Every step inside a phase works from that phase's plan, whatever its frontmatter lists.
        names.append(f"phases/phase-{request.phase}/PLAN.md")
    parts = [_project_summary(request)]
    budget = TOTAL_CAP
    for name in dict.fromkeys(names):
        try:
            # write=True: specd's machinery is refused here too; it is not task context.
            path = sandbox.resolve(str(request.task_dir / name), write=True)
            if not path.is_file() or budget <= 0:
                continue
            text = sandbox.read_text(str(path))
        except (Refused, OSError):
            continue
        body = _cap(text, min(FILE_CAP, budget), name)
        budget -= len(body)
        parts.append(f'<file path="{sandbox.relative(path)}">\n{body}\n</file>')
    return "<task_context>\n" + "\n".join(parts) + "\n</task_context>"


def _cap(text: str, limit: int, name: str) -> str:
    if len(text) <= limit:
        return text
    if "CHANGELOG" in name.upper() or name.upper().endswith("LOG.MD"):
        # Logs are appended newest last: keep the title and the newest entries whole.
        head, *entries = re.split(r"(?m)^(?=#{2,3} )", text)
        kept: list[str] = []
        for entry in reversed(entries):
            if sum(map(len, kept)) + len(entry) + len(head) > limit:
                break
            kept.insert(0, entry)
        dropped = len(entries) - len(kept)
        return f"{head}[{dropped} older entries omitted]\n\n" + "".join(kept)
    return text[:limit] + f"\n[cut at {limit} characters; read_file {name} for the rest]"


def _project_summary(request: AgentRequest) -> str:
    path = request.project_root / PROJECT_SUMMARY
    try:  # a regular file, never through a link and at most what a prompt keeps of it (the agent may make it)
        body = read_regular(path, FILE_CAP * 4, head=True).decode("utf-8", errors="replace")
    except OSError:
        body = ""
    if not body.strip():
        body = (
            "# Project\n\nBootstrapped by specd from the description of task "
            f"`{request.task}`; replace it with a real summary of the project.\n\n"
            f"{_task_description(request.task_dir)}\n"
        )
        try:
            if not path.is_symlink():  # yours, to a file of your own: left as it is, and not read
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic.write_text(path, body)
        except OSError:
            pass  # a read-only checkout still gets the summary in the prompt
    # One format for the call that bootstraps the file and every later one: any difference in these
    # bytes moves the cache breakpoint and re-bills the whole cached prefix.
    return f'<file path="{PROJECT_SUMMARY.as_posix()}">\n{_cap(body, FILE_CAP, "PROJECT.md")}\n</file>'


def _task_description(task_dir: Path) -> str:
    """From the task's config.json, else its FEATURE.md, never through a link: an agent of an earlier step may
    have made FEATURE.md a link to a file of the user's, and this text goes to the model."""
    try:
        data = json.loads(read_regular(task_dir / "config.json", FILE_CAP * 4))
        if isinstance(data, dict) and str(data.get("description", "")).strip():
            return str(data["description"]).strip()
    except (OSError, ValueError, RecursionError):
        pass
    try:
        text = read_regular(task_dir / "FEATURE.md", FILE_CAP * 4, head=True).decode("utf-8", errors="replace")
        return text.strip()[:2000]
    except OSError:
        return "(no description found)"
