"""Bad input: generated pipeline files and task files never end in a traceback.

Every input is written into a real project, then `specd pipeline validate`,
`specd status` and `specd continue` run in-process through `specd.cli.main`,
the real error boundary: an exception escaping it fails the test. Every exit
is one of the documented codes; an exit 2 names the file that is wrong. The
classes issue 12 found (unicode-digit versions, 4,300+ digit numbers, nesting
thousands deep, 1,100 chained references, over-long step names, YAML 1.1
booleans and duplicate keys, bad `phases`, huge phase numbers, wrongly typed
run state fields) are always among the inputs, then hypothesis adds more.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torture_size import size

from specd.state.model import Current, RunState

RunCli = Callable[..., Any]  # tests/conftest.py's run_cli fixture: (*args) -> Result(code, out, err)

SCRIPT = "entries:\n  - sticky: true\n    summary: ok\n"
BASE = {"schema_version": "1.0", "mode": "auto",
        "pipelines": {"main": [{"name": "a", "workflow": "w.md"},
                               {"name": "p", "pipeline": "phase", "foreach": "phases"}],
                      "phase": [{"name": "x", "workflow": "w.md"}]}}
CODES = {0, 1, 2, 3}
LOOP = b"\0a link to itself\0"  # Project.check makes a link that leads back to itself there
COUNTS: dict[str, int] = {}


class Project:
    """A pristine project with task `t`, restored before every input."""

    def __init__(self, root: Path, run_cli: RunCli) -> None:
        self.root, self.run_cli = root, run_cli
        self.template = root.parent / "template"
        specd = self.template / ".specd"
        (specd / "workflows").mkdir(parents=True)
        (specd / "workflows" / "w.md").write_text("# w\n\nDo it.\n", encoding="utf-8")
        (specd / "pipeline.json").write_text(json.dumps(BASE), encoding="utf-8")
        (root.parent / "script.yaml").write_text(SCRIPT, encoding="utf-8")
        assert run_cli("--project", str(self.template), "new", "t").code == 0
        (specd / "tasks" / "t" / "ROADMAP.md").write_text("### Phase 1: One\n", encoding="utf-8")

    def reset(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.template, self.root)

    def task_file(self, name: str) -> Path:
        return self.root / ".specd" / "tasks" / "t" / name

    def check(self, path: Path, data: bytes | None, *, expect_bad: bool = False) -> None:
        """Write ``data`` to ``path`` (None: a folder in its place; ``LOOP``: a link to itself), then run every
        command that reads it."""
        self.reset()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.name.startswith("pipeline.") and path.suffix != ".json":
            (self.root / ".specd" / "pipeline.json").unlink()
        if data is None:
            path.unlink(missing_ok=True)
            path.mkdir()
        elif data == LOOP:
            path.unlink(missing_ok=True)
            path.symlink_to(path.name)
        else:
            path.write_bytes(data)
        COUNTS[path.name] = COUNTS.get(path.name, 0) + 1
        codes = []
        for args in (("pipeline", "validate"), ("status",), ("status", "t", "--json"),
                     ("continue", "t", "--auto", "--agent", f"scripted:{self.root.parent / 'script.yaml'}")):
            result = self.run_cli("--project", str(self.root), *args)
            assert result.code in CODES, (args, result.code, result.err[-2000:])
            assert "Traceback" not in result.err + result.out
            if result.code == 2:
                assert path.name in result.err, (args, result.err[-2000:])
                assert "fix:" in result.err, (args, result.err[-2000:])
            codes.append(result.code)
        if expect_bad:
            assert 2 in codes, f"{path.name}: a known-bad input was accepted everywhere"


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    print(f"\nbad-input torture: {sum(COUNTS.values())} inputs tried: "  # noqa: T201
          + ", ".join(f"{name} {count}" for name, count in sorted(COUNTS.items())))


@pytest.fixture
def project(tmp_path: Path, run_cli: RunCli) -> Project:
    return Project(tmp_path / "proj", run_cli)


def pipeline_with(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(BASE))
    data.update(changes)
    return data


def chain(length: int) -> dict[str, Any]:
    pipelines: dict[str, Any] = {"main": [{"name": "s0", "pipeline": "p1"}]}
    for i in range(1, length):
        pipelines[f"p{i}"] = [{"name": f"s{i}", "pipeline": f"p{i + 1}"}]
    pipelines[f"p{length}"] = [{"name": "last", "workflow": "w.md"}]
    return {"schema_version": "1.0", "pipelines": pipelines}


def state_with(edit: Callable[[dict[str, Any]], None]) -> bytes:
    state = RunState(task="t")
    state.current = Current("a", "main", None, 1, attempt=1)
    data = state.to_dict()
    data["version"] = 1
    data["cursor"] = [{"pipeline": "main", "index": 0, "phase": None, "visits": {}}]  # v1: positions were indexes
    data["history"] = [{"step": "a", "pipeline": "main", "phase": None, "kind": "step", "outcome": "done"}]
    edit(data)
    return json.dumps(data).encode()


KNOWN_BAD_PIPELINES: dict[str, str] = {
    "unicode digit version": json.dumps(pipeline_with(schema_version="²")),
    "arabic-indic digit version": json.dumps(pipeline_with(schema_version="٣.0")),
    "4,301 digit number": json.dumps(pipeline_with(mode=1)).replace("1", "9" * 4301, 1),
    "json nested 5,000 deep": '{"schema_version": "1.0", "x": ' + "[" * 5000 + "]" * 5000 + "}",
    "300 character step name": json.dumps(pipeline_with(pipelines={"main": [{"name": "s" * 300,
                                                                             "workflow": "w.md"}]})),
    "1,100 chained references to a missing pipeline": json.dumps(chain(1100)).replace('"p1100"', '"nope"', 1),
}
KNOWN_BAD_YAML: dict[str, str] = {
    "duplicate key": 'schema_version: "1.0"\npipelines:\n  main:\n    - {name: a, workflow: w.md}\n'
                     "pipelines: {}\n",
    "yaml nested 5,000 deep": 'schema_version: "1.0"\nx: ' + "[" * 5000 + "]" * 5000 + "\n",
    "yaml block nested 3,000 deep": 'schema_version: "1.0"\n' + "".join("  " * i + "k:\n" for i in range(3000)),
    "4,301 digit yaml number": 'schema_version: "1.0"\nmode: ' + "9" * 4301 + "\n",
    "billion laughs": 'schema_version: "1.0"\na: &a [x, x, x, x, x, x, x, x, x]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)),
    "self-referring alias": 'schema_version: "1.0"\nx: &a [*a]\npipelines: {main: [{name: a, workflow: w.md}]}\n',
}
GOOD_YAML = {  # YAML 1.1 would turn these into booleans; YAML 1.2 keeps them strings
    "step named off/no/yes": 'schema_version: "1.0"\nmode: auto\npipelines:\n  main:\n'
                             "    - {name: off, workflow: w.md}\n    - {name: no, workflow: w.md}\n"
                             "    - {name: yes, workflow: w.md}\n",
    "key on:": 'schema_version: "1.0"\nmode: auto\non: push\npipelines:\n  main:\n    - {name: a, workflow: w.md}\n',
}
KNOWN_BAD_TASK: dict[str, tuple[str, bytes]] = {
    "phases null": ("config.json", json.dumps({"name": "t", "stage": "discussion", "phases": None}).encode()),
    "phases empty string": ("config.json", json.dumps({"name": "t", "phases": ""}).encode()),
    "phases empty list": ("config.json", json.dumps({"name": "t", "phases": []}).encode()),
    "config nested deep": ("config.json", b"[" * 5000 + b"]" * 5000),
    "config huge number": ("config.json", b'{"phases": ' + b"7" * 5000 + b"}"),
    "phase number 5,000 digits": ("ROADMAP.md", b"### Phase " + b"9" * 5000 + b": Big\n"),
    "STATE.md binary": ("STATE.md", bytes(range(256))),
    "events.jsonl garbage": ("events.jsonl", b'{"kind": "x"\n[1,2]\n' + b"[" * 5000 + b"\n\xff\xfe\n"),
    "state cursor index string": (".pipeline-state.json", state_with(lambda d: d["cursor"][0].update(index="1"))),
    "state cursor index negative": (".pipeline-state.json", state_with(lambda d: d["cursor"][0].update(index=-1))),
    "state history row not object": (".pipeline-state.json", state_with(lambda d: d.update(history=[3]))),
    "state history row without step": (".pipeline-state.json",
                                       state_with(lambda d: d["history"][0].pop("step"))),
    "state without cursor": (".pipeline-state.json", state_with(lambda d: d.pop("cursor"))),
    "state nested deep": (".pipeline-state.json", b"[" * 5000 + b"]" * 5000),
}
MUST_FAIL_TASK = {k for k in KNOWN_BAD_TASK if k.startswith("state") or k.startswith("config ")}
KNOWN_BAD_PROJECT: dict[str, tuple[str, bytes | None]] = {  # .specd/ itself; None: a folder where a file goes
    "project config nested deep": ("config.json", b"[" * 5000 + b"]" * 5000),
    "task's home nested deep": ("homes/t.json", b"[" * 5000 + b"]" * 5000),
    "task's home a folder": ("homes/t.json", None),
    "rules not UTF-8": (".gitignore", b"\xff\xfe*.x\n"),  # git's rules are bytes: kept as they are
    "run state a folder": ("tasks/t/.pipeline-state.json", None),
    "events a folder": ("tasks/t/events.jsonl", None),
    "history a folder": ("tasks/t/.pipeline-state.history.jsonl", None),
    "run lock a folder": ("tasks/t/.run.lock", None),
    "homes lock a link to itself": ("homes/.homes.lock", LOOP),
}


@pytest.mark.parametrize("case", sorted(KNOWN_BAD_PIPELINES))
def test_known_bad_pipeline_json(project: Project, case: str) -> None:
    project.check(project.root / ".specd" / "pipeline.json", KNOWN_BAD_PIPELINES[case].encode(), expect_bad=True)


@pytest.mark.parametrize("case", sorted(KNOWN_BAD_YAML))
def test_known_bad_pipeline_yaml(project: Project, case: str) -> None:
    project.check(project.root / ".specd" / "pipeline.yaml", KNOWN_BAD_YAML[case].encode(), expect_bad=True)


@pytest.mark.parametrize("case", sorted(GOOD_YAML))
def test_yaml_12_words_stay_strings(project: Project, run_cli: RunCli, case: str) -> None:
    project.check(project.root / ".specd" / "pipeline.yaml", GOOD_YAML[case].encode())
    result = run_cli("--project", str(project.root), "pipeline", "validate")
    if case == "key on:":  # a key specd does not know is an error, and it is named as the string it is
        assert result.code == 2, result.err
        assert "on: unknown key 'on'" in result.err
        return
    assert result.code == 0, result.err


def test_a_long_chain_of_references_loads(project: Project, run_cli: RunCli) -> None:
    project.reset()
    (project.root / ".specd" / "pipeline.json").write_text(json.dumps(chain(1100)), encoding="utf-8")
    for args in (("pipeline", "validate"), ("pipeline", "show"), ("pipeline", "show", "--json"), ("hooks",)):
        result = run_cli("--project", str(project.root), *args)
        assert result.code == 0, (args, result.err)


@pytest.mark.parametrize("case", sorted(KNOWN_BAD_TASK))
def test_known_bad_task_files(project: Project, case: str) -> None:
    name, data = KNOWN_BAD_TASK[case]
    project.check(project.task_file(name), data, expect_bad=case in MUST_FAIL_TASK)


@pytest.mark.parametrize("case", sorted(KNOWN_BAD_PROJECT))
def test_known_bad_project_files(project: Project, case: str) -> None:
    """Before, each but the rules ended in a traceback (RecursionError, IsADirectoryError), and the rules in one at
    every `specd continue` (UnicodeDecodeError)."""
    name, data = KNOWN_BAD_PROJECT[case]
    project.check(project.root / ".specd" / name, data, expect_bad=case != "rules not UTF-8")


# --- generated inputs ----------------------------------------------------------------------------------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                    max_leaves=12)


def mutate(data: Any, path: list[int], value: Any) -> Any:
    """Replace the node reached by following ``path`` (indices mod the children) with ``value``."""
    if not path or not isinstance(data, (dict, list)) or not data:
        return value
    keys = list(data) if isinstance(data, dict) else list(range(len(data)))
    key = keys[path[0] % len(keys)]
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[key] = mutate(data[key], path[1:], value)  # type: ignore[index]
    return copy


MUTATED_PIPELINE = st.builds(mutate, st.just(BASE), st.lists(st.integers(0, 20), max_size=6), JSON)
EXAMPLES = size(40, 500)
TEXT_FILES = ("ROADMAP.md", "STATE.md", "events.jsonl")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=MUTATED_PIPELINE, as_yaml=st.booleans())
def test_generated_pipeline_files(project: Project, data: Any, as_yaml: bool) -> None:
    if as_yaml:
        project.check(project.root / ".specd" / "pipeline.yaml", yaml.safe_dump(data).encode())
    else:
        project.check(project.root / ".specd" / "pipeline.json", json.dumps(data).encode())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(JSON, st.builds(mutate, st.just({"name": "t", "stage": "discussion", "phases": {
    "total": 0, "completed": 0, "current": None, "current_status": None}}), st.lists(st.integers(0, 9), max_size=3),
    JSON)))
def test_generated_config_json(project: Project, data: Any) -> None:
    project.check(project.task_file("config.json"), json.dumps(data).encode())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.builds(mutate, st.just(json.loads(state_with(lambda d: None))), st.lists(st.integers(0, 30),
                                                                                      max_size=4), JSON))
def test_generated_run_state(project: Project, data: Any) -> None:
    project.check(project.task_file(".pipeline-state.json"), json.dumps(data).encode())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TEXT_FILES), lines=st.lists(st.one_of(
    st.text(max_size=40),
    st.builds(lambda n, t: f"### Phase {n}: {t}", st.from_regex(r"[0-9]{1,8}(\.[0-9]{1,3})?", fullmatch=True),
              st.text(max_size=10)),
    st.builds(json.dumps, JSON)), max_size=8))
def test_generated_task_text_files(project: Project, name: str, lines: list[str]) -> None:
    project.check(project.task_file(name), "\n".join(lines).encode("utf-8", errors="replace"))
