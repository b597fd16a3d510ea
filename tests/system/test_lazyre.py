"""Patterns compiled at their first use (`specd.system.lazyre`): they answer as compiled ones do, and a module
that defines them pays nothing until one is used."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from specd.system.lazyre import lazy


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    source, text = r"(\w+)@(\w+)", "mail ann@example and bob@test."
    eager, late = re.compile(source, re.IGNORECASE), lazy(source, re.IGNORECASE)
    assert late.sub(r"\2", text) == eager.sub(r"\2", text) == "mail example and test."
    assert [m.groups() for m in late.finditer(text)] == [("ann", "example"), ("bob", "test")]
    assert late.search("x A@B").group(1) == "A"  # type: ignore[union-attr]
    assert (late.pattern, late.flags, late.groups) == (eager.pattern, eager.flags, eager.groups)
    assert late.sub is late.sub  # kept on the stand-in after the first use: no lookup a call


def test_a_pattern_is_compiled_at_its_first_use_not_before() -> None:
    broken = lazy(r"(unclosed")  # compiling it would raise now
    with pytest.raises(re.error):
        broken.search("anything")


def test_importing_the_modules_that_define_patterns_compiles_none_of_them() -> None:
    """What `specd status TASK` imports and may not use: the failure clusters' volatile parts, the phase headings,
    the credential files' assignments. Each module's stand-ins are found by their type, and none of their sources
    is among what `re` compiled while the modules were imported."""
    modules = ["specd.state.clusters", "specd.tasks.phases", "specd.system.etcfiles", "specd.system.gitconfig",
               "specd.pipeline.workflow", "specd.state.text", "specd.system.visible", "specd.redact",
               "specd.tasks.readmodel.redaction"]
    code = f"""
import importlib, json, re
from specd.system.lazyre import _Lazy
re.purge()
modules = [importlib.import_module(name) for name in {modules!r}]
compiled = {{key[1] for key in re._cache}}
stand_ins = [value for module in modules for value in vars(module).values()
             for value in (value if isinstance(value, tuple) else (value,)) if isinstance(value, _Lazy)]
print(json.dumps([len(stand_ins), [s._source[0] for s in stand_ins if s._source[0] in compiled]]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, compiled = json.loads(done.stdout)
    assert count >= 19, done.stdout  # every pattern of those modules but one made inside a function
    assert compiled == [], done.stdout


def test_the_zygote_compiles_every_pattern_before_it_forks_a_run() -> None:
    """A forked run inherits the zygote's memory: what the zygote compiled, no run compiles again. Left lazy there,
    each of twenty runs compiled the patterns it used for itself."""
    code = """
import json
from specd.executors import zygote
from specd.system import lazyre
zygote.preload()
print(json.dumps([len(lazyre._made), [s._source[0] for s in lazyre._made if "_compiled" not in vars(s)]]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    made, left = json.loads(done.stdout)
    assert made >= 19, done.stdout
    assert left == [], done.stdout
