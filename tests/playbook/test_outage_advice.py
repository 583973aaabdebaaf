"""A pitfall learned without a repair from an error saying the service is down points away
from the tool ("Check the arguments" was the advice for a 503 on `depot`, JSON, at 94309cb:
no argument was wrong, and no earlier tool had returned anything to check them against)."""

from __future__ import annotations

import pytest

from toolcycle.playbook.reflector import reflect
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace


def _failed(error: str) -> Trace:
    call = ToolCallRecord(call_id="c1", name="inventory_live", args={"item": "wrench"},
                          iteration=1, error=error)
    return Trace(run_id="r", agent_name="depot", user_prompt="How many wrenches are in stock?",
                 steps=[Step(iteration=1, attempt=1, tool_calls=[call])],
                 termination={"reason": "completed", "action": "answered"})


@pytest.mark.parametrize(("error", "advice"), [
    ("Tool `inventory_live` failed: ConnectionError: inventory service unreachable: 503 "
     "Service Unavailable", "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: RuntimeError: 502 Bad Gateway",
     "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: OSError: Connection refused",
     "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: LookupError: no item 'x'",
     "Check the arguments against what earlier tools returned."),
    # a quota or rate limit refuses every caller for now: no argument is wrong there either
    ("Tool `schedule_api` failed: PermissionError: quota exceeded for this API key: 429 Too "
     "Many Requests", "It refuses calls for now: try another tool that can answer."),
    ("Tool `x` failed: RuntimeError: rate limit reached, retry in 30 s",
     "It refuses calls for now: try another tool that can answer."),
])
def test_a_pitfall_without_a_repair_says_whether_the_service_is_down(error: str,
                                                                     advice: str) -> None:
    [pitfall] = [i for i in reflect(_failed(error), success=False, domain="depot") if i.tools]
    assert pitfall.advice.endswith(advice)

