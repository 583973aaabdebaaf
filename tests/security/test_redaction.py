"""Secrets never reach a trace store's (or a playbook's) file (rel-08).

Each case writes a trace holding one secret through the real :class:`TraceStore`, closes it and
reads every byte of the SQLite files back: the secret must not be there. Covered: secret-named
keys in every naming style, in tool arguments and nested inside JSON tool results; values of
any type under such keys; the raw text of arguments that were not valid JSON; and
secret-looking values (keys, tokens, private keys, credentials in URLs) anywhere in text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, tool
from toolcycle.messages import Usage
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, Strategy
from toolcycle.tracing.redaction import Redactor
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

SECRET = "s3cr3t-Value-7f3a9c"

KEY_STYLES = [
    "api_key", "apiKey", "API-KEY", "x-api-key", "X_API_KEY", "accessToken", "access_token",
    "clientSecret", "client-secret", "CLIENT_SECRET", "authorization", "Authorization",
    "password", "Password", "db-password", "passwd", "passphrase", "private_key", "privateKey",
    "secret_key", "refresh_token", "session_token", "id_token", "bearer", "cookie",
    "credentials", "aws_secret_access_key", "access_key",
]


def stored_bytes(tmp_path: Path) -> bytes:
    """Every byte of the database files (main file, WAL and shared memory, if present)."""
    return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("t.db*")))


def save(tmp_path: Path, trace: Trace) -> bytes:
    with TraceStore(tmp_path / "t.db") as store:
        store.save(trace)
    return stored_bytes(tmp_path)


def trace_with(
    args: dict[str, Any] | None = None, result: str | None = "ok", *, error: str | None = None,
    text: str = "", model_name: str = "scripted", output: Any = None,
) -> Trace:
    record = ToolCallRecord("c1", "login", args, 1, 1, result=result, error=error)
    step = Step(1, 1, thought=text, thinking=text, tool_calls=[record], usage=Usage(3, 4))
    return Trace("r1", "agent", model_name, user_prompt=text or "log in", steps=[step],
                 started_at=1_780_000_000.0, ended_at=1_780_000_001.0,
                 status="success", output=output, metadata={"note": text})


def assert_absent(stored: bytes, *secrets: object) -> None:
    for secret in secrets:
        assert str(secret).encode() not in stored, f"{secret!r} reached the file"


# -- secret-named keys ----------------------------------------------------------------------


@pytest.mark.parametrize("key", KEY_STYLES)
def test_secret_named_argument(tmp_path: Path, key: str) -> None:
    stored = save(tmp_path, trace_with({key: SECRET, "user": "ann"}))
    assert_absent(stored, SECRET)
    assert b"ann" in stored  # the rest of the arguments is kept


@pytest.mark.parametrize("key", KEY_STYLES)
def test_secret_named_key_nested_in_a_tool_result(tmp_path: Path, key: str) -> None:
    result = json.dumps({"user": "ann", "config": {"items": [{"name": "db", key: SECRET}]}})
    stored = save(tmp_path, trace_with({"q": "config"}, result))
    assert_absent(stored, SECRET)
    assert b"ann" in stored


@pytest.mark.parametrize("key", ["password", "clientSecret", "x-api-key"])
def test_secret_named_key_in_a_tool_error_and_the_output(tmp_path: Path, key: str) -> None:
    nested = json.dumps({key: SECRET})
    trace = trace_with({"q": 1}, None, error=nested, output={"session": {key: SECRET}})
    assert_absent(save(tmp_path, trace), SECRET)


NON_STRING = {
    "int": 444455556666,
    "float": 31415.926535,
    "list": ["list-pass-1111", "list-pass-2222"],
    "dict": {"user": "u", "value": "dict-pass-3333"},
    "nested_list": [[{"v": "deep-pass-4444"}]],
}


@pytest.mark.parametrize("kind", sorted(NON_STRING))
@pytest.mark.parametrize("where", ["arguments", "result"])
def test_non_string_values_under_secret_keys(tmp_path: Path, kind: str, where: str) -> None:
    value = NON_STRING[kind]
    data = {"password": value, "user": "ann"}
    trace = (trace_with(data) if where == "arguments"
             else trace_with({"q": 1}, json.dumps({"session": data})))
    stored = save(tmp_path, trace)
    leaves = value if isinstance(value, list) else [value]
    assert_absent(stored, *json.dumps(leaves).replace("[", " ").replace("]", " ").split(", "))
    assert_absent(stored, *[s for s in json.dumps(value).split('"') if "pass" in s])


def test_a_benign_trace_is_stored_unchanged(tmp_path: Path) -> None:
    """No false positives on ordinary keys: token counts, a cache key, a 'basic' plan."""
    args = {"input_tokens": 5, "max_tokens": 10, "cache_key": "k1", "plan": "basic plan"}
    trace = trace_with(args, json.dumps({"tokens": 3, "keyword": "x", "author": "ann"}),
                       text="a basic understanding of the key points")
    with TraceStore(tmp_path / "t.db") as store:
        store.save(trace)
        loaded = store.get("r1")
    assert loaded is not None
    assert loaded.to_dict() == trace.to_dict()


# -- malformed arguments, through a real run ------------------------------------------------

MALFORMED = {  # raw argument text -> the secret in it
    "json_cut_short": ('{"api_key": "malformed-key-7777",', "malformed-key-7777"),
    "json_cut_in_value": ('{"user": "a", "password": "cut-pass-8888', "cut-pass-8888"),
    "python_literal": ("{'clientSecret': 'pyrepr-secret-9999'}", "pyrepr-secret-9999"),
    "query_string": ("api_key=query-key-aaaa&x=1", "query-key-aaaa"),
    "yaml_like": ("password: yaml-pass-bbbb", "yaml-pass-bbbb"),
    "camel_unquoted": ("{accessToken: unquoted-token-cccc}", "unquoted-token-cccc"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_raw_text_of_malformed_arguments(tmp_path: Path, case: str) -> None:
    @tool
    def login(user: str = "") -> str:
        """Log in."""
        return "ok"

    raw, secret = MALFORMED[case]
    model = ScriptedModel([call("login", raw=raw), "done"])
    Agent(model, "t", [login], trace_store=tmp_path / "t.db").run_sync("go", run_id="r1")
    stored = stored_bytes(tmp_path)
    assert b"r1" in stored and secret.encode() not in stored, secret


def test_secrets_in_a_tool_result_through_a_real_run(tmp_path: Path) -> None:
    """The reproduction of rel-08: a login tool echoing its configuration."""

    @tool
    def login(accessToken: str = "", clientSecret: str = "", password: int = 0) -> str:
        """Log in and return the session config."""
        return json.dumps({"user": "ann", "password": "result-pass-1111",
                           "db": "postgres://ann:urlpass9999@db/app"})

    args = {"accessToken": "access-token-2222", "clientSecret": "client-secret-3333",
            "password": 444455556666}
    model = ScriptedModel([call("login", args), "done"])
    Agent(model, "t", [login], trace_store=tmp_path / "t.db").run_sync("log in", run_id="r1")
    assert_absent(stored_bytes(tmp_path), "result-pass-1111", "urlpass9999",
                  "access-token-2222", "client-secret-3333", "444455556666")


# -- secret-looking values anywhere in text ---------------------------------------------------

LOOKING = {
    "bearer": ("Authorization: Bearer abc123DEF456ghi789", "abc123DEF456ghi789"),
    "openai_key": ("key sk-proj-AbCdEfGhIjKlMnOpQrStUv12", "AbCdEfGhIjKlMnOpQrStUv12"),
    "anthropic_key": ("sk-ant-api03-AbCdEfGhIjKlMnOpQrSt_uv-wx", "AbCdEfGhIjKlMnOpQrSt"),
    "aws_access_key_id": ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    "aws_secret_env": ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY01",
                       "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY01"),
    "jwt": ("jwt eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "SflKxwRJSMeKKF2QT4"),
    "github": ("gh ghp_" + "a1" * 18, "a1" * 18),
    "stripe": ("stripe sk_live_" + "9x" * 12, "9x" * 12),
    "hugging_face": ("hf_" + "Q7" * 17, "Q7" * 17),
    "pem": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAprivatebody8888\n"
            "-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEAprivatebody8888"),
    "url_password": ("postgres://ann:urlpass9999@db.example/app", "urlpass9999"),
    "basic_auth": ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    "env_dump": ("HOME=/root\nexport DB_PASSWORD=env-pass-dddd\nPATH=/bin", "env-pass-dddd"),
}


@pytest.mark.parametrize("case", sorted(LOOKING))
@pytest.mark.parametrize("where", ["prompt_and_thought", "tool_result", "tool_error", "output"])
def test_secret_looking_values_in_text(tmp_path: Path, case: str, where: str) -> None:
    text, secret = LOOKING[case]
    trace = {
        "prompt_and_thought": lambda: trace_with({"q": 1}, text=text),
        "tool_result": lambda: trace_with({"q": 1}, f"fetched page: {text} (end)"),
        "tool_error": lambda: trace_with({"q": 1}, None, error=f"RuntimeError: {text}"),
        "output": lambda: trace_with({"q": 1}, output=f"the answer: {text}"),
    }[where]()
    assert_absent(save(tmp_path, trace), secret)


def test_a_password_in_the_model_name_column(tmp_path: Path) -> None:
    """Plain columns (agent and model names, termination, error code) are redacted too."""
    stored = save(tmp_path, trace_with({"q": 1}, model_name="http://ann:colpass-eeee@llm/v1"))
    assert_absent(stored, "colpass-eeee")


def test_bearer_keeps_its_scheme_readable() -> None:
    assert Redactor().text("Authorization: Bearer abc.def") == "Authorization: Bearer [REDACTED]"


# -- the playbook file --------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["advice", "applies_when", "note"])
def test_playbook_strategies_are_redacted(tmp_path: Path, field: str) -> None:
    key = "sk-proj-PlaybookLeak0123456789"
    values: dict[str, Any] = {"advice": "Use the lookup tool.", "applies_when": ["lookup"]}
    values[field] = [key] if field == "applies_when" else f"call with {key}"
    pb = Playbook(str(tmp_path / "t.db"))
    pb.store.put([Strategy(id="s-1", domain="d", **values)])
    pb.close()
    assert_absent(stored_bytes(tmp_path), "PlaybookLeak0123456789")
