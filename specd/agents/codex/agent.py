"""The codex backend: one ``codex exec --json`` process per step or hook, read live.

The prompt goes to stdin (argv form, no shell) and the working directory is the project root. The outcome
comes through ``--output-schema`` (Codex's final message is that JSON object); an inline hook continues its
step's thread with ``exec resume``. Codex keeps its config and sessions in ``CODEX_HOME``: a folder per task
kept with the transcripts, seeded from the project's ``.specd/codex/`` and never the user's ``~/.codex``.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from specd.agents.anthropic.pricing import Price
from specd.agents.base import AgentContext, AgentRequest, AgentResult, Budget, BudgetExhausted, Usage
from specd.agents.cli_run import run_cli
from specd.agents.codex.check import needs_key
from specd.agents.codex.options import PRICE_KEYS, Options, host_rule
from specd.agents.codex.sessions import ThreadMap, retry_note
from specd.agents.codex.stream import read_stream
from specd.agents.codex.verdict import usage_of, verdict
from specd.agents.openai.prices import price_for
from specd.agents.proc import transcript_path
from specd.agents.report import outcome_schema
from specd.errors import ConfigError
from specd.redact import redact
from specd.system import keyguard
from specd.system.binds import READ_ENV
from specd.system.jail import Jail, active, backend_state
from specd.system.ownfiles import copy_into, read_regular

CONFIG_LIMIT = 1 << 20
GUARD_URL = "SPECD_CODEX_GUARD_URL"  # from _jail to the command line only; never in the jail's environment
PROJECT_CONFIG = Path(".specd") / "codex"  # a project's own Codex config (config.toml, AGENTS.md, ...)


class CodexAgent:
    name = "codex"
    holds: tuple[str, ...] = ()  # Codex tells its usage only when its turn ends: no per-step cap can be kept

    def __init__(self, binary: str, options: Options, ctx: AgentContext) -> None:
        # Its real path: a link in a bin folder (node_modules/.bin) may lie outside what the jail shows.
        self.binary = str(Path(binary).resolve())
        self.options = options
        self.ctx = ctx
        self.unpriced: set[str] = set()

    def check_budget(self, budget: Budget, source: object) -> None:
        """Before the run starts: a cost cap needs a priced model, or every step would count as free."""
        if budget.max_cost_usd is None and budget.max_step_cost_usd is None:
            return
        if not self.options.model or not price_for(self.options.model, self.options.pricing)[1]:
            model = repr(self.options.model) if self.options.model else "Codex's default model"
            raise ConfigError(f"{source}: no price is known for {model}, so a cost cap (agent.max_cost_usd or "
                              "--max-cost) cannot be kept",
                              fix="name the model (agent.model or --agent codex:<model>) and, if it is not in "
                                  "specd's table, its price: \"price_per_mtok\": {\"input\": 1.25, \"output\": 10}")

    def run(self, request: AgentRequest) -> AgentResult:
        if (reason := request.budget.check(Usage())) is not None:  # refused before a thread is opened
            raise BudgetExhausted(reason)
        threads = ThreadMap(request.task_dir, request.run_id)
        thread, before = threads.resumable(request)
        earlier = threads.earlier(request.conversation)[0] if request.attempt > 1 else None
        label = request.step + ("-hook" if request.kind == "hook" else "")
        transcript = transcript_path(request.task_dir, request.run_id, label, ".jsonl")
        schema = transcript.with_suffix(".schema.json")
        schema.write_text(json.dumps(outcome_schema(request.outcomes, request.output_schema)), encoding="utf-8")
        jail, env, own_provider = self._jail(request)
        argv = self.options.argv(self.binary, request, schema, thread=thread, own_provider=own_provider, env=env,
                                 url=env.pop(GUARD_URL, None))
        turns = self.options.turns_for(request)
        prompt = retry_note(request, earlier) + request.prompt
        with transcript.open("w", encoding="utf-8") as sink:
            sink.write(json.dumps({"type": "specd", "argv": [redact(a) for a in argv[1:]], "thread": thread,
                                   "resumed": thread is not None}) + "\n")
            returncode, log, stderr = run_cli(
                argv, prompt, request.project_root, jail, env, request.timeout,
                lambda lines: read_stream(lines, sink, self.ctx.events, request.step, turns),
                lambda log: log.over_turns)
            for line in stderr:  # redacted as they were read
                sink.write(json.dumps({"type": "stderr", "text": line}) + "\n")
        log.errors.extend(stderr)
        usage = usage_of(log.usage, before, self._price(request))
        if log.thread_id:
            threads.remember(request.conversation, log.thread_id, log.usage)
        return verdict(log, returncode, usage, transcript, turns)

    def _jail(self, request: AgentRequest) -> tuple[Jail, dict[str, str], bool]:
        """The agent tier, reaching the API's host, with Codex's own folder for this task ready in it."""
        jail = Jail.for_agent(request.settings, "codex", request.task_dir)
        env = dict(os.environ)
        url = self.options.url(env)
        if not jail.network:
            jail = replace(jail, hosts=(*jail.hosts, host_rule(url)))
        if self.options.key_env not in jail.env_allow:
            jail = replace(jail, env_allow=(*jail.env_allow, self.options.key_env))
        # codex is a node script that starts the native binary of a sibling package: both are shown
        install = [str(folder) for folder in install_folders(self.binary)]
        env[READ_ENV] = os.pathsep.join(filter(None, (env.get(READ_ENV), *install)))
        if not env.get(self.options.key_env) and not needs_key(self.options, env):
            env[self.options.key_env] = "local"  # a local server takes no key, but Codex wants the variable set
        state = backend_state(jail)
        assert state is not None  # the agent tier with a task folder always has one
        home = state[1]
        own_provider = _seed(home, request.project_root / PROJECT_CONFIG)
        env["CODEX_HOME"] = str(home.resolve())  # set here too: with `sandbox: false` the jail sets nothing
        key = env.get(self.options.key_env, "local")
        mine = own_provider or key == "local" or not (jail.enabled and active())
        made = None if mine else keyguard.guarded("openai", url, key)
        if made is not None:  # its key stays out of the jail: Codex signs with a stand-in (system/keyguard.py)
            env[GUARD_URL], env[self.options.key_env], rule = made
            jail = jail if jail.network else replace(jail, hosts=(*jail.hosts, rule))
        return jail, env, own_provider

    def _price(self, request: AgentRequest) -> Price:
        model = self.options.model_for(request) or ""
        # A step's own agent block may name its model and price; otherwise the pipeline's.
        step = {key: request.settings[key] for key in PRICE_KEYS if key in request.settings}
        price, known = price_for(model, {**self.options.pricing, **step})
        if not known and model not in self.unpriced:  # said once per model and run, not every step
            self.unpriced.add(model)
            self.ctx.events.emit("notice", message=f"no price known for Codex model {model or '(its default)'}: "
                                 "its tokens are recorded and its cost counted as $0 (set agent.price_per_mtok)")
        return price


def install_folders(binary: str) -> list[Path]:
    """An npm-installed codex: its package (the launcher) and the platform packages beside it (the native
    binary it starts), shown read-only in the jail; nothing for a binary installed some other way."""
    for folder in Path(binary).resolve().parents:
        scoped = folder.parent.name.startswith("@") and folder.parent.parent.name == "node_modules"
        if folder.parent.name == "node_modules" or scoped:
            return [folder, *sorted(folder.parent.glob(f"{folder.name}-*"))]
    return []


def _seed(home: Path, project: Path) -> bool:
    """Makes Codex's folder and copies the project's config into it; True when that config names its own
    model provider (then specd does not define one)."""
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)
    if project.is_dir():  # into a folder Codex (and so the model's commands) wrote: links replaced, not followed
        copy_into(project, home)
    try:
        config = read_regular(home / "config.toml", CONFIG_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return False
    return any(line.strip().startswith("model_provider") for line in config.splitlines())
