"""Dead ends: learning which tools found nothing for a kind of task, and trying the one left
(toolcycle.playbook.dead_end, its reflector, curator, verdict, rendering and first call)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.playbook.curator import Curator
from toolcycle.playbook.dead_end import FOUND_NOTHING, render, untried, verdict
from toolcycle.playbook.reflector import reflect
from toolcycle.playbook.store import SQLitePlaybookStore
from toolcycle.playbook.strategy import Strategy
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

#: Four record systems with identical descriptions; only experience says which holds what.
RECORDS: dict[str, dict[str, dict[str, Any]]] = {
    "ledger": {"Acme Bakery": {"balance_due": 120.5}, "Birch Dental": {"balance_due": 77.0},
               "Cobalt Print": {"balance_due": 310.0}, "Delta Cafe": {"balance_due": 42.25},
               "Ember Vets": {"balance_due": 18.0}},
    "roster": {"Ann Lee": {"extension": 4417}, "Bo Chan": {"extension": 3052}},
    "depot": {"Tidewell kettle": {"units": 342}},
}
SYSTEMS = ["depot", "ledger", "roster"]


def _system(code: str) -> Any:
    def lookup(name: str) -> str:
        for known, fields in RECORDS[code].items():
            if known.lower() in name.lower():
                return json.dumps({"name": known, **fields})
        return "No record found."

    lookup.__name__ = lookup.__qualname__ = code
    lookup.__doc__ = f"Look up a name in the {code} records system."
    return lookup


def web_search(query: str) -> str:
    """Search the public web."""
    return "No results."


CHOICES: list[Any] = []
SYSTEM: list[str] = []


def never_ledger(messages: list[Message], settings: ModelSettings) -> Any:
    """Tries roster, depot and web_search, never ledger unless made to (the 1.5B never called
    `atlas` for balances); answers from a record once one holds the name."""
    CHOICES.append(settings.tool_choice)
    SYSTEM[:] = [m.text for m in messages if m.role == "system"]
    prompt = next(m.text for m in messages if m.role == "user")
    name = prompt.split(" for ")[-1].rstrip("?.")
    results = [str(getattr(p, "content", "")) for m in messages if m.role == "tool"
               for p in m.parts]
    if results and results[-1].startswith("{"):
        record = json.loads(results[-1])
        return str(next(v for k, v in record.items() if k != "name"))
    if isinstance(settings.tool_choice, str) and settings.tool_choice in RECORDS:
        return call(settings.tool_choice, {"name": name})
    order = ["roster", "depot", "web_search"]
    if len(results) < len(order):
        tool_name = order[len(results)]
        return call(tool_name, {"query" if tool_name == "web_search" else "name": name})
    return "No balance is due."


def _agent(pb: Playbook) -> Agent[Any, str]:
    tools = [tool(_system(code), read_only=True) for code in SYSTEMS]
    return Agent(ScriptedModel(never_ledger), "Look company data up in the record systems.",
                 [*tools, tool(web_search, read_only=True)], name="records", playbook=pb)


BALANCES = [("t1", "What balance is due for Acme Bakery?", "120.5"),
            ("t2", "Tell me the balance due for Birch Dental.", "77.0"),
            ("t3", "How large is the balance due for Cobalt Print?", "310.0")]


async def _learned(routines: bool = True, probe: bool = False,
                   promote_on_answers: bool = False) -> Playbook:
    """Dead ends as the runs show them (``probe``: as probing the other tools repairs them,
    tests/playbook/test_probe.py). ``promote_on_answers`` off by default here: the three
    failed runs a dead end needs are the point, and with it the probes of the first two
    already teach where the answer is (see the test of it below)."""
    pb = Playbook(":memory:", routines=routines,
                  curator=Curator(promote_on_answers=promote_on_answers))
    report = await learn([LearningTask(*t) for t in BALANCES], _agent(pb), playbook=pb,
                         progress=False, probe=probe)
    # ledger never tried by the model; with probes agreeing, the first two failed tasks'
    # probes found it and the third task was shown it
    assert report.success_rate == (1 / 3 if probe and promote_on_answers else 0.0)
    return pb


# -- the reflector -----------------------------------------------------------------------


def _trace(results: Sequence[tuple[str, str | None, str | None]], prompt: str = "Balance of X?"
           ) -> Trace:
    records = [ToolCallRecord(call_id=f"c{i}", name=name, args={"name": f"X{i}"}, iteration=i,
                              result=result, error=error)
               for i, (name, result, error) in enumerate(results)]
    return Trace(run_id=prompt, agent_name="records", user_prompt=prompt,
                 steps=[Step(iteration=1, attempt=1, tool_calls=records)],
                 termination={"reason": "completed", "action": "answered"})


@pytest.mark.parametrize("empty", ["[]", "{}", "null", "", "No record found.", '{"hits": []}'])
def test_a_failed_run_that_found_nothing_anywhere_names_each_tool_it_tried(empty: str) -> None:
    trace = _trace([("roster", empty, None), ("depot", empty, None), ("roster", empty, None),
                    ("web_search", "No results.", None)])
    lessons = [i for i in reflect(trace, success=False, domain="records")
               if i.detail == FOUND_NOTHING]
    assert [i.tools for i in lessons] == [["roster"], ["depot"], ["web_search"]]
    assert all(i.kind == "pitfall" and not i.success for i in lessons)
    assert lessons[0].advice == "roster found nothing for this kind of task."


@pytest.mark.parametrize(("results", "success"), [
    ([("roster", "[]", None)], True),  # the run was right: nothing to learn from its misses
    ([("roster", "[]", None), ("depot", '{"units": 3}', None)], False),  # one call found it
    ([], False),  # no call at all (the no-call lesson's business)
])
def test_only_failed_runs_whose_every_call_was_empty_are_dead_ends(
        results: list[tuple[str, str | None, str | None]], success: bool) -> None:
    lessons = [i for i in reflect(_trace(results), success=success, domain="records")
               if i.detail == FOUND_NOTHING]
    assert lessons == []


def test_a_tool_that_failed_with_an_error_is_no_dead_end() -> None:
    """Called right, it may hold the answer: its error is a pitfall of its own."""
    trace = _trace([("roster", "[]", None), ("depot", None, "ValueError: bad name"),
                    ("depot", "[]", None), ("web_search", "No results.", None)])
    lessons = [i for i in reflect(trace, success=False, domain="records")
               if i.detail == FOUND_NOTHING]
    assert [i.tools for i in lessons] == [["roster"], ["web_search"]]


# -- the curator, the verdict and the line -----------------------------------------------


def test_three_failed_runs_of_different_tasks_make_a_dead_end_per_tool(tmp_path: Any) -> None:
    store, curator = SQLitePlaybookStore(tmp_path / "p.db"), Curator()
    prompts = [p for _, p, _ in BALANCES]
    runs = [[("roster", "No record found.", None), ("web_search", "No results.", None)],
            [("web_search", "No results.", None)],
            [("roster", "No record found.", None), ("web_search", "No results.", None)]]
    for prompt, results in zip(prompts, runs, strict=True):
        curator.apply(store, reflect(_trace(results, prompt), success=False, domain="records"))
    [web] = [s for s in store.strategies("records") if s.kind == "pitfall"]
    assert web.tools == ["web_search"] and web.detail == FOUND_NOTHING and web.support == 3
    assert {"balance", "due"} <= set(web.applies_when)  # the words the three tasks share
    # roster: two runs so far; a fourth task completes it
    curator.apply(store, reflect(_trace(runs[0], "Which balance is due for Delta Cafe?"),
                                 success=False, domain="records"))
    assert {s.tools[0] for s in store.strategies("records")} == {"web_search", "roster"}


def _dead_end(tool_name: str, support: int = 3) -> Strategy:
    return Strategy(id=f"s-{tool_name}", domain="records", kind="pitfall", tools=[tool_name],
                    advice=f"{tool_name} found nothing for this kind of task.",
                    detail=FOUND_NOTHING, error_class=FOUND_NOTHING, support=support)


def test_the_line_names_the_tools_that_found_nothing_and_what_is_left() -> None:
    shown = [_dead_end("roster", 3), _dead_end("depot", 5), _dead_end("web_search", 4)]
    offered = ["depot", "ledger", "roster", "web_search", "depot_then_roster"]
    left = untried(shown, offered, skip={"depot_then_roster"})
    assert left == ["ledger"]
    assert render(shown, left) == ("- For tasks like this, depot, roster and web_search found "
                                   "nothing (seen in 3-5 failed runs). Try ledger.")
    assert render(shown[:1], ["a", "b"]).endswith("(seen in 3 failed runs). Try a or b.")
    assert render(shown[:1], list("abcd")).endswith("Try another tool.")
    assert untried([], offered) == []  # no dead end shown: nothing to say about the rest


@pytest.mark.parametrize(("calls", "success", "expected"), [
    ([("ledger", "ok")], True, "helpful"),  # went elsewhere and got it right
    ([("ledger", "empty")], False, "misfit"),  # went elsewhere, which failed: not its fault
    ([("roster", "empty"), ("ledger", "ok")], True, "ignored"),  # tried it again anyway
    ([("roster", "ok")], True, "harmful"),  # it answered: the lesson is wrong for this task
    ([("roster", "ok")], False, "harmful"),
])
def test_a_dead_end_is_followed_by_not_calling_its_tool(
        calls: list[tuple[str, str]], success: bool, expected: str) -> None:
    assert verdict(_dead_end("roster"), calls, success) == expected


# -- acting on it ------------------------------------------------------------------------


async def test_a_run_shown_dead_ends_begins_with_the_one_tool_left_untried() -> None:
    pb = await _learned()
    dead = sorted(s.tools[0] for s in pb.strategies("records") if s.detail == FOUND_NOTHING)
    assert dead == ["depot", "roster", "web_search"]
    CHOICES.clear()
    result = await _agent(pb).run("What balance is due for Delta Cafe?")
    assert result.output == "42.25"
    assert CHOICES[0] == "ledger" and [c.name for c in result.trace.tool_calls] == ["ledger"]
    instructions = "\n".join(SYSTEM)
    assert ("- For tasks like this, depot, roster and web_search found nothing (seen in 3 "
            "failed runs). Try ledger.") in instructions
    assert "roster often returns nothing" not in instructions  # said once, not twice
    # the run followed them and got it right: each dead end helped
    assert pb.flush(30)
    assert {s.helpful for s in pb.strategies("records") if s.detail == FOUND_NOTHING} == {1}


async def test_probed_dead_ends_name_where_the_answer_is() -> None:
    pb = await _learned(probe=True)
    by_tool = {s.tools[0]: s for s in pb.strategies("records") if s.kind == "pitfall"}
    assert by_tool["roster"].advice == ("roster found nothing for this kind of task. "
                                        "Call ledger(name) instead.")
    assert by_tool["depot"].tools == ["depot", "ledger"]
    # the search's query was the name: ledger(name) answered it (a rename the probe checked)
    assert by_tool["web_search"].detail == "found nothing|alternative:ledger:query>name:"
    # each probe showed ledger(name) answering: the sequence a run calling it would teach
    [sequence] = [s for s in pb.strategies("records") if s.kind == "sequence"]
    assert sequence.render(with_id=False) == (
        "- Call ledger(name), then answer. Do not use depot, roster, web_search for this kind "
        "of task. (seen in 3 probes of failed runs)")
    assert sequence.probed == sequence.support == 3
    CHOICES.clear()
    result = await _agent(pb).run("What balance is due for Delta Cafe?")
    assert result.output == "42.25" and CHOICES[0] == "ledger"
    assert sequence.render(with_id=False) in "\n".join(SYSTEM)  # the pitfalls it covers wait


async def test_two_probes_that_found_the_answer_in_one_tool_teach_the_third_task() -> None:
    """Two failed runs of different tasks, each probed to ledger(name), whose result held the
    expected answer: not chance, so the sequence is promoted after those two
    (probe.answers_agree) and the third task calls ledger first and is right."""
    pb = await _learned(probe=True, promote_on_answers=True)
    [sequence] = [s for s in pb.strategies("records") if s.kind == "sequence"]
    assert sequence.tools == ["ledger"] and sequence.probed == 2
    assert not [s for s in pb.strategies("records") if s.kind == "pitfall"]  # 2 runs of 3


async def test_the_tool_left_untried_is_named_beside_probed_dead_ends() -> None:
    from toolcycle.playbook import dead_end

    plain, repaired = _dead_end("web_search"), _dead_end("roster")
    repaired.detail, repaired.tools = "found nothing|alternative:ledger::", ["roster", "ledger"]
    # a repaired dead end's tool is out of what is left to try, as a plain one's
    assert dead_end.untried([plain, repaired], ["ledger", "roster", "web_search"]) == ["ledger"]


async def test_dead_ends_stay_with_their_kind_of_task() -> None:
    pb = await _learned()
    CHOICES.clear()
    result = await _agent(pb).run("Which phone extension does Ann Lee have?")
    assert result.trace.strategies_shown == []
    assert CHOICES[0] == "auto"


async def test_without_routines_the_line_is_shown_and_nothing_forced() -> None:
    pb = await _learned(routines=False)
    CHOICES.clear()
    await _agent(pb).run("What balance is due for Delta Cafe?")
    assert "Try ledger." in "\n".join(SYSTEM)
    assert CHOICES[0] == "auto"


async def test_a_run_that_got_there_teaches_the_sequence_that_replaces_the_dead_ends() -> None:
    pb = await _learned()
    more = [("t4", "What balance is due for Delta Cafe?", "42.25"),
            ("t5", "Give me the balance due for Ember Vets.", "18.0"),
            ("t6", "Tell me the balance due for Acme Bakery and nothing else.", "120.5")]
    report = await learn([LearningTask(*t) for t in more], _agent(pb), playbook=pb,
                         progress=False)
    assert report.success_rate == 1.0
    [sequence] = [s for s in pb.strategies("records") if s.kind == "sequence"]
    assert sequence.tools == ["ledger"]
    CHOICES.clear()
    result = await _agent(pb).run("How large is the balance due for Birch Dental?")
    assert result.output == "77.0"
    # the sequence is shown, the dead ends (which it does not call) are not repeated
    system = "\n".join(SYSTEM)
    assert "Call ledger(name), then answer" in system and "found nothing" not in system
