"""The token shapes ``specd.redact`` masks, each with a name and the literal hints every match of it contains.

A rule runs only on text that holds one of its hints (lower-cased), since most text holds none and a
substring test costs far less than a regex scan; tests check that every shape a rule matches holds a hint.

No pattern masks a quote or a backslash, so redacting the text of a JSON document keeps it valid JSON. A
rule with a group keeps group 1 (a label, a URL's scheme and user) and masks the rest of its match. Every
repeat that could start at many places is bounded, so a long line without the secret stays linear. A token's
literal prefix comes first and its word boundary is looked back at (`ghp_(?<=\bghp_)`): a leading \b makes
the scan try every position (0.5 s over 8 MB of random bytes, against 0.02 s).

``SHAPES`` are the rules that also hold a step before its commit (``specd.git.barrier``): a token, or a key
named as one. The rules that only go by a label (``password: x``, ``Bearer x``, a URL's password) stay out of
it: ordinary code is full of them (``password = input()``, ``postgres://user:pass@localhost`` in a README), and
a hold costs a person's time where a mask costs a few unreadable characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

# Every rule's pattern is compiled the first time it is used (``lazy``): most commands never redact a text that
# holds a rule's hint, and compiling every rule at import was a tenth of what `specd status TASK` costs to start.
from specd.system.lazyre import lazy


class Rule(NamedTuple):
    name: str  # what a hold says was found: never the match itself
    hints: tuple[str, ...]
    pattern: re.Pattern[str]
    token: bool = True  # a shape that holds a commit, not only a mask (see the module's docstring)
    mask: bool = True  # a shape redaction masks


_PEM = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
_B64_40 = r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"  # an AWS secret access key: 40 base64 characters, no more
# scheme://user:password@host: the scheme and user are kept, the password (up to the last @ before the
# host) is masked. A password never holds a slash, ? or # unescaped, so `http://host:8080/x@y` is left alone.
URL_CREDENTIALS = lazy(
    r"(\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/?#@:\"'\\]{0,256}:)([^\s/?#\"'\\]{1,256})(?=@[^\s/?#@\"'\\]+)")

# ?token=..., &api_key=..., a signed URL's &sig=... or X-Amz-Signature=...: the name is kept, its value masked
# (`specd ui`'s own address carries its token so). A value of five characters or fewer is a flag, not a key.
URL_QUERY_CREDENTIALS = lazy(
    r"(?i)([?&](?:access_token|id_token|refresh_token|auth_token|token|api_key|apikey|api-key|key|client_secret"
    r"|secret|sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|x-goog-credential)=)"
    r"[^&#\s\"'\\]{6,512}")
QUERY_HINTS = ("token=", "key=", "secret=", "sig=", "signature=", "credential=")
ALL: tuple[Rule, ...] = (
    # A whole PEM block; an unterminated one (a torn log) is masked as far as its base64 runs.
    # The body may hold JSON-escaped newlines (\n) but never a quote, so JSON stays valid.
    Rule("a private key block", ("private key",),
         lazy(_PEM + r"""[^"]*?-----END[A-Z0-9 ]*PRIVATE KEY-----""")),
    Rule("a private key block", ("private key",), lazy(_PEM + r"(?:[A-Za-z0-9+/=\s]|\\[nr])*")),
    # Anthropic keys first: they also match the generic sk- rule, but this one
    # covers the dashes and underscores inside them in one go.
    Rule("an Anthropic API key", ("sk-ant-",), lazy(r"sk-ant-[A-Za-z0-9_\-]+")),
    # Every task named `task-…` holds `sk-`: a leading \b here was 36x slower over a 7 MB status index. In a
    # commit, only a key with a digit in its first 40 characters counts: `sk-learn-compatible` in a README is prose.
    Rule("an API key (sk-...)", ("sk-",), lazy(r"sk-(?<=\bsk-)[A-Za-z0-9_\-]{8,}"), token=False),
    Rule("an API key (sk-...)", ("sk-",), lazy(r"sk-(?<=\bsk-)(?=[A-Za-z_\-]{0,40}\d)[A-Za-z0-9_\-]{20,}"),
         mask=False),
    # Stripe secret and restricted keys, live and test; `sk_live` alone is a word, not a key.
    Rule("a Stripe key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_"),
         lazy(r"[sr]k_(?:live|test)_(?<=\b[sr]k_live_|\b[sr]k_test_)[A-Za-z0-9]{8,}")),
    Rule("a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
         lazy(r"gh[pousr]_(?<=\bgh[pousr]_)[A-Za-z0-9]{16,}")),
    Rule("a GitHub token", ("github_pat_",), lazy(r"github_pat_(?<=\bgithub_pat_)[A-Za-z0-9_]{20,}")),
    Rule("a GitLab token", ("glpat-",), lazy(r"glpat-(?<=\bglpat-)[A-Za-z0-9_\-]{16,}")),
    Rule("an npm token", ("npm_",), lazy(r"npm_(?<=\bnpm_)[A-Za-z0-9]{36,}")),
    Rule("a Google API key", ("aiza",), lazy(r"AIza(?<=\bAIza)[A-Za-z0-9_\-]{35}")),
    # An AWS secret access key has no prefix of its own: it is known by its label, or by the key id just before
    # it (`AKIA... wJalr...`, a credentials.csv row). Before the key id rule, which masks the id this one needs.
    Rule("an AWS secret access key", ("secret",), lazy(
        r"(?i)((?:aws_?)?secret_?access_?key(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?)" + _B64_40)),
    Rule("an AWS secret access key", ("akia", "asia"), lazy(
        r"(A[KS]IA(?<=\bA[KS]IA)[A-Z0-9]{16}\b(?:\\?[\"'])?[\s,:;|=]{1,8}(?:\\?[\"'])?)" + _B64_40)),
    Rule("an AWS access key id", ("akia", "asia"), lazy(r"A[KS]IA(?<=\bA[KS]IA)[A-Z0-9]{16}\b")),
    Rule("a Slack token", ("xox",), lazy(r"xox[abprs]-(?<=\bxox[abprs]-)[A-Za-z0-9\-]{8,}")),
    # A JWT: header.payload.signature, both JSON parts base64url of `{"`, which always starts eyJ.
    Rule("a JSON web token", ("eyj",),
         lazy(r"eyJ(?<=\beyJ)[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")),
    Rule("a Slack webhook", ("hooks.slack.com/services/",),
         lazy(r"(hooks\.slack\.com/services/)[A-Za-z0-9_/\-]+")),
    Rule("a password in a URL", ("://",), URL_CREDENTIALS, token=False),
    Rule("a credential in a URL's query", QUERY_HINTS, URL_QUERY_CREDENTIALS, token=False),
    Rule("a bearer token", ("bearer",), lazy(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=\-]+"), token=False),
    Rule("an API key header", ("x-api-key",), lazy(r"(?i)(x-api-key[\"']?\s*[:=]\s*[\"']?)[^\s\"'\\,}]+"),
         token=False),
    Rule("an authorization header", ("authorization",),
         lazy(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer\b)[^\s\"'\\,}][^\"'\\\n,}]*"), token=False),
    # `password: x`, `DB_PASSWORD=x`, `"passwd": "x"` (also JSON-escaped), `pwd = x`: the value goes. The
    # separator must follow the name, so prose ("password policy") is left alone; a value starting with /
    # is a path (PWD=/home/me), not a password.
    Rule("a password", ("password", "passwd", "pwd"),
         lazy(r"(?i)((?:password|passwd|pwd)[A-Za-z0-9_]{0,40}+(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?)"
                    r"(?![/\\\"'])[^\s\"'\\,}]+"), token=False),
)

# What redaction runs: every rule but the stricter commit twin of the sk- rule (the looser one masks it first).
RULES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple((rule.hints, rule.pattern) for rule in ALL
                                                                  if rule.mask)
# What holds a step before its commit: the tokens, without the looser sk- rule.
SHAPES: tuple[Rule, ...] = tuple(rule for rule in ALL if rule.token)

# Up to this length, one scan for every rule's hints at once costs less than a substring test per hint (0.1-0.8 µs
# against 6-8 µs on a file's path); past it, the tests per hint are faster (memmem against the regex engine).
SHORT = 512


def _hints(groups: Iterator[tuple[str, ...]]) -> re.Pattern[str]:
    hints = sorted({hint for group in groups for hint in group}, key=len, reverse=True)
    return lazy("|".join(re.escape(hint) for hint in hints))


RULE_HINTS = _hints(hints for hints, _ in RULES)
SHAPE_HINTS = _hints(rule.hints for rule in SHAPES)


def may_hold(lowered: str, hints: re.Pattern[str]) -> bool:
    """False when ``lowered`` is short and holds none of ``hints``: then no rule needs a look at it (a step's
    200,000 new paths and files are mostly such)."""
    return len(lowered) > SHORT or hints.search(lowered) is not None


def holds_token(text: str) -> bool:
    """Whether ``text`` holds one of the token shapes (``SHAPES``): a key, whatever the variable holding it is
    called (``DEPLOY_HELPER=ghp_...``)."""
    lowered = text.lower()
    return may_hold(lowered, SHAPE_HINTS) and any(
        any(hint in lowered for hint in rule.hints) and rule.pattern.search(text) for rule in SHAPES)
