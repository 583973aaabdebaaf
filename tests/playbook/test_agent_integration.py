"""The playbook inside real Agent runs (ScriptedModel): injection, recording, learning, resuming."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LearningTask, Playbook, learn

PRICES = {"ACME": "41.5", "GLBX": "7.25", "INIT": "19.0", "HOOL": "88.1"}


def find_ticker(company: str) -> str:
    """Ticker symbol of a company."""
    return company.split()[0][:4].upper()


def get_quote(ticker: str) -> str:
    """Share price of a ticker."""
    return PRICES[ticker]


def web_search(query: str) -> str:
    """Search the web."""
    return "No results."


def policy(messages: list[Message], settings: ModelSettings) -> Any:
    """A model that searches the web first unless its instructions tell it the sequence."""
    system = messages[0].text if messages[0].role == "system" else ""
    company = next(m.text for m in messages if m.role == "user").split(" of ")[-1].rstrip("?")
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    advised = "find_ticker(company), then get_quote(ticker)" in system
    plan = ["find_ticker", "get_quote"] if advised else ["web_search", "find_ticker", "get_quote"]
    if len(results) == len(plan):
        return f"The price is {results[-1].content}."
    step = plan[len(results)]
    if step == "web_search":
        return call("web_search", {"query": company})
    if step == "find_ticker":
        return call("find_ticker", {"company": company})
    return call("get_quote", {"ticker": results[-1].content})


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(policy), "Answer with the tools.",
                 [web_search, find_ticker, get_quote], name="quotes", playbook=pb)


TASKS = [LearningTask(f"t{i}", f"What is the stock price of {c}?", PRICES[c[:4].upper()])
         for i, c in enumerate(["Acme Corp", "Glbx Corp", "Init Corp"])]


async def test_learning_from_runs_cuts_iterations_on_the_next_task() -> None:
    pb = Playbook(":memory:")
    agent = _agent(pb)
    report = await learn(TASKS, agent, playbook=pb, progress=False)
    assert report.success_rate == 1.0
    # the chain's data flow (the ticker taken from find_ticker's result) was shown by the
    # first two runs, so the third is already shown the strategy and skips the web search
    assert [o["iterations"] for o in report.outcomes.values()] == [4, 4, 3]
    [strategy] = pb.strategies("quotes")
    assert "Do not use web_search" in strategy.advice

    result = await agent.run("What is the stock price of Hool Corp?")
    assert result.output == "The price is 88.1."
    assert result.trace.strategies_shown == [strategy.id]
    assert len(result.trace.steps) == 3  # the wasted web search is gone
    assert pb.flush(30)
    updated = pb.store.get(strategy.id)
    assert updated is not None and (updated.helpful, updated.harmful) == (2, 0)
    assert updated.mean_iterations == 3.0


async def test_a_wrong_answer_is_judged_by_the_evaluator_not_by_completion() -> None:
    pb = Playbook(":memory:")
    report = await learn(TASKS, _agent(pb), lambda task, output: False, playbook=pb,
                         progress=False)
    assert report.success_rate == 0.0
    assert pb.strategies() == []  # completed but wrong runs never become strategies


async def test_an_interrupted_session_resumes_where_it_stopped(tmp_path: Any) -> None:
    db = tmp_path / "pb.db"
    first = Playbook(db)
    await learn(TASKS[:2], _agent(first), playbook=first, session="s", progress=False)
    first.close()
    second = Playbook(db)
    report = await learn(TASKS, _agent(second), playbook=second, session="s", progress=False)
    assert report.skipped == 2 and len(report.outcomes) == 3
    assert len(second.strategies("quotes")) == 1  # the third run completed the pattern
    second.close()
