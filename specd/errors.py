"""One error hierarchy; the CLI boundary maps each class to an exit code.

Every message should name the file, the place in it, and the fix, because the
user sees it verbatim and never a traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_WAITING = 3
EXIT_INTERRUPTED = 130
# How a run's final status becomes the process's exit code.
STATUS_EXIT = {"COMPLETE": EXIT_OK, "WAITING_FOR_HUMAN": EXIT_WAITING, "BLOCKED": EXIT_FAILED,
               "FAILED": EXIT_FAILED, "ABORTED": EXIT_INTERRUPTED, "CANCELLED": EXIT_OK}


class SpecdError(Exception):
    """Base of every expected error. Defaults to 'bad input' (exit 2)."""

    exit_code = EXIT_BAD_INPUT
    label = "error"  # the word after `specd:` when the CLI prints it

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}\n  fix: {self.fix}" if self.fix else self.message


class ConfigError(SpecdError):
    """The pipeline file (or another config file) is wrong."""


class UsageError(SpecdError):
    """The command line is wrong."""


class TaskError(SpecdError):
    """A task folder or one of its files is wrong or missing."""


class Waiting(SpecdError):
    """The task waits for a human's answer; nothing ran."""

    exit_code = EXIT_WAITING
    label = "waiting"

    def __str__(self) -> str:
        return f"{self.message}\n  next: {self.fix}" if self.fix else self.message


class LockHeld(SpecdError):
    """Another specd process is running the same task."""
