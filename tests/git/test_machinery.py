"""Issue 16, parts 2 and 3: a step that writes specd's machinery is undone and BLOCKED; specd's git
calls run no repository hooks.

The attacker is a command agent: in task ``a``'s plan step it runs one attack (a Python snippet).
Whatever the attack left is checked three ways: `specd continue a` exits 1 with the path in its
reason, every machinery file is byte for byte (and mode for mode) as before, and `specd continue b`
then runs nothing the attack wrote. Every call of the agent touches ``marker-*`` when it was asked
to run as a hook or got a prompt holding EVIL, and every planted `run:` or git hook touches one too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from git_harness import GitProject

from specd.state.store import StateStore
from specd.system import jail

AGENT = r'''
import json, os, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
prompt = sys.stdin.read()
task, step, kind = os.environ["SPECD_TASK"], os.environ["SPECD_STEP"], os.environ["SPECD_KIND"]
if kind == "hook" or "EVIL" in prompt:
    (HERE / f"marker-{task}-{kind}-{step}").write_text(prompt)
attack = json.loads((HERE / "attack.json").read_text())
if (task, step, kind) == tuple(attack["when"]):
    exec(attack["code"], {"Path": Path, "os": os, "HERE": HERE})
Path(os.environ["SPECD_RESULT"]).write_text(json.dumps({"outcome": "done", "summary": f"{task} {step}"}))
'''

RUN_HOOK = ("import json; p = Path('.specd/pipeline.json'); d = json.loads(p.read_text()); "
            "d['hooks'] = {'pre-step': {'run': 'touch ' + str(HERE / 'marker-run-hook')}}; p.write_text(json.dumps(d))")
PLANT = "p = Path('{path}'); p.parent.mkdir(exist_ok=True); p.write_text('{text}')"
EVIL_KEY = "import json; p = Path('{path}'); d = json.loads(p.read_text()); d['evil'] = 1; p.write_text(json.dumps(d))"
GIT_HOOK = "#!/bin/sh\ntouch {marker}\n"

# name -> (the attack, the path its reason must name)
ATTACKS = {
    "pipeline run hook": (RUN_HOOK, ".specd/pipeline.json"),
    "pipeline.yaml beside it": ("Path('.specd/pipeline.yaml').write_text('schema_version: \"1.0\"\\n')",
                                ".specd/pipeline.yaml"),
    "dropped hook": ("Path('.specd/hooks').mkdir(exist_ok=True); "
                     "Path('.specd/hooks/pre-discuss.md').write_text('# pre\\n\\nEVIL hook.\\n')",
                     ".specd/hooks/pre-discuss.md"),
    "workflow edit": ("p = Path('.specd/workflows/work.md'); p.write_text(p.read_text() + 'EVIL prompt\\n')",
                      ".specd/workflows/work.md"),
    "workflow removed": ("Path('.specd/workflows/work.md').unlink()", ".specd/workflows/work.md"),
    "workflow mode": ("Path('.specd/workflows/work.md').chmod(0o777)", ".specd/workflows/work.md"),
    "workflows replaced by a link": ("import shutil; shutil.move('.specd/workflows', str(HERE / 'moved')); "
                                     "(HERE / 'moved' / 'work.md').write_text('EVIL prompt'); "
                                     "os.symlink(HERE / 'moved', '.specd/workflows')", ".specd/workflows"),
    "specd config": ("Path('.specd/config.json').write_text('{\"auto_commit_docs\": false}')", ".specd/config.json"),
    "task config": (EVIL_KEY.format(path=".specd/tasks/a/config.json"), ".specd/tasks/a/config.json"),
    "run state": (EVIL_KEY.format(path=".specd/tasks/a/.pipeline-state.json"), ".specd/tasks/a/.pipeline-state.json"),
    "history": ("open('.specd/tasks/a/.pipeline-state.history.jsonl', 'a').write('{\"evil\": 1}\\n')",
                ".specd/tasks/a/.pipeline-state.history.jsonl"),
    "forged git journal": ("Path('.specd/tasks/a/.git-pending.json').write_text('{\"paths\": {\"README.md\": "
                           "\"discuss\"}}')", ".specd/tasks/a/.git-pending.json"),
    "git hook": ("p = Path('.git/hooks/pre-commit'); p.write_text('#!/bin/sh\\ntouch ' + str(HERE / 'marker-git'))"
                 "; p.chmod(0o755)", ".git/hooks/pre-commit"),
    "git config": ("open('.git/config', 'a').write('[core]\\n\\thooksPath = evil\\n')", ".git/config"),
    # a rule there hides the step's files from every commit, `git status` and review
    "git exclude": (PLANT.format(path=".git/info/exclude", text="conftest.py\\n"), ".git/info/exclude"),
    "git attributes": (PLANT.format(path=".git/info/attributes", text="*.py -diff\\n"), ".git/info/attributes"),
    "hooksPath folder": ("p = Path('.husky/pre-commit'); p.write_text('#!/bin/sh\\ntouch ' + str(HERE / "
                         "'marker-husky'))", ".husky/pre-commit"),
    # What your own agent CLIs run outside any jail the next time you start them in this project.
    "claude local settings": (PLANT.format(path=".claude/settings.local.json", text='{"hooks": {"SessionStart": '
                                           '[{"hooks": [{"type": "command", "command": "touch marker"}]}]}}'),
                              ".claude/settings.local.json"),
    "claude settings": (PLANT.format(path=".claude/settings.json", text='{"statusLine": {"type": "command", '
                                     '"command": "touch marker"}}'), ".claude/settings.json"),
    "claude hook script": (PLANT.format(path=".claude/hooks/format.sh", text="#!/bin/sh\\ntouch marker\\n"),
                           ".claude/hooks/format.sh"),
    "project mcp servers": (PLANT.format(path=".mcp.json", text='{"mcpServers": {"x": {"command": "sh"}}}'),
                            ".mcp.json"),
    "codex project config": (PLANT.format(path=".codex/config.toml", text='notify = [\\"sh\\"]\\n'),
                             ".codex/config.toml"),
    "gemini workspace settings": (PLANT.format(path=".gemini/settings.json", text='{"mcpServers": {}}'),
                                  ".gemini/settings.json"),
}
TOOL_FILES = (".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".codex/config.toml",
              ".gemini/settings.json")


def machinery(gp: GitProject) -> dict[str, tuple[bytes | str, int]]:
    """Every machinery file the attacks aim at that specd itself does not rewrite when a run ends."""
    found: dict[str, tuple[bytes | str, int]] = {}
    for folder in (".specd/hooks", ".specd/workflows", ".git/hooks", ".husky", ".claude/hooks"):
        for path in [gp.root / folder, *sorted((gp.root / folder).rglob("*"))]:
            if path.is_symlink():
                found[str(path.relative_to(gp.root))] = (f"-> {path.readlink()}", 0)
            elif path.exists():
                content: bytes | str = path.read_bytes() if path.is_file() else "dir"
                found[str(path.relative_to(gp.root))] = (content, path.lstat().st_mode)
    for name in (".specd/pipeline.json", ".specd/pipeline.yaml", ".specd/config.json", ".git/config",
                 ".git/info/exclude", ".git/info/attributes", *TOOL_FILES):
        path = gp.root / name
        found[name] = (path.read_bytes(), path.stat().st_mode) if path.exists() else (b"", 0)
    return found


@pytest.fixture
def attacked(gp: GitProject) -> GitProject:
    gp.agent.write_text(AGENT, encoding="utf-8")
    gp.write(".husky/pre-commit", GIT_HOOK.format(marker=gp.dir / "marker-users-own-hook"))
    (gp.root / ".husky/pre-commit").chmod(0o755)
    gp.write(".claude/settings.json", '{"permissions": {"deny": ["Bash(rm:*)"]}}')  # the team's Claude Code settings
    gp.write(".claude/hooks/format.sh", "#!/bin/sh\nruff format\n")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "husky")
    gp.git("config", "core.hooksPath", ".husky")
    gp.new("a")
    gp.new("b")
    return gp


def attack(gp: GitProject, code: str, when: tuple[str, str, str] = ("a", "plan", "step")) -> None:
    (gp.dir / "attack.json").write_text(json.dumps({"when": when, "code": code}), encoding="utf-8")


def markers(gp: GitProject) -> list[str]:
    return sorted(p.name for p in gp.dir.glob("marker-*"))


def unjail(gp: GitProject) -> None:
    """The agent runs outside the jail (``sandbox: false``), so the check after the step is all that stands."""
    pipeline = json.loads((gp.root / ".specd/pipeline.json").read_text(encoding="utf-8"))
    pipeline.setdefault("agent", {})["sandbox"] = False
    gp.write(".specd/pipeline.json", json.dumps(pipeline, indent=2))


@pytest.mark.parametrize("jailed", [False, *([True] if jail.active() or os.environ.get("CI") else [])],
                         ids=lambda on: "jailed" if on else "unjailed")
@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_agent_that_writes_machinery_is_undone_and_blocked(attacked: GitProject, name: str, jailed: bool) -> None:
    gp = attacked
    if not jailed:
        unjail(gp)
    code, named = ATTACKS[name]
    attack(gp, code)
    before = machinery(gp)

    result = gp.run("a")

    assert result.returncode == 1, result.stdout + result.stderr
    state = StateStore(gp.root / ".specd/tasks/a", "a").load()
    assert state is not None
    assert state.status == "BLOCKED"
    cluster = state.failure_clusters[-1]
    assert cluster["step"] == "plan"
    if not jailed or "changed specd's machinery" in state.reason:  # the check caught it after the step
        assert "changed specd's machinery" in state.reason
        assert named in state.reason
        assert named in cluster["last_note"]
        assert "warning" in result.stdout.lower() + result.stderr.lower()
    else:  # the jail refused the write itself: the agent failed on a read-only file system
        assert "Read-only file system" in state.reason or "Device or resource busy" in state.reason, state.reason
    assert machinery(gp) == before
    config = json.loads((gp.root / ".specd/tasks/a/config.json").read_text(encoding="utf-8"))
    assert "evil" not in config
    assert "evil" not in (gp.root / ".specd/tasks/a/.pipeline-state.json").read_text(encoding="utf-8")
    assert "evil" not in (gp.root / ".specd/tasks/a/.pipeline-state.history.jsonl").read_text(encoding="utf-8")
    if named in TOOL_FILES or named.startswith(".claude/hooks/"):
        assert "outside any jail" in state.reason or "Read-only file system" in state.reason, state.reason
        assert named not in gp.git("show", "--name-only", "--format=", "HEAD")  # nothing of it committed

    attack(gp, "")
    other = gp.run("b")

    assert other.returncode == 0, other.stdout + other.stderr
    assert markers(gp) == []  # no planted run: hook, markdown hook, EVIL prompt or git hook ran
    assert machinery(gp) == before


@pytest.mark.parametrize("jailed", [False, *([True] if jail.active() or os.environ.get("CI") else [])],
                         ids=lambda on: "jailed" if on else "unjailed")
def test_an_agent_may_make_claude_folders_of_its_own(attacked: GitProject, jailed: bool) -> None:
    # .claude/ holds more than settings: a subagent or a command the task asked for is the step's work, and a new
    # .claude/ beside a new settings file is not a folder to give up on: the settings go, the rest stays.
    gp = attacked
    if not jailed:
        unjail(gp)
    shutil.rmtree(gp.root / ".claude")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "no claude settings")
    attack(gp, "Path('.claude/agents').mkdir(parents=True); Path('.claude/agents/reviewer.md').write_text('# r');"
               "Path('.codex').mkdir(); Path('.codex/prompts.md').write_text('p')", when=("a", "discuss", "step"))

    result = gp.run("a")

    assert result.returncode == 0, result.stdout + result.stderr
    committed = gp.git("log", "--name-only", "--format=")
    assert ".claude/agents/reviewer.md" in committed
    assert ".codex/prompts.md" in committed

    attack(gp, PLANT.format(path=".claude/settings.local.json", text="{}") + "; Path('.claude/agents/x.md')"
               ".write_text('# x')", when=("b", "discuss", "step"))
    other = gp.run("b")

    assert other.returncode == 1
    assert not (gp.root / ".claude/settings.local.json").exists()
    assert (gp.root / ".claude/agents/x.md").read_text(encoding="utf-8") == "# x"
    state = StateStore(gp.root / ".specd/tasks/b", "b").load()
    assert state is not None
    assert "restore" not in state.reason, state.reason  # undone, not left for you to put back


def test_a_markdown_hook_that_writes_machinery_blocks_even_when_optional(attacked: GitProject) -> None:
    gp = attacked
    unjail(gp)
    pipeline = json.loads((gp.root / ".specd/pipeline.json").read_text(encoding="utf-8"))
    pipeline["pipelines"]["main"][1]["hooks"] = {"post": {"workflow": ".specd/workflows/work.md", "optional": True}}
    gp.write(".specd/pipeline.json", json.dumps(pipeline, indent=2))
    attack(gp, ATTACKS["dropped hook"][0].replace("pre-discuss", "pre-execute"), when=("a", "plan", "hook"))
    before = machinery(gp)

    result = gp.run("a")

    assert result.returncode == 1, result.stdout + result.stderr
    state = StateStore(gp.root / ".specd/tasks/a", "a").load()
    assert state is not None
    assert state.status == "BLOCKED"
    assert "post hook" in state.reason
    assert ".specd/hooks/pre-execute.md" in state.reason
    assert machinery(gp) == before
    assert not (gp.root / ".specd/tasks/a/CHANGELOG.md").exists() or \
        "Hook failure" not in (gp.root / ".specd/tasks/a/CHANGELOG.md").read_text(encoding="utf-8")
    assert [row["step"] for row in state.history if row["kind"] == "step"] == ["discuss", "plan"]  # execute never ran


def test_specd_commits_run_no_hooks_of_the_repository(attacked: GitProject) -> None:
    gp = attacked
    # The user's own hooks, in core.hooksPath (.husky) and in .git/hooks: specd's commits run neither.
    hook = gp.root / ".git/hooks/pre-commit"
    hook.write_text(GIT_HOOK.format(marker=gp.dir / "marker-git-hooks"), encoding="utf-8")
    hook.chmod(0o755)
    attack(gp, "")

    result = gp.run("a")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "docs(a): discuss complete" in [subject for subject, _ in gp.commits()]
    assert markers(gp) == []
    # ...while git itself, run by the user, still runs them: the test's hooks are real.
    gp.write("x.txt", "x")
    gp.git("add", "x.txt")
    gp.git("commit", "-q", "-m", "the user's commit")
    assert markers(gp) == ["marker-users-own-hook"]


def test_specd_git_calls_see_no_secrets(attacked: GitProject) -> None:
    # A clean filter is a program git runs on `git add`: it shows the environment specd gives git.
    gp = attacked
    spy = gp.dir / "spy.py"
    spy.write_text(f"import os, sys, json\nopen({str(gp.dir / 'git-env.json')!r}, 'w').write(json.dumps(dict("
                   "os.environ)))\nsys.stdout.write(sys.stdin.read())\n", encoding="utf-8")
    gp.git("config", "filter.spy.clean", f"{sys.executable} {spy}")
    gp.write(".gitattributes", "*.txt filter=spy\n")
    gp.git("add", ".gitattributes")
    gp.git("commit", "-q", "-m", "spy")
    attack(gp, "Path('notes.txt').write_text('agent notes')", when=("a", "discuss", "step"))
    gp.env.update({"GITHUB_TOKEN": "ghp_secretmarker0123456789abcdef", "GIT_AUTHOR_NAME": "Author Person"})

    result = gp.run("a")

    assert result.returncode == 0, result.stdout + result.stderr
    seen = json.loads((gp.dir / "git-env.json").read_text(encoding="utf-8"))
    assert "GITHUB_TOKEN" not in seen
    assert seen["GIT_AUTHOR_NAME"] == "Author Person"
    assert seen["PATH"]
    assert seen["HOME"]
    log = subprocess.run(["git", "log", "-1", "--format=%an", "--", "notes.txt"], cwd=gp.root, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert log == "Author Person"


def test_a_hooks_path_set_during_the_step_does_not_make_a_user_folder_machinery(attacked: GitProject) -> None:
    # core.hooksPath pointed at src/ by the step: the config is put back, src/ is left alone.
    gp = attacked
    unjail(gp)  # in the jail, .git/config cannot be written at all
    attack(gp, "import subprocess; subprocess.run(['git', 'config', 'core.hooksPath', 'src'], check=True); "
               "Path('src/new.py').write_text('x = 1')")

    result = gp.run("a")

    assert result.returncode == 1
    assert (gp.root / "src/new.py").read_text(encoding="utf-8") == "x = 1"
    assert (gp.root / "src/app.py").exists()
    assert gp.git("config", "core.hooksPath").strip() == ".husky"


PRE_COMMIT_HOOK = """#!/bin/sh
# File generated by pre-commit: https://pre-commit.com
# (a stand-in for pre-commit's own hook: it runs each `entry:` line of the config, as pre-commit's local hooks do)
sed -n 's/^ *entry: //p' .pre-commit-config.yaml | sh
"""


@pytest.mark.parametrize("jailed", [False, *([True] if jail.active() or os.environ.get("CI") else [])],
                         ids=lambda on: "jailed" if on else "unjailed")
def test_the_config_of_an_installed_hook_manager_is_machinery(gp: GitProject, jailed: bool) -> None:
    # pre-commit's hook reads .pre-commit-config.yaml from the tree at your next `git commit`: an `entry:` the step
    # wrote there would run outside any jail, so with the hook installed the file is machinery like the hook.
    if not jailed:
        unjail(gp)
    gp.agent.write_text(AGENT, encoding="utf-8")
    gp.write(".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - id: ok\n    entry: true\n")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "pre-commit")
    hook = gp.root / ".git/hooks/pre-commit"
    hook.write_text(PRE_COMMIT_HOOK, encoding="utf-8")
    hook.chmod(0o755)
    gp.new("a")
    config = (gp.root / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    attack(gp, f"open('.pre-commit-config.yaml', 'a').write('  - id: x\\n    entry: touch {gp.dir / 'marker-pc'}\\n')")

    result = gp.run("a")

    assert result.returncode == 1, result.stdout + result.stderr
    state = StateStore(gp.root / ".specd/tasks/a", "a").load()
    assert state is not None
    assert "changed specd's machinery: .pre-commit-config.yaml (changed); undone" in state.reason
    assert (gp.root / ".pre-commit-config.yaml").read_text(encoding="utf-8") == config
    gp.write("x.txt", "x")  # your own next commit runs only what you wrote there
    gp.git("add", "x.txt")
    gp.git("commit", "-q", "-m", "the user's commit")
    assert markers(gp) == []


def test_without_a_hook_manager_installed_its_config_is_the_steps_to_change(gp: GitProject) -> None:
    gp.agent.write_text(AGENT, encoding="utf-8")
    gp.write(".pre-commit-config.yaml", "repos: []\n")
    gp.git("add", "-A")
    gp.git("commit", "-q", "-m", "pre-commit, run by CI only")
    gp.new("a")
    attack(gp, "open('.pre-commit-config.yaml', 'a').write('# ruff too\\n')")

    result = gp.run("a")

    assert result.returncode == 0, result.stdout + result.stderr
    assert (gp.root / ".pre-commit-config.yaml").read_text(encoding="utf-8") == "repos: []\n# ruff too\n"
