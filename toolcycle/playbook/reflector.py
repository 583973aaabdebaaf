"""The reflector: a finished trace in, insights out; the learner's reading of one run.

Two passes. The deterministic pass always runs and costs microseconds: it finds the calls
that held the answer (the answering call and the calls that fed its arguments), the calls
that missed (errors, repeats, empty results) and what repaired each miss (:mod:`.evidence`).
The optional LLM pass (:class:`LLMReflector`) asks a model — any model the Agent machinery
can drive, the local one included — for advice as structured output, for lessons the
trace's shape alone cannot show.

Around the passes, what the learner asks and judges while it reads a run lives here too: the
:class:`Prober` it asks of a failed run's misses in offline learning (the one step that calls
tools; its :class:`Findings` repair the misses before the lesson types propose), and
:class:`StandIns`, which reads the calls a routine, repair or fallback answered for the model
as the strategies it was shown judge them. Both were elsewhere (the lesson types' protocol
module, the routines' answer text) though no lesson type and no routine uses them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from ..tracing.trace import Trace
from ..words import keywords, task_fingerprint, task_words
from .evidence import CallEvidence, answer_chain, blames_arguments, classify, repair_of
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
from .strategy import Insight, Repair

__all__ = ["NO_CALL", "NO_CALL_ADVICE", "Findings", "LLMReflector", "Prober", "StandIns",
           "TraceAnalysis", "WastedCall", "analyse",
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


@dataclass(slots=True)
class Findings:
    """What probing a failed run found: repairs of its calls (by index), and the sequence
    the call or chain that held the answer teaches (None where none did, or its values were
    not the task's)."""

    repairs: dict[int, Repair]
    sequence: Insight | None = None


class Prober(Protocol):
    """What asks the agent's other tools what a failed run missed, in offline learning, where
    the task's expected answer tells a repair (:class:`~toolcycle.playbook.probe_chain.
    FailedRunProbe`). The learner runs no tool itself: probing is this one step, before the
    lessons are proposed from the run's evidence."""

    def findings(self, trace: Trace, analysis: TraceAnalysis, *, domain: str,
                 descriptions: Mapping[str, frozenset[str]] | None = None) -> Findings:
        """Repairs of the run's misses and the sequence they teach (it calls tools)."""
        ...


@dataclass(frozen=True, slots=True)
class StandIns:
    """An agent's stand-ins, by the tool whose calls each answers: ``firsts``, routine ->
    its first tool (the routine answers that tool's calls); ``repairs``, a tool -> the
    routine repairing its failed calls; ``alternatives``, a tool -> the tool its fallback
    calls."""

    firsts: Mapping[str, str]
    repairs: Mapping[str, str]
    alternatives: Mapping[str, str]

    def stood_in(self, offered: Collection[str] | None, calls: Sequence[CallEvidence]
                 ) -> set[str]:
        """The tools whose calls a stand-in answered in a run offered ``offered``: the first
        tools of the routines it was offered, and each tool a fallback answered for (its
        results are not the tool's alone, so neither a sequence nor a statistic of it), and
        each tool a routine repaired a call of, or called again with a reshaped, respelled
        or renamed argument (its value is not the model's), as each call's record says
        (``ToolCallRecord.stand_in``, what the stand-in noted)."""
        if not offered:
            return set()
        return ({self.firsts[name] for name in offered if name in self.firsts}
                | {c.call.name for c in calls
                   if (act := c.call.stand_in) is not None and act.kind != "routine"})

    def as_judged(self, calls: Sequence[CallEvidence], stood_in: Collection[str]
                  ) -> list[tuple[str, str]]:
        """The run's calls as the strategies it was shown judge them: a call a routine stood
        in for is a call of the routine; one a fallback answered is the failed call, then the
        alternative's (so the pitfall counts as followed); one a routine repaired is a call
        of the routine. One called again with a reshaped argument stays a call of its tool:
        the pitfall whose format it took was followed, for the model."""
        routine_of = {tool: routine for routine, tool in self.firsts.items()}
        made: list[tuple[str, str]] = []
        for c in calls:
            name, act = c.call.name, c.call.stand_in
            kind = None if act is None or name not in stood_in else act.kind
            if kind == "fallback" and name in self.alternatives:
                fine = act is not None and act.ok
                made += [(name, "error"), (self.alternatives[name], "ok" if fine else "error")]
            elif kind == "repair" and name in self.repairs:
                made.append((self.repairs[name], c.status))
            elif name in stood_in and name in routine_of:
                made.append((routine_of[name], c.status))
            else:
                made.append((name, c.status))
        return made


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
