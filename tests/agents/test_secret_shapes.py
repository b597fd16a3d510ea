"""The newer token shapes, URL credentials, password assignments, secret env names and .env values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specd import redact as module
from specd.git.tree import is_secret
from specd.redact import MASK, redact, redact_obj, scrubbed_env
from specd.redact_rules import SHAPES, SHORT, holds_token
from specd.tasks.secrets import env_files, load_project_secrets

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P"


@pytest.mark.parametrize(("text", "kept"), [
    ("key sk_live_4eC39HqLyjWDarjtT1zdp7dc end", f"key {MASK} end"),
    ("rk_live_51Hx0abcdEFGH and sk_test_51Hx0abcdEFGH", f"{MASK} and {MASK}"),
    ("token glpat-xYz12_abc-DEF3456789.", f"token {MASK}."),
    ("npm_" + "a" * 36, MASK),
    ("k=AIza" + "B" * 35, f"k={MASK}"),
    (f"jwt {JWT} ok", f"jwt {MASK} ok"),
    # URL credentials: the scheme, user and host stay readable, only the password goes.
    ("postgres://app:hunter2pass@db.example.com:5432/app", f"postgres://app:{MASK}@db.example.com:5432/app"),
    ("REDIS_URL=redis://:pw@cache:6379", f"REDIS_URL=redis://:{MASK}@cache:6379"),
    ("mongodb+srv://admin:p@ss@cluster0/x", f"mongodb+srv://admin:{MASK}@cluster0/x"),
    ("password: hunter2", f"password: {MASK}"),
    ("export DB_PASSWORD=hunter2 next", f"export DB_PASSWORD={MASK} next"),
    ("passwd = s3cr3t!x", f"passwd = {MASK}"),
    ("PWD: hunter2", f"PWD: {MASK}"),
    ("pwd=abc", f"pwd={MASK}"),  # shorter than any env secret, still an assignment
    # a credential in a URL's query (`specd ui`'s own address, a signed download): its name stays
    ("open http://127.0.0.1:8765/?token=Zx9yQw8vTu7sRq6pOn5m now", f"open http://127.0.0.1:8765/?token={MASK} now"),
    ("https://a.blob.core.windows.net/c?sv=2020-08-04&sig=AbCdEf0123%3D&se=1",
     f"https://a.blob.core.windows.net/c?sv=2020-08-04&sig={MASK}&se=1"),
    ("GET /v1/x?API_KEY=abcdef123456#top", f"GET /v1/x?API_KEY={MASK}#top"),
])
def test_new_shapes_are_masked(text: str, kept: str) -> None:
    assert redact(text) == kept


@pytest.mark.parametrize("text", [
    "the password policy says twelve characters",
    "the password is weak, change it",
    "sk_live alone, and sk_live_ short",
    "see https://example.com/docs?user=a@b and http://localhost:8080/x",
    "ssh://git@github.com/o/r and git@github.com:o/r.git",
    "aGVsbG8gd29ybGQgYmFzZTY0IHdvcmQ=",
    "eyJ is how base64 JSON starts; eyJhbGciOiJIUzI1NiJ9 alone is a header",
    "npm_config_cache and AIza-short",
    "PWD=/home/me/project",
    "glpat- is GitLab's prefix",
    "http://h/list?page=2&sort=key and ?token=... in a help text, and a ?key=short flag",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_json_stays_valid_with_password_and_url_fields() -> None:
    doc = json.dumps({"password": "hunter2", "note": "db postgres://u:longpass1@h/x",
                      "nested": json.dumps({"passwd": "hunter2", "jwt": JWT})})
    out = redact(doc)
    parsed = json.loads(out)
    assert parsed["password"] == MASK
    assert parsed["note"] == f"db postgres://u:{MASK}@h/x"
    inner = json.loads(parsed["nested"])
    assert inner == {"passwd": MASK, "jwt": MASK}
    assert redact_obj({"db_pwd": "abc", "x": 1}) == {"db_pwd": MASK, "x": 1}


def test_secret_env_names_and_credential_urls_are_scrubbed() -> None:
    env = {"MYSQL_PWD": "a", "DATABASE_URL": "sqlite:///x.db", "GH_PAT": "b", "CI_JOB_JWT": "c",
           "REDIS_URL": "redis://:pw@h", "GITLAB_PAT_RO": "d", "PATH": "/bin", "PWD": "/p", "OLDPWD": "/o",
           "MY_PATH": "/m", "HOMEPAGE_URL": "https://example.com/", "PATTERN": "*.py"}
    assert scrubbed_env(env) == {"PATH": "/bin", "PWD": "/p", "OLDPWD": "/o", "MY_PATH": "/m",
                                 "HOMEPAGE_URL": "https://example.com/", "PATTERN": "*.py"}
    assert scrubbed_env(env, allow=["GH_PAT"])["GH_PAT"] == "b"


def test_a_variable_holding_a_tokens_shape_is_scrubbed_whatever_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    token, key_id = "ghp_" + "a1B2" * 9, "AKIA" + "ABCDEFGHIJKLMNOP"
    env = {"DEPLOY_HELPER": token, "UPLOADER": f"--id {key_id}", "GIT_COMMIT": "0123456789abcdef" * 2 + "01234567",
           "PATH": "/bin", "GREETING": "hello world"}
    assert scrubbed_env(env) == {"GIT_COMMIT": env["GIT_COMMIT"], "PATH": "/bin", "GREETING": "hello world"}
    monkeypatch.setenv("DEPLOY_HELPER", token)
    assert redact(f"pushed with {token}") == f"pushed with {MASK}"  # and masked where it is printed


def test_env_values_of_new_names_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYSQL_PWD", "mysqlpass-77")
    monkeypatch.setenv("CACHE_URL", "redis://:cachepass-99@cache:6379/0")
    assert redact("a mysqlpass-77 b") == f"a {MASK} b"
    # The password of a credential URL is masked on its own as well, wherever it is printed.
    assert redact("pw is cachepass-99") == f"pw is {MASK}"


@pytest.fixture
def fresh_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values added here are forgotten after the test, so later tests in this process see plain text."""
    monkeypatch.setattr(module, "_extra", set())
    monkeypatch.setattr(module, "_cache", (None, ()))


@pytest.mark.usefixtures("fresh_extra")
def test_dotenv_values_join_the_redaction_set(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("API_THING=dotenv-value-111\nSHORT=abc\nexport QUOTED='dotenv quoted 222'\n")
    (tmp_path / ".env.production").write_text("WHATEVER_NAME=prod-value-333\nREF=${WHATEVER_NAME}/x\n")
    (tmp_path / ".env.d").mkdir()  # a folder, not a file: skipped
    (tmp_path / "not.env").write_text("X=not-loaded-444\n")
    assert [p.name for p in env_files(tmp_path)] == [".env", ".env.production"]
    assert redact("dotenv-value-111 prod-value-333") == "dotenv-value-111 prod-value-333"
    assert load_project_secrets(tmp_path) > 0
    text = "a dotenv-value-111 b dotenv quoted 222 c prod-value-333/x d abc e not-loaded-444"
    assert redact(text) == f"a {MASK} b {MASK} c {MASK} d abc e not-loaded-444"


@pytest.mark.usefixtures("fresh_extra")
def test_a_project_without_env_files_adds_nothing(tmp_path: Path) -> None:
    assert load_project_secrets(tmp_path) == 0
    assert load_project_secrets(tmp_path / "missing") == 0



@pytest.mark.usefixtures("fresh_extra")
def test_nested_env_and_credential_file_values_are_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\nregion = eu-west-1-region\n"
                                               "aws_secret_access_key = home-aws-value-555\n")
    monkeypatch.setenv("HOME", str(home))
    root = tmp_path / "proj"
    for name, text in {".devcontainer/.env": "X=devcontainer-value-111\n", "a/b/c/d/e/f/.env": "Y=deep-value-222\n",
                       "node_modules/p/.env": "Z=dependency-value-333\n",
                       ".npmrc": "registry=https://registry.example.com/\n//r/:_authToken=npmrc-value-444\n"}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)

    assert load_project_secrets(root) == 3  # the project's own values; the user's are masked too
    assert redact("dependency-value-333") == "dependency-value-333"  # `status` spares itself node_modules' walk
    assert load_project_secrets(root, dependencies=True) == 4  # a run does not

    text = "devcontainer-value-111 deep-value-222 dependency-value-333 npmrc-value-444 home-aws-value-555"
    assert redact(text) == " ".join([MASK] * 5)
    assert redact("https://registry.example.com/ eu-west-1-region") == "https://registry.example.com/ eu-west-1-region"


@pytest.mark.parametrize(("text", "kept"), [
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", f"aws_secret_access_key = {MASK}"),
    ('{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', f'{{"SecretAccessKey": "{MASK}"}}'),
    ("AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", f"{MASK} {MASK}"),
    ("user,,AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", f"user,,{MASK},{MASK}"),
    # 40 characters with no AWS context is a hash or an id, not a key
    ("commit 0123456789abcdef0123456789abcdef01234567", "commit 0123456789abcdef0123456789abcdef01234567"),
])
def test_a_bare_aws_secret_key_is_masked_next_to_its_label_or_key_id(text: str, kept: str) -> None:
    assert redact(text) == kept


# Short texts are first scanned for every rule's hints at once (redact_rules.may_hold): what the rules then
# do must be what they did when each rule tested its own hints, on texts full of hints, near the length where
# the scan stops being used, and past it.
_PIECES = sorted({hint for hints, _ in module._RULES for hint in hints}) + [
    "sk-ant-api03-" + "a" * 90, "ghp_" + "b" * 36, "AKIA" + "C" * 16, "password=hunter2", " ", "/", "x", "=", ":"]


def _reference_redact(text: str) -> str:
    lowered = text.lower()
    for hints, pattern in module._RULES:
        if any(hint in lowered for hint in hints):
            text = pattern.sub(module._mask, text)
    return text


@given(st.lists(st.sampled_from(_PIECES) | st.text(min_size=0, max_size=40), max_size=40))
@settings(max_examples=300, deadline=None)
def test_the_one_scan_for_hints_changes_nothing_a_rule_does(parts: list[str]) -> None:
    text = "".join(parts)
    for sized in (text, text[:SHORT], (text + " " * SHORT)[: SHORT + 1]):
        assert module._redact_long(sized, ()) == _reference_redact(sized)
        lowered = sized.lower()
        assert holds_token(sized) == any(any(hint in lowered for hint in rule.hints) and rule.pattern.search(sized)
                                         for rule in SHAPES)


@pytest.mark.parametrize(("path", "never"), [
    (".env", True), (".env.local", True), ("app/.env.production", True), (".env/", True),  # a `.env` virtualenv
    (".env.example", False), ("x/.env.sample", False),  # templates hold no values: an agent documents a setting
    ("key.pem", True), ("a/b/server.key", True),  # a commit does not look inside to tell a certificate from a key
    ("id_rsa", True), ("id_ed25519", True), ("id_rsa.pub", False), ("id_map.py", False),
    ("credentials.json", True), ("x/credentials-prod.json", True), ("cert.p12", True), ("store.pfx", True),
    (".netrc", True), (".pgpass", True), (".npmrc", True), ("config/secrets.yml", True), (".git-credentials", True),
    ("sub/", False), (".envs/", True), ("env", False), ("notes.md", False), ("a.keys", False),
    ("credentials.yaml", False), ("KEY.PEM", False), ("my.env", False), ("x.p12.bak", False),
])
def test_a_commit_never_adds_a_new_file_the_jail_would_hide_by_its_name(path: str, never: bool) -> None:
    assert is_secret(path) is never
