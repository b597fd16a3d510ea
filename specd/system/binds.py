"""What a jail starts from: nothing, and then what this module lists.

- the system's programs and libraries, read-only (``/usr``, ``/bin``, ``/lib*``, ``/opt``, ``/etc`` without
  what only root may read: password hashes, host keys, private certificates);
- the tool folders the project's commands need, read-only: PATH's folders (a ``bin`` folder outside HOME
  with the install it belongs to), the Python specd runs on, and the installed tools in HOME (``HOME_TOOLS``);
- ``/dev`` and ``/proc`` of the jail's own, a private ``/tmp``, and a fresh, empty HOME at HOME's path;
- what you name yourself, from your own environment (never from the project's files):
  ``SPECD_JAIL_READ`` and ``SPECD_JAIL_WRITE``, folders or files separated by ``:``.

The task's tree and specd's machinery in it are added by ``specd.system.jail``. Nothing else of the
machine exists inside: no host ``/tmp``, ``/run`` or ``/var`` (so no docker, dbus, ssh-agent, gpg-agent
or tmux socket), no real HOME with its keys.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path

# Nix's store and profiles, not /nix whole: /nix/var/nix/daemon-socket would let a jailed command ask the daemon
# for a build, which fetches from the host's network and, for a trusted user, outside Nix's own sandbox.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store", "/nix/var/nix/profiles",
          "/etc")
# Installed tools that live in HOME (pyenv, nvm, rustup, pip --user...): shown read-only in the fresh HOME,
# or `python -m pytest` would not even start. Credentials (.ssh, .aws, .config, .netrc...) are not listed.
HOME_TOOLS = (".pyenv", ".nvm", ".volta", ".asdf", ".rustup", ".cargo/bin", ".local/bin", ".local/lib", ".sdkman",
              ".deno", ".bun", "go/bin", ".nodenv", ".rbenv", ".goenv", ".juliaup")
READ_ENV, WRITE_ENV = "SPECD_JAIL_READ", "SPECD_JAIL_WRITE"
# An empty file shipped with specd, bound over each hidden file (a bind of /dev/null reads EACCES: binds are nodev).
EMPTY = Path(__file__).with_name("empty")
# Folders many unrelated things share: never shown whole because a program lies in one of them.
SHARED = frozenset({"/", "/tmp", "/var/tmp", "/dev/shm", "/run", "/var", "/home", "/srv", "/mnt", "/media", "/root"})


def base(env: Mapping[str, str], command: str | list[str], later: list[Path], planted: list[Path]) -> list[str]:
    """bwrap flags for everything but the task's tree: system, tools, /dev, /proc, /tmp, HOME, yours. ``later``
    are the folders the caller binds next (the task's tree); ``planted``, the folders an agent may have written
    (the task's tree, the project's main tree, the step's writable folders): nothing is shown by way of them."""
    args: list[str] = []
    for top in SYSTEM:
        path = Path(top)
        if path.is_symlink():  # a merged /usr: /bin is a link, and stays one
            args += ["--symlink", str(path.readlink()), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    args += _etc_secrets()
    home = home_of(env)
    yours = {name: list(_listed(env.get(name, ""), planted)) for name in (READ_ENV, WRITE_ENV)}
    planted = [*planted, *yours[WRITE_ENV]]
    shown = [("--ro-bind", path) for path in [*tools(home, env, planted), *programs(command, env, home, planted)]]
    shown += [(flag, path) for name, flag in ((READ_ENV, "--ro-bind"), (WRITE_ENV, "--bind")) for path in yours[name]]
    places = [path for _, path in shown] + later + ([home] if home is not None else [])
    made, sealed = _sealed(Path("/tmp"), places)
    args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *made]
    if home is not None:  # after /tmp's: a HOME inside /tmp is a mount of its own on a sealed folder
        made, more = _sealed(home, places)
        args += ["--tmpfs", str(home), *made]
        sealed += more
    for flag, path in shown:
        args += [flag, str(path), str(path)]
    # read-only once what is shown in them is bound: a file's bind makes its mount point there first
    # last: a tool folder's bind (/usr/local) must not show them again
    return [*args, *sealed, *_machine_keys(), *_tool_keys(tuple(path for flag, path in shown if flag == "--ro-bind"))]


def _sealed(folder: Path, places: list[Path]) -> tuple[list[str], list[str]]:
    """Read-only, empty folders on the way to what is shown inside the private /tmp or HOME: (the flags that make
    them, the flags that make them read-only, given once everything is bound in them). Without them the folders
    bubblewrap makes on the way are writable, and a worktree's agent could write the main tree's
    ``.specd/pipeline.json`` there (into the jail's own /tmp, but a write that seems to work is a lie)."""
    made: list[str] = []
    sealed: list[str] = []
    inside = [path for path in places if path.is_relative_to(folder) and path != folder]
    for top in sorted({folder / path.relative_to(folder).parts[0] for path in inside}):
        under = [path for path in inside if path.is_relative_to(top)]
        if top in under:
            continue  # shown whole
        # a folder is made here; a file (a program shown alone) gets its mount point from its own bind
        made += ["--tmpfs", str(top), *[arg for path in under if path.is_dir() for arg in ("--dir", str(path))]]
        sealed += ["--remount-ro", str(top)]
    return made, sealed


def tools(home: Path | None, env: Mapping[str, str], planted: list[Path]) -> list[Path]:
    """Tool folders outside the system binds, resolved, each once; none found by way of ``planted``."""
    wanted = [home / name for name in HOME_TOOLS] if home is not None else []
    for entry in env.get("PATH", "").split(os.pathsep):
        path = Path(entry)
        if not entry or not path.is_absolute():
            continue
        outside_home = home is None or not path.is_relative_to(home)
        # A bin folder's programs are often links into the install beside it (node_modules/.bin, a venv's bin),
        # unless that install holds the task's tree: then the bin folder alone (see ``_holds``).
        install = path.parent if outside_home and path.name in ("bin", ".bin", "sbin") else path
        wanted.append(path if install != path and (_holds(install, planted) or _a_project(install)) else install)
    wanted += [Path(sys.prefix), Path(sys.base_prefix)]
    if env.get("VIRTUAL_ENV"):
        wanted.append(Path(env["VIRTUAL_ENV"]))
    found: list[Path] = []
    for path in wanted:
        if (path.is_dir() and not _covered(real := path.resolve(), home) and not steered(path, planted)
                and not _holds(real, planted)
                and not any(real.is_relative_to(done) for done in found)):
            found.append(real)
    return found


def itself(root: Path) -> list[Path]:
    """specd's own interpreter prefix and package folder, where they lie inside ``root`` (the task's tree): specd
    installed in the project's own venv, or an editable install of a checkout the task works in. Bound read-only
    over the tree, or the model's `.pth` file or edit of specd's code would run as you at specd's next import."""
    import specd

    found = [Path(sys.prefix), Path(sys.base_prefix), Path(specd.__file__).parent]
    real = [path.resolve() for path in found]
    return list(dict.fromkeys(path for path in real if path != root and path.is_relative_to(root)))


def programs(command: str | list[str], env: Mapping[str, str], home: Path | None, planted: list[Path]) -> list[Path]:
    """The programs a command names (its first word found on PATH, and every absolute path to a file in it),
    each with its own folder unless that folder is a shared one (``/tmp``, HOME, ...), then the file alone.
    The command is the pipeline's or yours, never the model's: a `cmd:` agent's script must start. A program
    found by way of ``planted`` is shown by the tree's own bind, as it is there, or not at all."""
    import shlex  # here, with shutil: a listing reads the tool folders (their keys) but starts no program
    import shutil

    try:
        words = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError:
        return []
    named = [shutil.which(words[0], path=env.get("PATH"))] if words else []
    # the jail's own /proc, /sys and /dev are there already: a bind of /proc/<pid> stopped bubblewrap from starting
    named += [word for word in words if word.startswith("/") and not word.startswith(("/proc/", "/sys/", "/dev/"))]
    found: list[Path] = []
    for word in named:
        if not word or not Path(word).is_file() or steered(Path(word).absolute(), planted):
            continue
        real = Path(word).resolve()
        places = [real if _too_wide(real.parent, home) or _holds(real.parent, planted) else real.parent]
        if Path(word).is_symlink():  # run by the link's path (node_modules/.bin/claude): its folder of links too
            folder = Path(word).absolute().parent.resolve()
            places += [] if _too_wide(folder, home) or _holds(folder, planted) else [folder]
        found += [place for place in places if not _covered(place, home) and place not in found]
    return found


def _a_project(folder: Path) -> bool:
    """Whether the folder above a PATH ``bin`` is a project rather than an install (a repository, a specd project,
    a folder with `.env` files): then its ``bin`` is shown alone, not its keys and sources."""
    try:
        with os.scandir(folder) as entries:
            return any(entry.name in (".git", ".specd") or entry.name.startswith(".env") for entry in entries)
    except OSError:
        return False


def _too_wide(folder: Path, home: Path | None) -> bool:
    return str(folder) in SHARED or (home is not None and home.is_relative_to(folder))


def _holds(folder: Path, planted: list[Path]) -> bool:
    """Whether ``folder`` holds a tree an agent works in (the task's, or the main tree beside a worktree). Shown
    whole, it would show that tree's neighbours, and the main tree as it is, secret files and all: the jail hides
    those only in the task's own tree. The tree itself is bound on its own, after."""
    return any(tree == folder or tree.is_relative_to(folder) for tree in planted)


def _covered(path: Path, home: Path | None) -> bool:
    """Already shown by a system bind, or too wide to show (the root, HOME itself, one of HOME's parents)."""
    if path == Path("/") or (home is not None and home.is_relative_to(path)):
        return True
    text = str(path)
    return any((text == top or text.startswith(top + "/")) for top in _system_folders())


@cache
def _system_folders() -> tuple[str, ...]:
    """The system binds that are folders of their own, not links (a merged /usr's /bin): asked once a process,
    since ``Path.is_relative_to`` and an ``lstat`` for each of them, for each tool folder, at every step were
    a tenth of a jailed ``cmd:true`` step's CPU."""
    return tuple(top for top in SYSTEM if top != "/etc" and not Path(top).is_symlink())


def _listed(value: str, planted: list[Path]) -> Iterator[Path]:
    for entry in value.split(os.pathsep):
        if entry and Path(entry).is_absolute() and Path(entry).exists() and not steered(Path(entry), planted):
            yield Path(entry).resolve()


def steered(path: Path, planted: list[Path]) -> bool:
    """Whether finding ``path`` (absolute) on disk goes through one of ``planted``, folders an agent may have
    written. A bind follows links, and shows what it finds at its real place: a ``.venv`` on PATH that the agent
    replaced by a link to ``~/.ssh`` would show the user's keys to the next jail. What lies in those folders is
    shown by their own bind, links and all, so nothing found through them is needed. Each link is followed
    here by hand, as the kernel would, and every place met on the way is checked; a loop counts as steered."""
    marks = [str(folder) for folder in planted]
    todo, here, hops = list(reversed(str(path).split("/"))), "", 0
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            here = here.rpartition("/")[0]
            continue
        here = f"{here}/{part}"
        if any(here == mark or here.startswith(mark + "/") for mark in marks):
            return True
        try:
            target = os.readlink(here)  # noqa: PTH115  (strings: a few dozen of these at every jail)
        except OSError:
            continue  # not a link (or not there): the walk goes on below it
        hops += 1
        if hops > 40:  # the kernel's own limit
            return True
        here = "" if target.startswith("/") else here.rpartition("/")[0]
        todo += reversed(target.split("/"))
    return False


def home_of(env: Mapping[str, str]) -> Path | None:
    value = env.get("HOME") or os.environ.get("HOME")
    if not value or not Path(value).is_absolute():
        return None
    resolved = Path(value).resolve()
    return None if resolved == Path("/") or any(str(resolved) == top for top in SYSTEM) else resolved


@cache
def _etc_secrets() -> tuple[str, ...]:
    """Empty files and folders over what in /etc only root may read (found once per process)."""
    args: list[str] = []
    for here, dirs, files in os.walk("/etc"):
        for name in list(dirs):
            path = f"{here}/{name}"
            if not _public(path):
                args += ["--tmpfs", path, "--remount-ro", path]
                dirs.remove(name)
        for name in files:
            path = f"{here}/{name}"
            if not _public(path):
                args += ["--ro-bind", str(EMPTY), path]
    return tuple(args)


@cache
def _machine_keys() -> tuple[str, ...]:
    """The machine's credential files everyone may read, shown without their keys (found once per process); the
    copies go in specd's user's cache folder."""
    from specd.system import etcfiles

    home = home_of(os.environ)
    return tuple(etcfiles.binds(home / ".cache" / "specd" / "machine" if home is not None else None, EMPTY))


@lru_cache(maxsize=16)
def _tool_keys(folders: tuple[Path, ...]) -> tuple[str, ...]:
    """The settings files inside the tool folders shown (a node prefix's npmrc, a venv's pip.conf), without their
    keys, as the machine's own are."""
    from specd.system import etcfiles

    home = home_of(os.environ)
    cache = home / ".cache" / "specd" / "machine" if home is not None else None
    return tuple(etcfiles.binds(cache, EMPTY, list(folders)))


def _public(path: str) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return True
    if stat.S_ISLNK(mode):
        return True  # a link shows what it points to, which is judged where it lies
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & needed == needed
