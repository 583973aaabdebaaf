"""rel-21: configuration that was accepted, or rejected with a raw TypeError/AttributeError,
is a ConfigurationError; every problem of one constructor is listed at once."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, Limits, Output, Tool, ValidationFailed, tool
from toolcycle.errors import ConfigurationError
from toolcycle.testing import ScriptedModel, call


class R(BaseModel):
    a: int


def f(x: int) -> int:
    """f."""
    return x


def reject(out: Any, ctx: Any) -> None:
    raise ValidationFailed("no")


def model() -> ScriptedModel:
    return ScriptedModel(["done"])


CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "Limits(timeout=nan)": (lambda: Limits(timeout=math.nan),
                            "timeout must be a finite number of seconds > 0, got nan"),
    "Limits(timeout=inf)": (lambda: Limits(timeout=math.inf),
                            "timeout must be a finite number of seconds > 0, got inf"),
    "@tool(timeout=nan)": (lambda: tool(timeout=math.nan)(f),
                           "timeout must be a finite number of seconds > 0, got nan"),
    "@tool(timeout=inf)": (lambda: tool(timeout=math.inf)(f),
                           "timeout must be a finite number of seconds > 0, got inf"),
    "@tool(max_calls=2.5)": (lambda: tool(max_calls=2.5)(f),
                             "max_calls must be an integer >= 1, got 2.5"),
    "@tool(timeout='5')": (lambda: tool(timeout="5")(f),
                           "timeout must be a finite number of seconds > 0, got '5'"),
    "@tool(max_calls='3')": (lambda: tool(max_calls="3")(f),
                             "max_calls must be an integer >= 1, got '3'"),
    "Agent(None)": (lambda: Agent(None),  # type: ignore[arg-type]
                    "model must be a Model or a model string"),
    "Agent(123)": (lambda: Agent(123),  # type: ignore[arg-type]
                   "model must be a Model or a model string"),
    "Agent(M, tools=f)": (lambda: Agent(model(), tools=f),  # type: ignore[arg-type]
                          "tools must be a list of tools or functions, got function"),
    "Agent(M, model_settings=42)": (lambda: Agent(model(), model_settings=42),  # type: ignore[arg-type]
                                    "model_settings must be a ModelSettings object, got int"),
    "Agent(M, callbacks={'on_success': 42})": (
        lambda: Agent(model(), callbacks={"on_success": 42}),  # type: ignore[dict-item]
        "callbacks: callback for 'on_success' must be a callable or a list of callables"),
    "Agent(M, callbacks=42)": (lambda: Agent(model(), callbacks=42),  # type: ignore[arg-type]
                               "callbacks: callbacks must be objects with on_* methods"),
    "Tool.from_schema(parameters=['x'])": (
        lambda: Tool.from_schema("t", "d", ["x"], f),  # type: ignore[arg-type]
        "parameters must be a JSON Schema (a dict) of type 'object', got list"),
    "Output(R, validators=f)": (lambda: Output(R, validators=f),  # type: ignore[arg-type]
                                "validators must be a list of callables"),
    "Agent(M, trace_store=42)": (lambda: Agent(model(), trace_store=42),  # type: ignore[arg-type]
                                 "trace_store must be a trace sink"),
    "Agent(M, playbook=42)": (lambda: Agent(model(), playbook=42),  # type: ignore[arg-type]
                              "playbook must be a Playbook (attach, routines_learned, plan, "
                              "instructions_for, observe) or None"),
    "Output(R, error_prompt=42)": (
        lambda: Agent(ScriptedModel([call("final_result", {"a": 1})]),
                      output=Output(R, validators=[reject], error_prompt=42)),  # type: ignore[arg-type]
        "error_prompt must be a callable (errors, attempt) -> str, got int"),
}


@pytest.mark.parametrize("label", list(CASES))
def test_each_gap_is_a_configuration_error(label: str) -> None:
    build, problem = CASES[label]
    with pytest.raises(ConfigurationError) as caught:
        build()
    assert any(problem in p for p in caught.value.problems), caught.value.problems


def test_run_level_limits_and_callbacks_are_checked_together() -> None:
    with pytest.raises(ConfigurationError) as info:
        Agent(model()).run_sync("go", limits={"timeout": 1},  # type: ignore[arg-type]
                                callbacks=42)
    assert len(info.value.problems) == 2


def test_the_run_level_limits_check_is_ready_for_the_loop() -> None:
    from toolcycle.agent.checks import check_limits

    assert check_limits(None) == [] and check_limits(Limits(timeout=1)) == []
    assert check_limits({"timeout": 1}) == [
        "limits must be a Limits object, got dict (write limits=Limits(**...))"]


def test_every_agent_problem_is_listed_at_once() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Agent(None, tools=f, model_settings=42, callbacks=[42, {"on_success": 42}],  # type: ignore[arg-type]
              trace_store=42, playbook=42, limits={"timeout": 1}, name=7)  # type: ignore[arg-type]
    assert len(caught.value.problems) == 9, caught.value.problems


def test_every_tool_and_output_problem_is_listed_at_once() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Tool.from_schema("bad name", 3, ["x"], f, timeout=math.nan, max_calls=0.5)  # type: ignore[arg-type]
    assert len(caught.value.problems) == 5, caught.value.problems
    with pytest.raises(ConfigurationError) as caught:
        Output(R, validators=f, error_prompt="text", name=3)  # type: ignore[arg-type]
    assert len(caught.value.problems) == 3, caught.value.problems


def test_good_values_still_pass() -> None:
    tool(timeout=2, max_calls=3)(f)
    Limits(timeout=0.5)
    Agent(model(), tools=(f,), callbacks=[{"on_success": [print]}], playbook=None,
          trace_store=False)
