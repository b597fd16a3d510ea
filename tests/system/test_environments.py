"""The tree's own environments (a virtualenv, node_modules) are read-only in the jail (``system/environments.py``).

git ignores them, so a `.pth` file or an edited package the model leaves there is in no commit and no review, and
runs as you at your next `pytest` or `npm test`. A real `specd continue` in the project itself, its `cmd:` agent
trying each write from inside the jail; the files are looked at from outside afterwards.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inventory_harness import Host, Project, hosting

from specd.agents.anthropic.sandbox import Refused, Sandbox
from specd.system import environments

SITE = ".venv/lib/python3.11/site-packages"
PACKAGE = "web/node_modules/left-pad/index.js"
TRIES = {  # what the model writes, each looked at from outside
    "pth": f"{SITE}/evil.pth", "package": f"{SITE}/pkg.py", "node": PACKAGE,
    "bin": "web/node_modules/.bin/jest", "cache": "web/node_modules/.cache/new.json", "work": "src.txt"}


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    yield from hosting(tmp_path)


def project_with_environments(host: Host, root: Path) -> Project:
    project = Project(host, root)
    project.write(".gitignore", ".venv/\nnode_modules/\nresults.txt\n")
    project.write(".venv/pyvenv.cfg", "home = /usr/bin\n")
    project.write(f"{SITE}/pkg.py", "ORIGINAL = True\n")
    project.write(PACKAGE, "module.exports = 1;\n")
    project.write("web/node_modules/.bin/jest", "#!/bin/sh\necho jest\n")
    project.write("web/node_modules/.cache/babel/old.json", "{}\n")
    project.git("add", ".gitignore")
    project.git("commit", "-q", "-m", "ignore the environments")
    project.new()
    return project


def attempt(project: Project) -> dict[str, str]:
    """Each write of ``TRIES`` from inside the jail: "ok" or the shell's error."""
    lines = [f'if echo hacked 2>/tmp/e > {path}; then echo "{name} ok"; else echo "{name} $(cat /tmp/e)"; fi'
             for name, path in TRIES.items()]
    script = "cat >/dev/null; ls -A web/node_modules/.cache > cache.txt; { " + "; ".join(lines) + "; } > results.txt"
    run = project.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(script)}")
    assert run.returncode == 0, run.stdout + run.stderr
    said = (project.root / "results.txt").read_text(encoding="utf-8").splitlines()
    return dict(line.split(" ", 1) for line in said)


def test_a_model_cannot_leave_code_in_the_trees_venv_or_node_modules(host: Host, tmp_path: Path) -> None:
    project = project_with_environments(host, tmp_path / "proj")
    said = attempt(project)
    for name in ("pth", "package", "node", "bin"):
        assert "Read-only file system" in said[name], (name, said)
    assert said["cache"] == "ok", said
    assert said["work"] == "ok", said
    root = project.root
    assert not (root / TRIES["pth"]).exists()
    assert (root / TRIES["package"]).read_text() == "ORIGINAL = True\n"
    assert (root / PACKAGE).read_text() == "module.exports = 1;\n"
    assert (root / TRIES["bin"]).read_text() == "#!/bin/sh\necho jest\n"
    # the build cache was the step's own, empty and private: the one outside is as it was
    assert (root / "cache.txt").read_text() == ""
    assert sorted(p.name for p in (root / "web/node_modules/.cache").rglob("*")) == ["babel", "old.json"]
    assert (root / "src.txt").read_text() == "hacked\n"  # the tree itself is the step's to write
    assert "src.txt" in project.git("show", "--stat", "HEAD~1") + project.git("show", "--stat", "HEAD")


def test_a_venv_you_name_in_specd_jail_write_stays_writable(host: Host, tmp_path: Path) -> None:
    project = project_with_environments(host, tmp_path / "proj")
    project.env["SPECD_JAIL_WRITE"] = ".venv"  # a step that installs what it adds
    said = attempt(project)
    assert said["pth"] == "ok", said
    assert said["package"] == "ok", said
    assert "Read-only file system" in said["node"], said
    assert (project.root / TRIES["pth"]).read_text() == "hacked\n"


def test_environments_are_found_at_the_top_and_one_folder_down(tmp_path: Path) -> None:
    for path in (".venv/pyvenv.cfg", "envs/conda/conda-meta/history", ".tox/py311/pyvenv.cfg", ".nox/tests/pyvenv.cfg",
                 "web/node_modules/x/index.js", "node_modules/y.js", "backend/venv/pyvenv.cfg",
                 "a/b/node_modules/z.js", "src/app/pyvenv.txt", ".git/node_modules/q"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    (tmp_path / "conda").mkdir()
    (tmp_path / "conda" / "conda-meta").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / ".venv")  # a link is not followed
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "node_modules").write_text("a file, not a folder")
    found = [str(path.relative_to(tmp_path)) for path in environments.found(tmp_path)]
    assert found == [".nox/tests", ".tox/py311", ".venv", "backend/venv", "conda", "node_modules",
                     "web/node_modules"]
    flags = environments.binds(tmp_path, {"SPECD_JAIL_WRITE": "/abs/elsewhere:backend/venv"})
    bound = [flags[i + 1] for i, flag in enumerate(flags) if flag == "--ro-bind"]
    assert str(tmp_path / "backend/venv") not in bound
    assert str(tmp_path / ".venv") in bound


def test_the_anthropic_agents_file_tools_refuse_to_write_in_an_environment(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / SITE).mkdir(parents=True)
    (tmp_path / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "node_modules/x").mkdir(parents=True)
    monkeypatch.delenv("SPECD_JAIL_WRITE", raising=False)
    sandbox = Sandbox(tmp_path)
    for path in (f"{SITE}/evil.pth", "node_modules/x/index.js", "node_modules/.bin/jest"):
        with pytest.raises(Refused, match="an environment of the project's"):
            sandbox.resolve(path, write=True)
        sandbox.resolve(path)  # reading is fine
    sandbox.resolve("src/app.py", write=True)
    monkeypatch.setenv("SPECD_JAIL_WRITE", ".venv")
    sandbox.resolve(f"{SITE}/evil.pth", write=True)
    monkeypatch.delenv("SPECD_JAIL_WRITE")
    with pytest.raises(Refused, match="name the folder in SPECD_JAIL_WRITE"):  # the reason names the way out
        sandbox.resolve(f"{SITE}/evil.pth", write=True)


PLANT = """
import importlib.util, marshal, os, sys
def plant(target, source, name):
    st = os.stat(source) if source else None
    code = compile(f"open({os.getcwd()!r} + '/pwned-{name}', 'w').write('ran')", source or target, "exec")
    header = (0).to_bytes(4, "little") + ((int(st.st_mtime) if st else 0) & 0xFFFFFFFF).to_bytes(4, "little")
    header += ((st.st_size if st else 0) & 0xFFFFFFFF).to_bytes(4, "little")
    with open(target, "wb") as out:
        out.write(importlib.util.MAGIC_NUMBER + header + marshal.dumps(code))
import pkg.other  # a legitimate run of the project's code: compiled outside the tree
tag = sys.implementation.cache_tag
plant(f"pkg/__pycache__/mod.{tag}.pyc", "pkg/mod.py", "mod")  # a cache whose header matches its source
plant("helper.pyc", None, "helper")  # no source at all: `import helper` run here loads it
"""


def test_compiled_python_the_step_leaves_where_git_does_not_look_is_removed(host: Host, tmp_path: Path) -> None:
    project = Project(host, tmp_path / "proj")
    root = project.root
    project.write(".gitignore", "__pycache__/\n*.py[cod]\nplant.py\n")
    project.write("pkg/__init__.py", "")
    project.write("pkg/mod.py", "VALUE = 1\n")
    project.write("pkg/other.py", "VALUE = 2\n")
    project.write("plant.py", PLANT)
    project.git("add", ".gitignore", "pkg")
    project.git("commit", "-q", "-m", "a package")
    def python(code: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in project.env.items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
        return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                              check=False)

    assert python("import pkg.mod, pkg.other").returncode == 0  # your own run: your caches, in the tree
    yours = sorted(p.name for p in (root / "pkg/__pycache__").iterdir())
    assert len(yours) == 3
    project.new()
    project.env.pop("PYTHONDONTWRITEBYTECODE")  # the harness's, for speed: here, Python writes its caches
    run = project.specd("continue", "t", "--auto", "--agent", "cmd:sh -c 'cat >/dev/null; python3 plant.py'")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "removed 2 compiled Python files made while a ran" in run.stdout + run.stderr
    assert not (root / "helper.pyc").exists()
    tag = sys.implementation.cache_tag
    assert sorted(p.name for p in (root / "pkg/__pycache__").iterdir()) == sorted(
        name for name in yours if not name.startswith("mod."))  # yours stay, the planted one went
    # the step's own Python compiled into specd's folder for the tree, not into the tree
    assert list((host.home / ".cache/specd/pycache").rglob(f"other.{tag}.pyc"))
    after = python("import pkg.mod\ntry:\n    import helper\nexcept ImportError:\n    pass")
    assert after.returncode == 0, after.stderr
    assert sorted(p.name for p in root.glob("pwned-*")) == []  # neither ran as you


def test_a_hook_that_installs_into_node_modules_says_how_to_let_it(host: Host, tmp_path: Path) -> None:
    install = "mkdir -p node_modules/added && echo 1 > node_modules/added/index.js"
    project = Project(host, tmp_path / "proj", step={"hooks": {"pre": {"run": install}}})
    project.write(".gitignore", "node_modules/\n")
    project.write("node_modules/left-pad/index.js", "module.exports = 1;\n")
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent", "cmd:cat")
    assert run.returncode != 0
    assert ("node_modules is read-only in the jail (an environment of the project's, which git ignores): a hook that "
            "installs into it needs it in SPECD_JAIL_WRITE") in run.stdout + run.stderr
    assert not (project.root / "node_modules/added").exists()
    project.env["SPECD_JAIL_WRITE"] = "node_modules"
    again = project.specd("continue", "t", "--auto", "--agent", "cmd:cat")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (project.root / "node_modules/added/index.js").read_text() == "1\n"


def test_workspace_packages_node_modules_and_other_languages_installs_are_found(tmp_path: Path) -> None:
    def tree(name: str, files: dict[str, str]) -> Path:
        root = tmp_path / name
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        return root

    def found(root: Path) -> list[str]:
        return [str(path.relative_to(root)) for path in environments.found(root)]

    npm = tree("npm", {"package.json": json.dumps({"workspaces": ["packages/*", "../outside/*", "deep/**"]}),
                       "packages/a/node_modules/.bin/jest": "#!/bin/sh\n", "packages/b/index.js": "",
                       "deep/x/y/node_modules/q.js": ""})
    (npm / "packages" / "linked").symlink_to(npm / "packages" / "a")  # a link is not followed
    assert found(npm) == ["packages/a/node_modules"]
    yarn = tree("yarn", {"package.json": json.dumps({"workspaces": {"packages": ["libs/*"]}}),
                         "libs/ui/node_modules/x.js": ""})
    assert found(yarn) == ["libs/ui/node_modules"]
    pnpm = tree("pnpm", {"pnpm-workspace.yaml": "packages:\n  - 'apps/*'\n  - \"tools/cli\"  # the CLI\n",
                         "apps/web/node_modules/.bin/vite": "#!/bin/sh\n", "tools/cli/node_modules/y.js": "",
                         "node_modules/.pnpm/z.js": ""})
    assert found(pnpm) == ["apps/web/node_modules", "node_modules", "tools/cli/node_modules"]
    broken = tree("broken", {"package.json": "{not json", "pnpm-workspace.yaml": "\x00\xff"})
    assert found(broken) == []
    php = tree("php", {"vendor/autoload.php": "<?php\n", "vendor/bin/phpunit": ""})
    assert found(php) == ["vendor"]
    ruby = tree("ruby", {"vendor/bundle/ruby/3.2.0/gems/x.rb": ""})
    assert found(ruby) == ["vendor/bundle"]
    go = tree("go", {"vendor/modules.txt": "# github.com/x/y\n", "vendor/autoload.php": ""})
    assert found(go) == []  # Go's vendor/ is the project's own code


def test_compiled_python_git_would_take_is_removed_too_and_never_committed(host: Host, tmp_path: Path) -> None:
    project = Project(host, tmp_path / "proj")  # its .gitignore lists no *.pyc
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent",
                        "cmd:sh -c 'cat >/dev/null; printf x > helper.pyc; echo notes > notes.txt'")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "removed 1 compiled Python file made while a ran (helper.pyc)" in run.stdout + run.stderr
    assert not (project.root / "helper.pyc").exists()
    history = project.git("log", "--all", "--name-only", "--format=")
    assert "notes.txt" in history
    assert "helper.pyc" not in history


def test_a_rust_trees_target_is_read_only_and_a_jailed_cargo_builds_elsewhere(host: Host, tmp_path: Path) -> None:
    project = Project(host, tmp_path / "proj")
    project.write(".gitignore", "target/\n")
    project.write("Cargo.toml", "[package]\nname = \"app\"\nversion = \"0.1.0\"\n")
    project.write("target/debug/app", "#!/bin/sh\necho built from your sources\n")
    project.git("add", ".gitignore", "Cargo.toml")
    project.git("commit", "-q", "-m", "a crate")
    project.new()
    script = ('cat >/dev/null; echo "$CARGO_TARGET_DIR" > where.txt; echo planted 2>err.txt > target/debug/app; '
              'mkdir -p "$CARGO_TARGET_DIR/debug" && echo built > "$CARGO_TARGET_DIR/debug/app"')
    run = project.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(script)}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (project.root / "where.txt").read_text() == "/tmp/.specd-cargo-target\n"
    assert "Read-only file system" in (project.root / "err.txt").read_text()
    assert (project.root / "target/debug/app").read_text() == "#!/bin/sh\necho built from your sources\n"
    built = list((host.home / ".cache/specd/cargo-target").glob("*/debug/app"))
    assert [path.read_text() for path in built] == ["built\n"]  # the step's build, kept for its next step


def test_an_environment_moved_away_from_where_the_jail_looks_blocks_the_run(host: Host, tmp_path: Path) -> None:
    """Renaming a folder above a read-only environment works in the jail: moved away, the next step's jail would
    not find it (``.tox2/py311``), and that step could plant code in it and move it back."""
    project = Project(host, tmp_path / "proj")
    project.write(".gitignore", ".tox/\n.tox2/\n")
    project.write(".tox/py311/pyvenv.cfg", "home = /usr/bin\n")
    project.write(".tox/py311/lib/site-packages/pkg.py", "ORIGINAL = True\n")
    project.new()
    script = ("cat >/dev/null; if [ -d .tox2 ]; then echo 'import os' > .tox2/py311/lib/site-packages/evil.pth; "
              "mv .tox2 .tox; else mv .tox .tox2; fi")
    run = project.specd("continue", "t", "--auto", "--agent", f"cmd:sh -c {shlex.quote(script)}")
    assert run.returncode != 0
    said = run.stdout + run.stderr
    assert "moved or replaced .tox/py311, the project's own environment, or made it no longer one" in said
    assert not (project.root / ".tox2/py311/lib/site-packages/evil.pth").exists()
    assert "BLOCKED" in project.specd("status", "t").stdout


def test_a_workspace_left_out_of_package_json_blocks_the_run(host: Host, tmp_path: Path) -> None:
    """Its node_modules is found by package.json, which the step may edit: left out, the next jail would not show
    it read-only, and that step could rewrite its .bin scripts."""
    project = Project(host, tmp_path / "proj")
    project.write("package.json", json.dumps({"name": "mono", "workspaces": ["packages/*"]}))
    project.write("packages/a/node_modules/.bin/jest", "#!/bin/sh\necho jest\n")
    project.write(".gitignore", "node_modules/\n")
    project.git("add", "package.json", ".gitignore")
    project.git("commit", "-q", "-m", "a monorepo")
    project.new()
    run = project.specd("continue", "t", "--auto", "--agent",
                        "cmd:sh -c 'cat >/dev/null; echo {\"name\": \"mono\"} > package.json'")
    assert run.returncode != 0
    assert "moved or replaced packages/a/node_modules" in run.stdout + run.stderr
    assert "BLOCKED" in project.specd("status", "t").stdout
