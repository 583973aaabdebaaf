"""Secret-named keys are recognised by their meaning, not their exact spelling (r2-14).

The key regex was anchored at the end of a singular word, so ``passwords``, ``api_keys`` and
``clientSecrets`` kept their values verbatim. Keys are now read by their words: any case or
separator, a plural, a trailing container word (``credentials_list``). The other direction
matters as much: keys that only share a word with a secret (token counts, ``keyboard``) keep
their values, or traces lose the figures people read them for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcycle.tracing.redaction import REDACTED, Redactor
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

SECRET = "s3cr3t-Plural-42af"

PLURAL_KEYS = [
    "passwords", "Passwords", "api_keys", "apiKeys", "API_KEYS", "x-api-keys", "tokens",
    "secrets", "client_secrets", "clientSecrets", "accessTokens", "access-tokens",
    "refresh_tokens", "credentials_list", "passwordList", "api_key_array", "cookies",
    "passphrases", "privateKeys", "authorizations", "bearer_tokens", "session-tokens",
]

HARMLESS: dict[str, Any] = {
    "token_count": 12, "max_tokens": 100, "maxTokens": 100, "input_tokens": 5,
    "output_tokens": 7, "cache_read_input_tokens": 3, "max_new_tokens": 64, "tokens": 3,
    "budget_tokens": 1024, "keyboard": "qwerty", "keys": ["a", "b"], "monkey": "zoo",
    "secretary": "ann", "author": "bob", "primary_key": "id", "sort_key": "name",
    "tokenizer": "bpe", "password_hint": "your pet", "tokens_used": 9, "keyword": "x",
}


@pytest.mark.parametrize("key", PLURAL_KEYS)
@pytest.mark.parametrize("value", [SECRET, [SECRET, "second-" + SECRET], {"github": SECRET}])
def test_plural_and_container_keys_are_redacted(key: str, value: Any) -> None:
    stored = Redactor().dumps({"arguments": {key: value, "user": "ann"}})
    assert SECRET not in stored
    assert json.loads(stored)["arguments"] == {key: REDACTED, "user": "ann"}


@pytest.mark.parametrize("key", PLURAL_KEYS)
def test_plural_keys_nested_in_json_text_are_redacted(key: str) -> None:
    result = json.dumps({"config": [{"name": "db", key: [SECRET]}]})
    assert SECRET not in Redactor().dumps({"result": result})


@pytest.mark.parametrize(("key", "value"), sorted(HARMLESS.items()))
def test_keys_that_only_share_a_word_keep_their_values(key: str, value: Any) -> None:
    data = {"arguments": {key: value}, "result": json.dumps({key: value})}
    assert json.loads(Redactor().dumps(data)) == data


@pytest.mark.parametrize("text", [
    "passwords=hunter2-pw", "api_keys: hunter2-pw", "ACCESS_TOKENS=hunter2-pw",
    "{'clientSecrets': 'hunter2-pw'}",
])
def test_plural_assignments_in_free_text_are_redacted(text: str) -> None:
    assert "hunter2-pw" not in Redactor().text(text)


@pytest.mark.parametrize("text", [
    "max_tokens=100", "usage: input_tokens: 5, output_tokens: 7", "tokens: 3",
    "maxTokens=2048",
])
def test_token_counts_in_free_text_are_kept(text: str) -> None:
    assert Redactor().text(text) == text


def test_plural_secret_never_reaches_the_trace_file(tmp_path: Path) -> None:
    """Through the real store: the bytes of the SQLite files hold none of the values."""
    record = ToolCallRecord("c1", "login", {"passwords": ["pw-one-1a", "pw-two-2b"]}, 1, 1,
                            result=json.dumps({"api_keys": {"prod": "key-prod-3c"}}))
    trace = Trace("r1", "agent", "scripted", user_prompt="log in",
                  steps=[Step(1, 1, tool_calls=[record])], status="success",
                  started_at=1_780_000_000.0, ended_at=1_780_000_001.0)
    with TraceStore(tmp_path / "t.db") as store:
        store.save(trace)
    stored = b"".join(p.read_bytes() for p in sorted(tmp_path.glob("t.db*")))
    for secret in ("pw-one-1a", "pw-two-2b", "key-prod-3c"):
        assert secret.encode() not in stored
