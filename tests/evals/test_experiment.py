"""Experiments: repeats and concurrency, scores, failures, traces, and the resumable log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.errors import ConfigurationError
from toolcycle.evals import (
    Contains,
    Dataset,
    Experiment,
    ExperimentLogError,
    ToolTrajectory,
    read_records,
)
from toolcycle.messages import Message, TextPart, ToolResult
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.store import TraceStore

from .eval_tools import model, work

CASES = [
    {"name": "one", "inputs": "do i1", "expected_output": "done:i1",
     "expected_tools": [{"name": "work", "args": {"item": "i1"}}], "metadata": {"kind": "a"}},
    {"name": "two", "inputs": "do i2", "expected_output": "done:i2",
     "metadata": {"kind": "a"}},
    {"name": "wrong", "inputs": "do wrong", "expected_output": "done:wrong",
     "metadata": {"kind": "b"}},
]


def agent() -> Agent[Any, str]:
    return Agent(model(), "Do the work.", [work])


def experiment(**options: Any) -> Experiment:
    return Experiment(options.pop("agent", None) or agent(), Dataset.of(CASES),
                      [Contains(), ToolTrajectory()], **options)


async def test_repeats_concurrency_and_figures() -> None:
    seen: list[tuple[str, int]] = []
    report = await experiment(repeats=3, concurrency=3,
                              on_record=lambda r: seen.append(r.key)).run()
    assert len(report.records) == 9 and sorted(seen) == sorted(r.key for r in report.records)
    assert [c.case for c in report.cases] == ["one", "two", "wrong"]
    one, two, wrong = report.cases
    assert (one.passed.mean, two.passed.mean, wrong.passed.mean) == (1.0, 1.0, 0.0)
    assert wrong.success.mean == 1.0  # it answered, wrongly: success, not a pass
    assert two.evaluators["trajectory"].passed.n == 0  # no expected tools: not applicable
    assert (one.pass_at_k, one.pass_hat_k, wrong.pass_at_k) == (1.0, 1.0, 0.0)
    assert one.iterations.mean == 2 and one.tokens.mean > 0
    assert one.cost_usd is not None and one.cost_usd.mean == 0  # a scripted model is free
    assert report.passed.n == 9 and report.passed.mean == pytest.approx(6 / 9)
    assert report.pass_at_k == pytest.approx(2 / 3)
    kinds = report.kinds()
    assert kinds["a"].passed.mean == 1.0 and kinds["b"].passed.mean == 0.0
    assert report.records[0].tools == ("work",)
    table = report.render_table().splitlines()
    assert [line.split()[:2] for line in table[-3:]] == [["kind", "a"], ["kind", "b"], ["all", "9"]]
    data = json.loads(report.to_json())
    assert data["k"] == 3 and data["cases"][2]["passed"]["mean"] == 0.0
    assert data["intervals"].startswith("95 %")


async def test_failed_runs_are_recorded_with_their_error() -> None:
    looping = Agent(ScriptedModel(lambda messages, settings: call("work", {"item": "x"})),
                    "loop", [work], limits=Limits(max_iterations=2, on_limit="error"))
    report = await experiment(agent=looping).run()
    record = report.records[0]
    assert not record.succeeded and record.status == "failure"
    assert record.error is not None and "MaxIterationsExceeded" in record.error
    assert record.iterations == 2 and report.success.mean == 0.0


async def test_an_answer_forced_at_a_limit_is_not_a_success() -> None:
    """A limit's forced answer may even contain the right text: it still did not succeed."""
    def reply(messages: list[Message], settings: Any) -> Message:
        if settings.tool_choice == "none":
            return Message("assistant", [TextPart("done:i1")])
        return Message("assistant", [call("work", {"item": "i1"})])

    forced = Agent(ScriptedModel(reply), "loop", [work], limits=Limits(max_iterations=1))
    report = await experiment(agent=forced).run()
    record = report.records[0]
    assert record.status == "forced" and not record.succeeded
    assert record.score("contains") is not None and record.score("contains").passed  # type: ignore[union-attr]
    assert report.cases[0].passed.mean == 0.0  # passing needs a success too


async def test_an_evaluator_that_raises_fails_its_score_not_the_experiment() -> None:
    from toolcycle.evals import Case, Evaluator, Observed, Score

    class Broken(Evaluator):
        name = "broken"

        async def evaluate(self, case: Case, run: Observed) -> Score | None:
            raise RuntimeError("bug in the evaluator")

    report = await Experiment(agent(), Dataset.of(CASES[:1]), [Broken(), Contains()]).run()
    broken = report.records[0].score("broken")
    assert broken is not None and not broken.passed
    assert broken.reason == "the evaluator raised RuntimeError: bug in the evaluator"
    assert report.evaluator("contains").passed.mean == 1.0


async def test_traces_go_to_the_store_tagged_with_the_case(tmp_path: Path) -> None:
    store = tmp_path / "traces.db"
    report = await experiment(trace_store=str(store), name="tagged").run()
    with TraceStore(store) as traces:
        for record in report.records:
            assert record.run_id is not None
            trace = traces.get(record.run_id)
            assert trace is not None
            assert trace.metadata["eval"] == {"experiment": "tagged", "case": record.case,
                                              "repeat": record.repeat}


def _counting_model() -> tuple[ScriptedModel, list[str]]:
    asked: list[str] = []

    def reply(messages: list[Message], settings: Any) -> Message:
        last = messages[-1]
        if last.role == "user":
            asked.append(last.text)
            return Message("assistant", [call("work", {"item": last.text.split()[-1]})])
        text = " ".join(p.content for p in last.parts if isinstance(p, ToolResult))
        return Message("assistant", [TextPart(text)])

    return ScriptedModel(reply), asked


async def test_a_resumed_log_runs_only_what_is_missing(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    scripted, asked = _counting_model()
    counted = Agent(scripted, "Do the work.", [work])
    await experiment(agent=counted, log=log, repeats=1).run()
    assert len(asked) == 3
    report = await experiment(agent=counted, log=log, repeats=2).run()
    assert len(asked) == 6  # only repeat 2 ran
    assert len(report.records) == 6
    report = await experiment(agent=counted, log=log, repeats=2).run()
    assert len(asked) == 6 and len(report.records) == 6
    header, records = read_records(log)
    assert header["evaluators"] == ["contains", "trajectory"] and len(records) == 6


async def test_a_torn_last_line_is_cut_and_run_again(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    await experiment(log=log).run()
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]) + lines[-1][:25])  # killed mid-write
    scripted, asked = _counting_model()
    report = await experiment(agent=Agent(scripted, "x", [work]), log=log).run()
    assert len(asked) == 1 and len(report.records) == 3
    assert len(read_records(log)[1]) == 3


@pytest.mark.parametrize(("change", "message"), [
    ("evaluators", "written with evaluators"),
    ("case", "no longer has as it was"),
    ("identity", "written by another agent"),
    ("garbage", "line 2 is not JSON"),
    ("record", "line 2: not a run record"),
    ("header", "not an experiment log header"),
])
async def test_a_log_of_something_else_is_refused(tmp_path: Path, change: str,
                                                  message: str) -> None:
    log = tmp_path / "log.jsonl"
    await experiment(log=log, identity="v1").run()
    options: dict[str, Any] = {"log": log, "identity": "v1"}
    cases = CASES
    lines = log.read_text().splitlines(keepends=True)
    if change == "evaluators":
        with pytest.raises(ExperimentLogError, match=message):
            await Experiment(agent(), Dataset.of(cases), [Contains()], **options).run()
        return
    if change == "case":
        cases = [{**CASES[0], "expected_output": "done:i1!"}, *CASES[1:]]
    elif change == "identity":
        options["identity"] = "v2"
    elif change == "garbage":
        log.write_text(lines[0] + "{oops\n" + "".join(lines[2:]))
    elif change == "record":
        log.write_text(lines[0] + '{"case": 3}\n' + "".join(lines[2:]))
    else:
        log.write_text('{"format": "other"}\n' + "".join(lines[1:]))
    with pytest.raises(ExperimentLogError, match=message):
        await Experiment(agent(), Dataset.of(cases), [Contains(), ToolTrajectory()],
                         **options).run()


def test_bad_configuration_lists_every_problem() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Experiment("agent", Dataset(()), [Contains(), Contains()], repeats=0,  # type: ignore[arg-type]
                   concurrency=-1, max_iterations=0, ray=True)
    problems = caught.value.problems
    assert len(problems) == 7, problems
    assert any("used more than once" in p for p in problems)
    assert any("BatchRecipe" in p for p in problems)
    with pytest.raises(ConfigurationError, match="price_per_million"):
        Experiment(agent(), Dataset.of(CASES), price_per_million=(-1.0, 2.0))
