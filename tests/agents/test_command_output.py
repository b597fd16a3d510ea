"""The anthropic agent's commands: a command that prints 100 MB costs specd no more memory than a page."""

from __future__ import annotations

import re
import tracemalloc
from typing import Any

import fake_anthropic as fake

SCRIPT = "import sys; w = sys.stdout.write; w('START-' + 'x' * 5); [w('y' * 1000000) for _ in range(100)]; w('-END')"


def test_a_huge_output_reaches_the_model_as_head_and_tail_with_memory_flat(project: Any, server: Any,
                                                                           make_agent: Any) -> None:
    server.push(fake.complete(), fake.message(fake.tool("run_command", command=f'python -c "{SCRIPT}"')),
                fake.complete())
    agent = make_agent(sandbox="allowlist")
    agent.run(project.request(step="warm-up", conversation="warm-up"))  # the client library's imports: 40 MB
    tracemalloc.start()
    try:
        agent.run(project.request())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    output = fake.tool_results(server.bodies[2])[0]["content"]
    assert output.startswith("exit code 0\nSTART-xxxxxyyy")
    assert output.endswith("yyy-END")
    cut = re.search(r"\[\.\.\. ([\d,]+) bytes of output cut \.\.\.\]", output)
    assert cut is not None
    assert int(cut.group(1).replace(",", "")) > 99_900_000  # the true count, not truncate()'s
    assert len(output) < 25_000
    assert peak < 20_000_000  # the 100 MB passed through in pieces
