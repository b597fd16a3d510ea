"""The `specd` commands of README.md's shell blocks, read from the README itself, and click's parse of each.

A command is a line of a ```sh or ```bash block (continuation lines joined, the comment cut off, heredoc bodies
left out) in which `specd` is a command word: at the line's start or after `&&`, `||`, `|`, `;`, `$(`, or a `--`
that hands another program a command line (`claude mcp add specd -- specd mcp`). A path such as `.specd/` or a
package such as `specd-workflow` is not one.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import click

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```(?:sh|bash)\n(.*?)^```", re.M | re.S)
HEADING = re.compile(r"^## (.+)$", re.M)
HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")
SPECD = re.compile(r"(?:^|&&|\|\||\||;|\$\(|\s--)\s*specd(?=\s|$|\))")
STOPS = {"|", "||", "&&", ";", "<", ">", ">>", ")", "&"}


@dataclass(frozen=True)
class Line:
    section: str  # the `## ` heading the block sits under
    text: str  # as written, continuations joined and the comment cut off
    key: str  # the same with its spaces collapsed: what the test's tables name


def _code(line: str) -> str:
    """The line without its comment: a `#` after a space, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _lines(block: str) -> list[str]:
    kept: list[str] = []
    until = ""
    for line in block.replace("\\\n", " ").splitlines():
        if until:
            until = "" if line.strip() == until else until
            continue
        code = _code(line)
        if found := HEREDOC.search(code):
            until = found.group(1)
        kept.append(code)
    return kept


def readme_commands(readme: Path = README) -> list[Line]:
    """Every line of the README's shell blocks that runs `specd`, in the README's order."""
    text = readme.read_text(encoding="utf-8")
    headings = [(m.start(), m.group(1)) for m in HEADING.finditer(text)]
    found: list[Line] = []
    for block in BLOCK.finditer(text):
        section = [name for start, name in headings if start < block.start()][-1]
        for code in _lines(block.group(1)):
            if SPECD.search(code):
                found.append(Line(section, code.strip(), " ".join(code.split())))
    return found


def invocations(line: str) -> list[list[str]]:
    """The argv (after `specd`) of each `specd` command on a shell line."""
    lexer = shlex.shlex(line.replace("$(", " ( "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens, found, current = list(lexer), [], None
    for i, token in enumerate(tokens):
        if current is not None and token in STOPS:
            found.append(current)
            current = None
        elif current is not None:
            current.append(token)
        elif token == "specd" and (i == 0 or tokens[i - 1] in STOPS | {"(", "--"}):
            current = []
    return found + ([current] if current is not None else [])


def parse(argv: list[str]) -> str:
    """Click's parse of ``specd ARGV``, resilient parsing off, down to the last subcommand; returns its name.
    A renamed verb or option raises click's UsageError, as the command line would."""
    from specd.cli import cli

    ctx = cli.make_context("specd", list(argv), resilient_parsing=False)
    command: click.Command = cli
    while isinstance(command, click.Group):
        rest = [*vars(ctx).get("_protected_args", []), *ctx.args]
        name, sub, rest = command.resolve_command(ctx, rest)
        assert name is not None, argv
        assert sub is not None, argv
        ctx = sub.make_context(name, rest, parent=ctx, resilient_parsing=False)
        command = sub
    return ctx.command_path


def inline_commands(readme: Path = README) -> list[str]:
    """The `specd ...` code spans of the README's prose (tables, lists), each once: shorthand, not shell lines
    (`specd approve|reject|skip TASK [--note TEXT]`), so they are checked by their verbs and options only."""
    prose = re.sub(r"^```.*?^```", "", readme.read_text(encoding="utf-8"), flags=re.M | re.S)
    spans = (" ".join(span.split()) for span in re.findall(r"`(specd [^`]+)`", prose))
    return list(dict.fromkeys(span.split(" && ")[0] for span in spans if "@" not in span))


def unknown_words(span: str) -> list[str]:
    """The verbs and options a shorthand span names that the CLI does not have (empty when all are real)."""
    from specd.cli import cli

    words = span.split()[1:]
    verbs = re.split(r"[|/]", words[0]) if words and not words[0].startswith("-") else [""]
    options = {o.strip("[]").split("=")[0] for w in words for o in re.split(r"[|/]", w) if o.strip("[").startswith("-")}
    unknown: list[str] = []
    for verb in filter(None, verbs):
        command = cli.get_command(click.Context(cli), verb)
        if isinstance(command, click.Group) and len(words) > 1:
            command = command.get_command(click.Context(command), words[1])
        if command is None:
            unknown.append(verb)
            continue
        known = {o for p in [*command.params, *cli.params] for o in [*p.opts, *p.secondary_opts]} | {"--help", "-h"}
        unknown += [o for o in sorted(options) if o not in known]
    return unknown
