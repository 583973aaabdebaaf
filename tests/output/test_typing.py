"""``Agent[DepsT, OutputT]`` and ``RunResult[OutputT]`` are inferred from ``output=`` by mypy.

The snippet below is type-checked with mypy's API: ``assert_type`` fails the check when the
inferred type differs, and a deliberately wrong line proves the check can fail.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from mypy import api

SNIPPET = '''
from typing import Any, Literal, assert_type

from pydantic import BaseModel

from toolcycle import Agent, Output, RunContext, RunResult
from toolcycle.models.scripted import ScriptedModel


class Report(BaseModel):
    title: str


class Other(BaseModel):
    n: int


def check(report: Report, ctx: RunContext[Any]) -> None:
    pass


model = ScriptedModel([])

assert_type(Agent(model), Agent[Any, str])
assert_type(Agent(model, output=str), Agent[Any, str])
assert_type(Agent(model, output=Report), Agent[Any, Report])
assert_type(Agent(model, output=Output(Report, validators=[check])), Agent[Any, Report])
assert_type(Agent(model, output=list[int]), Agent[Any, list[int]])
assert_type(Agent(model, output=Report, deps_type=int), Agent[int, Report])
assert_type(Output(Report), Output[Report])
assert_type(Output(validators=[check]), Output[str])
# Unions and literals are not classes to mypy: Output gives Output[Any] and an annotation
# keeps the precise type.
assert_type(Output(Report | Other), Output[Any])
union_agent: Agent[None, Report | Other] = Agent(model, output=Output(Report | Other))
literal_agent: Agent[None, Literal["a", "b"]] = Agent(model, output=Output(Literal["a", "b"]))


async def use() -> None:
    result = await Agent(model, output=Report).run("go")
    assert_type(result, RunResult[Report])
    assert_type(result.output, Report | None)
    assert_type(Agent(model, output=Report).run_sync("go").output, Report | None)
    text = await Agent(model).run("go")
    assert_type(text.output, str | None)
    union = await union_agent.run("go")
    assert_type(union.output, Report | Other | None)
    stream = Agent(model, output=Report).stream("go")
    assert_type(await stream.get_result(), RunResult[Report])
'''

WRONG = '''
from pydantic import BaseModel

from toolcycle import Agent
from toolcycle.models.scripted import ScriptedModel


class Report(BaseModel):
    title: str


async def use() -> None:
    result = await Agent(ScriptedModel([]), output=Report).run("go")
    count: int = result.output  # wrong: the output is a Report
'''


def _mypy(tmp_path: Path, name: str, source: str) -> tuple[str, int]:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    root = Path(__file__).resolve().parents[2]
    stdout, stderr, status = api.run([
        "--strict", "--no-error-summary", "--cache-dir", str(root / ".mypy_cache"), str(path),
    ])
    return stdout + stderr, status


def test_output_type_is_inferred_for_mypy(tmp_path: Path) -> None:
    report, status = _mypy(tmp_path, "typed_agent", SNIPPET)
    assert status == 0, report
    wrong, status = _mypy(tmp_path, "wrong_agent", WRONG)
    assert status == 1
    assert 'Incompatible types in assignment (expression has type "Report | None"' in wrong
