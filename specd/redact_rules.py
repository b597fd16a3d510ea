"""The token shapes ``specd.redact`` masks, each with the literal hints every match of it contains.

A rule runs only on text that holds one of its hints (lower-cased), since most text holds none and a
substring test costs far less than a regex scan; tests check that every shape a rule matches holds a hint.

No pattern masks a quote or a backslash, so redacting the text of a JSON document keeps it valid JSON. A
rule with a group keeps group 1 (a label, a URL's scheme and user) and masks the rest of its match. Every
repeat that could start at many places is bounded, so a long line without the secret stays linear.
"""

from __future__ import annotations

import re

_PEM = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
# scheme://user:password@host: the scheme and user are kept, the password (up to the last @ before the
# host) is masked. A password never holds a slash, ? or # unescaped, so `http://host:8080/x@y` is left alone.
URL_CREDENTIALS = re.compile(
    r"(\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/?#@:\"'\\]{0,256}:)([^\s/?#\"'\\]{1,256})(?=@[^\s/?#@\"'\\]+)")

RULES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # A whole PEM block; an unterminated one (a torn log) is masked as far as its base64 runs.
    # The body may hold JSON-escaped newlines (\n) but never a quote, so JSON stays valid.
    (("private key",), re.compile(_PEM + r"""[^"]*?-----END[A-Z0-9 ]*PRIVATE KEY-----""")),
    (("private key",), re.compile(_PEM + r"(?:[A-Za-z0-9+/=\s]|\\[nr])*")),
    # Anthropic keys first: they also match the generic sk- rule, but this one
    # covers the dashes and underscores inside them in one go.
    (("sk-ant-",), re.compile(r"sk-ant-[A-Za-z0-9_\-]+")),
    # `sk-` first and the word boundary looked back at: a leading \b makes the scan try every position, and
    # every task named `task-…` holds `sk-` (36x slower over a 7 MB status index).
    (("sk-",), re.compile(r"sk-(?<=\bsk-)[A-Za-z0-9_\-]{8,}")),
    # Stripe secret and restricted keys, live and test; `sk_live` alone is a word, not a key.
    (("sk_live_", "rk_live_", "sk_test_", "rk_test_"), re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{8,}")),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), re.compile(r"\bgh[pousr]_[A-Za-z0-9]{16,}")),
    (("github_pat_",), re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}")),
    (("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_\-]{16,}")),
    (("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36,}")),
    (("aiza",), re.compile(r"\bAIza[A-Za-z0-9_\-]{35}")),
    (("akia", "asia"), re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    (("xox",), re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{8,}")),
    # A JWT: header.payload.signature, both JSON parts base64url of `{"`, which always starts eyJ.
    (("eyj",), re.compile(r"\beyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")),
    (("hooks.slack.com/services/",), re.compile(r"(hooks\.slack\.com/services/)[A-Za-z0-9_/\-]+")),
    (("://",), URL_CREDENTIALS),
    (("bearer",), re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=\-]+")),
    (("x-api-key",), re.compile(r"(?i)(x-api-key[\"']?\s*[:=]\s*[\"']?)[^\s\"'\\,}]+")),
    (("authorization",),
     re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)(?!bearer\b)[^\s\"'\\,}][^\"'\\\n,}]*")),
    # `password: x`, `DB_PASSWORD=x`, `"passwd": "x"` (also JSON-escaped), `pwd = x`: the value goes. The
    # separator must follow the name, so prose ("password policy") is left alone; a value starting with /
    # is a path (PWD=/home/me), not a password.
    (("password", "passwd", "pwd"),
     re.compile(r"(?i)((?:password|passwd|pwd)[A-Za-z0-9_]{0,40}+(?:\\?[\"'])?[ \t]*[:=][ \t]*(?:\\?[\"'])?)"
                r"(?![/\\\"'])[^\s\"'\\,}]+")),
)
