"""The settings that make a program run code of their choosing, by name: in a ``.env`` and in an ``.npmrc``.

``specd.git.loaders`` holds a step's new key file that sets one (the value decides for some); redaction leaves the
value of one in a ``.env`` in view (``tasks.secrets``): a library's path, an interpreter's option, an editor's name
are no secret, and a person deciding on such a file's hold must read them (``LD_PRELOAD=[REDACTED]`` tells
nothing). A value that is a secret by its name or shape (``redact.is_secret_var``) is masked whatever its key.
"""

from __future__ import annotations

# Variables that make a program run code of their choosing: a library loaded into every process, an interpreter's
# start-up or search path, a command a tool runs for you (an editor, a pager, ssh for git), git's own settings.
RUNS = frozenset({
    "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "PATH",
    "NODE_OPTIONS", "NODE_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONBREAKPOINT", "PYTHONWARNINGS",
    "PYTHONUSERBASE", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "EDITOR", "VISUAL", "PAGER", "BROWSER",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_EDITOR", "GIT_PAGER", "GIT_ASKPASS", "SSH_ASKPASS",
    "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM", "GIT_PROXY_COMMAND",
})
PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
# npm's settings that name a program it runs, or the registry whose packages' install scripts it runs. An .npmrc
# takes them as `key=value`; a .env as `npm_config_key` (npm reads its settings from the environment as well).
NPM = frozenset({"node-options", "script-shell", "shell", "git", "editor", "browser", "viewer", "init-module",
                 "onload-script", "globalconfig", "userconfig", "registry"})
# git's settings by the environment may carry a credential (an `http.extraHeader`): held, never left in view
KEPT_MASKED = frozenset({"GIT_CONFIG_PARAMETERS"})


def setting(key: str, npmrc: bool) -> str | None:
    """The setting ``key`` makes (in an .npmrc when ``npmrc``, else in a .env), when it is one that can run code:
    its name in ``RUNS`` or ``NPM`` ("LD_PRELOAD", "node-options"), else None."""
    lowered = key.lower()
    if lowered.startswith("npm_config_"):
        lowered = lowered[len("npm_config_"):].replace("_", "-")
        npmrc = True
    if npmrc:  # a scope's registry is "@scope:registry"; an auth line ("//host/:_authToken") is not a setting here
        return lowered if lowered in NPM or lowered.endswith(":registry") else None
    upper = key.upper()
    return upper if upper in RUNS or upper.startswith(PREFIXES) else None


def in_view(key: str) -> bool:
    """Whether the value of ``key`` in a .env names a program or its options, no secret: left in view."""
    upper = key.upper()
    return upper in RUNS and upper not in KEPT_MASKED
