"""The house's layers (DESIGN.md "Layers"): no import circles, and the engine reached only through its seam."""

from __future__ import annotations

import ast
from pathlib import Path

import specd

ROOT = Path(specd.__file__).parent


def _imports() -> dict[str, set[str]]:
    modules = {".".join(p.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__"): p
               for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("specd"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
        graph[name] = {dep for dep in found if dep in modules and dep != name}
    return graph


def test_no_module_imports_itself_through_a_circle() -> None:
    graph = _imports()
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            module = stack.pop()
            assert module != start, f"{start} imports itself through a circle"
            if module not in seen:
                seen.add(module)
                stack += graph.get(module, ())


def test_commands_reach_the_engine_only_through_the_seam() -> None:
    allowed = {"specd.engine.seam", "specd.engine.control", "specd.engine.answers", "specd.engine.waiting",
               "specd.engine.loop"}
    for name, deps in _imports().items():
        if name.startswith(("specd.commands", "specd.executors")):
            engine = {dep for dep in deps if dep.startswith("specd.engine")}
            assert engine <= allowed, f"{name} imports {sorted(engine - allowed)} of the engine"


def test_the_top_level_holds_only_the_base_and_the_entry_points() -> None:
    top = sorted(p.stem for p in ROOT.glob("*.py"))
    assert top == ["__init__", "__main__", "cli", "disguises", "doctor", "errors", "events", "human", "redact",
                   "redact_rules", "resources"]


def test_apprise_and_watchfiles_are_imported_lazily_in_their_one_edge_module() -> None:
    """Every command would pay their import cost otherwise: apprise only when a message is sent, watchfiles
    only for `logs -f`."""
    homes = {"apprise": "specd.notify.send", "watchfiles": "specd.tasks.follow"}
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                library = module.split(".")[0]
                if library in homes:
                    assert name == homes[library], f"{name} imports {library}; only {homes[library]} may"
                    assert id(node) not in top, f"{name} imports {library} at module level; import it where used"


def test_agents_do_not_import_the_engine() -> None:
    """The agents sit below the engine: what they need of specd's rules (the machinery's places) lives in a
    layer under both (specd/system/places.py)."""
    for name, deps in _imports().items():
        if name.startswith("specd.agents"):
            assert not {dep for dep in deps if dep.startswith("specd.engine")}, f"{name} imports the engine"


def test_the_mcp_sdk_is_imported_only_by_the_mcp_edge() -> None:
    """`mcp` is an extra: only specd/mcp_server/server.py imports it, and only `specd mcp` imports that module
    (where it is used), so every other command works, and starts as fast, without the SDK."""
    for path in ROOT.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                if module.split(".")[0] in ("mcp", "mcp_types"):
                    assert name == "specd.mcp_server.server", f"{name} imports {module}; only the MCP edge may"
                if module == "specd.mcp_server" and isinstance(node, ast.ImportFrom) and \
                        any(a.name == "server" for a in node.names):
                    assert name == "specd.commands.mcp", f"{name} imports the MCP edge"
                    assert id(node) not in top, f"{name} imports the MCP edge"


def test_tasks_do_not_import_the_engine() -> None:
    """Listing tasks reads their files and the pipeline, never the loop: what a listing shows of a plan, a wait or
    a round of checks comes from a layer under the engine (pipeline/cursor, state/waits, state/rounds), which the
    engine uses too, so there is one implementation of each."""
    for name, deps in _imports().items():
        if name.startswith("specd.tasks"):
            assert not {dep for dep in deps if dep.startswith("specd.engine")}, f"{name} imports the engine"
