"""What a stand-in did in place of a call (``ToolCallRecord.stand_in``) is shown wherever a run
is: the HTML page, ``toolcycle trace show`` and ``Trace.render``.

A learned routine answering the model's first call runs the whole chain inside that call; the
trace keeps the calls it made, typed, on the call's record. Stored but not shown, a reader of
the trace saw one call to ``country_info`` answered with a paragraph, not the two calls that
made it. Here a real playbook learns the routine, a real run records the trace in a real
store, and the CLI reads it back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playbook.test_repair import COUNTRIES, country_info, exchange_rate, in_order

from toolcycle import Agent, tool
from toolcycle.cli import main as cli_main
from toolcycle.models.scripted import ScriptedModel
from toolcycle.playbook import LearningTask, Playbook, learn
from toolcycle.tracing.html import render_html
from toolcycle.tracing.stand_in import StandIn, StepOutcome
from toolcycle.tracing.trace import Trace
from toolcycle.tracing.values import stand_in_text

from .sample_traces import weather_trace

HEAD = "stand-in routine for country_info · ok"
STEPS = ['1. country_info({"country": "Ruritania"}) ok: Ruritania: currency code RUK',
         '2. exchange_rate({"currency": "RUK"}) ok: 1 RUK = 2.75 USD']


@pytest.fixture(scope="module")
def routine_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Trace, str]:
    """A run whose first call a learned routine answered, and the store that recorded it."""
    import asyncio

    db = str(tmp_path_factory.mktemp("stand-in") / "traces.db")
    pb = Playbook(":memory:", routines=True)
    agent = Agent(ScriptedModel(in_order), "Answer with the tools.",
                  [tool(country_info, read_only=True), tool(exchange_rate, read_only=True)],
                  name="money", playbook=pb, trace_store=db)
    tasks = [LearningTask(f"t-{c}", f"How many USD is the currency of {c} worth?",
                          COUNTRIES[c][1]) for c in ("Freedonia", "Sylvania", "Oberland")]

    async def run() -> Trace:
        await learn(tasks, agent, playbook=pb, progress=False)
        result = await agent.run("How many USD is the currency of Ruritania worth?")
        return result.trace

    trace = asyncio.run(run())
    pb.close()
    return trace, db


def test_the_run_records_what_the_routine_did(routine_run: tuple[Trace, str]) -> None:
    trace, _ = routine_run
    record = trace.tool_calls[0].stand_in
    assert record is not None and record.kind == "routine"
    head, steps = stand_in_text(record)
    assert head == HEAD
    assert [s[:len(e)] for s, e in zip(steps, STEPS, strict=True)] == STEPS


def test_trace_show_prints_the_steps_under_the_call(routine_run: tuple[Trace, str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    trace, db = routine_run
    assert cli_main(["trace", "show", trace.run_id, "--db", db, "--no-color",
                     "--width", "300"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == f"↳ {HEAD}")
    assert lines[at - 2].lstrip().startswith("→ country_info")  # the call, its answer, then it
    assert [line.strip()[:len(e)] for line, e in zip(lines[at + 1:at + 3], STEPS,
                                                      strict=True)] == STEPS


def test_trace_html_shows_the_steps_in_the_call(routine_run: tuple[Trace, str],
                                                tmp_path: Path) -> None:
    trace, db = routine_run
    out = tmp_path / "run.html"
    assert cli_main(["trace", "html", trace.run_id, "--db", db, "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert '<span class="badge">stand-in routine</span>' in page
    assert '<div class="label">Stand-in routine for country_info · ok</div>' in page
    assert '<pre class="stand-in">1. country_info({&quot;country&quot;: &quot;Ruritania&quot;})' \
           " ok: Ruritania: currency code RUK" in page


def test_trace_render_shows_the_steps(routine_run: tuple[Trace, str]) -> None:
    text = routine_run[0].render(max_chars=10_000)
    assert f"     {HEAD}\n       {STEPS[0]}" in text


def test_a_fallbacks_failed_call_timeout_and_alternative_are_said() -> None:
    trace = weather_trace()
    trace.steps[0].tool_calls[0].stand_in = StandIn("fallback", "geocode", ok=False,
                                                    alternative="<b>atlas</b>", steps=(
        StepOutcome("geocode", {"city": "Paris"}, "error", "backend down"),
        StepOutcome("<b>atlas</b>", {"q": "<i>"}, "timeout", "", 2.5)))
    head, steps = stand_in_text(trace.steps[0].tool_calls[0].stand_in)
    assert head == "stand-in fallback for geocode → <b>atlas</b> · failed"
    assert steps == ['1. geocode({"city": "Paris"}) error: backend down',
                     '2. <b>atlas</b>({"q": "<i>"}) timeout after 2.5 s']
    page = render_html(trace)
    assert "Stand-in fallback for geocode → &lt;b&gt;atlas&lt;/b&gt; · failed" in page
    assert "2. &lt;b&gt;atlas&lt;/b&gt;({&quot;q&quot;: &quot;&lt;i&gt;&quot;}) timeout after" \
           " 2.5 s</pre>" in page
    assert "<b>atlas" not in page and "<i>" not in page
