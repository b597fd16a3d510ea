"""A repeated read-only call whose result the conversation already holds gets a pointer, not a copy."""

from __future__ import annotations

from typing import Any

import fake_anthropic as fake

from specd.agents.anthropic import repeats

BIG = "".join(f"def f{i}(rows):\n    return len(rows) + {i}\n" for i in range(20))


def _results(server: Any) -> list[str]:
    return [fake.tool_results(body)[0]["content"] for body in server.bodies[1:]]


def test_an_unchanged_reread_points_at_the_earlier_result(project: Any, server: Any, make_agent: Any) -> None:
    (project.root / "src" / "big.py").write_text(BIG)
    server.push(
        fake.message(fake.tool("read_file", path="src/big.py")),
        fake.message(fake.tool("search_files", regex="return len")),
        fake.message(fake.tool("read_file", path="src/big.py")),
        fake.message(fake.tool("search_files", regex="return len")),
        fake.complete(),
    )
    make_agent().run(project.request())
    first_read, first_search, reread, research = _results(server)
    assert first_read == BIG.rstrip("\n")
    assert first_search.count("src/big.py:") == 20
    first_id, search_id = (server.bodies[i]["messages"][-2]["content"][-1]["id"] for i in (1, 2))
    assert reread == repeats.POINTER.format(name="read_file", id=first_id)
    assert research == repeats.POINTER.format(name="search_files", id=search_id)


def test_a_changed_file_or_other_arguments_are_sent_in_full(project: Any, server: Any, make_agent: Any) -> None:
    (project.root / "src" / "big.py").write_text(BIG)
    server.push(
        fake.message(fake.tool("read_file", path="src/big.py")),
        fake.message(fake.tool("write_file", path="src/big.py", content=BIG + "# changed\n")),
        fake.message(fake.tool("read_file", path="src/big.py")),
        fake.message(fake.tool("read_file", path="src/big.py", offset=2)),
        fake.complete(),
    )
    make_agent().run(project.request())
    first, _wrote, after_write, with_offset = _results(server)
    assert after_write.endswith("# changed")
    assert after_write != first
    assert with_offset.startswith("    return len(rows) + 0")


def test_short_results_errors_and_other_tools_are_never_replaced() -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
    messages = [{"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]
    assert repeats.pointer(messages, "read_file", {"path": "a"}, "x") is None  # too short to be worth it
    long = "y" * 300
    messages[1]["content"][0] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": long, "is_error": True}
    assert repeats.pointer(messages, "read_file", {"path": "a"}, long) is None  # an error is no result
    messages[1]["content"][0] = {"type": "tool_result", "tool_use_id": "toolu_1", "content": long}
    assert repeats.pointer(messages, "read_file", {"path": "a"}, long) is not None
    assert repeats.pointer(messages, "run_command", {"path": "a"}, long) is None  # commands have effects
