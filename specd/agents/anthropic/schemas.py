"""The tool definitions sent to the model.

They are identical for every step and every task: the step's allowed outcomes
are named in the first user turn and checked when ``complete_step`` runs, not
put in an ``enum`` here. That keeps tools + system byte-identical across
steps, so the prompt cache serves them to every step of a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_PATH = {"type": "string", "description": "Path relative to the project root."}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": required},
    }


TOOLS: list[dict[str, Any]] = [
    _tool("read_file", "Read a text file. Long files are cut; use offset to page on.",
          {"path": _PATH, "offset": {"type": "integer", "description": "First line (1-based).", "minimum": 1},
           "limit": {"type": "integer", "description": "Number of lines.", "minimum": 1}}, ["path"]),
    _tool("write_file", "Create or overwrite a text file with the given content.",
          {"path": _PATH, "content": {"type": "string"}}, ["path", "content"]),
    _tool("edit_file", "Replace one exact, unique occurrence of old_string with new_string.",
          {"path": _PATH, "old_string": {"type": "string"}, "new_string": {"type": "string"}},
          ["path", "old_string", "new_string"]),
    _tool("list_files", "List files matching a glob (e.g. 'src/**/*.py'), relative to a directory.",
          {"pattern": {"type": "string"}, "path": {**_PATH, "description": "Directory to search (default: root)."}},
          ["pattern"]),
    _tool("search_files", "Search file contents with a regular expression; returns path:line: text.",
          {"regex": {"type": "string"}, "glob": {"type": "string", "description": "Files to search (default **/*)."},
           "path": {**_PATH, "description": "Directory to search (default: root)."}}, ["regex"]),
    _tool("run_command", "Run a shell command in the project root. Output is truncated; there is a timeout.",
          {"command": {"type": "string"}}, ["command"]),
    _tool("ask_user", "Ask the human a question and wait for the answer.",
          {"question": {"type": "string"}}, ["question"]),
    _tool("complete_step",
          "Finish the step. Call exactly once, when the workflow's work is done or cannot be done.",
          {"outcome": {"type": "string", "description": "One of the outcomes allowed for this step."},
           "summary": {"type": "string", "description": "What was done, in two or three sentences."},
           "verdict": {"type": "string", "description": "Review steps: the verdict, e.g. PASS or REVISE."},
           "issues": {"type": "array", "description": "Review steps: the issues found.",
                      "items": {"type": "object", "required": ["severity", "description"],
                                "properties": {"severity": {"type": "string",
                                                            "enum": ["critical", "major", "minor", "nit"]},
                                               "description": {"type": "string"},
                                               "file": {"type": "string"}}}}},
          ["outcome", "summary"]),
]


def tools_for(output: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """TOOLS, with ``complete_step`` requiring the step's typed output (issue 30) when it declares one.

    Only such a step's tool list differs from the shared one, so only its prompt-cache prefix starts anew;
    putting the schema in the tool lets the API hold the model to it, and specd checks it again after."""
    if output is None:
        return TOOLS
    *others, complete = TOOLS
    schema = complete["input_schema"]
    described = {**output, "description": output.get("description") or "The step's output, as its schema asks."}
    properties = {**schema["properties"], "output": described}
    return [*others, {**complete, "input_schema": {**schema, "properties": properties,
                                                   "required": [*schema["required"], "output"]}}]
