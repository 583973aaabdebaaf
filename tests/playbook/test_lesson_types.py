"""One protocol for every lesson type (toolcycle.playbook.lesson.LessonType), registered in
one place (toolcycle.playbook.lessons): the reflector asks each type in order and knows none
of them, the outcome asks a strategy's own type to judge it first, and a new type is its
module plus its line in the registration."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from toolcycle.playbook import reflect
from toolcycle.playbook import reflector as reflector_module
from toolcycle.playbook.dead_end import FOUND_NOTHING, DeadEnds
from toolcycle.playbook.lesson import RunEvidence
from toolcycle.playbook.lessons import LESSON_TYPES, lesson_type_of
from toolcycle.playbook.no_call import NO_CALL, NoCall
from toolcycle.playbook.outcome import RunOutcome, use_verdict
from toolcycle.playbook.pitfall import Pitfalls
from toolcycle.playbook.sequence import Sequences
from toolcycle.playbook.strategy import Insight, Strategy, UseVerdict

from .conftest import make_trace


def _strategy(kind: str, tools: list[str], detail: str = "") -> Strategy:
    return Strategy(id="s", kind=kind, domain="d", advice="a", tools=tools,  # type: ignore[arg-type]
                    detail=detail, error_class=detail if kind == "pitfall" else "")


def test_each_strategy_is_owned_by_its_most_specific_type() -> None:
    assert isinstance(lesson_type_of(_strategy("sequence", ["a", "b"])), Sequences)
    assert isinstance(lesson_type_of(_strategy("pitfall", ["a"], "boom")), Pitfalls)
    assert isinstance(lesson_type_of(_strategy("pitfall", ["a"], FOUND_NOTHING)), DeadEnds)
    assert isinstance(lesson_type_of(_strategy("pitfall", [], NO_CALL)), NoCall)
    assert lesson_type_of(_strategy("advice", [])) is None


def test_a_dead_end_is_judged_by_its_own_type() -> None:
    dead = _strategy("pitfall", ["crm"], FOUND_NOTHING)
    calls = [("crm", "ok")]
    outcome = RunOutcome(run_id="r", success=False, iterations=1, tool_latency_ms=0.0,
                         calls=calls)
    assert use_verdict(dead, outcome) == "harmful"  # its tool answered: wrong for this task


class Unit:
    """A lesson type of a test's own: a result that names a unit the task did not."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        return [run.insight("advice", f"{c.call.name} answers in kg.", [c.call.name], "unit")
                for c in run.analysis.calls if c.ok and "kg" in (c.call.result or "")]

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        return None

    def owns(self, strategy: Strategy) -> bool:
        return strategy.detail == "unit"


def test_a_new_lesson_type_is_one_class_and_its_registration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    trace = make_trace("How heavy is parcel 7?", [[("parcel", {"id": 7}, "12 kg", None)]])
    trace.output = "12 kg"
    before = reflect(trace, success=True, domain="d")
    monkeypatch.setattr(reflector_module, "LESSON_TYPES", (*LESSON_TYPES, Unit()))
    after = reflect(trace, success=True, domain="d")
    assert after[:-1] == before and after[-1].advice == "parcel answers in kg."


def test_no_module_but_the_registration_names_a_lesson_type() -> None:
    """A new lesson type is its module and its line in lessons.py (docs/playbook.md): no
    other module of the package imports a registered type's class."""
    import ast

    package = Path(reflector_module.__file__).parent
    classes = {type(t).__name__ for t in LESSON_TYPES}
    importers = {
        path.name for path in package.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and classes & {a.name for a in node.names}}
    assert importers == {"lessons.py"}


def test_the_docs_sample_of_a_new_lesson_type_runs_as_pasted(tmp_path: Path) -> None:
    """docs/playbook.md "Adding a lesson type" (its page runs in the real-model tier as a
    whole; this sample needs no model, so it runs here too)."""
    import re

    from doc_scripts import ROOT, run_script

    page = (ROOT / "docs" / "playbook.md").read_text(encoding="utf-8")
    section = page[page.index("### Adding a lesson type"):]
    sample = re.search(r"```python\n(.*?)```", section, re.S)
    assert sample is not None
    assert run_script(sample.group(1), tmp_path).strip() == "['parcel answers in kg.']"
