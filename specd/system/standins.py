"""Which sign-ins of a jailed agent CLI become stand-ins, and where its base URL then points: the key guard.

``system/keyguard.py`` is the guard (a server on loopback that signs the model's own calls with the real key);
this module decides, from the environment, what a CLI signs in with and hands those keys to a guard, giving
the CLI stand-ins and the guard's address in their place. A `claude login` kept in the task's copy of Claude
Code's config folder is ``system/signin.py``'s. Codex is given its base URL on its command line
(``specd.agents.codex``), so it asks for a guard by itself.
"""

from __future__ import annotations

from collections.abc import Mapping

from specd.system.keyguard import guarded

# backend -> (the API its guard signs calls of, the variables it signs in with by key, the variable of its base
# URL, its API when that is unset). CLAUDE_CODE_OAUTH_TOKEN (`claude setup-token`: a Claude subscription's) goes
# out as a bearer token too.
BY_ENV = {"claude_code": ("anthropic", ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"),
                          "ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
          "gemini": ("gemini", ("GEMINI_API_KEY",), "GOOGLE_GEMINI_BASE_URL",
                     "https://generativelanguage.googleapis.com")}
# Claude Code on Microsoft Foundry by key: its key, its base URL (or a resource that names the host), x-api-key.
FOUNDRY = ("ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_FOUNDRY_BASE_URL")


def foundry_api(env: Mapping[str, str]) -> str:
    """Where Claude Code sends a Foundry request: its base URL, or the host its resource names ("" for neither:
    Claude Code reports that itself)."""
    resource = env.get("ANTHROPIC_FOUNDRY_RESOURCE")
    return env.get(FOUNDRY[1]) or (f"https://{resource}.services.ai.azure.com/anthropic" if resource else "")


def shield(backend: str, env: Mapping[str, str], child: dict[str, str]) -> tuple[str, ...]:
    """For a jailed Claude Code or Gemini CLI: its key variables in ``child`` (and a `claude login`'s tokens in
    its copy of Claude Code's config folder) become stand-ins and its base URLs the guards'; returns the guards'
    rules for the jail's network list, none when nothing was changed (another backend, Vertex AI, or a Google
    login, whose tokens live in its config folder)."""
    if backend not in BY_ENV or env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() == "true":
        return ()
    api, names, base, default = BY_ENV[backend]
    rules: list[str] = []
    if backend == "claude_code":
        from specd.system import signin

        rules += signin.shield(env, child)
        if child.get(FOUNDRY[0]) and (made := guarded(api, foundry_api(env), child[FOUNDRY[0]])) is not None:
            child[FOUNDRY[1]], child[FOUNDRY[0]], rule = made
            child.pop("ANTHROPIC_FOUNDRY_RESOURCE", None)  # its base URL is the guard's now (the two exclude)
            rules.append(rule)
    for name in names:
        if child.get(name) and (made := guarded(api, env.get(base) or default, child[name])) is not None:
            child[base], child[name], rule = made
            rules.append(rule)
    return tuple(dict.fromkeys(rules))  # one rule per guard
