"""Fallbacks: a learned alternative answering for a failing tool (toolcycle.playbook.fallback)."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Message, RunContext, tool
from toolcycle.approval import Approve
from toolcycle.context import CancelToken
from toolcycle.messages import Usage
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.fallback import alternative_of, fallback_tool, fell_back
from toolcycle.playbook.strategy import Repair, Strategy

HISTORY = {"RX1": 12, "RX2": 0, "RX3": 7}


def delay_feed(service: str) -> str:
    """Live delay of a service."""
    if service == "RX3":
        return f"{service}: 7 min (live)"
    raise TimeoutError("delay_feed timed out after 5.0 s")


def service_history(service: str) -> str:
    """Recorded delay of a service."""
    return f"{service}: delay {HISTORY[service]} min"


#: The repair the pitfalls below say (typed: what the fallback acts on).
HISTORY_INSTEAD = Repair("alternative", "delay_feed", via="service_history",
                         via_args=("service",))

PITFALL = Strategy(id="p", domain="rail", kind="pitfall", applies_when=["delay", "service"],
                   advice="delay_feed times out. Call service_history(service) instead.",
                   tools=["delay_feed", "service_history"], support=3,
                   detail="delay_feed timed out after … s",  # (the failure it was learned from)
                   error_class="delay_feed timed out after … s", repair=HISTORY_INSTEAD)


def feed_first(messages: list[Message], settings: ModelSettings) -> Any:
    """Calls delay_feed whatever it is told, then service_history after an error, then answers
    from the last result (what the 1.5B did in most delay runs shown the pitfall)."""
    service = next(m.text for m in messages if m.role == "user").split()[-1].strip("?")
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("delay_feed", {"service": service})
    if results[-1].is_error:
        return call("service_history", {"service": service})
    return "Delay: " + results[-1].content.splitlines()[-1].split(": ")[-1]


def _agent(pb: Playbook, *, read_only: bool = True) -> Agent[Any, str]:
    return Agent(ScriptedModel(feed_first), "Answer with the tools.",
                 [tool(delay_feed, read_only=True), tool(service_history, read_only=read_only)],
                 name="rail", playbook=pb)


def _playbook(*strategies: Strategy) -> Playbook:
    pb = Playbook(":memory:", routines=True)
    pb.store.put(list(strategies or [PITFALL]))
    return pb


async def test_a_failing_tool_shown_its_pitfall_calls_the_alternative_for_the_model() -> None:
    pb = _playbook()
    result = await _agent(pb).run("What is the delay of service RX1?")
    assert result.output == "Delay: delay 12 min"
    assert len(result.trace.steps) == 2  # was 3: delay_feed, service_history, the answer
    [record] = result.trace.tool_calls
    assert record.name == "delay_feed" and record.error is None
    assert record.result == (
        "Ran service_history for you, since delay_feed timed out (already called; it "
        "answered such tasks in earlier runs; answer from its result):\n"
        'service_history({"service": "RX1"}) -> RX1: delay 12 min')
    assert fell_back("delay_feed", record.result)
    # learning from it: neither "delay_feed, then answer" nor a working delay_feed, but a
    # timeout of delay_feed that service_history answered after
    assert pb.flush(30)
    assert [c for c in pb.store.candidates() if "delay_feed" in str(c)] == []
    stats = pb.tool_stats("rail")
    assert (stats["delay_feed"].calls, stats["delay_feed"].timeouts) == (1, 1)
    assert stats["delay_feed"].alternative == "service_history"
    assert (stats["service_history"].calls, stats["service_history"].misses) == (1, 0)
    pitfall = pb.store.get("p")
    assert pitfall is not None and pitfall.helpful == 1  # followed: its alternative answered


async def test_a_call_that_works_is_the_tools_own() -> None:
    result = await _agent(_playbook()).run("What is the delay of service RX3?")
    assert result.trace.tool_calls[0].result == "RX3: 7 min (live)"
    assert not fell_back("delay_feed", result.trace.tool_calls[0].result)


async def test_a_pitfall_without_the_failure_it_was_learned_from_falls_back_on_none() -> None:
    """A pitfall is a lesson about its tool, shown with the tool to every run offered it
    (toolcycle/playbook/tool_lessons.py), whatever the task's words: so it falls back on the
    failure it was learned from alone, never on any failure of the tool."""
    bare = Strategy(**{**PITFALL.to_dict(), "detail": "", "error_class": ""})  # no failure
    result = await _agent(_playbook(bare)).run("Which platform for RX1?")
    assert result.trace.strategies_shown == ["p"]  # in delay_feed's description
    first = result.trace.tool_calls[0]
    assert first.error is not None and "timed out" in first.error
    assert [c.name for c in result.trace.tool_calls] == ["delay_feed", "service_history"]


async def test_a_pitfall_held_back_beside_its_sequence_still_falls_back() -> None:
    sequence = Strategy(id="q", domain="rail", kind="sequence", applies_when=["delay", "service"],
                        advice="Call service_history(service), then answer. Do not use "
                               "delay_feed for this kind of task.",
                        tools=["service_history"], support=3)
    result = await _agent(_playbook(sequence, PITFALL)).run("What is the delay of service RX1?")
    assert result.trace.strategies_shown == ["q", "p"]  # the pitfall is with its tool
    assert "delay_feed times out" not in result.messages[0].text  # not with the task's
    assert len(result.trace.steps) == 2 and result.output == "Delay: delay 12 min"


async def test_no_fallback_to_a_tool_that_may_change_something() -> None:
    result = await _agent(_playbook(), read_only=False).run("What is the delay of service RX1?")
    assert result.trace.tool_calls[0].error is not None
    assert len(result.trace.steps) == 3


async def test_without_routines_nothing_falls_back() -> None:
    pb = Playbook(":memory:", routines=False)
    pb.store.put([PITFALL])
    result = await _agent(pb).run("What is the delay of service RX1?")
    assert result.trace.tool_calls[0].error is not None


@pytest.mark.parametrize(("advice", "tools", "repair", "pair"), [
    ("delay_feed times out. Call service_history(service) instead.",
     ["delay_feed", "service_history"], HISTORY_INSTEAD, ("delay_feed", "service_history")),
    ("find_ticker fails with: unknown company …. Call staff_directory(name), then "
     "weather(city) instead.", ["find_ticker", "staff_directory", "weather"],
     Repair("alternative", "find_ticker", via="staff_directory", via_args=("name",),
            then=("weather(city)",)), None),
    ("get_quote needs ticker from find_ticker: call find_ticker(company) first and pass its "
     "result as ticker.", ["get_quote", "find_ticker"],
     Repair("prerequisite", "get_quote", via="find_ticker", argument="ticker"), None),
    ('fare_quote fails with: invalid date …. Pass date like "05.03.2026".', ["fare_quote"],
     Repair("argument", "fare_quote", argument="date", example="05.03.2026"), None),
    ("delay_feed times out. Do not wait on it: try another tool that can answer.",
     ["delay_feed"], None, None),
])
def test_only_a_pitfall_whose_repair_is_one_other_tool_is_an_alternative(
        advice: str, tools: list[str], repair: Repair | None,
        pair: tuple[str, str] | None) -> None:
    strategy = Strategy(id="s", domain="d", kind="pitfall", advice=advice, tools=tools,
                        repair=repair)
    assert alternative_of(strategy) == pair


def test_an_alternative_needing_an_argument_the_call_lacks_is_no_fallback() -> None:
    @tool(read_only=True)
    def history_on(service: str, date: str) -> str:
        """Recorded delay on a date."""
        return "0"

    @tool(read_only=True)
    def station_board(station: str) -> str:
        """Departures."""
        return "-"

    assert fallback_tool(tool(delay_feed), history_on) is None
    assert fallback_tool(tool(delay_feed), station_board) is None
    assert fallback_tool(tool(delay_feed), tool(service_history, read_only=True)) is not None


async def test_an_alternative_that_fails_too_says_so_and_an_empty_result_falls_back() -> None:
    @tool(read_only=True)
    def broken_history(service: str) -> str:
        """Recorded delay (down as well)."""
        raise ConnectionError("archive offline")

    @tool
    def empty_feed(service: str) -> str:
        """Live delay (finds nothing)."""
        return "[]"

    both_down = fallback_tool(tool(delay_feed), broken_history)
    assert both_down is not None
    text = await both_down.invoke(None, {"service": "RX1"})  # type: ignore[arg-type]
    assert text == ('delay_feed timed out; broken_history({"service": "RX1"}), which answered '
                    "such tasks in earlier runs, failed too: ConnectionError: archive offline")
    assert fell_back("delay_feed", text) and not fell_back("broken_history", text)
    empty = fallback_tool(empty_feed, tool(service_history, read_only=True))
    assert empty is not None
    text = await empty.invoke(None, {"service": "RX2"})  # type: ignore[arg-type]
    assert text.startswith("Ran service_history for you, since empty_feed found nothing ([])")
    assert fell_back("empty_feed", text) and not fell_back("delay_feed", text)
    assert not fell_back("delay_feed", "RX3: 7 min (live)")


async def test_no_fallback_under_an_approval_policy_it_would_bypass() -> None:
    from toolcycle import ApprovalRequest, Approve

    seen: list[str] = []

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Approve:
        seen.append(request.tool_name)
        return Approve()

    agent = Agent(ScriptedModel(feed_first), "Answer with the tools.",
                  [tool(delay_feed, read_only=True), tool(service_history, read_only=True)],
                  name="rail", playbook=_playbook(), approval=policy)
    result = await agent.run("What is the delay of service RX1?")
    assert [c.name for c in result.trace.tool_calls] == ["delay_feed", "service_history"]
    assert seen == ["delay_feed", "service_history"]  # the policy decided every call


async def test_an_agent_with_fallbacks_only_retrieves_once_per_run_for_its_offer() -> None:
    pb = _playbook()
    agent = _agent(pb)
    asked: list[str] = []
    own = pb.strategies_shown_for

    def counting(task: str, agent_name: str, tool_names: Any) -> Any:
        asked.append(task)
        return own(task, agent_name, tool_names)

    pb.strategies_shown_for = counting  # type: ignore[method-assign]
    await agent.run("What is the delay of service RX1?")
    assert len(asked) == 1  # the stand-ins'; no routine to hold back, so select asks nothing


async def test_the_alternative_counts_against_its_own_call_limit() -> None:
    def twice(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        return call("delay_feed", {"service": "RX1"}) if len(results) < 2 else "done"

    agent = Agent(ScriptedModel(twice), "Answer with the tools.",
                  [tool(delay_feed, read_only=True),
                   tool(service_history, read_only=True, max_calls=1)],
                  name="rail", playbook=_playbook())
    result = await agent.run("What is the delay of service RX1?")
    first, second = (r.result for r in result.trace.tool_calls)
    assert fell_back("delay_feed", first)
    assert second == ("delay_feed timed out; `service_history` may be called at most 1 time(s) "
                      "per run; it was not called. Use what you have.")
    assert not fell_back("delay_feed", second)


async def test_a_pitfalls_alternative_asks_for_no_answer() -> None:
    """How a run ends is a lesson about its task (a sequence retrieved by its words); a
    pitfall is about its tool, shown to runs of any task that offer the tool, so its
    alternative is no run's sequence: the answer is not asked for once it answered (a task
    that calls it as a first step would be cut short)."""
    choices: list[Any] = []

    def wandering(messages: list[Message], settings: ModelSettings) -> Any:
        choices.append(settings.tool_choice)
        if settings.tool_choice == "none" or sum(m.role == "tool" for m in messages) >= 3:
            return feed_first(messages, settings)
        return (feed_first(messages, settings) if not any(m.role == "tool" for m in messages)
                else call("service_history", {"service": "RX2"}))  # looks at another service

    agent = Agent(ScriptedModel(wandering), "Answer with the tools.",
                  [tool(delay_feed, read_only=True), tool(service_history, read_only=True)],
                  name="rail", playbook=_playbook())
    result = await agent.run("What is the delay of service RX1?")
    assert result.output == "Delay: delay 0 min" and "none" not in choices
    # without the fallback (an approval policy sees every call), the model's own call of the
    # alternative completes it
    choices.clear()
    gated = Agent(ScriptedModel(feed_first), "Answer with the tools.",
                  [tool(delay_feed, read_only=True), tool(service_history, read_only=True)],
                  name="rail", playbook=_playbook(), approval=lambda ctx, request: Approve())
    gated_result = await gated.run("What is the delay of service RX1?")
    assert [c.name for c in gated_result.trace.tool_calls] == ["delay_feed", "service_history"]
    steps = gated_result.trace.steps
    assert [s.tool_choice for s in steps] == [None, None, None]


# -- a pitfall with its tool, in any task: the learned failure alone proves it applies -------

DOWN = "inventory service unreachable: 503 Service Unavailable"


def inventory_live(item: str) -> str:
    """Live stock of an item."""
    if item == "gone":
        raise LookupError(f"no item {item!r}")
    if item == "none":
        return "[]"
    raise ConnectionError(DOWN)


def warehouse_ledger(item: str) -> str:
    """The ledger's count of an item."""
    return f"{item}: 42 units"


def live_first(messages: list[Message], settings: ModelSettings) -> Any:
    """Calls inventory_live for the prompt's last word, the ledger after an error, then answers
    from the last result."""
    item = next(m.text for m in messages if m.role == "user").split()[-1].strip("?")
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("inventory_live", {"item": item})
    if results[-1].is_error and len(results) == 1:
        return call("warehouse_ledger", {"item": item})
    return "Count: " + results[-1].content.splitlines()[-1]


def _stock_agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(live_first), "Answer with the tools.",
                 [tool(inventory_live, read_only=True), tool(warehouse_ledger, read_only=True)],
                 name="depot", playbook=pb)


async def _learned_stock_playbook() -> Playbook:
    """A playbook that learned the pitfall from runs (not written by hand): three stock
    questions, each failing on inventory_live and answered from the ledger."""
    pb = Playbook(":memory:", routines=True)
    agent = _stock_agent(pb)
    for item in ("wrench", "reel", "jack"):
        await agent.run(f"How many units are in stock of item {item}")
    assert pb.flush(30)
    [pitfall] = [s for s in pb.store.strategies() if alternative_of(s) is not None]
    assert pitfall.tools == ["inventory_live", "warehouse_ledger"]
    return pb


async def test_a_task_worded_apart_falls_back_on_the_failure_the_pitfall_was_learned_from() -> None:
    """depot, ReAct at 94309cb: "What quantity of the Corwen ladder do we hold?" shared no
    word with the stock tasks the pitfall came from; shown nothing, the 1.5B met the 503 and
    wandered for 3-7 turns in all 3 repeats, though the playbook knew the alternative."""
    pb = await _learned_stock_playbook()
    result = await _stock_agent(pb).run("What quantity do we hold of ladder")
    [pitfall] = [s for s in pb.store.strategies() if alternative_of(s) is not None]
    assert result.trace.strategies_shown == [pitfall.id]  # with inventory_live, not the task
    [record] = result.trace.tool_calls
    assert fell_back("inventory_live", record.result)
    assert "since inventory_live failed: ConnectionError: " + DOWN in (record.result or "")
    assert result.output.endswith("-> ladder: 42 units")
    assert len(result.trace.steps) == 2  # the call, the answer: no turn on the 503


@pytest.mark.parametrize(("item", "own"), [
    ("gone", "LookupError: no item 'gone'"),  # another failure: the tool's own error
    ("none", "[]"),  # found nothing: maybe the right answer to a question of another kind
])
async def test_a_pitfall_with_its_tool_keeps_any_other_outcome(item: str, own: str) -> None:
    pb = await _learned_stock_playbook()
    result = await _stock_agent(pb).run(f"What quantity do we hold of {item}")
    first = result.trace.tool_calls[0]
    assert own in (first.error or first.result or "")
    assert not fell_back("inventory_live", first.result)


async def test_a_learned_failure_with_no_words_proves_nothing() -> None:
    """An error class that is all masked values ("KeyError: 'C-1'" -> "…") would match any
    error of that shape: no fallback for runs not shown its pitfall."""
    from toolcycle.playbook.fallback import fallback_for

    tools = {"delay_feed": tool(delay_feed, read_only=True),
             "service_history": tool(service_history, read_only=True)}
    masked = Strategy(id="m", domain="rail", kind="pitfall", advice=PITFALL.advice,
                      tools=list(PITFALL.tools), detail="…|alternative:service_history",
                      error_class="…", repair=HISTORY_INSTEAD)
    timed = Strategy(id="t", domain="rail", kind="pitfall", advice=PITFALL.advice,
                     tools=list(PITFALL.tools), detail="delay_feed timed out after … s",
                     error_class="delay_feed timed out after … s", repair=HISTORY_INSTEAD)
    fallback, learned = fallback_for(masked, tools), fallback_for(timed, tools)
    assert fallback is not None and fallback.proven is None
    assert learned is not None and learned.proven is not None
    text = await learned.proven.invoke(None, {"service": "RX1"})  # type: ignore[arg-type]
    assert fell_back("delay_feed", text)


@pytest.mark.parametrize(("detail", "timed_out", "falls_back"), [
    ("upstream slow", True, True),  # a client's own ReadTimeout: no timeout words in it
    ("invalid timeout value", False, False),  # words about a timeout, which is no timeout
])
async def test_the_lesson_says_whether_it_was_learned_from_a_timeout(
        detail: str, timed_out: bool, falls_back: bool) -> None:
    """Issue 69: a stored lesson's timeout is its typed ``timed_out`` (read from the trace's
    ``error_type`` when it was learned), not recognised by the words of its error class."""
    from toolcycle.playbook.fallback import fallback_for

    tools = {"delay_feed": tool(delay_feed, read_only=True),
             "service_history": tool(service_history, read_only=True)}
    lesson = Strategy(id="t", domain="rail", kind="pitfall", advice=PITFALL.advice,
                      tools=list(PITFALL.tools), detail=detail, timed_out=timed_out,
                      error_class=detail, repair=HISTORY_INSTEAD)
    learned = fallback_for(lesson, tools)
    assert learned is not None and learned.proven is not None
    if falls_back:
        text = await learned.proven.invoke(None, {"service": "RX1"})  # type: ignore[arg-type]
        assert fell_back("delay_feed", text)
    else:
        with pytest.raises(TimeoutError):
            await learned.proven.invoke(None, {"service": "RX1"})  # type: ignore[arg-type]


async def test_an_mcp_servers_error_result_is_the_failure_a_fallback_was_learned_from() -> None:
    """A stranger's MCP server reports a failure as an ``isError`` result, not an exception
    of ours: the pitfall is learned from those runs, and a run not shown it falls back on the
    same error result (the SDK's own server, over stdio)."""
    import sys
    from pathlib import Path

    from toolcycle.mcp import MCPTools

    server = MCPTools.stdio(sys.executable, str(Path(__file__).with_name(
        "inventory_mcp_server.py")), trust_hints=True)  # its tools say they are read-only
    pb = Playbook(":memory:", routines=True)
    agent = Agent(ScriptedModel(live_first), "Answer with the tools.", [server], name="depot",
                  playbook=pb)
    async with agent:
        for item in ("wrench", "reel", "jack"):
            await agent.run(f"How many units are in stock of item {item}")
        assert pb.flush(30)
        [pitfall] = [s for s in pb.store.strategies() if alternative_of(s) is not None]
        assert pitfall.tools == ["inventory_live", "warehouse_ledger"]
        result = await Agent(ScriptedModel(live_first), "Answer with the tools.", [server],
                             name="depot", playbook=pb).run("What quantity do we hold of ladder")
        other = await Agent(ScriptedModel(live_first), "Answer with the tools.", [server],
                            name="depot", playbook=pb).run("What quantity do we hold of gone")
    assert result.trace.strategies_shown == [pitfall.id]
    [record] = result.trace.tool_calls
    assert fell_back("inventory_live", record.result)
    assert DOWN in (record.result or "")
    assert "ladder: 42 units" in result.output and len(result.trace.steps) == 2
    first = other.trace.tool_calls[0]  # another error of the server's: its own
    assert "no item 'gone'" in (first.error or "") and not fell_back("inventory_live",
                                                                    first.result)


STATUS = {"file share": "degraded since 09:10", "print server": "up"}


def monitor_api(system: str) -> str:
    """Live state of a system."""
    raise ConnectionError("SSL: certificate has expired")


def status_page(system: str) -> str:
    """Published state of a system, by its name as people write it."""
    return STATUS.get(system.lower(), "[]")


MONITOR = Strategy(id="m", domain="helpdesk", kind="pitfall", applies_when=["state", "share"],
                   advice="monitor_api fails. Call status_page(system) instead.",
                   tools=["monitor_api", "status_page"], support=3,
                   detail="SSL: certificate has expired",
                   error_class="SSL: certificate has expired",
                   repair=Repair("alternative", "monitor_api", via="status_page",
                                 via_args=("system",)))


def snake_case(messages: list[Message], settings: ModelSettings) -> Any:
    """Writes the system's name in snake case, as the 1.5B did on `helpdesk`."""
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    return call("monitor_api", {"system": "file_share"}) if not results else "done"


async def test_a_fallback_asks_the_alternative_as_the_task_spelled_a_name_it_found_nothing_for(
        ) -> None:
    agent = Agent(ScriptedModel(snake_case), "Answer with the tools.",
                  [tool(monitor_api, read_only=True), tool(status_page, read_only=True)],
                  name="helpdesk", playbook=_playbook(MONITOR))
    result = await agent.run("What is the state of the File Share right now?")
    [record] = result.trace.tool_calls
    assert record.result is not None and record.result.endswith(
        'status_page({"system": "File Share"}) -> degraded since 09:10')
    assert fell_back("monitor_api", record.result)
    assert result.usage.tool_calls == 1  # the loop's call; the fallback's own are nested


async def test_a_fallback_keeps_the_models_spelling_where_it_finds_something() -> None:
    both = {"file_share": "up (by id)", "File Share": "degraded"}
    calls: list[str] = []

    @tool(read_only=True)
    def status_by_id(system: str) -> str:
        """Published state of a system."""
        calls.append(system)
        return both.get(system, "[]")

    fallback = fallback_tool(tool(monitor_api), status_by_id)
    assert fallback is not None
    ctx = RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(),
                     prompt="Is the File Share up?")
    text = await fallback.invoke(ctx, {"system": "file_share"})
    assert text.endswith('status_by_id({"system": "file_share"}) -> up (by id)')
    assert calls == ["file_share"]  # the task's spelling was not needed
    nowhere = await fallback.invoke(ctx, {"system": "mail_relay"})  # the task names no such
    assert nowhere.endswith('status_by_id({"system": "mail_relay"}), which answered such '
                            "tasks in earlier runs, found nothing too: []")
    assert "answer from its result" not in nowhere  # nothing to answer from
    assert calls == ["file_share", "mail_relay"]


async def test_a_tool_reads_the_runs_prompt_from_its_context() -> None:
    seen: list[str | None] = []

    @tool
    def note(ctx: RunContext[Any]) -> str:
        """Notes the task."""
        seen.append(ctx.prompt)
        return "noted"

    def once(messages: list[Message], settings: ModelSettings) -> Any:
        return call("note", {}) if not any(m.role == "tool" for m in messages) else "ok"

    await Agent(ScriptedModel(once), "Use the tool.", [note]).run("Remember the File Share.")
    assert seen == ["Remember the File Share."]


async def test_a_renamed_value_is_carried_only_where_the_task_writes_it() -> None:
    """A rename (``query`` > ``code``) is learned from runs that passed the task's own value
    on; a model's search phrase under it passed a sentence as a meter code, and the
    alternative's empty result was the run's answer (issue 69, generated suites)."""
    from toolcycle.playbook.parts import Rename

    asked: list[str] = []

    @tool
    def public_search(query: str) -> str:
        """Search the web."""
        return "[]"

    @tool(read_only=True)
    def energy_records(code: str) -> str:
        """A meter's readings by its code."""
        asked.append(code)
        return "EG5093: 412 kWh" if code == "EG5093" else "[]"

    fallback = fallback_tool(public_search, energy_records, rename=Rename("query", "code"))
    assert fallback is not None
    ctx = RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(),
                     prompt="What was the consumption of meter EG5093 on 3 May 2026?")
    phrase = await fallback.invoke(ctx, {"query": "EG5093 consumption 3 May 2026"})
    assert phrase == "[]" and asked == []  # the search's own result: nothing carried
    named = await fallback.invoke(ctx, {"query": "EG5093"})
    assert named.endswith('energy_records({"code": "EG5093"}) -> EG5093: 412 kWh')
    assert asked == ["EG5093"]


async def test_a_value_the_alternative_takes_by_its_own_name_is_carried_as_it_is() -> None:
    """The rename applies only where the alternative lacks the parameter; one that takes
    ``query`` itself gets the model's phrase under that name, as any by-name carry."""
    from toolcycle.playbook.parts import Rename

    @tool
    def public_search(query: str) -> str:
        """Search the web."""
        return "[]"

    @tool(read_only=True)
    def archive_search(query: str, code: str = "") -> str:
        """Search the archive, optionally within a meter's code."""
        return f"archive: {query}"

    fallback = fallback_tool(public_search, archive_search, rename=Rename("query", "code"))
    assert fallback is not None
    ctx = RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(),
                     prompt="What was the consumption of meter EG5093 on 3 May 2026?")
    text = await fallback.invoke(ctx, {"query": "EG5093 consumption 3 May 2026"})
    assert text.endswith("-> archive: EG5093 consumption 3 May 2026")


@pytest.mark.parametrize(("system", "status"), [("mail relay", "ungrounded"),
                                                ("file share", "success")])
async def test_a_fallback_that_found_nothing_is_a_failed_call_to_grounding(
        system: str, status: str) -> None:
    """Seen on the 1.5B (JSON, a generated utility suite): the tool failed, its fallback's
    alternative found nothing too, and "was not found" was a ``success``: the fallback's
    text read as something found. Where the alternative answers, the run is as before."""
    def asks(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        return (call("monitor_api", {"system": system}) if not results
                else "It is degraded since 09:10." if "degraded" in str(results[-1])
                else "The system was not found.")

    agent = Agent(ScriptedModel(asks), "Answer with the tools.",
                  [tool(monitor_api, read_only=True), tool(status_page, read_only=True)],
                  name="helpdesk", playbook=_playbook(MONITOR), grounding=True)
    result = await agent.run(f"What is the state of the {system} right now?")
    [first, *_] = result.trace.tool_calls
    assert first.stand_in is not None and first.stand_in.kind == "fallback"
    assert result.status == status
