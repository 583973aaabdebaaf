"""The playbook A/B: learn on train, no playbook vs frozen playbook on test, per kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolcycle import Agent
from toolcycle.errors import ConfigurationError
from toolcycle.evals import Contains, Dataset, Experiment, ToolTrajectory, playbook_ab
from toolcycle.messages import Message, TextPart, ToolResult
from toolcycle.playbook import LearningTask, Playbook
from toolcycle.testing import ScriptedModel, call

from .eval_tools import work

ROWS = [{"name": f"{kind}-{split}-{i}", "inputs": f"please ({split}) do {kind}{i}",
         "expected_output": f"done:{kind}{i}", "expected_tools": ["work"],
         "metadata": {"kind": kind, "split": split}}
        for kind in ("alpha", "wrong") for split in ("train", "test") for i in range(2)]


def _model(asked: list[str]) -> ScriptedModel:
    def reply(messages: list[Message], settings: Any) -> Message:
        last = messages[-1]
        if last.role == "user":
            asked.append(last.text)
            return Message("assistant", [call("work", {"item": last.text.split()[-1]})])
        text = " ".join(p.content for p in last.parts if isinstance(p, ToolResult))
        return Message("assistant", [TextPart("no idea" if "wrong" in text else text)])

    return ScriptedModel(reply)


async def test_learns_on_train_then_compares_the_test_split_per_kind(tmp_path: Path) -> None:
    asked: list[str] = []
    playbooks: list[Playbook | None] = []

    def make_agent(playbook: Playbook | None) -> Agent[Any, str]:
        playbooks.append(playbook)
        return Agent(_model(asked), "Do the work.", [work], playbook=playbook)

    dataset = Dataset.of(ROWS)
    result = await playbook_ab(make_agent, dataset, [Contains(), ToolTrajectory()],
                               playbook=tmp_path / "pb.db", repeats=2,
                               log_dir=tmp_path / "logs")
    train = [c.inputs for c in dataset.filter(split="train")]
    test = [c.inputs for c in dataset.filter(split="test")]
    assert asked[:4] == train  # learning ran the train split once, first
    assert sorted(asked[4:]) == sorted(test * 4)  # two arms, two repeats each
    learner, baseline, frozen = playbooks
    assert learner is not None and learner.learning
    assert baseline is None and frozen is not None and not frozen.learning
    assert result.train_cases == 4 and result.train_pass_rate == 0.5  # graded by Contains
    assert {r.case for r in result.baseline.records} == {c.name for c in
                                                         dataset.filter(split="test")}
    assert set(result.by_kind) == {"alpha", "wrong"}
    assert result.by_kind["wrong"].pass_rate_a == 0.0
    assert result.comparison.worse == [] and result.comparison.share_worse == 0.0
    text = result.render()
    assert "learned on 4 train cases (pass 50%)" in text and "kind alpha:" in text
    assert '"by_kind"' in result.to_json()

    again = await playbook_ab(make_agent, dataset, [Contains(), ToolTrajectory()],
                              playbook=tmp_path / "pb.db", repeats=2,
                              log_dir=tmp_path / "logs")
    assert len(asked) == 4 + 16  # resumed: the learning session and both logs were complete
    assert again.comparison.to_dict() == result.comparison.to_dict()


def test_learning_grader_uses_output_evaluators_only() -> None:
    from toolcycle.evals.playbook_ab import learning_grader

    case = Dataset.of(ROWS)["alpha-train-0"]
    grade = learning_grader({case.name: case}, [Contains(), ToolTrajectory()])
    task = LearningTask(case.name, "x", case.expected_output)
    assert grade(task, "done:alpha0") and not grade(task, "nothing")


async def test_a_split_without_train_or_test_cases_is_refused(tmp_path: Path) -> None:
    only_test = Dataset.of([{**r, "metadata": {"split": "test"}} for r in ROWS[:2]])
    with pytest.raises(ConfigurationError, match="0 train and 2 test"):
        await playbook_ab(lambda pb: Agent(_model([]), "x", [work]), only_test, [Contains()],
                          playbook=tmp_path / "pb.db")


async def test_progress_bar_counts_passes(capsys: pytest.CaptureFixture[str]) -> None:
    report = await Experiment(Agent(_model([]), "x", [work]), Dataset.of(ROWS[:2]),
                              [Contains()], progress=True).run()
    assert report.passed.mean == 1.0
    assert "2/2 passed" in capsys.readouterr().err
