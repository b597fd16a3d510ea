"""The inventory from inside a jail: what a process there can read, write, connect to and see.

A standalone script (standard library only, no import of specd): a test copies it into the project it runs
specd on, next to ``probe-config.json``, and the agent, hook or tool call under test runs it:

    python3 probe.py LABEL [--attacks-only]

It walks the whole file system (not the inside of /proc, /sys and /dev) and writes what it found to
``inventory-LABEL.json`` in its working folder (the project root):

- ``read``: every file outside the allowed folders that it could open for reading; ``dirs``: every folder
  outside them that it could list (a name is information too); the allowed folders are the system's
  (/usr, /etc, ...), the tool folders (Python's prefixes, PATH's folders, a ``bin`` folder's install),
  the project root and what the config adds. /tmp and HOME are not allowed for reading: the jail's own are
  empty, so anything found there came from somewhere;
- ``write``: every folder it could create a file in, and every file it could open for writing, outside
  the project root, /tmp and HOME (a fresh tmpfs each);
- ``sockets``: every AF_UNIX socket file found, and every abstract one in /proc/net/unix, with whether a
  connect succeeded; ``net``: TCP to the host's loopback listeners, direct and through ``HTTPS_PROXY``;
- ``env``: the names of the secret-named variables it sees (never their values); ``values``: the SHA-256 of
  every value (8 characters or more) of every environment it can read, its own and each ``/proc/PID/environ``
  (a parent's: an agent CLI's), so a test can tell whether a secret of the host's got in under any name;
- ``attacks``: the reads, writes and connects the config lists (and ``$SSH_AUTH_SOCK``, ``$TMUX``), each "ok"
  or "failed <errno>"; how many bytes the files it lists as ``empty`` hold; whether the ones it lists as
  ``present`` are there to read.

Nothing it opens is printed or kept: only names and results.
"""
# ruff: noqa: PTH100, PTH103, PTH108, PTH109, PTH118, PTH119, PTH120, PTH123, PTH208
# The probe tests system calls one by one (open, connect, scandir); os is the point here, not pathlib.

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
import sys
import time
import uuid

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store", "/nix/var/nix/profiles",
          "/etc")
HOME_TOOLS = (".pyenv", ".nvm", ".volta", ".asdf", ".rustup", ".cargo/bin", ".local/bin", ".local/lib", ".sdkman",
              ".deno", ".bun", "go/bin", ".nodenv", ".rbenv", ".goenv", ".juliaup")
SKIP_INSIDE = ("/proc", "/sys", "/dev")
# specd.redact.SECRET_NAME, copied: the probe imports nothing of specd.
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|WEBHOOK|DSN|PRIVATE|AUTH(?!OR)|COOKIE|JWT|DATABASE_URL"
    r"|_(?:PAT|PWD)(?:_|$)", re.IGNORECASE)
URL_PASSWORD = re.compile(r"://[^/\s:@]*:[^/\s@]+@")
TIMEOUT = 3.0
# What an attack writes: Claude Code settings whose hook would run at the next session start.
SESSION_HOOK = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo pwned"}]}]}}\n'


def under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def real(path: str) -> str:
    return os.path.realpath(path)


def tool_roots(home: str) -> list[str]:
    """Python's prefixes, PATH's folders (a bin folder outside HOME with its install), HOME's tool folders."""
    roots = [sys.prefix, sys.base_prefix, os.environ.get("VIRTUAL_ENV", "")]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry.startswith("/"):
            continue
        inside_home = bool(home) and under(entry, [home])
        roots.append(os.path.dirname(entry) if not inside_home and os.path.basename(entry) in ("bin", ".bin",
                                                                                            "sbin") else entry)
    if home:
        roots += [os.path.join(home, name) for name in HOME_TOOLS]
    found = []
    for root in roots:
        if root and root.startswith("/") and root != "/" and (not home or not under(home, [root])):
            found += [root, real(root)]
    return sorted(set(found))


def attempt(act) -> str:
    try:
        act()
    except OSError as err:
        return f"failed {err.errno} {err.strerror}"
    except Exception as err:  # noqa: BLE001 - a probe reports every failure, whatever its kind
        return f"failed {type(err).__name__} {err}"
    return "ok"


def can_read(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


def can_write_file(path: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)  # no O_TRUNC: nothing changes
    except OSError:
        return False
    os.close(fd)
    return True


def can_create_in(folder: str, tag: str, keep: bool) -> bool:
    """Whether a new file can be made in ``folder``; with ``keep`` it stays there, named ``tag``, for the host
    to look for (the jail's own tmpfs forgets it; a host folder would keep it, and the test then removes it)."""
    path = os.path.join(folder, tag)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    os.close(fd)
    if not keep:
        os.unlink(path)
    return True


def connect_unix(address: str | bytes) -> str:
    def act() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(TIMEOUT)
            sock.connect(address)
    return attempt(act)


def mounts() -> dict[str, str]:
    """Every mount point: "ro|rw FSTYPE ROOT" (ROOT: the folder of that file system shown there; a bind of
    a host folder names it). The last one mounted at a path wins."""
    found: dict[str, str] = {}
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as table:
        for row in table:
            fields = [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), f) for f in row.split()]
            fstype = fields[fields.index("-") + 1]
            found[fields[4]] = f"{'ro' if 'ro' in fields[5].split(',') else 'rw'} {fstype} {fields[3]}"
    return found


def read_only(path: str, table: dict[str, str]) -> bool:
    """Whether the mount ``path`` lies on is read-only: the kernel then refuses every write there (EROFS)."""
    while True:
        if path in table:
            return table[path].startswith("ro ")
        if path == "/":
            return False
        path = os.path.dirname(path)


def walk(allowed: list[str], writable: list[str], tag: str) -> dict:
    """Every path from / down: what is readable outside ``allowed``, writable outside ``writable``, sockets.

    Writes are tried wherever the mount is not read-only (on a read-only one the kernel refuses them all);
    reads wherever the path is not allowed; a socket is tried wherever it lies (connect ignores read-only).
    """
    table = mounts()
    # Marks stay only where the root is a jail's (a tmpfs): run on the host itself, the probe litters nothing.
    keep = table.get("/", "").split(" ")[1:2] == ["tmpfs"]
    read, dirs, write, sockets, errors = [], [], [], [], []
    stack = ["/"]
    seen = 0
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as err:
            errors.append(f"{folder}: {err.strerror}")
            continue
        frozen = read_only(folder, table)
        shown, open_to = under(folder, allowed), under(folder, writable)
        if not shown:
            dirs.append(folder)
        if not frozen and not open_to and can_create_in(folder, tag, keep):
            write.append(folder)
        if folder in SKIP_INSIDE:
            continue
        for entry in entries:
            seen += 1
            path = entry.path
            try:
                # The folder's own entry type, which is free, but a mount point's is what lies beneath it
                # (bwrap binds a socket over an empty file): that one is looked at.
                mode = os.lstat(path).st_mode if path in table else None
                if entry.is_symlink() if mode is None else stat.S_ISLNK(mode):
                    continue  # a link shows what it points to, which is judged where it lies
                if entry.is_dir(follow_symlinks=False) if mode is None else stat.S_ISDIR(mode):
                    stack.append(path)
                    continue
                regular = entry.is_file(follow_symlinks=False) if mode is None else stat.S_ISREG(mode)
                if not regular and stat.S_ISSOCK(mode or entry.stat(follow_symlinks=False).st_mode):
                    sockets.append({"path": path, "connect": connect_unix(path)})
                    continue
            except OSError as err:
                errors.append(f"{path}: {err.strerror}")
                continue
            if not shown and not under(path, allowed) and (not regular or can_read(path)):
                read.append(path)  # a fifo or a device outside /dev: its existence is worth a look too
            if (regular and not open_to and not (read_only(path, table) if path in table else frozen)
                    and not under(path, writable) and can_write_file(path)):
                write.append(path)
    return {"read": sorted(read), "dirs": sorted(dirs), "write": sorted(write), "sockets": sorted(
        sockets, key=lambda s: s["path"]), "entries": seen, "errors": errors[:50],
        "mounts": dict(sorted(table.items()))}


def abstract_sockets() -> list[dict]:
    found = []
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as table:
            rows = table.read().splitlines()[1:]
    except OSError as err:
        return [{"name": "/proc/net/unix", "connect": f"failed {err.errno}"}]
    for row in rows:
        fields = row.split()
        if len(fields) >= 8 and fields[7].startswith("@"):
            name = fields[7]
            found.append({"name": name, "connect": connect_unix(b"\0" + name[1:].encode())})
    return sorted({item["name"]: item for item in found}.values(), key=lambda s: s["name"])


def tcp_direct(port: int) -> str:
    """Connect to 127.0.0.1:port and read the listener's first line (which says which listener it is)."""
    box: dict = {}

    def act() -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
            box["line"] = sock.makefile("rb").readline().decode("latin-1").strip()
    result = attempt(act)
    return f"ok {box.get('line', '')}".strip() if result == "ok" else result


def tcp_via_proxy(target: str) -> str:
    """``CONNECT target`` through HTTPS_PROXY: the proxy's status line, and the listener's first line."""
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy") or ""
    if not proxy:
        return "no proxy"
    hostport = proxy.split("://", 1)[-1].strip("/")
    host, _, port = hostport.rpartition(":")
    box: dict = {}

    def act() -> None:
        with socket.create_connection((host, int(port)), timeout=TIMEOUT) as sock:
            sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            stream = sock.makefile("rb")
            box["status"] = stream.readline().decode("latin-1").strip()
            while stream.readline().strip():
                pass
            if " 200 " in box["status"] + " ":
                box["line"] = stream.readline().decode("latin-1").strip()
    result = attempt(act)
    if result != "ok":
        return result
    return " | ".join(part for part in (box.get("status", ""), box.get("line", "")) if part)


def attacks(config: dict) -> dict:
    done: dict = {}
    for path in config.get("read", []):
        def read(path: str = path) -> None:
            with open(path, "rb") as handle:
                handle.read(1)
        done[f"read {path}"] = attempt(read)
    for path in config.get("write", []):
        def write(path: str = path) -> None:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(SESSION_HOOK)
        done[f"write {path}"] = attempt(write)
    for path in config.get("connect", []):
        done[f"connect {path}"] = connect_unix(path)
    for name in config.get("abstract", []):
        done[f"connect @{name}"] = connect_unix(b"\0" + name.encode())
    for name in ("SSH_AUTH_SOCK", "TMUX"):  # where ssh and tmux look for their server (TMUX: "path,pid,n")
        if os.environ.get(name):
            done[f"connect ${name}"] = connect_unix(os.environ[name].split(",")[0])
    sizes: dict = {}
    for path in config.get("empty", []):  # what the jail shows as an empty file: a .env, /etc/shadow
        def size(path: str = path) -> None:
            with open(path, "rb") as handle:
                sizes[path] = len(handle.read())
        result = attempt(size)
        done[f"empty {path}"] = f"ok {sizes[path]} bytes" if result == "ok" else result
    for path in config.get("present", []):  # what must be there: a probe that sees nothing proves nothing
        done[f"present {path}"] = "ok" if can_read(path) else "failed"
    return done


def env_hashes() -> list[str]:
    values = set(os.environ.values())
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    items = handle.read().split(b"\0")
            except OSError:
                continue
            values |= {item.partition(b"=")[2].decode("utf-8", "replace") for item in items}
    return sorted(hashlib.sha256(value.encode()).hexdigest() for value in values if len(value) >= 8)


def main(argv: list[str]) -> int:
    label = argv[0] if argv else "probe"
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "probe-config.json"), encoding="utf-8") as handle:
        config = json.load(handle)
    started = time.monotonic()
    root = os.getcwd()
    home = os.environ.get("HOME", "")
    tools = tool_roots(home)
    allowed = sorted({*SYSTEM, *tools, root, real(root), *config.get("allow", [])})
    writable = sorted({root, real(root), "/tmp", *([home, real(home)] if home else [])})
    report: dict = {"label": label, "cwd": root, "home": home, "uid": os.getuid(), "allowed": allowed,
                    "writable": writable}
    report["env"] = sorted(name for name, value in os.environ.items()
                           if SECRET_NAME.search(name) or ("://" in value and URL_PASSWORD.search(value)))
    report["values"] = env_hashes()
    report["proxy"] = os.environ.get("HTTPS_PROXY", "")
    net = config.get("net", {})
    tag = f".probe-mark-{uuid.uuid4().hex}"
    if "--attacks-only" not in argv:  # first: the attacks below write in HOME and /tmp
        report.update(walk(allowed, writable, tag))
        report["abstract"] = abstract_sockets()
        report["mark"] = tag if report["mounts"].get("/", "").split(" ")[1:2] == ["tmpfs"] else ""
    report["net"] = {
        "direct unlisted": tcp_direct(net["unlisted"]) if "unlisted" in net else "",
        "direct listed": tcp_direct(net["listed"]) if "listed" in net else "",
        "proxy unlisted": tcp_via_proxy(f"127.0.0.1:{net['unlisted']}") if "unlisted" in net else "",
        "proxy listed": tcp_via_proxy(f"127.0.0.1:{net['listed']}") if "listed" in net else "",
        "proxy elsewhere": tcp_via_proxy("example.com:443"),
    }
    report["attacks"] = attacks(config.get("attacks", {}))
    report["seconds"] = round(time.monotonic() - started, 2)
    out = os.path.join(root, f"inventory-{label}.json")
    with open(out + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1, sort_keys=True)
    os.replace(out + ".tmp", out)
    result = os.environ.get("SPECD_RESULT")
    if result:  # a `cmd:` agent reports its outcome; elsewhere the exit status is enough
        with open(result, "w", encoding="utf-8") as handle:
            json.dump({"outcome": "done", "summary": f"inventory {label} taken"}, handle)
    print(f"inventory {label}: {len(report.get('read', []))} readable, {len(report.get('write', []))} writable")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
