"""The playbook learns a run as a success only when its status is "success" (docs/status.md):
an answer forced at a limit, a partial one and a tool's error passed through are failures,
even when a grader finds the expected words in them. Before, a forced answer that contained
the expected value counted as a success, and so did an error text that happened to."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits, tool
from toolcycle.models.base import ModelSettings
from toolcycle.playbook import Playbook, judge, learn
from toolcycle.testing import ScriptedModel, call


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


@tool
def lookup(city: str) -> str:
    """Find a city's temperature."""
    raise ValueError(f"no temperature for {city}: sensor 21 offline since noon")


def _forced(_messages: Any, settings: ModelSettings) -> Any:
    return "it is 21" if settings.tool_choice == "none" else call("ping")


ERROR = "Tool `lookup` failed: ValueError: no temperature for Paris: sensor 21 offline since noon"
AGENTS = {
    "success": lambda: dict(model=ScriptedModel([call("ping"), "it is 21"]), tools=[ping]),
    "forced": lambda: dict(model=ScriptedModel(_forced), tools=[ping],
                           limits=Limits(max_iterations=1)),
    "partial": lambda: dict(model=ScriptedModel(_forced), tools=[ping],
                            limits=Limits(max_iterations=1, on_limit="partial")),
    "tool_error": lambda: dict(model=ScriptedModel([call("lookup", {"city": "Paris"}), ERROR]),
                               tools=[lookup]),
}


@pytest.mark.parametrize("status", sorted(AGENTS))
async def test_judge_reads_the_status_before_the_grader(status: str) -> None:
    result = await Agent(**AGENTS[status]()).run("how warm is it?")
    assert result.status == status
    graded: list[str] = []

    def grader(trace: Any, outcome: Any) -> bool:
        graded.append(trace.run_id)
        return True  # "21" is in every answer above (partial's is the last text, or None)

    assert judge(result.trace, result, grader) is (status == "success")
    assert graded == ([result.run_id] if status == "success" else [])


@pytest.mark.parametrize("status", sorted(AGENTS))
async def test_offline_learning_counts_only_a_success(status: str) -> None:
    pb = Playbook(":memory:")
    agent = Agent(**AGENTS[status](), playbook=pb)
    report = await learn([{"id": "t", "prompt": "how warm is it?", "expected": "21"}], agent,
                         playbook=pb, progress=False, probe=False)
    assert report.outcomes["0:t"]["success"] is (status == "success")
    pb.close()
