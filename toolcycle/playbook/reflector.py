"""The reflector: a finished trace in, insights out.

Two passes. The deterministic pass always runs and costs microseconds: it finds the tool
sequence that did the work (calls that neither failed, repeated an earlier call nor returned
nothing), the calls that failed and why, and the wasted ones. The optional LLM pass
(:class:`LLMReflector`) asks a model — any model the Agent machinery can drive, the local one
included — for advice as structured output, for lessons the trace's shape alone cannot show.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from ..tracing.trace import ToolCallRecord, Trace
from .strategy import Insight, StrategyKind, keywords

_EMPTY_RESULT = re.compile(
    r"^\s*(\[\s*\]|\{\s*\}|null|none|no results?( found)?|not found|nothing found|"
    r"no (match|matches|data|record|records|entry|entries)( found)?)\b",
    re.IGNORECASE,
)
#: "Tool `x` failed: ValueError: " — the loop's wrapping, which says nothing about the cause.
_WRAPPER = re.compile(r"^(tool `?[\w-]+`? failed:\s*)?([A-Z]\w*(Error|Exception):\s*)?", re.I)
_VOLATILE = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+(\.\d+)?\b")


@dataclass(slots=True)
class WastedCall:
    """A call that did not move the run forward, and why: ``error``, ``repeat`` or ``empty``."""

    call: ToolCallRecord
    reason: str


@dataclass(slots=True)
class TraceAnalysis:
    """What the deterministic pass saw in one trace."""

    run_id: str
    success: bool
    iterations: int
    tool_latency_ms: float
    sequence: list[str] = field(default_factory=list)
    arg_names: dict[str, list[str]] = field(default_factory=dict)
    wasted: list[WastedCall] = field(default_factory=list)

    @property
    def failures(self) -> list[WastedCall]:
        return [w for w in self.wasted if w.reason == "error"]


def analyse(trace: Trace, success: bool) -> TraceAnalysis:
    """Split a trace's tool calls into the working sequence and the wasted calls."""
    analysis = TraceAnalysis(
        run_id=trace.run_id,
        success=success,
        iterations=len(trace.steps),
        tool_latency_ms=sum(c.duration_ms for c in trace.tool_calls),
    )
    seen: set[str] = set()
    for call in trace.tool_calls:
        if call.kind not in ("tool", "unknown"):
            continue
        signature = call.name + json.dumps(call.args, sort_keys=True, default=str)
        if call.error is not None:
            analysis.wasted.append(WastedCall(call, "error"))
        elif signature in seen:
            analysis.wasted.append(WastedCall(call, "repeat"))
        elif _EMPTY_RESULT.match(call.result or ""):
            analysis.wasted.append(WastedCall(call, "empty"))
        else:
            if not analysis.sequence or analysis.sequence[-1] != call.name:
                analysis.sequence.append(call.name)
            analysis.arg_names.setdefault(call.name, sorted((call.args or {}).keys()))
        seen.add(signature)
    return analysis


def normalise_error(error: str) -> str:
    """An error's class: first line, quoted values and numbers masked, at most 90 characters.

    "unknown ticker 'ACME'" and "unknown ticker 'GLOBEX'" are the same pitfall.
    """
    first = error.strip().splitlines()[0] if error.strip() else "error"
    first = _WRAPPER.sub("", first)
    return _VOLATILE.sub("…", first)[:90]


def reflect(trace: Trace, *, success: bool, domain: str) -> list[Insight]:
    """The deterministic insights of one trace.

    A successful run with a working sequence yields a ``sequence`` insight (its detail lists
    the tools it wasted, so the curator can say what to skip); every failed call yields a
    ``pitfall`` insight keyed by the tool and its error class.
    """
    analysis = analyse(trace, success)
    words = keywords(trace.user_prompt or "")

    def insight(kind: StrategyKind, advice: str, tools: list[str], detail: str) -> Insight:
        return Insight(
            kind=kind, domain=domain, advice=advice, tools=tools, keywords=words,
            run_id=trace.run_id, success=success, iterations=analysis.iterations,
            tool_latency_ms=analysis.tool_latency_ms, detail=detail,
        )

    insights: list[Insight] = []
    if success and analysis.sequence:
        skipped = sorted({w.call.name for w in analysis.wasted} - set(analysis.sequence))
        advice = sequence_advice(analysis.sequence, analysis.arg_names, skipped)
        insights.append(insight("sequence", advice, list(analysis.sequence), ""))
    for wasted in analysis.failures:
        error_class = normalise_error(wasted.call.error or "")
        advice = f"{wasted.call.name} failed with: {error_class}"
        insights.append(insight("pitfall", advice, [wasted.call.name], error_class))
    return insights


def sequence_advice(
    sequence: list[str], arg_names: dict[str, list[str]], skipped: list[str]
) -> str:
    """Plain advice a small model can follow: the calls in order, with their argument names."""
    steps = [f"{name}({', '.join(arg_names.get(name, []))})" for name in sequence]
    text = "Call " + ", then ".join(steps) + ", then answer"
    if len(sequence) > 1:
        text += " (feed each result into the next call)"
    text += "."
    if skipped:
        text += f" Do not use {', '.join(skipped)} for this kind of task."
    return text


# -- the LLM pass ------------------------------------------------------------------------


class LessonModel(BaseModel):
    """One lesson, as the reflector model must return it."""

    advice: str = Field(description="One imperative sentence: which tools to call, in what order.")
    tools: list[str] = Field(default_factory=list, description="Tool names in the advised order.")
    applies_when: str = Field(default="", description="The kind of task this applies to.")


class ReflectionModel(BaseModel):
    """The structured output of the LLM reflector."""

    lessons: list[LessonModel] = Field(default_factory=list, max_length=3)


REFLECTOR_INSTRUCTIONS = (
    "You review the trace of an agent run that used tools. Write at most 3 short lessons that "
    "would make the next run of the same kind of task take fewer tool calls: which tool to call "
    "first, which to skip, how to pass one tool's result to the next. Only name tools that "
    "appear in the trace. If nothing is worth learning, return no lessons."
)


class LLMReflector:
    """Asks a model (any toolcycle model or model string) for lessons, as structured output.

    It runs an ordinary :class:`toolcycle.Agent` whose output type is :class:`ReflectionModel`,
    so validation retries and limits behave as for any agent.
    """

    def __init__(self, model: Any, *, max_trace_chars: int = 6000) -> None:
        self.model = model
        self.max_trace_chars = max_trace_chars

    async def reflect(self, trace: Trace, *, success: bool, domain: str) -> list[Insight]:
        from ..agent import Agent  # the agent imports the playbook package, not the reverse

        agent: Any = Agent(
            self.model, instructions=REFLECTOR_INSTRUCTIONS, output=ReflectionModel,
            name="playbook_reflector",
        )
        verdict = "succeeded" if success else "failed"
        prompt = (
            f"The run {verdict}.\n\n" + trace.render(max_chars=300)[: self.max_trace_chars]
        )
        result = await agent.run(prompt)
        output: ReflectionModel = result.output
        known = {c.name for c in trace.tool_calls}
        words = keywords(trace.user_prompt or "")
        insights = []
        for lesson in output.lessons:
            tools = [t for t in lesson.tools if t in known]
            insights.append(Insight(
                kind="advice", domain=domain, advice=lesson.advice.strip(), tools=tools,
                keywords=keywords(lesson.applies_when) or words, run_id=trace.run_id,
                success=success, iterations=len(trace.steps),
                detail=" ".join(keywords(lesson.advice))[:120],
            ))
        return insights
