"""The order of a listing: names with numbers in them sort as a person counts (t2 before t10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from specd.tasks.project import in_order

NAMES = st.text(min_size=1, max_size=12)  # any text: a folder's name is not checked before a listing sorts it


def test_numbers_in_names_count_as_numbers() -> None:
    names = ["t10", "t2", "task", "t1", "t01", "2x", "10", "x2y10", "x2y9", "t", "t\u00b2"]
    assert sorted(names, key=in_order) == ["2x", "10", "t", "t01", "t1", "t2", "t10", "task", "t\u00b2", "x2y9",
                                           "x2y10"]


@given(st.lists(NAMES, unique=True))
def test_any_names_sort_without_error_in_one_total_order(names: list[str]) -> None:
    once = sorted(names, key=in_order)
    assert sorted(reversed(names), key=in_order) == once  # no two names tie
    assert sorted(once, key=in_order) == once


def test_status_lists_twenty_tasks_in_counting_order(tmp_path: Path) -> None:
    def specd(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "specd", *args], cwd=tmp_path, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    specd("init")
    for n in (1, 2, 10, 11, 20, 3):
        specd("new", f"t{n}")
    rows = [line.split()[0] for line in specd("status").splitlines()[1:]]
    assert rows == ["t1", "t2", "t3", "t10", "t11", "t20"]
