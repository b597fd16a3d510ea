"""The README's five-minute tour, run exactly as written: its code blocks are read from README.md itself.

Each block runs in one bash session (so the tour's `cd tour` holds for the blocks after it) in an empty
folder, with no API key and `specd` on PATH, as a newcomer types them. The README says what each block
does; this checks those words: exit codes, the files made, the reorder, the hook.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
MARK = "::specd-tour-block"


def tour_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## A five-minute tour\n", 1)[1].split("\n## ", 1)[0]
    return [block for block in re.findall(r"^```(?:sh|bash)\n(.*?)^```", section, re.M | re.S)]


def test_the_tour_runs_as_written(tmp_path: Path) -> None:
    blocks = tour_blocks()
    assert len(blocks) == 5, "the tour changed: say here what its new blocks should do"
    script = "".join(f"{block}\necho \"{MARK} {i} $?\"\n" for i, block in enumerate(blocks))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SPECD_"))}
    env.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1",
               GIT_AUTHOR_NAME="New Comer", GIT_AUTHOR_EMAIL="new@example.com", GIT_COMMITTER_NAME="New Comer",
               GIT_COMMITTER_EMAIL="new@example.com")
    ran = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    said = ran.stdout + ran.stderr
    codes = [int(line.split()[2]) for line in ran.stdout.splitlines() if line.startswith(MARK)]
    # init/new: 0; `continue --semi-auto` without a key: exit 2, saying so; the command agent's try: its last
    # line (`specd status`) 0; the reorder: validate and show, 0; the hook: `specd hooks`, 0
    assert codes == [0, 2, 0, 0, 0], said
    assert "ANTHROPIC_API_KEY" in said
    tour = tmp_path / "tour"
    task = tour / ".specd" / "tasks"
    assert (task / "my-task" / "FEATURE.md").is_file()
    assert (task / "try-it" / "discuss-prompt.md").is_file()  # the first answer ran discuss
    assert not (task / "try-it" / "research-prompt.md").exists()  # the second stopped at research's gate
    assert "WAITING_FOR_HUMAN" in said
    main = json.loads((tour / ".specd" / "pipeline.json").read_text(encoding="utf-8"))["pipelines"]["main"]
    assert [step["name"] for step in main[:2]] == ["research", "discuss"]  # the swap took
    assert "pre-execute" in said  # `specd hooks --step execute` lists the new hook...
    assert "convention" in said  # ...found by its name
    # the reorder never passes over an unrun step of a fresh task: my-task starts at research now
    status = subprocess.run([sys.executable, "-m", "specd", "status", "my-task", "--json"], cwd=tour, env=env,
                            capture_output=True, text=True, timeout=60, check=False)
    assert '"step": "research"' in status.stdout, status.stdout + status.stderr
