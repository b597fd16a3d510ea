"""Examples for each verb's `--help`, kept in one table so every verb has them and a test can run them by name.

Each is a command line a user types as it is, with a few words on what it does. `cli.py` puts them at the
end of the verb's help (click's epilog), so a verb's own module stays about what it does.
"""

from __future__ import annotations

EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "init": (("specd init", "make .specd/ here"),
             ("specd init --pipeline yaml", "also write an editable copy of the built-in pipeline")),
    "new": (('specd new add-csv --description "Export reports as CSV"', "a task and its starter documents"),
            ("specd new add-docs --after add-csv", "a task that runs once add-csv is complete")),
    "continue": (("specd continue add-csv --semi-auto", "run, stopping only at pause_in_semi_auto steps"),
                 ("specd continue add-csv --approve --note 'ship it'", "answer the gate it waits at, go on"),
                 ("specd continue add-csv --agent 'cmd:./my-agent.sh' --max-cost 2", "another agent, a budget")),
    "run": (("specd run --all -j 4", "every unfinished task, four at a time, each in its worktree"),
            ("specd run add-csv add-docs --keep-waiting", "these two; a gate waits for its answer"),
            ("specd run --all --executor temporal --temporal localhost:7233", "on Temporal's workers")),
    "worker": (("specd worker --temporal localhost:7233 --remote origin -j 2 --agent claude_code",
                "take tasks from Temporal, two at a time"),),
    "land": (("specd land add-csv", "merge a finished task's branch into yours"),
             ("specd land add-docs --with-deps", "land the tasks it needs first, in order")),
    "status": (("specd status", "every task, waiting ones first"),
               ("specd status add-csv", "one task: its steps, cost, answers and what comes next"),
               ("specd status --graph --mermaid", "who needs whom, as a Mermaid flowchart")),
    "approve": (("specd approve add-csv --note 'looks right'", "go on past the gate or escalation"),),
    "reject": (("specd reject add-csv --note 'handle empty files'", "back to the step before, with the note"),),
    "skip": (("specd skip add-csv", "count the waiting step as done and go on"),),
    "cancel": (("specd cancel add-csv", "stop it for good (a running one saves first)"),),
    "retry": (("specd retry add-csv", "run the failed step again, then go on"),),
    "rerun": (("specd rerun add-csv --from plan", "run again from plan; the history is kept"),),
    "logs": (("specd logs add-csv -f", "follow a run's events and the agent's output"),
             ("specd logs add-csv --step execute", "one step's transcript")),
    "pipeline": (("specd pipeline validate", "check the pipeline file and its workflows"),
                 ("specd pipeline show --json", "the effective pipeline, as data")),
    "hooks": (("specd hooks --step execute", "the hooks around execute, and where each comes from"),),
    "demo": (("specd demo", "the whole pipeline on a sample project, no API key"),
             ("specd demo --semi-auto < /dev/null", "stop at the first gate")),
    "ui": (("specd ui", "the dashboard on http://127.0.0.1:8765, in your browser"),
           ("specd ui --host 0.0.0.0 --token \"$(openssl rand -hex 16)\" --no-browser", "for other machines")),
    "serve": (("specd serve", "the control plane alone: runs what is answered, on the page or anywhere"),
              ("specd serve -j 4 --port 0", "four tasks at a time, the page on any free port")),
    "mcp": (("specd mcp", "serve this project on stdio to the MCP client that starts it "
                          "(`claude mcp add specd -- specd mcp` makes Claude Code start it)"),),
    "doctor": (("specd doctor", "is this machine and project ready for a run?"),),
    "test": (("specd test", "run every case in .specd/tests/ (no tokens, your tasks untouched)"),
             ("specd test --record add-csv", "write .specd/tests/add-csv.yaml from that task's run"),
             ("specd test --builtin --json", "the built-in pipeline's own cases, as data")),
}


def epilog(name: str) -> str | None:
    """The examples of verb ``name`` as a help epilog (``\\b`` keeps click from rewrapping them)."""
    found = EXAMPLES.get(name)
    if not found:
        return None
    width = max((len(line) for line, _ in found if len(line) <= 60), default=0)
    lines = [f"  {line:<{width}}  {what}" if len(line) <= 60 else f"  {line}\n  {'':<4}{what}"
             for line, what in found]
    return "\b\nExamples:\n" + "\n".join(lines)
