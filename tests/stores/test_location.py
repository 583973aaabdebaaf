"""One reader of store locations for every store (toolcycle.stores): a path, sqlite:///,
postgresql://; anything else refused with the problem named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolcycle import ConfigurationError, Conversation
from toolcycle.messages import Message
from toolcycle.playbook import Strategy, open_store
from toolcycle.stores import StoreLocation, store_location
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Trace


@pytest.mark.parametrize(("written", "engine", "target"), [
    ("traces.db", "sqlite", "traces.db"),
    ("sqlite:///traces.db", "sqlite", "traces.db"),
    ("sqlite:////tmp/traces.db", "sqlite", "/tmp/traces.db"),
    ("sqlite://", "sqlite", ":memory:"),
    (":memory:", "sqlite", ":memory:"),
    ("postgresql://u:p@h/db", "postgresql", "postgresql://u:p@h/db"),
    ("postgres://h/db", "postgresql", "postgres://h/db"),
])
def test_every_spelling_of_a_location(written: str, engine: str, target: str) -> None:
    assert store_location(written) == StoreLocation(engine, target)  # type: ignore[arg-type]


def test_a_path_is_expanded_and_a_url_described_without_its_password() -> None:
    assert store_location(Path("~/x.db")).target == os.path.expanduser("~/x.db")
    assert "p@" not in store_location("postgresql://u:p@h/db").describe()


@pytest.mark.parametrize("written", ["mysql://h/db", "sqlite://relative.db", "", "  ", 3, None])
def test_a_location_no_store_can_open_is_refused(written: object) -> None:
    with pytest.raises(ConfigurationError) as info:
        store_location(written)
    assert info.value.problems


def test_the_trace_playbook_and_conversation_stores_read_sqlite_urls(tmp_path: Path) -> None:
    traces = TraceStore(f"sqlite:///{tmp_path}/traces.db")
    traces.save(Trace("r1", agent_name="a", started_at=1.0))
    stored = traces.get("r1")
    assert (tmp_path / "traces.db").exists() and stored is not None and stored.run_id == "r1"
    playbook = open_store(f"sqlite:///{tmp_path}/playbook.db")
    playbook.put([Strategy(id="s-1", domain="d", advice="a")])
    assert (tmp_path / "playbook.db").exists()
    conversation = Conversation(f"sqlite:///{tmp_path}/conversations.db", "c")
    conversation.store.claim("c", "run", 5.0)
    conversation.store.append("c", "run", [Message.user("hi")], 0)
    assert (tmp_path / "conversations.db").exists() and len(conversation.messages) == 1
