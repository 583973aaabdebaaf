"""An eval on the real local model: the tool users get, measuring a real agent end to end.

Two cases on Qwen2.5-Coder-0.5B at temperature 0 with a fixed seed, scored by ``Contains``,
``ToolTrajectory`` and an LLM judge that is itself a local model (SmolLM2-135M, whose verdict
is constrained to the ``Verdict`` schema). The assertions check what must hold for the eval to
be right, as tests/local/test_real_model.py does for the same greeting task: the run called the
tool it should, every run is recorded and traced, and the judge gave a typed verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcycle import Agent, Limits
from toolcycle.cli.demo import sayHello
from toolcycle.evals import Contains, Dataset, Experiment, LLMJudge, ToolTrajectory, read_records
from toolcycle.models import ModelSettings
from toolcycle.models.local.llama import DEFAULT_SEED
from toolcycle.tracing.store import TraceStore

pytestmark = pytest.mark.real_model


async def test_an_eval_of_a_local_agent_judged_by_a_local_model(tmp_path: Path) -> None:
    agent = Agent("local:qwen2.5-coder-0.5b", "You greet people. Use the sayHello tool.",
                  [sayHello], limits=Limits(max_iterations=3),
                  model_settings=ModelSettings(temperature=0.0, seed=DEFAULT_SEED,
                                               max_tokens=256))
    dataset = Dataset.of([
        {"name": name.lower(), "inputs": f"Say hello to {name}.",
         "expected_output": f"Hello, {name}",
         "expected_tools": [{"name": "sayHello", "args": {"personName": name}}]}
        for name in ("Alice", "Bob")])
    judge = LLMJudge("local:smollm2-135m", "The answer greets the person the task names.")
    store = tmp_path / "traces.db"
    report = await Experiment(agent, dataset, [Contains(), ToolTrajectory(), judge],
                              log=tmp_path / "log.jsonl", trace_store=str(store)).run()
    assert len(report.records) == 2
    assert report.evaluator("trajectory").passed.mean == 1.0, report.render_table()
    assert report.cases[0].evaluators["contains"].passed.mean == 1.0, report.render_table()
    with TraceStore(store) as traces:
        for record in report.records:
            verdict = record.score("judge")
            assert verdict is not None and isinstance(verdict.passed, bool)
            assert 0.0 <= verdict.value <= 1.0 and verdict.reason
            assert record.iterations >= 2 and record.tokens > 0
            assert record.run_id is not None and traces.get(record.run_id) is not None
    assert len(read_records(tmp_path / "log.jsonl")[1]) == 2
