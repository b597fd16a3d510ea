"""A step whose files hold a secret waits for a person, and those files wait out of every commit meanwhile.

The recorder's barrier (``specd.git.barrier``) finds them when the step or a hook closes, and withholds them
from each commit; the brain asks it after every stage and stops the run here. The wait is held like any other
(``specd.engine.waiting.HELD``): `specd approve` lets the files through as they are (``answers.answered_files``),
`specd reject --note` runs the step again with the note, and `specd continue` alone keeps waiting.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from specd.engine.loop import Stop
from specd.engine.waiting import waiting
from specd.errors import listed
from specd.git import collected, instructions, loaders
from specd.git.barrier import REJECTED, Hit
from specd.git.hidden import OWN
from specd.git.sources import GIT
from specd.pipeline.model import Step
from specd.state.model import Frame

Holds = Callable[[], list[Hit]]


def check(holds: Holds | None, task: str, frame: Frame, step: Step) -> None:
    """Stop the run (WAITING_FOR_HUMAN) when files changed so far hold secrets; the reason names each file and
    what its secret is, never the value."""
    hits = holds() if holds is not None else []
    if not hits:
        return
    name = shlex.quote(task)
    hid, held = [hit for hit in hits if hit.kind == "hidden"], [hit for hit in hits if hit.kind != "hidden"]
    files = [hit.as_dict() for hit in hits]  # one answer for both kinds: each file is approved as it is
    if not held:
        raise Stop("WAITING_FOR_HUMAN", hidden(hid, name, step), waiting("hidden", frame, step, files=files))
    one = len(held) == 1
    raise Stop("WAITING_FOR_HUMAN", f"{'a file' if one else f'{len(held)} files'} changed at step {step.name!r} "
               f"{'holds' if one else 'hold'} a secret and {'is' if one else 'are'} not committed: "
               f"{'; '.join(f'{hit.path} holds {hit.holds}' for hit in held)}. Take the secret out of the file, then "
               f"`specd approve {name}`; or `specd approve {name}` commits it as it is; or `specd reject {name} --note "
               f"TEXT` runs the step again with your note{f'. Also: {hidden(hid, name, step)}' if hid else ''}",
               waiting("secret", frame, step, files=files))


def hidden(hits: list[Hit], name: str, step: Step) -> str:
    """Why the run waits on source the step hid from git (``specd.git.hidden``), and the answers."""
    one, them = len(hits) == 1, "it" if len(hits) == 1 else "them"
    repos = sorted({hit.rule[:-len(GIT)] for hit in hits if hit.rule.endswith("/" + GIT)})
    settings = [hit for hit in hits if hit.rule.endswith("/" + GIT) and hit.path.startswith(hit.rule)]
    loads = [hit for hit in hits if hit.rule.startswith(loaders.RULE + " ")]
    again = [hit for hit in hits if hit.rule == REJECTED]  # their first hold said what runs them
    told = [hit for hit in hits if hit.rule in (instructions.RULE, instructions.EDITOR)] + loads + again
    runs = []  # what of yours runs or reads such files, by what is held
    if len(settings) + len(told) < len(hits):
        runs.append("your own next test run (pytest, jest, vitest, go test, cargo test) or import runs such a code "
                    "file")
    if settings:
        runs.append("your editor or git, in that repository, what its git settings name")
    if any(hit.rule == instructions.RULE for hit in hits):
        runs.append("your own claude, codex or gemini follows such instructions as yours")
    if any(hit.rule == instructions.EDITOR for hit in hits):
        runs.append("your editor, aider, docker compose or mise runs the commands such settings or tasks name")
    if again:
        runs.append("what you rejected runs as its first hold said, since the step ran again and left it")
    if loads:
        runs.append("pipenv, uv, node --env-file, direnv or npm load such settings into your next command, which then "
                    "runs what they name")
    ignoring = len(told) + sum(hit.rule == collected.RULE for hit in hits)  # the project's own ignoring hides these
    hiding = " (and the rule or repository hiding it)" if ignoring < len(hits) else ""
    # what hides them: each rule in its words once, and the repositories of their own in one phrase
    why = sorted({hit.holds for hit in hits if not hit.rule.endswith("/" + GIT)})
    if repos:
        why.append(f"in {repos[0]}{OWN}" if len(repos) == 1 else
                   f"in {', '.join(repos[:-1])} and {repos[-1]}, git repositories of their own, which git leaves out "
                   "of every commit")
    return (f"step {step.name!r} hid {'a file' if one else f'{len(hits)} files'} from git: "
            f"{listed([hit.path for hit in hits], 8)} ({'; '.join(why)}). No commit or review shows {them} (`git "
            f"status` at most {'its' if one else 'their'} folder), and outside any jail {'; '.join(runs)}. Look at "
            f"{them} and delete what you did not ask for{hiding}, then `specd approve "
            f"{name}`; or `specd reject {name} --note TEXT` runs the step again with your note")
