"""The reflector: a finished trace in, insights out.

Two passes. The deterministic pass always runs and costs microseconds: it finds the calls
that held the answer (the answering call and the calls that fed its arguments), the calls
that missed (errors, repeats, empty results) and what repaired each miss (:mod:`.evidence`).
The optional LLM pass (:class:`LLMReflector`) asks a model — any model the Agent machinery
can drive, the local one included — for advice as structured output, for lessons the
trace's shape alone cannot show.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, Field

from ..tracing.trace import Trace
from ..words import keywords, task_fingerprint, task_words
from .evidence import answer_chain, blames_arguments, classify, repair_of
from .evidence import shaped_values as shaped_values
from .lesson import RunEvidence, TraceAnalysis, WastedCall
from .lessons import LESSON_TYPES
from .no_call import NO_CALL as NO_CALL  # (moved there; imported from here before)
from .no_call import NO_CALL_ADVICE as NO_CALL_ADVICE
from .no_call import answered_without_a_call as answered_without_a_call
from .pitfall import expected_arguments as expected_arguments
from .pitfall import normalise_error as normalise_error
from .pitfall import pitfall_advice as pitfall_advice
from .pitfall import shown_error as shown_error
from .sequence import sequence_advice as sequence_advice
from .strategy import Insight

__all__ = ["NO_CALL", "NO_CALL_ADVICE", "LLMReflector", "TraceAnalysis", "WastedCall", "analyse",
           "answered_without_a_call", "expected_arguments", "normalise_error", "pitfall_advice",
           "reflect", "sequence_advice", "shaped_values", "shown_error"]


def analyse(trace: Trace, success: bool) -> TraceAnalysis:
    """Classify a trace's tool calls, find the answering chain and the repairs of misses."""
    calls = classify(trace)
    analysis = TraceAnalysis(
        run_id=trace.run_id, success=success, iterations=trace.iterations,
        tool_latency_ms=sum(c.duration_ms for c in trace.tool_calls),
        keywords=task_words(trace.user_prompt or ""),
        task=task_fingerprint(trace.user_prompt or ""),
        calls=calls,
        wasted=[WastedCall(c.call, c.status) for c in calls if not c.ok],
    )
    analysis.chain = answer_chain(trace, calls)
    for c in analysis.chain:
        if not analysis.sequence or analysis.sequence[-1] != c.call.name:
            analysis.sequence.append(c.call.name)
        analysis.arg_names.setdefault(c.call.name, sorted((c.call.args or {}).keys()))
    answered = {c.call.name for c in analysis.chain}
    for c in calls:
        if c.status in ("error", "empty"):
            repair = repair_of(c, calls, trace.user_prompt or "", answered)
            # "another tool answered" is a repair only where the run got the answer right and
            # that tool held it: a failed run answers with whatever the next tool returned
            # (an id, a code, a name found on the way), and such a repair would teach "X
            # fails ... Call Y instead" for a Y that never held an answer.
            if repair is not None and repair.kind == "alternative" and not success:
                repair = None
            # Nor where the tool refused what it was given: the run left a call it got wrong
            # for a tool that answered, which says where this task is answered (its sequence
            # says so) and nothing of the refusing tool. Learned as "X fails: call Y
            # instead", such a detour reaches every task sharing the task's words, also the
            # tasks X is the right tool for. What the error says stays the lesson (a format
            # it states: evidence.stated_repair). Where seen: docs/playbook.md, repairs.
            if repair is not None and repair.kind == "alternative" and c.status == "error" and (
                    blames_arguments(c.call.error or "", c.call.args)):
                repair = None
            if repair is not None:
                analysis.repairs[c.index] = repair
    return analysis


def reflect(trace: Trace, *, success: bool, domain: str,
            analysis: TraceAnalysis | None = None,
            descriptions: Mapping[str, frozenset[str]] | None = None,
            schemas: Mapping[str, Any] | None = None,
            dead_ends: Collection[str] = ()) -> list[Insight]:
    """The deterministic insights of one trace: what each registered lesson type
    (:data:`~toolcycle.playbook.lessons.LESSON_TYPES`) reads in its evidence, in their order.

    ``analysis``: the trace's :func:`analyse` when the caller already has it;
    ``descriptions``: the words of the agent's tool descriptions by tool
    (:func:`~toolcycle.playbook.applicability.description_words`); ``schemas``: the tools'
    parameter schemas, by tool (what a refused call takes); ``dead_ends``: the tools the
    domain's dead ends name (:meth:`~toolcycle.playbook.store.PlaybookStore.pitfall_tools`).
    """
    run = RunEvidence(trace, analysis if analysis is not None else analyse(trace, success),
                      success, domain, descriptions, schemas, dead_ends)
    return [insight for lesson_type in LESSON_TYPES for insight in lesson_type.propose(run)]


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
        self._writer: Any = None

    def writer(self) -> Any:
        """The model the lessons are asked of: ``model``, except that a model on the ReAct
        text protocol is asked through the JSON protocol over the same inner model.

        Why: the lessons are structured output, which a small model on a text protocol tends
        not to give (it acts out the trace's calls instead of calling the output tool);
        through the JSON protocol, whose tool call is the structured output, the same model
        gives them. An agent's model string can be passed as it is."""
        if self._writer is None:
            from ..models import resolve_model
            from ..models.text.protocol import JsonToolsModel
            from ..models.text.react import ReActModel

            model = resolve_model(self.model)
            self._writer = JsonToolsModel(model.inner) if isinstance(model, ReActModel) else model
        return self._writer

    async def reflect(self, trace: Trace, *, success: bool, domain: str) -> list[Insight]:
        from ..agent import Agent  # the agent imports the playbook package, not the reverse

        agent: Any = Agent(
            self.writer(), instructions=REFLECTOR_INSTRUCTIONS, output=ReflectionModel,
            name="playbook_reflector",
        )
        verdict = "succeeded" if success else "failed"
        prompt = (
            f"The run {verdict}.\n\n" + trace.render(max_chars=300)[: self.max_trace_chars]
        )
        result = await agent.run(prompt)
        output: ReflectionModel = result.output
        known = {c.name for c in trace.tool_calls}
        words = task_words(trace.user_prompt or "")
        insights = []
        for lesson in output.lessons:
            tools = [t for t in lesson.tools if t in known]
            insights.append(Insight(
                kind="advice", domain=domain, advice=lesson.advice.strip(), tools=tools,
                keywords=keywords(lesson.applies_when) or words, run_id=trace.run_id,
                success=success, iterations=trace.iterations,
                detail=" ".join(keywords(lesson.advice))[:120],
                task=task_fingerprint(trace.user_prompt or ""),
            ))
        return insights
