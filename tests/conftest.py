"""Shared fixtures: a project folder in tmp_path and an in-process `specd` runner.

The runner goes through ``specd.cli.main`` (the real error boundary), so exit
codes are the ones a user sees. An unexpected exception is not caught: it
fails the test, which is how in-process tests catch a would-be traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

# The brain tests' harness (a project plus a logging command agent) is shared by several suites.
sys.path.insert(0, str(Path(__file__).resolve().parent / "brain"))

from brain_harness import Harness  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal sends it reaches every child the tests start, even when the suite itself runs as a
    background job of a script (`pytest &`), which POSIX starts with SIGINT ignored: an ignored signal stays
    ignored in every child, so each test that stops a run or `specd ui` with SIGINT would wait out its timeout."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not hasattr(config, "workerinput"):  # once, before any worker starts
        _compiled()


def _compiled() -> None:
    """specd and the tests' helpers byte-compiled: the tests start specd, its zygote, workers and scripted agents as
    thousands of new processes, and with PYTHONDONTWRITEBYTECODE set each of them compiled every module it imports
    from source again (a third of the suite's CPU). compileall writes the caches whatever that variable says; a
    process only reads them. Up to date, this is a look at each file's time."""
    import compileall

    root = Path(__file__).resolve().parent.parent
    for folder in (root / "specd", root / "tests"):
        compileall.compile_dir(folder, quiet=2, workers=0)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The build folders specd kept for the tests' trees under the real HOME (``specd.system.buildcaches``: where a
    jailed Python compiles, one a tree) go with the session: thousands of trees made hundreds of megabytes there,
    which nothing of the suite reads again. Each process (a worker, or the run without workers) forgets those of
    the trees under its own base folder."""
    import os

    from specd.system import buildcaches

    cache = buildcaches._cache(os.environ)
    made = getattr(getattr(session.config, "_tmp_path_factory", None), "_basetemp", None)  # None: no tmp_path made
    if cache is None or made is None:
        return
    base = f"{made}/"
    for _, kind, _, _ in buildcaches.KINDS:
        for mark in (cache / "specd" / kind).glob("*.tree"):
            try:
                if mark.read_text(encoding="utf-8").startswith(base):
                    buildcaches._remove(str(mark.with_suffix("")))
            except OSError:
                continue


@pytest.fixture(autouse=True)
def _own_path() -> Iterator[None]:
    """specd guards PATH for its own programs in the process that runs it (``specd.system.ownpath``): an in-process
    call in one test, in the repository say, must not leave the next test a PATH without the repository's folders
    (its venv, the agent CLIs in .ci/node)."""
    import os

    from specd.system import ownpath

    before = {name: os.environ.get(name) for name in ("PATH", ownpath.STASH)}
    roots = list(ownpath._roots)
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    ownpath._roots[:] = roots


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


RunCli = Callable[..., Result]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """``run_cli("pipeline", "show", "--json", cwd=path)`` → Result(code, out, err)."""
    from specd.cli import main

    def run(*args: str, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()  # drop anything printed before this call
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        else:  # main always exits; reaching here is itself a bug worth seeing
            code = -1
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


class ProjectDir:
    """A project folder holding ``.specd/``, with helpers to write files into it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.specd = root / ".specd"
        self.specd.mkdir(parents=True, exist_ok=True)

    def pipeline(self, data: Any, fmt: str = "json") -> Path:
        """Write ``data`` as ``.specd/pipeline.<fmt>`` (json, yaml, yml); a str is written verbatim."""
        if isinstance(data, str):
            text = data
        elif fmt == "json":
            text = json.dumps(data, indent=2)
        else:
            text = yaml.safe_dump(data, sort_keys=False)
        return self.file(f".specd/pipeline.{fmt}", text)

    def file(self, relpath: str, text: str = "# A workflow\n\nDo the thing, then stop.\n") -> Path:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[[str], ProjectDir]:
    """``make_project("name")`` → a new project at ``tmp_path/name`` (or a path relative to it)."""
    return lambda name: ProjectDir(tmp_path / name)


@pytest.fixture
def project(make_project: Callable[[str], ProjectDir]) -> ProjectDir:
    """An empty project: ``tmp_path/proj`` holding an empty ``.specd/``."""
    return make_project("proj")


@pytest.fixture
def h(tmp_path: Path) -> Iterator[Harness]:
    """A project in tmp_path driven through the real CLI by a command agent that logs each call."""
    harness = Harness(tmp_path)
    try:
        yield harness
    finally:
        harness.cleanup()
