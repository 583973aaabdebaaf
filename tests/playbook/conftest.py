"""Hand-built traces shaped like the loop's, for testing the playbook without a model."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from toolcycle.messages import Usage
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

Call = tuple[str, dict[str, Any], str | None, str | None]  # name, args, result, error


def loop_error_type(error: str | None) -> str | None:
    """The ``error_type`` the loop records beside an error written as the loop writes it
    (these traces are made by hand, so the test says what the loop would have typed)."""
    if error is None:
        return None
    if " timed out" in error and error.startswith("Tool "):
        return "timeout"
    if error.startswith("Invalid arguments for "):
        return "invalid_arguments"
    wrapped = re.match(r"Tool `[^`]+` failed: (\w+): ", error)  # an exception, as wrapped
    return wrapped.group(1) if wrapped else "RuntimeError"


def make_trace(
    prompt: str,
    calls_per_iteration: list[list[Call]],
    *,
    agent: str = "support",
    status: str = "success",
    shown: list[str] | None = None,
    durations: float = 5.0,
) -> Trace:
    """A finished trace: one step per list of calls, plus the final answering step."""
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    steps = []
    for i, calls in enumerate(calls_per_iteration, start=1):
        records = [
            ToolCallRecord(call_id=f"{run_id}-{i}-{j}", name=name, args=args, iteration=i,
                           result=result, error=error, duration_ms=durations,
                           error_type=loop_error_type(error))
            for j, (name, args, result, error) in enumerate(calls)
        ]
        steps.append(Step(iteration=i, attempt=1, tool_calls=records,
                          usage=Usage(input_tokens=100, output_tokens=10, requests=1)))
    steps.append(Step(iteration=len(steps) + 1, attempt=1, thought="done",
                      usage=Usage(input_tokens=120, output_tokens=8, requests=1)))
    return Trace(
        run_id=run_id, agent_name=agent, user_prompt=prompt, steps=steps, status=status,
        termination={"reason": "completed" if status == "success" else "error"},
        output="answer", strategies_shown=list(shown or []),
    )


def stock_trace(company: str, *, wasted: bool = True, shown: list[str] | None = None) -> Trace:
    """The stock-price pattern: (a useless web search,) find_ticker, then get_quote."""
    iterations: list[list[Call]] = []
    if wasted:
        iterations.append([("web_search", {"query": company}, "No results.", None)])
    iterations.append([("find_ticker", {"company": company}, "ACME", None)])
    iterations.append([("get_quote", {"ticker": "ACME"}, "123.4", None)])
    return make_trace(f"What is the stock price of {company}?", iterations, shown=shown)


#: depot's purchasing records: item -> (supplier, lead time in days)
PURCHASING = {"vessel caulk gun": ("Arnfeld Tools", 12), "hadley work light": ("Lumen & Rook", 9),
              "tollin pipe cutter": ("Arnfeld Tools", 5), "garrow tile saw": ("Weylan Bros", 34)}


def supplier_trace(prompt: str, item: str, answer: str) -> Trace:
    """A depot run that answered ``prompt`` from one call of purchasing_records."""
    supplier, days = PURCHASING[item]
    trace = make_trace(prompt, [[(
        "purchasing_records", {"item": item},
        json.dumps({"item": item, "supplier": supplier, "lead_time_days": days}), None)]])
    trace.output = answer
    return trace


@pytest.fixture
def db_path(tmp_path: Any) -> str:
    return str(tmp_path / "playbook.db")
