"""A ``postgresql://`` URL works wherever a SQLite path does: the Python API, the CLI's
``--db`` / ``--trace-db``, ``$TOOLCYCLE_TRACE_DB``, agent specs; and the failures are clear
(the extra missing, a server that cannot be reached, the password never printed)."""

from __future__ import annotations

import gc
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest

from toolcycle import Agent
from toolcycle.cli import main
from toolcycle.conversation import Conversation, PostgresConversationStore
from toolcycle.errors import ConfigurationError
from toolcycle.messages import Message
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, PostgresPlaybookStore, Strategy, open_store
from toolcycle.spec import AgentSpec
from toolcycle.stores.postgres import safe_url
from toolcycle.tracing.store import ENV_VAR, TraceStore
from toolcycle.tracing.trace import Trace

ROOT = Path(__file__).resolve().parents[2]


def test_the_cli_records_lists_and_shows_runs_in_postgres(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert main(["run", "examples/hello_world.gram", "--tools", "examples.hello_tools",
                 "--model", "python:tests.spec.cli_models:hello_model",
                 "--trace-db", postgres_url, "Hello, I'm Ada"]) == 0
    out, err = capsys.readouterr()
    assert out == "Hello, Ada! Nice to meet you.\n"
    assert f"toolcycle trace show --db {postgres_url}" in err
    assert main(["trace", "list", "--db", postgres_url]) == 0
    listed = capsys.readouterr().out
    assert "hello_world_agent" in listed
    [summary] = TraceStore(postgres_url).list()
    monkeypatch.setenv(ENV_VAR, postgres_url)  # the environment variable names it too
    assert main(["trace", "show", summary.run_id, "--no-color"]) == 0
    assert "sayHello" in capsys.readouterr().out


def test_an_agent_spec_binds_with_a_postgres_trace_store(postgres_url: str) -> None:
    spec = AgentSpec.load(ROOT / "examples/hello_world.gram")

    def sayHello(personName: str = "world") -> str:
        """Greets."""
        return f"Hello, {personName}!"

    agent = spec.bind([sayHello], trace_store=postgres_url, model=ScriptedModel(
        [call("sayHello", {"personName": "Ada"}), "Hello, Ada!"]))
    result = agent.run_sync("Hello, I'm Ada")
    stored = TraceStore(postgres_url).get(result.run_id)
    assert stored is not None and stored.status == "success" and len(stored.steps) == 2


def test_the_playbook_cli_reads_a_postgres_playbook(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    playbook = Playbook(postgres_url)
    assert isinstance(playbook.store, PostgresPlaybookStore)
    playbook.store.put([Strategy(id="s-1", domain="d", advice="Call quote once.",
                                 tools=["quote"], applies_when=["price"])])
    playbook.close()
    assert main(["playbook", "show", "--db", postgres_url]) == 0
    assert "s-1" in capsys.readouterr().out


def test_stores_in_two_schemas_of_one_database_stay_apart(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA team_a")
        conn.execute("CREATE SCHEMA team_b")
    a = open_store(f"{postgres_url}?options=-csearch_path%3Dteam_a")
    b = open_store(f"{postgres_url}?options=-csearch_path%3Dteam_b")
    a.put([Strategy(id="only-a", domain="d", advice="a")])
    assert b.get("only-a") is None and a.get("only-a") is not None
    conv = Conversation(f"{postgres_url}?options=-csearch_path%3Dteam_a", "c")
    Agent(ScriptedModel(["hi"])).run_sync("hello", conversation=conv)
    assert isinstance(conv.store, PostgresConversationStore)
    with psycopg.connect(postgres_url) as conn:
        tables = conn.execute("SELECT schemaname, tablename FROM pg_tables WHERE tablename IN "
                              "('conversations', 'strategies') ORDER BY 1, 2").fetchall()
    assert tables == [("team_a", "conversations"), ("team_a", "strategies"),
                      ("team_b", "strategies")]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_server_is_a_clear_error_without_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"postgresql://ann:s3cret@127.0.0.1:{_closed_port()}/db"
    for opener in (TraceStore, open_store, lambda u: Conversation(u, "c")):
        with pytest.raises(ConnectionError, match=r"connect to postgresql://ann:\*\*\*@") as info:
            opener(url)
        assert "s3cret" not in str(info.value)
    assert main(["trace", "list", "--db", url]) == 1
    err = capsys.readouterr().err
    assert "cannot connect" in err and "s3cret" not in err
    assert safe_url("postgres://u:p@h/d") == "postgres://u:***@h/d"
    assert safe_url("POSTGRESQL://u:p@h/d?password=p&x=1") == "POSTGRESQL://u:***@h/d?password=***&x=1"


def test_without_the_extra_a_url_names_the_extra_to_install(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        sys.modules["psycopg"] = None  # as if toolcycle[postgres] were not installed
        from toolcycle.errors import ConfigurationError
        from toolcycle.tracing.store import TraceStore
        from toolcycle.playbook import Playbook
        from toolcycle.conversation import Conversation
        for open_ in (TraceStore, Playbook, lambda url: Conversation(url, "c")):
            try:
                open_("postgresql://localhost/db")
            except ConfigurationError as exc:
                print(str(exc).splitlines()[1])
        TraceStore(sys.argv[1]).close()  # SQLite needs no extra
        print("sqlite ok")
    """)
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "t.db")],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == 4 and out[-1] == "sqlite ok"
    for line in out[:3]:
        assert "pip install 'toolcycle[postgres]'" in line
    assert issubclass(ConfigurationError, ValueError)


def test_a_dropped_connection_is_opened_again(postgres_url: str) -> None:
    """A server restart or an idle timeout ends the stores' sessions; the next transaction
    opens a new one instead of failing for the rest of the process's life."""
    gc.collect()  # stores of earlier tests held only by exception cycles: their sessions end
    traces, playbook = TraceStore(postgres_url), open_store(postgres_url)
    conv = Conversation(postgres_url, "c")
    traces.save(Trace("before", agent_name="a", started_at=1.0))
    playbook.put([Strategy(id="s-1", domain="d", advice="a")])
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        ended = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name = 'toolcycle'").fetchall()
    assert len(ended) == 3
    traces.save(Trace("after", agent_name="a", started_at=2.0))  # a transaction: goes on
    assert [r.run_id for r in traces.list()] == ["after", "before"]
    playbook.put([Strategy(id="s-2", domain="d", advice="b")])
    assert {s.id for s in playbook.strategies("d")} == {"s-1", "s-2"}
    version = conv.store.claim("c", "run", 60)
    assert conv.store.append("c", "run", [Message.user("hi")], version) == 1
