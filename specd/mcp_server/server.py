"""The MCP edge: the one module that imports the `mcp` SDK. It turns the tool table and the documents into an
MCP server on stdin and stdout.

stdout is the protocol, so nothing else may write there: the SDK's stdio transport points file descriptor 1 at
stderr while it serves (a stray print lands in the log, not in a message), and logs go to stderr. A tool's
expected failure (an unknown task, a task not waiting, a bad answer) is a tool error whose text says what was
wrong and the fix, and whose structured content is the error envelope a `--json` verb prints.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import jsonschema
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from specd import __version__
from specd.errors import SpecdError, UsageError, machine_error
from specd.mcp_server import documents
from specd.mcp_server.tools import BY_NAME, TOOLS
from specd.redact import redact, redact_obj
from specd.tasks.project import Project

log = logging.getLogger("specd.mcp")
INSTRUCTIONS = ("specd runs spec-driven development pipelines. list_tasks shows what waits for a human "
                "(WAITING_FOR_HUMAN); show_task says what a task waits for; approve, reject (with a note) or skip "
                "answers it, and the task goes on. Task documents are resources at specd://tasks/<task>/<path>.")


def build(project: Project) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=tool.name, description=tool.description, input_schema=tool.schema,
                       annotations=types.ToolAnnotations(read_only_hint=not tool.changes))
            for tool in TOOLS])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        task = args.get("task") if isinstance(args.get("task"), str) else None
        try:
            tool = BY_NAME.get(params.name)
            if tool is None:
                raise UsageError(f"no tool {params.name!r}", fix=f"use one of: {', '.join(BY_NAME)}")
            _check(tool.name, tool.schema, args)
            data, text = await anyio.to_thread.run_sync(tool.run, project, args)
        except SpecdError as exc:
            return failure(task, exc.exit_code, exc.message, exc.fix)
        except OSError as exc:  # the machine refused (disk full, permissions): said, never a traceback
            error = machine_error(exc)
            if error is None:
                raise
            return failure(task, error.exit_code, error.message, error.fix)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)

    async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        found = await anyio.to_thread.run_sync(documents.listing, project)
        return types.ListResourcesResult(resources=[
            types.Resource(name=f"{task}/{path}", uri=documents.uri(task, path), mime_type="text/markdown")
            for task, path in found])

    async def list_templates(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            name="task document", uri_template=documents.TEMPLATE, mime_type="text/markdown",
            description="A markdown document in a task's folder (FEATURE.md, ROADMAP.md, phases/...).")])

    async def read_resource(ctx: ServerRequestContext[Any],
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            text = await anyio.to_thread.run_sync(documents.read, project, str(params.uri))
        except SpecdError as exc:
            raise MCPError(types.INVALID_PARAMS, redact(f"{exc.message} (fix: {exc.fix})" if exc.fix
                                                        else exc.message)) from None
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=str(params.uri), mime_type="text/markdown", text=text)])

    return Server("specd", version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call_tool, on_list_resources=list_resources,
                  on_list_resource_templates=list_templates, on_read_resource=read_resource)


def failure(task: str | None, code: int, message: str, fix: str | None) -> types.CallToolResult:
    """A tool error: the message and its fix for the model to read, and the `--json` error envelope."""
    body = redact_obj({"ok": False, "task": task, "error": {"code": code, "message": message, "fix": fix}})
    text = redact(f"specd: {message}" + (f"\nfix: {fix}" if fix else ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=body,
                                is_error=True)


def _check(name: str, schema: dict[str, Any], args: dict[str, Any]) -> None:
    """The arguments against the tool's schema: a wrong one is bad input naming the field and what it wants."""
    problem = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(args))
    if problem is not None:
        where = ".".join(str(p) for p in problem.absolute_path) or "arguments"
        raise UsageError(f"{name}: {where}: {problem.message}", fix=f"call {name} with {_shape(schema)}")


def _shape(schema: dict[str, Any]) -> str:
    wanted = set(schema.get("required", ()))
    return ", ".join(f"{key} ({'required' if key in wanted else 'optional'}, {spec.get('type')})"
                     for key, spec in schema["properties"].items()) or "no arguments"


def serve(project: Project) -> None:
    """Serve MCP on stdin and stdout until the client closes stdin."""
    logging.basicConfig(level=logging.WARNING, format="specd mcp: %(levelname)s %(message)s")
    server = build(project)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
