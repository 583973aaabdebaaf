"""The first-hour suite (bench/first_hour/, issue 68) grades by the tools' figure or name and
reports the issue's two figures: the share right, and wrong answers the run called a success.
No model: scripted runs through the real Experiment and its log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.first_hour.dev_a import SHOP
from bench.first_hour.dev_b import BANK
from bench.first_hour.heldout import DOMAINS, heldout_agents
from bench.first_hour.run import agents_of, pooled, summary
from bench.first_hour.suite import RIGHT, FirstHourAgent, grade, numbers_in
from toolcycle import Tool
from toolcycle.evals import Dataset, Experiment
from toolcycle.testing import ScriptedModel, call


def test_figures_are_read_with_separators_and_ids_are_not_figures() -> None:
    assert numbers_in("Stock SKU-1001 is worth 1,250.5 EUR (WS-17, TP1026)") == [1250.5]
    assert numbers_in("It is -3.5 C.") == [-3.5]


@pytest.mark.parametrize(("expected", "answer", "field", "right"), [
    (924.63, "The stock is worth 924.63 EUR.", None, True),
    (924.63, "The stock is worth about 925 EUR.", None, True),      # within 0.6 %
    (924.63, "The stock is worth 10 EUR.", None, False),
    ("Leeds", "It is stocked in Leeds.", None, True),
    ("Leeds", "It is stocked in Leedsborough.", None, False),      # whole words only
    ("TP1026", {"flight": "tp1026", "hours": 1.25}, "flight", True),
    (2.17, {"flight": "TP438", "hours": 2.17}, "hours", True),
    (2.17, {"flight": "TP438 takes 2.17 h", "hours": 130}, "hours", False),  # the field counts
    (2.17, {"flight": "TP438"}, "hours", False),
])
def test_an_answer_is_right_when_it_holds_the_tools_figure_or_name(
        expected: float | str, answer: object, field: str | None, right: bool) -> None:
    assert grade(expected, answer, field)[0] is right


def test_the_suite_has_at_least_twelve_agents_of_two_to_four_tools_and_three_questions() -> None:
    for which in ("dev", "heldout"):
        agents = agents_of(which, 68)
        assert len(agents) >= 12
        assert len({a.domain for a in agents}) == len(agents)
        for agent in agents:
            assert 2 <= len(agent.tools) <= 4 and len(agent.questions) == 3, agent.name
            assert all(len(q.chain) >= 2 for q in agent.questions), agent.name
    dev = {a.domain for a in agents_of("dev", 68)}
    assert not dev & {a.domain for a in heldout_agents(68)}  # held out: other domains


def test_the_held_out_set_is_drawn_by_its_seed() -> None:
    first = [(a.name, [q.text for q in a.questions]) for a in heldout_agents(68)]
    assert first == [(a.name, [q.text for q in a.questions]) for a in heldout_agents(68)]
    assert first != [(a.name, [q.text for q in a.questions]) for a in heldout_agents(69)]


def test_a_held_out_questions_answer_is_what_its_tools_give() -> None:
    """Each held-out answer is computed through the agent's own tools, in the chain."""
    for agent in heldout_agents(68):
        tools = {t.spec.name: t for t in agent.tools if isinstance(t, Tool)}
        domain = next(d for d in DOMAINS if d.entity == agent.domain)
        for question in agent.questions:
            lookup, detail = tools[question.chain[0]], tools[question.chain[1]]
            names = [n for n in domain.names if n in question.text]
            records = [_call(detail, _call(lookup, name)) for name in names]
            if question.name in ("figure", "name"):
                assert question.expected in records[0].values(), question.text
            elif question.name == "converted":
                converted = {_call(tools[question.chain[2]], v) for v in records[0].values()
                             if isinstance(v, int | float)}
                assert question.expected in converted, question.text
            else:
                sums = {_call(tools["add"], [a, b]) for a in records[0].values()
                        for b in records[1].values()
                        if isinstance(a, int | float) and isinstance(b, int | float)}
                assert question.expected in sums, question.text


def _call(tool: Tool[Any], value: Any) -> Any:
    """The tool's function with its one argument (a generated schema names it)."""
    (param,) = tool.spec.parameters["properties"]
    assert tool.function is not None
    return tool.function(**{param: value})


async def test_a_wrong_answer_reported_as_success_is_counted(tmp_path: Path) -> None:
    """The issue's second demand is read off the log: a wrong figure with status success."""
    right = ScriptedModel([call("find_product", {"name": "desk lamp"}),
                           call("stock_level", {"sku": "SKU-2044"}),
                           "We have 112 desk lamps."])
    wrong = ScriptedModel(["The stock is worth 10 EUR."])
    reports = {}
    for label, model, question in (("right", right, "units"), ("wrong", wrong, "value")):
        experiment = Experiment(SHOP.build(model), _only(SHOP, question), [RIGHT], concurrency=1,
                                log=tmp_path / f"{label}.jsonl", trace_store=False)
        reports[label] = await experiment.run()
    figures = summary(pooled(reports, "shop"))
    assert figures["right"]["count"] == 1 and figures["runs"] == 2
    assert figures["wrong_reported_success"] == 1
    assert figures["statuses"] == {"success": 2}


async def test_a_structured_output_is_graded_on_its_field(tmp_path: Path) -> None:
    model = ScriptedModel([call("find_account", {"owner": "Marc Dubois"}),
                           call("balance", {"account": "FR76-0002"}),
                           call("final_result", {"amount": 980.0, "currency": "EUR"})])
    report = await Experiment(BANK.build(model), _only(BANK, "marc_balance"), [RIGHT],
                              concurrency=1, trace_store=False).run()
    assert [r.status for r in report.records] == ["success"]
    assert report.records[0].score("right").passed  # type: ignore[union-attr]


def _only(agent: FirstHourAgent, question: str) -> Dataset:
    full = agent.dataset()
    return Dataset.of([c for c in full if c.name == question], name=full.name)


def test_only_runs_the_questions_named_and_refuses_an_unknown_one() -> None:
    """``run.py --only agent/question``: a rerun of the questions a change is about."""
    from bench.first_hour.run import only

    chosen = only(agents_of("dev", 0), ["bank/marc_balance", "shop/value", "shop/units"])
    assert [(a.name, [q.name for q in a.questions]) for a in chosen] == [
        ("shop", ["units", "value"]), ("bank", ["marc_balance"])]
    with pytest.raises(SystemExit, match="no such agent/question: shop/nothing"):
        only(agents_of("dev", 0), ["shop/nothing"])
