"""Hand-built traces with fixed timestamps: deterministic input for the store, CLI and HTML tests.

They cover what a viewer must show: several iterations, a failed tool call, a validation
failure that starts a second attempt, thinking, a forced final answer, and a failed run.
"""

from __future__ import annotations

from toolcycle.messages import Usage
from toolcycle.tracing.trace import AttemptRecord, Step, ToolCallRecord, Trace

T0 = 1_780_000_000.0  # 2026-05-28 20:26:40 UTC, fixed so snapshots do not move


def weather_trace(run_id: str = "run-weather-0001") -> Trace:
    """A successful run with a tool error in iteration 2 and a validation retry."""
    steps = [
        Step(
            iteration=1,
            attempt=1,
            thought="I will look up the city first.",
            thinking="The user wants the weather in Paris; geocode, then forecast.",
            tool_calls=[
                ToolCallRecord("call_1", "geocode", {"city": "Paris"}, 1, 1,
                               result='{"lat": 48.8566, "lon": 2.3522}', duration_ms=12.5),
            ],
            usage=Usage(input_tokens=412, output_tokens=38, requests=1),
            model_ms=640.0, tools_ms=12.5, started_at=T0 + 0.1, finish_reason="tool_calls",
        ),
        Step(
            iteration=2,
            attempt=1,
            thought="Now the forecast for those coordinates.",
            tool_calls=[
                ToolCallRecord("call_2", "forecast", {"lat": 48.8566, "lon": 2.3522, "days": 9},
                               2, 1, error="ToolArgumentsError: days: 9 is greater than the "
                               "maximum of 7", duration_ms=0.4),
                ToolCallRecord("call_3", "air_quality", {"lat": 48.8566, "lon": 2.3522}, 2, 1,
                               result='{"aqi": 42, "label": "good"}', duration_ms=88.0),
            ],
            usage=Usage(input_tokens=530, output_tokens=61, requests=1),
            model_ms=810.0, tools_ms=88.4, started_at=T0 + 0.8, finish_reason="tool_calls",
        ),
        Step(
            iteration=3,
            attempt=1,
            tool_calls=[
                ToolCallRecord("call_4", "forecast", {"lat": 48.8566, "lon": 2.3522, "days": 3},
                               3, 1, result='[{"day": 1, "high": 21}, {"day": 2, "high": 19}, '
                               '{"day": 3, "high": 23}]', duration_ms=240.0),
            ],
            usage=Usage(input_tokens=702, output_tokens=44, requests=1),
            model_ms=720.0, tools_ms=240.0, started_at=T0 + 1.9, finish_reason="tool_calls",
        ),
        Step(
            iteration=4,
            attempt=1,
            tool_calls=[
                ToolCallRecord("call_5", "final_result", {"summary": "Mild", "high": "21"}, 4, 1,
                               result="received", duration_ms=0.2, kind="output"),
            ],
            usage=Usage(input_tokens=850, output_tokens=30, requests=1),
            model_ms=560.0, tools_ms=0.2, started_at=T0 + 2.9, finish_reason="tool_calls",
        ),
        Step(  # iterations are numbered across attempts, as the loop does
            iteration=5,
            attempt=2,
            thought="Fixing the type of high.",
            tool_calls=[
                ToolCallRecord("call_6", "final_result", {"summary": "Mild", "high": 21}, 5, 2,
                               result="received", duration_ms=0.2, kind="output"),
            ],
            usage=Usage(input_tokens=930, output_tokens=28, requests=1),
            model_ms=530.0, tools_ms=0.2, started_at=T0 + 3.5, finish_reason="tool_calls",
        ),
    ]
    usage = Usage(requests=5, tool_calls=6)
    for step in steps:
        usage.add(Usage(step.usage.input_tokens, step.usage.output_tokens))
    return Trace(
        run_id=run_id,
        agent_name="weather",
        model_name="openai:gpt-4o-mini",
        user_prompt="What's the weather in Paris for the next days? My key is "
        "sk-proj-abcdefghijklmnop1234567890",
        started_at=T0,
        ended_at=T0 + 4.1,
        steps=steps,
        attempts=[
            AttemptRecord(1, success=False, errors=["high: Input should be a valid integer"],
                          validator="schema", code="VALIDATION"),
            AttemptRecord(2, success=True),
        ],
        usage=usage,
        status="success",
        termination={"reason": "completed", "action": "answered", "detail": "", "limit": None},
        output={"summary": "Mild", "high": 21},
        metadata={"cost_usd": 0.00187},
    )


def failed_trace(run_id: str = "run-search-0002") -> Trace:
    """A run that hit max_iterations with on_limit="error" after repeated tool failures."""
    steps = []
    for i in range(1, 4):
        steps.append(
            Step(
                iteration=i,
                attempt=1,
                thought=f"Searching again (try {i}).",
                tool_calls=[
                    ToolCallRecord(f"call_s{i}", "search", {"query": "toolcycle release date"},
                                   i, 1, error="TimeoutError: search backend did not answer "
                                   "within 5.0 s", duration_ms=5000.0),
                ],
                usage=Usage(input_tokens=300 + 120 * i, output_tokens=25, requests=1),
                model_ms=400.0 + 50 * i, tools_ms=5000.0, started_at=T0 + 6 * i,
                finish_reason="tool_calls",
            )
        )
    return Trace(
        run_id=run_id,
        agent_name="searcher",
        model_name="anthropic:claude-3-5-haiku",
        user_prompt="When was toolcycle released?",
        started_at=T0,
        ended_at=T0 + 18.0,
        steps=steps,
        attempts=[AttemptRecord(1)],
        usage=Usage(input_tokens=1620, output_tokens=75, requests=3, tool_calls=3),
        status="failure",
        termination={"reason": "max_iterations", "action": "raised",
                     "detail": "3 iterations without an answer", "limit": "max_iterations"},
        error={"code": "MAX_ITERATIONS", "message": "[MAX_ITERATIONS] no answer after 3 "
               "iterations (attempt=1)"},
    )
