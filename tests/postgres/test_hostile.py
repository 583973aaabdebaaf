"""Hostile text in ids and contents is stored verbatim and never runs as SQL, on both backends.

Every value reaches the database as a bound parameter; the statements' text never contains
data. Quotes, comment markers, statement separators, psycopg's own ``%s`` and ``%(x)s``, the
sqlite3 placeholder ``?`` and LIKE wildcards must all come back exactly as they went in, and
the tables must all still be there afterwards.
"""

from __future__ import annotations

import psycopg
import pytest

from toolcycle import Agent
from toolcycle.conversation import Conversation
from toolcycle.messages import Message
from toolcycle.models.scripted import ScriptedModel
from toolcycle.playbook import PlaybookStore, Strategy, open_store
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Step, Trace

HOSTILE = [
    "x'); DROP TABLE runs; --",
    "'; DELETE FROM strategies WHERE '1'='1",
    "Robert'); DROP TABLE conversations;--",
    "%s %s %(name)s %% ? ?? $1 \\ \\' \"quoted\"",
    "100% _under_ [brackets] *",
    "ünïcødé ✓ 𝕏 \u202eRTL\u202c",
    "line\nbreak\ttab\r\n",
    "/* comment */ SELECT pg_sleep(10); --",
]


def test_hostile_trace_ids_and_texts_round_trip(db_location: str) -> None:
    store = TraceStore(db_location, redact=False)
    for text in HOSTILE:
        _trace_round_trip(store, text)


def _trace_round_trip(store: TraceStore, text: str) -> None:
    trace = Trace(text, agent_name=text, model_name=text, user_prompt=text, started_at=1.0,
                  ended_at=2.0, status="success",
                  steps=[Step(1, 1, thought=text)])
    store.save(trace)
    loaded = store.get(text)
    assert loaded is not None and loaded.to_dict() == trace.to_dict()
    assert [r.run_id for r in store.list(agent=text)] == [text]
    assert store.get(text[:3] + "%") is None or text[3] == "%"  # wildcards are literal
    assert store.delete(text) and store.get(text) is None
    store.save(Trace("after", agent_name="a", started_at=2.0))
    assert [r.run_id for r in store.list()] == ["after"]  # every table is still there
    assert store.delete("after")


def test_hostile_playbook_keys_and_texts_round_trip(db_location: str) -> None:
    store = open_store(db_location)
    for text in HOSTILE:
        _playbook_round_trip(store, text)


def _playbook_round_trip(store: PlaybookStore, text: str) -> None:
    strategy = Strategy(id=text, domain=text, advice=text, tools=[text], applies_when=["stock"])
    store.put([strategy])
    got = store.get(text)
    assert got is not None and got.advice == text and got.domain == text
    assert [s.id for s in store.strategies(text)] == [text]
    store.put_candidate(text, text, {"key": text, "insights": []})
    assert store.get_candidate(text) == {"key": text, "insights": []}
    assert store.mark_observed(text) and not store.mark_observed(text)
    store.save_progress(text, text, {"note": text})
    assert store.progress(text) == {text: {"note": text}}
    assert [s.id for s, _ in store.search("stock", text, None)] == [text]
    store.delete([text])
    assert store.get(text) is None


def test_hostile_conversation_ids_and_messages_round_trip(db_location: str) -> None:
    for n, text in enumerate(HOSTILE):
        conv = Conversation(db_location, text)
        _conversation_round_trip(conv, text)
        assert conv.store.list_conversations() == HOSTILE[:n + 1]


def _conversation_round_trip(conv: Conversation, text: str) -> None:
    Agent(ScriptedModel([text])).run_sync(text, conversation=conv)
    assert [m.text for m in conv.messages] == [text, text]
    version = conv.store.claim(text, text, 60)
    assert conv.store.append(text, text, [Message.user(text)], version) == version + 1
    assert conv.messages[-1].text == text


def test_nul_characters_in_contents_round_trip_and_in_ids_are_refused_by_postgres(
    db_location: str,
) -> None:
    """Contents are JSON (a NUL is written ``\\u0000``) and round-trip on both backends; a
    PostgreSQL ``TEXT`` column cannot hold a NUL at all, so an id or name with one is refused
    there with psycopg's ``DataError`` and nothing is written (SQLite keeps it)."""
    store = TraceStore(db_location, redact=False)
    trace = Trace("nul", agent_name="a", user_prompt="before\x00after", started_at=1.0,
                  ended_at=2.0, status="success", steps=[Step(1, 1, thought="\x00")])
    store.save(trace)
    loaded = store.get("nul")
    assert loaded is not None and loaded.to_dict() == trace.to_dict()
    conv = Conversation(db_location, "nul")
    Agent(ScriptedModel(["\x00 answer"])).run_sync("\x00 question", conversation=conv)
    assert [m.text for m in conv.messages] == ["\x00 question", "\x00 answer"]
    odd = Trace("id\x00", agent_name="a", started_at=1.0)
    if not db_location.startswith("postgresql://"):
        store.save(odd)
        assert store.get("id\x00") is not None
        return
    with pytest.raises(psycopg.DataError, match="NUL"):
        store.save(odd)
    assert [r.run_id for r in store.list()] == ["nul"]
    with pytest.raises(psycopg.DataError, match="NUL"):
        Conversation(db_location, "c\x00").store.claim("c\x00", "run", 60)
