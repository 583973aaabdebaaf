"""Persistent conversations: history across runs and processes, refusal of concurrent runs,
nothing appended by failed runs, redaction, and the context budget; every test that keeps a
store runs on SQLite and on PostgreSQL (``db_location``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import pytest
from postgres_cluster import stored_bytes

from toolcycle import Agent, Limits
from toolcycle.conversation import Conversation, fit_budget
from toolcycle.errors import (
    ConfigurationError,
    ConversationBusy,
    ConversationConflict,
    ModelError,
)
from toolcycle.messages import Message
from toolcycle.models.scripted import ScriptedModel, call


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_history_carries_across_runs(db_location: str) -> None:
    conv = Conversation(db_location, "chat-1")
    model = ScriptedModel([call("add", {"a": 1, "b": 2}), "3", "you asked for 1 + 2"])
    agent = Agent(model, "Be brief.", tools=[add])
    first = agent.run_sync("what is 1 + 2?", conversation=conv)
    assert first.output == "3"
    second = agent.run_sync("what did I ask?", conversation=conv)
    assert second.output == "you asked for 1 + 2"
    # The second request held the whole first run (minus the instructions, added once).
    assert model.requests[-1].message_count == 1 + 4 + 1
    stored = conv.messages
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "user",
                                       "assistant"]
    assert all(m.role != "system" for m in stored)


def test_a_forced_run_is_appended_and_says_it_was_forced(db_location: str) -> None:
    """A run that returned joins the conversation whatever its status (the caller was shown
    that answer); its result says it was forced, not a success (docs/status.md)."""
    conv = Conversation(db_location, "forced")
    model = ScriptedModel(lambda _m, s: "a guess" if s.tool_choice == "none"
                          else call("add", {"a": 1, "b": 1}))
    result = Agent(model, tools=[add], limits=Limits(max_iterations=1)).run_sync(
        "add", conversation=conv)
    assert result.status == "forced" and not result.succeeded
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    assert conv.messages[-1].text == "a guess"


def test_failed_run_appends_nothing_and_releases(db_location: str) -> None:
    conv = Conversation(db_location, "chat")

    def fail(*_: object) -> None:
        raise ModelError("provider down")

    Agent(ScriptedModel(["hello"])).run_sync("hi", conversation=conv)
    before = conv.messages
    with pytest.raises(ModelError):
        Agent(ScriptedModel([call("add", {"a": 1, "b": 1}), fail]), tools=[add]).run_sync(
            "add", conversation=conv)
    assert conv.messages == before
    # released: the next run may go on, and its history is what the provider accepts
    assert Agent(ScriptedModel(["fine"])).run_sync("again", conversation=conv).output == "fine"
    assert len(conv.messages) == 4


def test_a_held_conversation_refuses_a_second_run(db_location: str) -> None:
    conv = Conversation(db_location, "chat")
    started, go_on = threading.Event(), threading.Event()

    def slow(*_: object) -> str:
        started.set()
        go_on.wait(10)
        return "first"

    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(
        Agent(ScriptedModel([slow])).run_sync("one", conversation=conv).output))
    worker.start()
    assert started.wait(10)
    with pytest.raises(ConversationBusy, match="in use by run"):
        Agent(ScriptedModel(["second"])).run_sync("two", conversation=conv)
    go_on.set()
    worker.join()
    assert outcome == ["first"]
    assert [m.text for m in conv.messages] == ["one", "first"]


def test_concurrent_threads_never_interleave(db_location: str) -> None:
    path = db_location
    results: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        for i in range(5):
            conv = Conversation(path, "shared")  # own store connection per thread
            try:
                out = Agent(ScriptedModel([call("add", {"a": n, "b": i}), f"r{n}.{i}"]),
                            tools=[add]).run_sync(f"q{n}.{i}", conversation=conv)
            except ConversationBusy:
                continue
            with lock:
                results.append(str(out.output))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _assert_whole_turns(Conversation(path, "shared").messages, len(results))


def _assert_whole_turns(messages: list[Message], runs: int) -> None:
    """Each run's four messages lie together, in order, with matching labels."""
    assert len(messages) == 4 * runs
    for k in range(runs):
        user, asked, answered, final = messages[4 * k: 4 * k + 4]
        assert [user.role, asked.role, answered.role, final.role] == [
            "user", "assistant", "tool", "assistant"]
        assert final.text == "r" + user.text[1:]
        assert answered.results[0].call_id == asked.tool_calls[0].id


_CHILD = """
import sys
from toolcycle import Agent
from toolcycle.conversation import Conversation
from toolcycle.errors import ConversationBusy
from toolcycle.models.scripted import ScriptedModel, call
def add(a: int, b: int) -> int:
    '''Add.'''
    return a + b
path, tag, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
done = 0
for i in range(rounds):
    try:
        Agent(ScriptedModel([call("add", {"a": 1, "b": i}), f"r{tag}.{i}"]), tools=[add]
              ).run_sync(f"q{tag}.{i}", conversation=Conversation(path, "shared"))
        done += 1
    except ConversationBusy:
        pass
print(done)
"""


def test_concurrent_processes_never_interleave(db_location: str) -> None:
    path = db_location
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, path, str(n), "6"],
                              stdout=subprocess.PIPE, text=True) for n in range(3)]
    done = 0
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        done += int(out.strip())
    assert done >= 1
    _assert_whole_turns(Conversation(path, "shared").messages, done)


def test_a_later_process_continues_the_conversation(db_location: str) -> None:
    path = db_location
    Agent(ScriptedModel(["nice to meet you, Ada"])).run_sync(
        "my name is Ada", conversation=Conversation(path, "p"))
    child = """
import sys
from toolcycle import Agent
from toolcycle.conversation import Conversation
from toolcycle.models.scripted import ScriptedModel
def answer(messages, settings):
    return "you are " + messages[0].text.split()[-1]
print(Agent(ScriptedModel([answer])).run_sync(
    "who am I?", conversation=Conversation(sys.argv[1], "p")).output)
"""
    out = subprocess.run([sys.executable, "-c", child, path], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == "you are Ada"
    assert len(Conversation(path, "p").messages) == 4


def test_stale_claim_cannot_append(db_location: str) -> None:
    store = Conversation(db_location, "c").store
    version = store.claim("c", "run-a", lease_s=0.001)
    import time
    time.sleep(0.01)
    assert store.claim("c", "run-b", lease_s=60) == version  # the lease ran out
    with pytest.raises(ConversationConflict):
        store.append("c", "run-a", [Message.user("late")], version)
    assert store.append("c", "run-b", [Message.user("b")], version) == version + 1
    assert [m.text for m in store.load("c")[0]] == ["b"]
    assert store.list_conversations() == ["c"]


def test_stored_messages_are_redacted(db_location: str) -> None:
    conv = Conversation(db_location, "s")
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    Agent(ScriptedModel(["noted"])).run_sync(f"my key is {key}", conversation=conv)
    assert key.encode() not in stored_bytes(db_location)
    assert "[REDACTED]" in conv.messages[0].text


def test_bad_configuration_is_reported_at_once(db_location: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        Conversation(42, "", max_tokens=0, lease_s=-1)  # type: ignore[arg-type]
    assert len(info.value.problems) == 4
    conv = Conversation(db_location, "x")
    with pytest.raises(ConfigurationError, match="not both"):
        Agent(ScriptedModel(["x"])).run_sync("hi", conversation=conv,
                                            message_history=[Message.user("a")])


def test_budget_drops_oldest_whole_turns(db_location: str) -> None:
    long = "x" * 400  # ~100 tokens a message
    conv = Conversation(db_location, "b", max_tokens=350)
    for i in range(4):
        Agent(ScriptedModel([long])).run_sync(f"turn {i} {long}", conversation=conv)
    model = ScriptedModel(["ok"])
    Agent(model).run_sync("last", conversation=conv)
    assert model.requests[0].message_count == 2 * 1 + 1  # one whole old turn fits, then "last"
    assert len(conv.messages) == 10  # the store keeps everything


def test_fit_budget_keeps_the_newest_turn_when_nothing_fits() -> None:
    history = [Message.user("a" * 100), Message.assistant("b" * 100)]
    assert fit_budget(history, 1) == history
    assert fit_budget(history, None) == history
    assert fit_budget([], 5) == []


def test_async_runs_on_one_loop_are_refused_too(db_location: str) -> None:
    conv = Conversation(db_location, "a")

    async def main() -> list[object]:
        gate, asked = asyncio.Event(), asyncio.Event()

        class Waiting(ScriptedModel):
            async def request(self, messages, settings):  # type: ignore[no-untyped-def]
                asked.set()
                await gate.wait()
                return await super().request(messages, settings)

        first = asyncio.ensure_future(Agent(Waiting(["first"])).run("one", conversation=conv))
        await asked.wait()  # the first run holds the conversation
        second = Agent(ScriptedModel(["x"])).run("two", conversation=conv)
        outcomes = await asyncio.gather(second, return_exceptions=True)
        gate.set()
        return [*outcomes, (await first).output]

    busy, output = asyncio.run(main())
    assert isinstance(busy, ConversationBusy) and output == "first"


def test_a_run_that_outlived_its_lease_is_refused_with_its_result(db_location: str) -> None:
    import time

    conv = Conversation(db_location, "c", lease_s=0.001)

    def slow_then_intruded(*_: object) -> str:
        time.sleep(0.01)  # the lease runs out; another run takes the conversation
        conv.store.claim("c", "intruder", 60)
        return "late answer"

    with pytest.raises(ConversationConflict) as info:
        Agent(ScriptedModel([slow_then_intruded])).run_sync("hi", conversation=conv)
    assert info.value.result is not None and info.value.result.output == "late answer"
    assert conv.messages == []
