"""The seeded learning-suite generator (bench/learning_gen/): deterministic per seed, varied
across seeds, every task solvable by a scripted oracle agent through the real loop, and the
naive first call missing the way its kind says."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.evals import Dataset
from toolcycle.testing import ScriptedModel

BENCH = Path(__file__).resolve().parents[2] / "bench"
SEEDS = range(12)


def _package() -> ModuleType:
    if "learning_gen" not in sys.modules:
        folder = BENCH / "learning_gen"
        spec = importlib.util.spec_from_file_location(
            "learning_gen", folder / "__init__.py", submodule_search_locations=[str(folder)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["learning_gen"] = module
        spec.loader.exec_module(module)
    return sys.modules["learning_gen"]


gen = _package()


def _oracle() -> ModuleType:
    return importlib.import_module("learning_gen.oracle")


def _fingerprint(suite: Any) -> list[Any]:
    tools = [(t.name, t.spec.description, json.dumps(t.spec.parameters, sort_keys=True))
             for t in suite.tools]
    cases = [c.to_data() for c in suite.dataset]
    return [suite.domain.key, suite.instructions, tools, cases,
            [(p.kind, p.variant) for p in suite.parts]]


def test_a_seed_gives_the_same_suite_in_another_process() -> None:
    here = _fingerprint(gen.generate(5))
    script = (f"import sys, json; sys.path[:0] = [{str(BENCH)!r}, {str(BENCH.parent)!r}]\n"
              "from learning_gen import generate\n"
              "s = generate(5)\n"
              "print(json.dumps([s.domain.key, s.instructions, [(t.name, t.spec.description,"
              " json.dumps(t.spec.parameters, sort_keys=True)) for t in s.tools],"
              " [c.to_data() for c in s.dataset], [(p.kind, p.variant) for p in s.parts]]))")
    there = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": "123"})
    assert json.loads(there.stdout) == json.loads(json.dumps(here))
    assert _fingerprint(gen.generate(5)) == here


def test_seeds_vary_domains_names_wordings_and_variants() -> None:
    suites = [gen.generate(seed) for seed in SEEDS]
    assert len({s.domain.key for s in suites}) >= 6
    assert len(gen.DOMAINS) >= 8
    assert len({t.name for s in suites for t in s.tools}) >= 60
    params = {p for s in suites for t in s.tools for p in t.spec.parameters["properties"]}
    assert len(params) >= 15
    for kind in gen.KINDS:
        variants = {p.variant for s in suites for p in s.parts if p.kind == kind}
        assert len(variants) >= 2, kind
    # several phrasings of one kind within one suite: the words differ, not only the names
    suite = gen.generate(0, train=6, test=4)
    for kind in gen.KINDS:
        shapes = {" ".join(w for w in str(c.inputs).split() if w.islower())
                  for c in suite.dataset.filter(kind=kind)}
        assert len(shapes) >= 2, kind


def test_the_dataset_carries_kind_split_domain_and_seed(tmp_path: Path) -> None:
    suite = gen.generate(3, train=2, test=1)
    assert len(suite.dataset) == 6 * 3 and set(gen.KINDS) >= {"unreliable", "empty_source",
                                                              "arg_format", "id_first"}
    for case in suite.dataset:
        assert set(case.metadata) == {"kind", "split", "domain", "seed"}
        assert case.metadata["seed"] == 3 and case.metadata["domain"] == suite.domain.key
    train, test = suite.dataset.split()
    assert {c.kind for c in train} == {c.kind for c in test} == set(gen.KINDS)
    assert len(train) == 12 and len(test) == 6
    suite.dataset.save(tmp_path / "suite.jsonl")
    assert Dataset.load(tmp_path / "suite.jsonl").cases == suite.dataset.cases
    with pytest.raises(ValueError, match="unknown kinds"):
        gen.generate(1, kinds=("nope",))


@pytest.mark.parametrize("seed", SEEDS)
async def test_every_task_is_solved_by_the_oracle_agent(seed: int) -> None:
    suite = gen.generate(seed)
    for case in suite.dataset:
        task = suite.task(case)
        agent = Agent(_oracle().oracle_model(task), suite.instructions, list(suite.tools),
                      name=suite.agent_name, limits=Limits(max_iterations=6))
        result = await agent.run(str(case.inputs))
        assert suite.grade(case.expected_output, result.output), (case.name, result.output)
        assert [c.name for c in result.trace.tool_calls] == [c.tool for c in task.oracle]
        assert result.trace.iterations == len(task.oracle) + 1
        assert result.trace.iterations <= suite.fewest_iterations()[task.kind] + (
            len(task.oracle) - 2 if task.kind == "paging" else 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_naive_first_call_misses_as_its_kind_says(seed: int) -> None:
    suite = gen.generate(seed)
    for case in suite.dataset:
        task = suite.task(case)
        status, text = _oracle().naive_result(suite.tool(task.naive.tool), task.naive)
        assert not suite.grade(case.expected_output, text) or status == "error", case.name
        if task.naive_miss == "error":
            assert status == "error", (case.name, text)
        elif task.naive_miss == "empty":
            assert status == "ok" and _oracle().read_answer(task, text) is None
            from toolcycle.playbook.evidence import is_empty_result

            assert is_empty_result(text), (case.name, text)
        else:
            assert status == "ok" and _oracle().read_answer(task, text) is None, case.name
        # the first oracle call is another call than the naive one: the lesson changes it
        assert task.oracle[0] != task.naive or len(task.oracle) > 1


def test_a_user_who_declares_nothing_gets_tools_that_are_not_read_only() -> None:
    assert all(t.policy.read_only for t in gen.generate(2).tools)
    assert not any(t.policy.read_only for t in gen.generate(2, read_only=False).tools)


def test_grading_is_by_the_exact_value() -> None:
    grade = gen.GeneratedSuite.grade
    assert grade("41.2", "The fare is 41.20 EUR.") and not grade("41.2", "It is 41.25.")
    assert grade("12000", "12,000 units") and grade("C14", "seat c14")
    assert not grade("12", "about 120 minutes")


async def test_measure_runs_the_playbook_ab_and_reports_per_kind(tmp_path: Path) -> None:
    """measure.py's path end to end with the oracle in place of the model: learning graded by
    the exact answer, both arms logged, and the per-kind report pooled over seeds."""
    from toolcycle.evals import playbook_ab
    from toolcycle.messages import Message
    from toolcycle.playbook import Playbook

    measure = importlib.import_module("learning_gen.measure")
    for seed in (3, 4):
        suite = gen.generate(seed, train=2, test=1, kinds=("unreliable", "id_first"))
        by_prompt = {str(c.inputs): suite.task(c) for c in suite.dataset}

        def reply(messages: list[Message], settings: Any,
                  by_prompt: dict[str, Any] = by_prompt) -> Message:
            prompt = next(m.text for m in messages if m.role == "user")
            task = next(t for p, t in by_prompt.items() if p in prompt)
            return _oracle().oracle_reply(task)(messages, settings)  # type: ignore[no-any-return]

        def make_agent(pb: Playbook | None, suite: Any = suite,
                       reply: Any = reply) -> Agent[Any, Any]:
            return Agent(ScriptedModel(reply), suite.instructions, list(suite.tools),
                         name=suite.agent_name, playbook=pb)

        folder = measure.seed_dir(tmp_path, "t", "json", seed)
        folder.mkdir(parents=True)
        result = await playbook_ab(make_agent, suite.dataset, [gen.ExactAnswer()],
                                   playbook=folder / "pb.db", log_dir=folder)
        assert result.train_pass_rate == 1.0 and result.comparison.pass_rate_a == 1.0
        data = json.loads(result.to_json())
        data["suite"] = {"seed": seed, "domain": suite.domain.key}
        (folder / "result.json").write_text(json.dumps(data))
    args = type("Args", (), {"out": tmp_path, "label": "t", "protocol": "json",
                         "b_log": ""})()
    text = measure.report(args)
    assert "seeds [3, 4]" in text and "| unreliable | 100% → 100% |" in text
    assert "| id_first |" in text and "0 of 2 |" in text and "over seeds" in text
