"""Every verb's `--help` ends with examples, and every example parses as that verb's real command line."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from specd.cli import COMMANDS, cli
from specd.commands.examples import EXAMPLES


def test_every_verb_has_examples() -> None:
    assert set(EXAMPLES) == set(COMMANDS), "add the new verb's examples to specd/commands/examples.py"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_example_is_a_command_line_the_verb_accepts(name: str) -> None:
    for line, _ in EXAMPLES[name]:
        words = shlex.split(line.split(" < ")[0])
        assert words[:2] == ["specd", name], line
        context = cli.make_context("specd", words[1:2], resilient_parsing=True)
        command = cli.get_command(context, name)
        assert command is not None
        args = words[2:]
        if isinstance(command, click.Group):  # `specd pipeline show`: the subcommand parses its own options
            command = command.get_command(context, args[0])
            assert command is not None, line
            args = args[1:]
        command.make_context(name, args)  # raises on an unknown option, a missing value, a bad choice


def test_help_prints_them(tmp_path: Path) -> None:
    shown = subprocess.run([sys.executable, "-m", "specd", "run", "--help"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60, check=True).stdout
    assert "Examples:" in shown
    assert "specd run --all -j 4" in shown
