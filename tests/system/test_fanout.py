"""`fanout.fork_map` with real forks: the answer is always the serial one, and no child outlives a call.

Each case runs in a fresh Python of its own: there, no thread a test runner or another test left behind
stops the fork, and `os.waitpid(-1, ...)` sees no child but the ones `fork_map` made. Forks are counted
with `os.register_at_fork`, so a case also shows whether it forked at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

TWO_CORES = (os.cpu_count() or 1) >= 2

PRELUDE = """
import json, os, signal, sys, threading
import psutil
from specd.system import fanout

PARENT = os.getpid()
FORKS = []
os.register_at_fork(before=lambda: FORKS.append(1))
HERE = sys.argv[1]


def in_child():
    return os.getpid() != PARENT


def mark_child():
    open(os.path.join(HERE, "child-ran"), "a").close()


def leftovers():
    '''Children of this process still there, reaped or not.'''
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        waitable = False
    else:
        waitable = True
    return {"waitable": waitable, "children": len(psutil.Process().children())}


def report(**fields):
    print(json.dumps({"forks": len(FORKS), **leftovers(), **fields}))
"""


def run_case(tmp_path: Any, body: str) -> dict[str, Any]:
    """Run ``body`` after PRELUDE in a fresh Python; its last stdout line is the JSON it reported."""
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert not result["waitable"], "a child was left unreaped"
    assert result["children"] == 0, "a child is still alive"
    return result


def test_results_are_the_serial_list_in_order_and_the_child_worked_the_second_half(tmp_path: Any) -> None:
    got = run_case(tmp_path, """
        items = [f"item-{i}" for i in range(5001)]  # odd: the halves differ by one
        squares = fanout.fork_map(lambda s: (s, len(s) * 7), items, min_items=100)
        pids = fanout.fork_map(lambda _: os.getpid(), items, min_items=100)
        report(same=squares == [(s, len(s) * 7) for s in items], pids=pids, parent=PARENT)
    """)
    assert got["same"]
    pids, parent = got["pids"], got["parent"]
    assert len(pids) == 5001
    if not TWO_CORES:
        assert got["forks"] == 0
        assert set(pids) == {parent}
        return
    assert got["forks"] == 2
    assert set(pids[:2500]) == {parent}  # the first half here
    assert len(set(pids[2500:])) == 1  # the second half by one forked child
    assert pids[2500] != parent


@pytest.mark.parametrize("items", [0, 1, 2, 3])
def test_tiny_inputs_give_the_serial_list(tmp_path: Any, items: int) -> None:
    got = run_case(tmp_path, f"""
        items = list(range({items}))
        report(got=fanout.fork_map(lambda x: x * 10, items, min_items=0))
    """)
    assert got["got"] == [x * 10 for x in range(items)]


@pytest.mark.parametrize("failure", ["raise ValueError('only in the child')", "os._exit(3)",
                                     "os.kill(os.getpid(), signal.SIGKILL)", "raise SystemExit(0)",
                                     "raise KeyboardInterrupt"])
def test_any_failure_of_the_child_means_the_parent_works_its_half(tmp_path: Any, failure: str) -> None:
    got = run_case(tmp_path, f"""
        done_here = []

        def work(x):
            if in_child() and x == 3000:
                mark_child()
                {failure}
            done_here.append(x)
            return x * 3

        items = list(range(4000))
        report(got=fanout.fork_map(work, items, min_items=10), worked_here=len(done_here))
    """)
    assert got["got"] == [x * 3 for x in range(4000)]
    if TWO_CORES:
        assert got["forks"] == 1
        assert (tmp_path / "child-ran").exists()  # the child really got that far, then failed
        assert got["worked_here"] == 4000  # the parent worked the child's half as well


def test_results_that_do_not_pickle_are_worked_in_the_parent(tmp_path: Any) -> None:
    got = run_case(tmp_path, """
        done_here = []

        def work(x):
            if in_child():
                mark_child()
            else:
                done_here.append(x)
            return lambda: x + 1  # a lambda cannot be pickled back

        items = list(range(3000))
        results = fanout.fork_map(work, items, min_items=10)
        report(got=[r() for r in results], worked_here=len(done_here))
    """)
    assert got["got"] == [x + 1 for x in range(3000)]
    assert got["worked_here"] == 3000
    if TWO_CORES:
        assert got["forks"] == 1
        assert (tmp_path / "child-ran").exists()


@pytest.mark.parametrize("result", ["x", "x" * 200])  # small, and far more than a pipe holds
def test_a_raise_in_the_parent_propagates_and_leaves_no_child(tmp_path: Any, result: str) -> None:
    got = run_case(tmp_path, f"""
        def work(x):
            if in_child():
                mark_child()
            elif x == 1500:
                raise LookupError("parent failed at 1500")
            return {result!r}

        try:
            fanout.fork_map(work, list(range(4000)), min_items=10)
        except LookupError as exc:
            report(raised=str(exc))
        else:
            report(raised=None)
    """)
    assert got["raised"] == "parent failed at 1500"
    if TWO_CORES:
        assert got["forks"] == 1


def test_nothing_forks_while_another_thread_is_alive_or_below_min_items(tmp_path: Any) -> None:
    got = run_case(tmp_path, """
        items = list(range(5000))
        few = fanout.fork_map(lambda _: os.getpid(), items, min_items=5001)
        few_forks = len(FORKS)
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:
            busy = fanout.fork_map(lambda _: os.getpid(), items, min_items=10)
            busy_forks = len(FORKS) - few_forks
        finally:
            stop.set()
            other.join()
        alone = fanout.fork_map(lambda _: os.getpid(), items, min_items=10)
        report(few=sorted(set(few)), busy=sorted(set(busy)), alone=len(set(alone)), few_forks=few_forks,
               busy_forks=busy_forks, parent=PARENT)
    """)
    assert got["few"] == got["busy"] == [got["parent"]]
    assert got["few_forks"] == got["busy_forks"] == 0
    if TWO_CORES:  # the same call with the thread gone does fork: the thread was what stopped it
        assert got["alone"] == 2
        assert got["forks"] == 1
