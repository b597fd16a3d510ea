"""What prompt caching saves: the same scripted 8-step x 10-turn run, with caching on and off.

Runs the real anthropic agent and the real SDK against the fake Messages API
(tests/fake_anthropic.py), whose simulated cache bills the way the API does.
Prints cost-equivalent input tokens, uncached + 1.25 x cache writes + 0.1 x
cache reads, for both runs and their ratio. Goal: ratio <= 0.15.

    python bench/tokens.py
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specd.agents.base import AgentContext, AgentRequest  # noqa: E402
from specd.events import EventBus  # noqa: E402
from specd.human import NoHuman  # noqa: E402

STEPS = ["discuss", "research", "plan", "phase-plan", "execute", "review", "revise", "execute"]
TURNS = 10
GOAL = 0.15  # issue 12; see docs/benchmarks.md for where this run stands and why


def load_fake() -> Any:
    spec = importlib.util.spec_from_file_location("fake_anthropic", ROOT / "tests" / "fake_anthropic.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_anthropic"] = module
    spec.loader.exec_module(module)
    return module


def make_project(base: Path) -> tuple[Path, Path]:
    root = base / "proj"
    task_dir = root / ".specd" / "tasks" / "csv-export"
    task_dir.mkdir(parents=True)
    paragraph = "The exporter writes one row per record, quoting fields that contain commas or quotes. "
    for name, size in [("FEATURE.md", 12), ("CONTEXT.md", 20), ("DECISIONS.md", 10), ("ROADMAP.md", 16),
                       ("RESEARCH.md", 30), ("STATE.md", 6), ("CHANGELOG.md", 8)]:
        (task_dir / name).write_text(f"# {name[:-3].title()}\n\n" + paragraph * size + "\n")
    (root / "src").mkdir()
    (root / "src" / "export.py").write_text("def export(rows):\n    return '\\n'.join(map(str, rows))\n" * 20)
    return root, task_dir


def script(fake: Any) -> list[Any]:
    """Nine tool turns and a complete_step per step: reads, writes, a search and a command."""
    replies = []
    for step in STEPS:
        for turn in range(TURNS - 1):
            kind = turn % 4
            if kind == 0:
                call = fake.tool("read_file", path="src/export.py")
            elif kind == 1:
                call = fake.tool("write_file", path=f"notes/{step}-{turn}.md", content="Progress note. " * 40)
            elif kind == 2:
                call = fake.tool("search_files", regex="def export")
            else:
                call = fake.tool("run_command", command="python -c \"print('ok')\"")
            replies.append(fake.message(f"Turn {turn} of {step}: next I check the exporter.", call))
        replies.append(fake.complete("done", f"{step} finished"))
    return replies


def run(fake: Any, caching: bool) -> dict[str, int]:
    from specd.agents.anthropic import AnthropicAgent

    with tempfile.TemporaryDirectory() as tmp, fake.FakeAnthropic(script(fake)) as server:
        root, task_dir = make_project(Path(tmp))
        settings = {"base_url": server.url, "prompt_caching": caching, "allow_commands": ["python -c*"]}
        agent = AnthropicAgent(settings, AgentContext(NoHuman(), EventBus()))
        for index, step in enumerate(STEPS):
            workflow = ROOT / "workflows" / f"{step}.md"
            prompt = workflow.read_text(encoding="utf-8") if workflow.is_file() else f"# {step}\n"
            agent.run(AgentRequest(
                task="csv-export", task_dir=task_dir, project_root=root, step=step, pipeline="main",
                phase="01" if index >= 3 else None, kind="step", workflow=workflow, prompt=prompt,
                outcomes=("done",), mode="auto", run_id="bench", conversation=f"{step}-{index}",
                max_turns=TURNS,
            ))
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        totals = {k: sum(u[k] for u in server.usages) for k in keys}
        totals["calls"] = len(server.usages)
        return totals


def equivalent(totals: dict[str, int]) -> float:
    return (totals["input_tokens"] + 1.25 * totals["cache_creation_input_tokens"]
            + 0.1 * totals["cache_read_input_tokens"])


def main() -> int:
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench-not-a-key"  # the fake server only; never a real call
    os.environ.pop("ANTHROPIC_BASE_URL", None)
    fake = load_fake()
    off, on = run(fake, caching=False), run(fake, caching=True)
    print(f"{len(STEPS)} steps x {TURNS} turns ({on['calls']} calls per run)")
    for label, totals in (("caching off", off), ("caching on", on)):
        print(f"  {label:12} uncached {totals['input_tokens']:>8}  writes {totals['cache_creation_input_tokens']:>7}"
              f"  reads {totals['cache_read_input_tokens']:>8}  cost-equivalent {equivalent(totals):>10.0f}")
    ratio = equivalent(on) / equivalent(off)
    print(f"ratio (on / off): {ratio:.3f}  (goal <= {GOAL:.2f}: {'met' if ratio <= GOAL else 'MISSED'})")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
