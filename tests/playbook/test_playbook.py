"""Injection (relevance, token budget, ids) and online learning that never blocks the run."""

from __future__ import annotations

import threading

from toolcycle.errors import ModelError
from toolcycle.playbook import Playbook, Strategy, estimate_tokens, judge
from toolcycle.playbook.playbook import current_grader

from .conftest import make_trace, stock_trace

TOOLS = ["web_search", "find_ticker", "get_quote"]


def _learned_playbook() -> Playbook:
    pb = Playbook(":memory:")
    for company in ("Acme Corp", "Globex Corp", "Initech Corp"):
        pb.observe(stock_trace(company))
    assert pb.flush(30)
    assert list(pb.errors) == []
    return pb


def test_an_empty_playbook_injects_nothing() -> None:
    assert Playbook(":memory:").instructions_for("stock price of Acme", "support", TOOLS) == (
        "", []
    )


def test_learned_strategies_are_injected_and_their_ids_recorded() -> None:
    pb = _learned_playbook()
    text, shown = pb.instructions_for("What is the stock price of Hooli Corp?", "support", TOOLS)
    [strategy] = pb.strategies("support")
    assert shown == [strategy.id]
    assert "find_ticker(company)" in text
    assert strategy.id not in text  # the id goes to the trace, not to the model
    # another agent (domain) or an unrelated task gets nothing
    assert pb.instructions_for("stock price of Hooli", "other_agent", TOOLS) == ("", [])
    assert pb.instructions_for("Translate 'cat' to French", "support", TOOLS)[1] == []


def test_the_token_budget_bounds_what_is_injected() -> None:
    pb = Playbook(":memory:", token_budget=60, max_strategies=10)
    pb.store.put([
        Strategy(id=f"s-{i}", domain="d", advice=f"Advice {i}: " + "use the stock tools " * 4,
                 applies_when=["stock"], helpful=10 - i)
        for i in range(8)
    ])
    text, shown = pb.instructions_for("stock", "d", [])
    assert 1 <= len(shown) < 8
    assert estimate_tokens(text) <= 60
    assert shown[0] == "s-0"  # the best evidence goes in first
    roomy = Playbook(pb.store, token_budget=10_000, max_strategies=10)
    assert len(roomy.instructions_for("stock", "d", [])[1]) == 8


def test_tool_statistics_speak_only_of_the_tools_the_task_is_likely_to_use() -> None:
    pb = Playbook(":memory:")
    for i in range(4):
        pb.observe(make_trace(f"price {i}", [
            [("get_quote", {"ticker": "X"}, None, "tool timed out after 5 s")],
            [("web_search", {"query": "X"}, None, "bad request")],
            [("find_ticker", {"company": "X"}, "XCO", None)],
        ]))
    assert pb.flush(30)
    text, shown = pb.instructions_for("anything at all", "support", TOOLS)
    # no strategy for the task: no tool is known to matter (the guide names no statistics)
    assert shown == [] and "times out" not in text and "get_quote" not in text
    pb.store.put([Strategy(id="s-1", domain="support", kind="advice",
                           advice="Quotes come from get_quote or find_ticker.",
                           tools=["get_quote", "find_ticker"], applies_when=["anything"],
                           about_tool=False)])  # a lesson of the task, in its instructions
    text, shown = pb.instructions_for("anything at all", "support", TOOLS)
    assert shown == ["s-1"]
    assert "get_quote often times out (4/4 calls" in text
    assert "when it did, find_ticker answered: use find_ticker instead" in text
    assert "prefer find_ticker" in text
    assert "web_search" not in text  # not a tool of this task


def test_a_tool_a_shown_pitfall_warns_of_is_not_warned_of_again() -> None:
    """Said twice it costs tokens on every request, and names the tool once more to a model
    that copies the names it reads (seen on a generated hotel suite: a dead end's tool named
    by its lesson and again by the statistics was the 1.5B's first call)."""
    pb = Playbook(":memory:")
    for i in range(4):
        pb.observe(make_trace(f"price {i}", [
            [("get_quote", {"ticker": "X"}, None, "tool timed out after 5 s")],
            [("find_ticker", {"company": "X"}, "XCO", None)],
        ]))
    assert pb.flush(30)
    pb.store.put([Strategy(id="s-1", domain="support", kind="pitfall",
                           advice="get_quote times out. Call find_ticker(company) instead.",
                           tools=["get_quote", "find_ticker"], applies_when=["anything"],
                           about_tool=False)])
    text, shown = pb.instructions_for("anything at all", "support", TOOLS)
    assert shown == ["s-1"] and text.count("get_quote") == 1
    assert "Tool reliability" not in text


def test_observe_returns_before_learning_is_done() -> None:
    pb = Playbook(":memory:")
    release = threading.Event()
    learning_started = threading.Event()

    def slow_grader(trace: object, outcome: object) -> bool:
        learning_started.set()
        assert release.wait(30)
        return True

    token = current_grader.set(slow_grader)
    try:
        pb.observe(stock_trace("Acme"))  # returns although the grader is blocked
    finally:
        current_grader.reset(token)
    assert learning_started.wait(30)
    assert not pb.flush(timeout=0.05)  # still learning in the background
    assert pb.store.candidates() == []
    release.set()
    assert pb.flush(30)
    assert len(pb.store.candidates()) == 1


def test_a_failing_grader_is_recorded_and_does_not_stop_learning() -> None:
    pb = Playbook(":memory:", evaluator=lambda trace, outcome: 1 / 0 > 0)
    pb.observe(stock_trace("Acme"))
    assert pb.flush(30)
    assert len(pb.errors) == 1 and isinstance(pb.errors[0], ZeroDivisionError)
    pb.evaluator = None
    pb.observe(stock_trace("Globex"))
    assert pb.flush(30)
    assert len(pb.store.candidates()) == 1


def test_read_only_playbooks_do_not_learn() -> None:
    pb = Playbook(":memory:", learn=False)
    pb.observe(stock_trace("Acme"))
    assert pb.flush(1)
    assert pb.store.candidates() == [] and pb.store.tool_observations() == []


def test_judge_success() -> None:
    ok, failed = stock_trace("A"), make_trace("x", [], status="failure")
    assert judge(ok, None, None)
    assert not judge(failed, None, None)
    assert not judge(ok, ModelError("boom"), None)
    assert not judge(ok, None, lambda t, o: 0.2)
    # the grader judges the answer of a run that succeeded; it cannot make a failure one
    assert not judge(failed, None, lambda t, o: 0.9)
