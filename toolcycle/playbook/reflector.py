"""The reflector: a finished trace in, insights out.

Two passes. The deterministic pass always runs and costs microseconds: it finds the calls
that held the answer (the answering call and the calls that fed its arguments), the calls
that missed (errors, repeats, empty results) and what repaired each miss (:mod:`.evidence`).
The optional LLM pass (:class:`LLMReflector`) asks a model — any model the Agent machinery
can drive, the local one included — for advice as structured output, for lessons the
trace's shape alone cannot show.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from ..models.repair import INVALID_TOOL_NAME
from ..tracing.trace import ToolCallRecord, Trace
from . import dead_end
from .applicability import described_words, sequence_words, task_words
from .evidence import (
    QUOTED,
    CallEvidence,
    Repair,
    answer_chain,
    arg_values,
    blames_arguments,
    classify,
    repair_of,
    says_task_words,
    stated_repair,
)
from .flow import chain_feeds, data_flow
from .head_start import run_head
from .stats import timed_out
from .strategy import SKIP, Insight, StrategyKind, keywords, task_fingerprint
from .words import OUTAGE, REFUSING

#: "Tool `x` failed: ValueError: " — the loop's wrapping, which says nothing about the cause.
_WRAPPER = re.compile(r"^(tool `?[\w-]+`? failed:\s*)?([A-Z]\w*(Error|Exception):\s*)?", re.I)
_VOLATILE = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+(\.\d+)?\b")
_DIGIT = re.compile(r"\d")
_NAMED = re.compile(r" for `[^`]+`")
#: An argument name worth repeating to the model (a schema quoted in an error is text a
#: stranger's tool or server may have written: nothing but names goes into advice).
_ARGUMENT_NAME = re.compile(r"[A-Za-z_][\w.-]{0,63}")
#: At most this many argument names in a schema repair.
_MAX_ARGUMENTS = 12

#: The detail of the pitfall "answered without calling a tool" (see :func:`reflect`): a
#: lesson about the model in this domain, not about a tool, hence no tools of its own.
NO_CALL = "answered without calling a tool"
NO_CALL_ADVICE = ("Answers given without calling a tool were wrong: look the facts up with a "
                  "tool before you answer.")


@dataclass(slots=True)
class WastedCall:
    """A call that did not move the run forward, and why: ``error``, ``repeat`` or ``empty``."""

    call: ToolCallRecord
    reason: str


@dataclass(slots=True)
class TraceAnalysis:
    """What the deterministic pass saw in one trace.

    ``sequence`` is the tools of the answering chain (see :mod:`.evidence`), ``wasted`` the
    calls that missed, ``repairs`` what worked after each missed call that the run recovered
    from (keyed by the index of the missed call). ``keywords`` and ``task`` are the prompt's
    (:func:`~toolcycle.playbook.applicability.task_words`, so no names; :func:`task_fingerprint`),
    worked out once for the insights and the run's outcome.
    """

    run_id: str
    success: bool
    iterations: int
    tool_latency_ms: float
    keywords: list[str] = field(default_factory=list)
    task: str = ""
    sequence: list[str] = field(default_factory=list)
    arg_names: dict[str, list[str]] = field(default_factory=dict)
    wasted: list[WastedCall] = field(default_factory=list)
    calls: list[CallEvidence] = field(default_factory=list)
    chain: list[CallEvidence] = field(default_factory=list)
    repairs: dict[int, Repair] = field(default_factory=dict)

    @property
    def failures(self) -> list[WastedCall]:
        return [w for w in self.wasted if w.reason == "error"]


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
            # that tool held it: on `chains`, failed runs that called find_ticker after
            # get_quote's error and answered with the ticker taught "Call find_ticker(company)
            # instead", and a currency run that tried staff_directory on the way taught
            # "find_ticker fails ... Call staff_directory(name) instead".
            if repair is not None and repair.kind == "alternative" and not success:
                repair = None
            if repair is not None:
                analysis.repairs[c.index] = repair
    return analysis


def normalise_error(error: str) -> str:
    """An error's class: first line, quoted values and numbers masked, at most 90 characters.

    "unknown ticker 'ACME'" and "unknown ticker 'GLOBEX'" are the same pitfall. A first line
    that only announces a list ("Invalid arguments for `x`:", then "- (root): Additional
    properties are not allowed ('topic' was unexpected)") takes the list's first item: the
    header alone made "amenities_register fails with: Invalid arguments for
    `amenities_register`:." on `rail`, a lesson with nothing in it.
    """
    return _VOLATILE.sub("…", _WRAPPER.sub("", _first_line(error)))[:90]


def _first_line(error: str) -> str:
    """The line of ``error`` that says what went wrong (see :func:`normalise_error`)."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    first = lines[0] if lines else "error"
    if first.endswith(":") and len(lines) > 1 and lines[1].startswith("- "):
        first = f"{_NAMED.sub('', first)} {lines[1][2:]}"  # the advice names the tool
    return first


def shown_error(error: str, args: Any = None, prompt: str = "") -> str:
    """An error as a pitfall's advice shows it: :func:`normalise_error`, but a quoted value
    that neither the call's arguments (a name or value, part of one or one's part) nor the task
    supplied is the tool's own words and is kept, so the advice carries the example the error
    gave. Only a short plain value is kept (up to 24 letters, digits, spaces and ``.,:/+-``): the
    text is a tool's, and goes into later runs' prompts.

    Why: ``freight_quote`` on `depot` refused "Portugal" with "unknown destination
    'Portugal': give the two-letter country code, e.g. 'FR'"; the class masks both values
    (errors of different tasks are one pitfall), and the advice said "e.g. …", the one part
    that showed the format. The class stays what identifies the pitfall; this is its text.
    """
    supplied = {v.lower() for v in arg_values(args)} | (
        {str(k).lower() for k in args} if isinstance(args, dict) else set())
    lowered = prompt.lower()
    kept: list[str] = []

    def mask(match: re.Match[str]) -> str:
        value = match.group(1) if match.group(1) is not None else match.group(2)
        low = value.strip().lower()
        if (not _EXAMPLE.fullmatch(value) or any(low in a or a in low for a in supplied)
                or re.search(rf"(?<!\w){re.escape(low)}(?!\w)", lowered)):
            return "…"
        kept.append(match.group(0))
        return chr(_HOLD + len(kept) - 1)  # no digit: _VOLATILE must not see it

    first = QUOTED.sub(mask, _WRAPPER.sub("", _PRIVATE.sub("", _first_line(error))))
    text = _VOLATILE.sub("…", first)
    for i, value in enumerate(kept):
        text = text.replace(chr(_HOLD + i), value)
    return text[:90]


#: Private-use characters standing for kept values while numbers are masked.
_HOLD = 0xE000
_PRIVATE = re.compile("[\ue000-\uf8ff]")
#: A value worth keeping as an example: short, printable, no markup or line breaks.
_EXAMPLE = re.compile(r"[\w .,:/+-]{1,24}")


def expected_arguments(schema: Any) -> list[str]:
    """The argument names of a tool's JSON schema, required ones first, for a call the loop
    refused (``error_type == "invalid_arguments"``): the schema is the tool's as the playbook
    was given it (:meth:`~toolcycle.playbook.Playbook.attach`), never read back from the
    loop's wording of the refusal. Only names that look like identifiers, at most
    :data:`_MAX_ARGUMENTS`: they go into advice that later runs' prompts carry (an MCP
    server's schema is a stranger's text)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return []
    required = schema.get("required")
    first = [r for r in required if r in properties] if isinstance(required, list) else []
    names = [n for n in dict.fromkeys([*first, *properties])
             if isinstance(n, str) and _ARGUMENT_NAME.fullmatch(n)]
    return names[:_MAX_ARGUMENTS]


def reflect(trace: Trace, *, success: bool, domain: str,
            analysis: TraceAnalysis | None = None,
            descriptions: Mapping[str, frozenset[str]] | None = None,
            schemas: Mapping[str, Any] | None = None,
            dead_ends: Collection[str] = ()) -> list[Insight]:
    """The deterministic insights of one trace.

    A successful run yields a ``sequence`` insight for its answering chain (its advice names
    the tools it called outside the chain, so the curator can say what to skip); every failed
    call yields a ``pitfall`` insight keyed by the tool, its error class and its repair when
    the run shows one (so the advice says what to do, not only what to avoid), or, for
    arguments the loop refused, the arguments the tool takes (a ``schema`` repair); a failed
    run without a good call yields a dead end per tool whose calls all came back empty
    (:mod:`.dead_end`), and a successful run one repaired by the tool its answer came from,
    for each of ``dead_ends`` (the tools known to find nothing) it found empty.
    ``analysis``: the trace's :func:`analyse` when the caller already has it;
    ``schemas``: the tools' parameter schemas, by tool (what a refused call takes);
    ``descriptions``: the words of the agent's tool descriptions by tool
    (:func:`~toolcycle.playbook.applicability.description_words`), from which a sequence
    learns the task words its tools describe (:attr:`Insight.tool_words`); with or without
    them, it learns the task words naming the field its answer came from
    (:func:`~toolcycle.playbook.applicability.answer_labels`).
    """
    analysis = analysis if analysis is not None else analyse(trace, success)

    def insight(kind: StrategyKind, advice: str, tools: list[str], detail: str) -> Insight:
        return Insight(
            kind=kind, domain=domain, advice=advice, tools=tools,
            keywords=list(analysis.keywords), task=analysis.task,
            run_id=trace.run_id, success=success, iterations=analysis.iterations,
            tool_latency_ms=analysis.tool_latency_ms, detail=detail,
        )

    def chain_lesson(chain: list[CallEvidence], tools: list[str], advice: str,
                     feeds: list[dict[str, Any]]) -> Insight:
        lesson = insight("sequence", advice, tools, "")
        lesson.feeds, lesson.head = feeds, run_head(chain, trace.user_prompt or "")
        lesson.tool_words = sequence_words(
            analysis.keywords, lesson.tools, descriptions,
            chain[-1].call.result if chain else None,
            str(trace.output or ""), trace.user_prompt or "",
            [(c.call.result or "", str(f["value"]), c.call.args or {})
             for c, f in zip(chain, lesson.feeds, strict=False)])
        return lesson

    insights: list[Insight] = []
    if success and analysis.sequence:
        chain_names = set(analysis.sequence)
        skipped = sorted({c.call.name for c in analysis.calls} - chain_names)
        feeds = chain_feeds(analysis.chain, trace.user_prompt or "")
        picks = {analysis.chain[i].call.name: str(f["pick"][1])
                 for i, f in enumerate(feeds) if f.get("pick")}
        advice = sequence_advice(analysis.sequence, analysis.arg_names, skipped,
                                 shaped_values(trace, analysis.calls, analysis.chain), picks)
        insights.append(chain_lesson(analysis.chain, list(analysis.sequence), advice, feeds))
    elif not success and (flow := data_flow(trace, analysis.calls)) is not None:
        # a failed run's chain is no lesson, but its data flow is evidence for one that a
        # successful run of another task taught (Curator: it counts only beside such a run)
        insights.append(chain_lesson(flow[0], [c.call.name for c in flow[0]], "", flow[1]))
    seen: set[tuple[str, str]] = set()
    for c in analysis.calls:
        # a name no provider accepts is stood in for by one placeholder: no tool to warn of
        if c.status != "error" or (c.call.name, c.call.error or "") in seen or (
                c.call.name == INVALID_TOOL_NAME):
            continue
        seen.add((c.call.name, c.call.error or ""))
        error_class = normalise_error(c.call.error or "")
        repair = analysis.repairs.get(c.index) or stated_repair(c, trace.user_prompt or "")
        if repair is None and c.call.error_type == "invalid_arguments" and (
                takes := expected_arguments((schemas or {}).get(c.call.name))):
            repair = Repair("schema", c.call.name, via_args=tuple(takes))
        tools = [c.call.name] + ([repair.via] if repair is not None and repair.via else [])
        detail = error_class + ("|" + repair.signature if repair is not None else "")
        shown = shown_error(c.call.error or "", c.call.args, trace.user_prompt or "")
        advice = pitfall_advice(c.call.name, shown, repair, timed_out(c.call),
                                blames_arguments(c.call.error or "", c.call.args))
        pitfall = insight("pitfall", advice, tools, detail)
        if descriptions:  # a task asking what the failing tool is for is likely to call it
            pitfall.tool_words = described_words(analysis.keywords, [c.call.name], descriptions)
        insights.append(pitfall)
    # where a kind of task is not: the tools that found nothing for it (a failed run's), and
    # where it is instead (a probe's, or the tool a successful run's answer came from)
    probed = (dead_end.found_elsewhere(analysis.calls, analysis.repairs, dead_ends) if success
              else dead_end.repaired(analysis.calls, analysis.repairs))
    if probed or not success:
        found_nothing = [] if success else dead_end.found_nothing(analysis.calls)
        for tool in dict.fromkeys([*found_nothing, *probed]):
            repair = probed.get(tool)
            if repair is None:
                insights.append(insight("pitfall", dead_end.advice(tool), [tool],
                                        dead_end.FOUND_NOTHING))
            else:  # where it is: a probe's find, or the run's own answer
                insights.append(insight("pitfall", dead_end.advice(tool, repair),
                                        [tool, repair.via],
                                        f"{dead_end.FOUND_NOTHING}|{repair.signature}"))
    if answered_without_a_call(trace):
        # wrong: evidence for the lesson; right: evidence against it (the curator weighs both)
        insights.append(insight("pitfall", NO_CALL_ADVICE, [], NO_CALL))
    return insights


def answered_without_a_call(trace: Trace) -> bool:
    """Whether the model answered the run itself without calling any tool, though it was
    offered some (``tools_offered`` is None where the run's tools were not recorded).

    Why a lesson: the 1.5B with the JSON protocol answered 9-11 of 24 train tasks of each suite
    from memory in its first turn, with a made-up price, seat or count; none of those answers
    was right, nor any of the 116 in the test runs of 2026-11-27/28 (both arms, every suite and
    protocol).
    """
    return (not trace.tool_calls and trace.tools_offered != []
            and (trace.termination or {}).get("action") == "answered")


def shaped_values(trace: Trace, calls: list[CallEvidence], among: list[CallEvidence] | None = None,
                  ) -> dict[str, dict[str, str]]:
    """Per tool, the argument values of its good calls the model had to shape itself.

    A value with digits that is neither in the prompt nor in a result before the call (a date
    the model reformatted, a code it built) is the format the tool accepted: worth showing.
    One that carries the task's own words is not (:func:`~toolcycle.playbook.evidence.
    says_task_words`): it is the task's content, and other tasks would copy it.
    The call's own result and later ones do not count: tools often echo their arguments
    (`rail`'s fare_quote does). ``among`` limits the calls looked at (default: every good one).
    """
    prompt = (trace.user_prompt or "").lower()
    formats: dict[str, dict[str, str]] = {}
    for c in (among if among is not None else [c for c in calls if c.ok]):
        earlier = " ".join((e.call.result or "") for e in calls[:c.index] if e.ok).lower()
        for key, value in sorted((c.call.args or {}).items()):
            text = str(value)
            if (_DIGIT.search(text) and text.lower() not in prompt
                    and text.lower() not in earlier and not says_task_words(text, prompt)):
                formats.setdefault(c.call.name, {})[key] = text
    return formats


def sequence_advice(
    sequence: list[str], arg_names: dict[str, list[str]], skipped: list[str],
    formats: dict[str, dict[str, str]] | None = None, picks: dict[str, str] | None = None,
) -> str:
    """Plain advice a small model can follow: the calls in order, with their argument names;
    ``picks``: tool -> the field its result's row was picked by, a word of the task's."""
    formats = formats or {}

    def arg(name: str, tool: str) -> str:
        example = formats.get(tool, {}).get(name)
        return f'{name} like "{example}"' if example else name

    steps = [f"{t}({', '.join(arg(a, t) for a in arg_names.get(t, []))})" for t in sequence]
    text = "Call " + ", then ".join(steps) + ", then answer"
    if len(sequence) > 1:
        rows = [f"the {t} row whose {by} the task names" for t, by in (picks or {}).items()]
        text += " (feed each result into the next call" + (
            f"; pick {' and '.join(rows)}" if rows else "") + ")"
    text += "."
    if skipped:
        text += f"{SKIP}{', '.join(skipped)} for this kind of task."
    return text


def pitfall_advice(tool: str, error_class: str, repair: Repair | None, timeout: bool,
                   about_arguments: bool = True) -> str:
    """A failure mode and, when the run showed one, its repair (``about_arguments``: whether
    the error was, :func:`~toolcycle.playbook.evidence.blames_arguments`).

    A ``schema`` repair (the loop refused the arguments; no run showed a fix) leads with the
    call to make: on `rail` (JSON) the 1.5B called amenities_register(station, topic), taking
    ``topic`` from the look-alike station_info, three times in a row; the refusal's header was
    all the lesson said, and shown it the model kept away from the tool that held every
    facility answer (0 of 9 test runs right)."""
    failure = f"{tool} times out" if timeout else f"{tool} fails with: {error_class}"
    if repair is None:  # a timeout is no argument's fault: point away from the tool instead
        if timeout:
            return f"{failure}. Do not wait on it: try another tool that can answer."
        if OUTAGE.search(error_class):  # nor is a service that is down
            return f"{failure}. It is down: try another tool that can answer."
        if REFUSING.search(error_class):  # nor one that refuses every caller for now
            return f"{failure}. It refuses calls for now: try another tool that can answer."
        if not about_arguments:  # nor one whose error says nothing of what it was given
            return f"{failure}. It names no argument: try another tool that can answer."
        return f"{failure}. Check the arguments against what earlier tools returned."
    if repair.kind == "schema":
        return (f"Call {tool}({', '.join(repair.via_args)}) with no other arguments "
                f"(else {failure}).")
    if repair.kind == "prerequisite":
        return (f"{tool} needs {repair.argument} from {repair.via}: call "
                f"{repair.via}({', '.join(repair.via_args)}) first and pass its result as "
                f"{repair.argument}.")
    if repair.kind == "argument" and not repair.example:  # the task's words: no example
        return f"{failure}. Pass {repair.argument} as the task itself words it."
    if repair.kind == "argument":
        return f'{failure}. Pass {repair.argument} like "{repair.example}".'
    calls = [f"{repair.via}({', '.join(repair.via_args)})", *repair.then]
    return f"{failure}. Call {', then '.join(calls)} instead."


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
        self._writer: Any = None

    def writer(self) -> Any:
        """The model the lessons are asked of: ``model``, except that a model on the ReAct
        text protocol is asked through the JSON protocol over the same inner model.

        Why: the lessons are structured output, and under ReAct the 1.5B gave none valid
        (`rail`, 2026-11-28: failures logged for 17 of 18 train runs, none valid; it acted out
        the trace's calls and never called the output tool, even asked again, and once failed
        the schema); on the JSON protocol the reflections of 22 of 24 runs were valid. An
        agent's model string can be passed as it is."""
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
