"""One error hierarchy; the CLI boundary maps each class to an exit code.

Every message should name the file, the place in it, and the fix, because the
user sees it verbatim and never a traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_WAITING = 3
EXIT_CANCELLED = 4  # its own code, so `specd continue t && deploy` never deploys a cancelled run
EXIT_INTERRUPTED = 130
# How a run's final status becomes the process's exit code.
STATUS_EXIT = {"COMPLETE": EXIT_OK, "WAITING_FOR_HUMAN": EXIT_WAITING, "BLOCKED": EXIT_FAILED,
               "FAILED": EXIT_FAILED, "ABORTED": EXIT_INTERRUPTED, "CANCELLED": EXIT_CANCELLED,
               "IN_PROGRESS": EXIT_OK}  # a run that stopped after the steps it was allowed (SPECD_STEPS)


def settled_exit(statuses: set[str]) -> int:
    """The exit code of a run of many tasks none of which failed: 4 when one was cancelled (so `specd run a b &&
    deploy` never deploys it), 3 when one waits for a human, 0 when every one is complete."""
    if "CANCELLED" in statuses:
        return EXIT_CANCELLED
    return EXIT_OK if statuses <= {"COMPLETE"} else EXIT_WAITING


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


class MachineError(SpecdError):
    """The machine refused a write (disk full, read-only, no permission); nothing is wrong with the input."""

    exit_code = EXIT_FAILED


class InTheWay(MachineError):
    """A folder where specd keeps a file, or a file where a folder should be: the project is laid out wrong."""

    exit_code = EXIT_BAD_INPUT


_IN_THE_WAY = ("EISDIR", "ENOTDIR", "ELOOP")
# errno name -> (what happened, how to fix it); {folder} is the folder holding the path, {path} the path; {qfolder}
# and {qpath} the same quoted for a shell, in a command to type.
_MACHINE = {
    "ENOSPC": ("no space left on the device", "free space on the disk holding {folder} (see `df -h {qfolder}`)"),
    "EDQUOT": ("disk quota exceeded", "free space within your quota on the disk holding {folder}"),
    "EROFS": ("the file system is read-only", "remount {folder} read-write, or run from a writable copy"),
    "EACCES": ("permission denied", "give this user access to {folder} (`ls -ld {qfolder}`; chmod/chown)"),
    "EPERM": ("operation not permitted", "give this user access to {folder} (check `lsattr -d {qfolder}` "
                                         "for the immutable flag, and chmod/chown)"),
    "EISDIR": ("a folder stands where specd reads or writes a file", "move that folder aside (`mv {qpath} "
                                                                     "{qbak}`) and run the command again"),
    "ENOTDIR": ("a file stands where a folder should be on that path", "move the file in the way aside, then run "
                                                                        "the command again"),
    "ELOOP": ("a link stands where specd reads or writes a file, and leads back to itself",
              "remove that link (`rm {qpath}`) and run the command again"),
}


def machine_error(exc: OSError, resume: str | None = None) -> MachineError | None:
    """``exc`` as a MachineError naming the path and the fix, or None when it is not a machine refusal."""
    import errno
    from pathlib import Path

    name = errno.errorcode.get(exc.errno or 0, "")
    if name not in _MACHINE or (name == "EPERM" and exc.filename is None):
        return None
    what, fix = _MACHINE[name]
    path = str(exc.filename) if exc.filename is not None else None
    folder = str(Path(path).parent) if path else "the project folder"
    message = f"{path}: {what} ({name})" if path else f"{what} ({name}); specd could not tell which file"
    import shlex

    where = path or folder
    fix = fix.format(folder=folder, path=where, qfolder=shlex.quote(folder), qpath=shlex.quote(where),
                     qbak=shlex.quote(f"{where}.bak"))
    if resume:
        fix += f", then `{resume}` re-runs the interrupted step"
    return (InTheWay if name in _IN_THE_WAY else MachineError)(message, fix=fix)


def listed(items: list[str], shown: int = 3) -> str:
    """``items`` joined for a message, the first ``shown`` of them and how many more."""
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")


def did_you_mean(name: str, known: list[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest known name, or nothing: typos get named, not just refused."""
    close = closest(name, known)
    return f"; did you mean {close[0]!r}?" if close else ""


def closest(name: str, known: list[str], n: int = 1) -> list[str]:
    """The known names nearest ``name``, best first (what every "did you mean" offers, the dashboard's too)."""
    import difflib

    return difflib.get_close_matches(name, known, n=n)


def said(stderr: str) -> str:
    """What a specd child printed as its error, for one line elsewhere: ``specd: error: MESSAGE`` and the ``fix:``
    line under it, not the fix alone; else its last line ("" for none)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    starts = [n for n, line in enumerate(lines) if line.startswith("specd: error:")]
    if not starts:
        return lines[-1] if lines else ""
    message = lines[starts[-1]].removeprefix("specd: error:").strip()
    fix = [line for line in lines[starts[-1] + 1:starts[-1] + 2] if line.startswith("fix:")]
    return f"{message}; {fix[0]}" if fix else message
