"""Cost: prices, the cost of each reply added up across a team, and Limits(max_cost=...)."""

from __future__ import annotations

import itertools
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from doc_scripts import run_script

from toolcycle import Agent, ConfigurationError, Limits, Trace, Usage, UsageLimitExceeded, tool
from toolcycle.models.openai import OpenAIModel
from toolcycle.pricing import FREE, PRICES, Price, known_price
from toolcycle.testing import ScriptedModel, call

from .helpers import check_team

LEAD = Price("3", "15")
HELPER = Price("0.25", "2.00", cached_input="0.025")


def fresh_lookup() -> Any:
    """A lookup whose every result is new (the loop guard never sees a repeat)."""
    count = itertools.count()

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return f"found {q} #{next(count)}"
    return lookup


def unknown_model() -> OpenAIModel:
    """A cloud model the price table does not know (no request is made with it)."""
    return OpenAIModel("my-finetune", api_key="sk-test", base_url="http://127.0.0.1:9")


def test_a_price_bills_each_kind_of_token_at_its_rate_exactly() -> None:
    price = Price("2.50", "10.00", cached_input="1.25", cache_write="3.125")
    usage = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=300,
                  cache_write_tokens=100)
    # (600 uncached x 2.50 + 300 read x 1.25 + 100 written x 3.125 + 200 out x 10) / 1e6
    assert price.cost(usage) == Decimal("0.0041875")
    assert Price(0.15, 0.6).input == Decimal("0.15")  # a float through its shortest text
    assert Price(1, 2).cached_input == 1 and Price(1, 2).currency == "USD"
    assert FREE.cost(usage) == 0


def test_a_bad_price_lists_every_problem() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Price(-1, float("nan"), cached_input="lots", cache_write=True)  # type: ignore[arg-type]
    assert len(caught.value.problems) == 4, caught.value.problems
    assert "input must be >= 0" in str(caught.value)


def test_the_table_knows_snapshots_but_not_other_variants() -> None:
    assert known_price("gpt-4o-mini-2024-07-18") is PRICES["gpt-4o-mini"]
    assert known_price("claude-haiku-4-5-20251001") is PRICES["claude-haiku-4-5"]
    assert known_price("models/gemini-2.5-flash") is PRICES["gemini-2.5-flash"]
    assert known_price("gpt-5-pro") is None and known_price("gpt-5.2") is None
    assert all("2026-" in p.source for p in PRICES.values())  # each price says its source, dated


def test_max_cost_is_checked_and_kept_exact() -> None:
    assert Limits(max_cost=0.1).max_cost == Decimal("0.1")
    assert Limits(max_cost="2.50").cost_budget == Decimal("2.50")
    with pytest.raises(ConfigurationError) as caught:
        Limits(max_cost=0, max_iterations=0)
    assert len(caught.value.problems) == 2
    for bad in (-1, "cheap", float("inf"), True):
        with pytest.raises(ConfigurationError, match="max_cost"):
            Limits(max_cost=bad)


def test_usage_adds_costs_and_an_unknown_cost_stays_unknown() -> None:
    total = Usage(cost=Decimal("0.1")) + Usage(cost=Decimal("0.2"))
    assert total.cost == Decimal("0.3")  # exact, where floats give 0.30000000000000004
    total.add(Usage(requests=1, cost=None))
    total.add(Usage(cost=Decimal(1)))
    assert total.cost is None
    assert Usage.from_dict(json.loads(json.dumps(total.to_dict()))) == total
    assert Usage.from_dict({"input_tokens": 3}).cost is None  # an older record: unknown
    for damaged in ("a lot", -1, [], "NaN"):
        with pytest.raises(ValueError, match="cost_usd"):
            Usage.from_dict({"cost_usd": damaged})


async def test_each_reply_is_priced_by_its_own_model_and_the_team_adds_up() -> None:
    helper = Agent(ScriptedModel([call("lookup", {"q": "x"}), "x is 42"], price=HELPER),
                   "You research.", [fresh_lookup()], name="researcher")
    lead = Agent(ScriptedModel([call("researcher", {"input": "find x"}), "done: 42"],
                               price=LEAD),
                 "You lead.", [helper.as_tool()], name="lead")
    result = await lead.run("go")

    [member] = result.runs
    assert member.usage.cost == sum(HELPER.cost(s.usage) for s in member.trace.steps)
    own = sum(LEAD.cost(s.usage) for s in result.trace.steps)
    assert result.usage.cost == own + member.usage.cost  # the lead's plus its member's
    assert result.trace.usage.cost == result.usage.cost
    check_team(result)  # usage (costs included) adds up exactly in every history
    again = Trace.from_json(result.trace.to_json())
    assert again.usage.cost == result.usage.cost
    assert again.tool_calls[0].run is not None
    assert again.tool_calls[0].run.usage.cost == member.usage.cost


async def test_the_members_spend_counts_against_the_leads_max_cost() -> None:
    expensive = Price("1000", "2000")
    helper = Agent(ScriptedModel([call("lookup", {"q": "x"})] * 30, price=expensive),
                   "You research.", [fresh_lookup()], name="researcher")
    lead = Agent(ScriptedModel([call("researcher", {"input": "find x"}), "best effort"],
                               price=LEAD),
                 "You lead.", [helper.as_tool()], name="lead",
                 limits=Limits(max_cost="0.1", on_limit="partial"))
    result = await lead.run("go")

    [member] = result.runs
    assert member.termination.reason == "max_cost"  # met by the member with its on_limit
    assert "(a limit of the team, set on agent 'lead')" in member.termination.detail
    # stopped at the first reply that passed the budget, not at the member's 30 calls
    assert member.usage.cost is not None and member.usage.cost >= Decimal("0.1")
    assert member.usage.requests < 10
    assert result.termination.reason == "max_cost" and result.status == "partial"
    check_team(result)


async def test_max_cost_raises_with_the_figures_when_on_limit_is_error() -> None:
    agent = Agent(ScriptedModel([call("lookup", {"q": "x"})] * 20, price=Price(100, 100)),
                  tools=[fresh_lookup()], limits=Limits(max_cost="0.01", on_limit="error"))
    with pytest.raises(UsageLimitExceeded) as caught:
        await agent.run("go")
    assert caught.value.context["limit"] == "max_cost"
    assert "max_cost=$0.01 reached (spent $" in str(caught.value)
    assert caught.value.result is not None and caught.value.result.usage.cost is not None


async def test_max_cost_forces_the_answer_like_the_other_limits() -> None:
    agent = Agent(ScriptedModel([call("lookup", {"q": "x"}), "my best answer"],
                                price=Price(10_000, 10_000)),
                  tools=[fresh_lookup()], limits=Limits(max_cost="0.01"))
    result = await agent.run("go")
    assert (result.output, result.status) == ("my best answer", "forced")
    assert result.termination.limit == "max_cost"


def test_max_cost_with_a_model_of_unknown_price_is_refused_at_construction() -> None:
    member = Agent(unknown_model(), name="member")
    target = Agent(OpenAIModel("other-finetune", api_key="k", base_url="http://127.0.0.1:9"),
                   name="target")
    with pytest.raises(ConfigurationError) as caught:
        Agent(ScriptedModel(["hi"]), tools=[member.as_tool()], handoffs=[target],
              limits=Limits(max_cost=1), compaction_model=unknown_model())
    [problem] = caught.value.problems
    assert "my-finetune, other-finetune" in problem  # every model of the team, once each
    priced = Agent(OpenAIModel("my-finetune", api_key="k", base_url="http://127.0.0.1:9",
                               price=Price(1, 2)), limits=Limits(max_cost=1))
    assert priced.limits is not None


async def test_a_run_level_max_cost_is_checked_too() -> None:
    agent = Agent(unknown_model())
    with pytest.raises(ConfigurationError, match="my-finetune"):
        await agent.run("hi", limits=Limits(max_cost="0.5"))


async def test_a_model_whose_price_went_missing_stops_the_budgeted_run() -> None:
    model = ScriptedModel([call("lookup", {"q": "x"}), "done"], price=Price(1, 1))
    agent = Agent(model, tools=[fresh_lookup()],
                  limits=Limits(max_cost=5, on_limit="partial"))
    model.pricing = lambda answered_by=None: None  # type: ignore[method-assign]
    result = await agent.run("go")
    assert result.usage.cost is None
    assert result.termination.reason == "max_cost"
    assert result.trace.metadata["unpriced_models"] == ["scripted"]


def test_a_spec_keeps_max_cost_exactly_in_json_and_gram() -> None:
    from toolcycle.spec import AgentSpec

    spec = AgentSpec("a", limits=Limits(max_cost="0.30", max_iterations=4))
    assert AgentSpec.from_json(spec.to_json()) == spec
    assert AgentSpec.from_gram(spec.to_gram()) == spec
    back = AgentSpec.from_json(spec.to_json()).limits
    assert back is not None and back.max_cost == Decimal("0.30")


async def test_a_paused_budgeted_run_resumes_with_its_spend_and_budget() -> None:
    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    price = Price(10, 20)
    agent = Agent(ScriptedModel([call("delete", {"path": "/a"}), "done"], price=price),
                  tools=[delete], limits=Limits(max_cost="5"))
    paused = await agent.run("tidy")
    assert paused.status == "paused" and paused.usage.cost is not None and paused.usage.cost > 0
    snapshot = json.loads(json.dumps(paused.snapshot))  # plain JSON: the budget a string
    assert snapshot["limits"]["max_cost"] == "5"
    final = await agent.resume(snapshot, {paused.pending_approvals[0].call_id: True})
    assert final.output == "done"
    assert final.usage.cost == sum(price.cost(s.usage) for s in final.trace.steps)


def test_the_cost_sample_in_loop_md_prints_what_the_page_says(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "loop.md").read_text()
    section = page[page.index("### Cost"):]
    code, printed = re.search(r"```python\n(.*?)```\n+prints\n+```text\n(.*?)```", section,
                              re.S).groups()  # type: ignore[union-attr]
    assert run_script(code, tmp_path) == printed


async def test_a_member_meeting_a_team_limit_states_the_teams_figure() -> None:
    """A member that met the lead's ``max_tool_calls`` used to describe it with its own
    limits (``max_tool_calls=None reached``)."""
    clerk = Agent(ScriptedModel([call("lookup", {"q": str(n)}) for n in range(10)]),
                  tools=[fresh_lookup()], name="clerk", limits=Limits(on_limit="error"))
    lead = Agent(ScriptedModel([call("clerk", {"input": "all"}), "stopped"]),
                 tools=[clerk.as_tool()], name="lead", limits=Limits(max_tool_calls=3))
    result = await lead.run("go")
    assert "max_tool_calls=3 reached (a limit of the team, set on agent 'lead')" in (
        result.tool_calls[0].error or "")


class _Unpriced(ScriptedModel):
    """A model whose price nobody knows (an OpenAI-compatible server's, say)."""

    def pricing(self, answered_by: str | None = None) -> None:
        return None


async def test_evals_reports_each_cases_cost_and_the_total() -> None:
    from toolcycle.evals import Contains, Dataset, Experiment

    def team(model_type: type[ScriptedModel]) -> Agent[Any, Any]:
        helper = Agent(model_type([call("lookup", {"q": "x"}), "x is 42"] * 4, price=HELPER),
                       tools=[fresh_lookup()], name="researcher")
        return Agent(ScriptedModel([call("researcher", {"input": "x?"}), "42"] * 4,
                                   price=LEAD), tools=[helper.as_tool()], name="lead")

    cases = Dataset.of([{"name": "a", "inputs": "x?", "expected_output": "42"},
                        {"name": "b", "inputs": "x?", "expected_output": "42"}])
    report = await Experiment(team(ScriptedModel), cases, [Contains()], repeats=2,
                              concurrency=1).run()  # one script: runs in turn
    costs = [r.cost_usd for r in report.records]
    assert all(c is not None and c > 0 for c in costs), report.records
    for case in report.cases:
        own = [r.cost_usd for r in report.records if r.case == case.case]
        assert case.cost_total_usd == pytest.approx(sum(c for c in own if c is not None))
    total = report.to_dict()["cost_usd"]
    assert total == pytest.approx(sum(c for c in costs if c is not None))
    assert f"cost ${total:.6f}".rstrip("0") in report.render_table().splitlines()[0]
    assert " in all</p>" in report.to_html()

    unknown = await Experiment(team(_Unpriced), cases, [Contains()], concurrency=1).run()
    assert all(r.cost_usd is None for r in unknown.records)
    assert unknown.to_dict()["cost_usd"] is None and unknown.cases[0].cost_total_usd is None
    assert "cost unknown (2 of 2 runs had no price)" in unknown.render_table()


async def test_the_spans_carry_each_replys_cost_and_the_runs() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from toolcycle.tracing.otel import OTelCallbacks

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    helper = Agent(_Unpriced([call("lookup", {"q": "x"}), "x is 42"]), tools=[fresh_lookup()],
                   name="researcher")
    lead = Agent(ScriptedModel([call("researcher", {"input": "x?"}), "42"], price=LEAD),
                 tools=[helper.as_tool()], name="lead",
                 callbacks=OTelCallbacks(tracer_provider=provider))
    result = await lead.run("x?")
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat")]
    lead_costs = [s.attributes.get("toolcycle.usage.cost_usd") for s in chats
                  if s.attributes.get("gen_ai.response.model") == "scripted"]
    assert len(chats) == 4 and sum(1 for s in chats if s.attributes.get(
        "toolcycle.usage.cost_unknown")) == 2  # the researcher's replies: no price
    assert sorted(c for c in lead_costs if c is not None) == sorted(
        float(LEAD.cost(s.usage)) for s in result.trace.steps)
    [run_span] = [s for s in spans if s.name == "invoke_agent lead"]
    assert run_span.attributes.get("toolcycle.usage.cost_unknown") is True  # the team's
    assert "toolcycle.usage.cost_usd" not in run_span.attributes  # never a made-up 0


async def test_trace_show_and_the_viewer_state_the_cost_or_why_it_is_unknown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolcycle.cli import main
    from toolcycle.tracing.html import render_html

    db = str(tmp_path / "traces.db")
    priced = Agent(ScriptedModel([call("lookup", {"q": "x"}), "done"], price=LEAD),
                   tools=[fresh_lookup()], trace_store=db)
    paid = await priced.run("go", run_id="paid-run")
    helper = Agent(_Unpriced([call("lookup", {"q": "x"}), "x is 42"], name="mystery-model"),
                   tools=[fresh_lookup()], name="researcher")
    lead = Agent(ScriptedModel([call("researcher", {"input": "x?"}), "42"], price=LEAD),
                 tools=[helper.as_tool()], trace_store=db)
    await lead.run("go", run_id="team-run")

    assert main(["trace", "show", "paid-run", "--db", db, "--no-color"]) == 0
    shown = capsys.readouterr().out
    assert f"cost: ${paid.usage.cost}" in shown.replace("\n", " ")
    assert main(["trace", "show", "team-run", "--db", db, "--no-color"]) == 0
    assert "cost: unknown (no price for mystery-model)" in capsys.readouterr().out
    assert f"· cost ${paid.usage.cost}" in paid.trace.render()  # the plain-text timeline
    page = render_html(paid.trace)
    assert f"<b>${paid.usage.cost}</b><span>cost</span>" in page  # the summary card
