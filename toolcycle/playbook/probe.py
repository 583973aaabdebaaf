"""Probes: in offline learning, the learner asks the other tools what a failed run's missed call
asked, and the tool whose result holds the expected answer is that call's repair.

Why: every repair the reflector knows is one a run *showed* (a retry that worked, another tool
that answered). A model that gives up after the first failure shows none: a small model
that reads "service unavailable" often answers that, run after run, so the playbook learns
only "inventory_live ... is down: try another tool that can answer", nothing about the tool
that held every answer, and served to the same model such a pitfall changes little.
Learning with :func:`~toolcycle.playbook.learning.
learn` knows what a run could not: the task's expected answer. So after a *failed* run, each
call that failed or found nothing (and that the run did not repair) is asked again of the
agent's other tools that can take its arguments as they are; the first whose result holds the
expected answer (the caller's evaluator says so) is the call's ``alternative`` repair, exactly
as if the run had called it next: the pitfall says "Call warehouse_ledger(item) instead." and a
routines playbook falls back to it (:mod:`~toolcycle.playbook.fallback`). The call that held
the answer is also evidence for the sequence a run making it would have taught
(:func:`probed_sequence`: "Call warehouse_ledger(item), then answer."), promoted after runs of
``promote_after`` different tasks showed it, or after two runs of different tasks found it, by
probe or by succeeding (:func:`answers_agree`).

A call refused for the shape of one value ("invalid day '2026-11-23': expected YYYYMMDD") is
first made again on its own tool with that value written as the error asks, where what it
means is certain (:func:`_as_the_error_asks`): the call the model should have made, whose
answer makes the same repair a retry that worked would have (``argument``). Likewise a probe's
own call of another tool, refused for the shape of an id its error shows ("numbers look like
CX-00000"), is made once more with the value so written (:meth:`_Asked.reshaped`); the
``alternative`` repair then carries the value as its example.

What a probe may call is what a fallback may call, for the same reason (nobody asked for it):
a tool declared ``read_only``, needing no approval and no run context (no ``deps``: a probe runs
outside any run), of which the missed call's arguments make a whole call, by name or with one
text parameter named apart (:mod:`~toolcycle.playbook.carry`: a guess here, which the check
against the expected answer settles; the repair keeps the rename). Each is called once so,
with its timeout (and :attr:`Probe.timeout`), at most :attr:`Probe.max_calls` calls per run.
Where no one tool answers, :mod:`~toolcycle.playbook.probe_chain` tries two. Tools of a
toolset (an MCP server's) are not probed: they are reachable only inside a run. Probes run on
the playbook's learning thread, in an event loop of their own: an async tool bound to the
caller's loop (a client session opened there) fails there, and that probe finds nothing. A
probe's calls are not in the trace and count in no tool statistic but the alternative they
name.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._id_shape import in_example_shape
from .._observation import serialize_result
from ..context import CancelToken, RunContext
from ..datetimes import in_example_readings, unmistakable
from ..messages import Usage
from ..tools import Tool, ToolArgumentsError
from ..words import names, says
from .applicability import applicability, json_leaves, sequence_words
from .carry import Rename, carried, guess_rename, invoke_step, respelled
from .evidence import (
    CallEvidence,
    Repair,
    arg_values,
    blames_arguments,
    first_line,
    is_empty_result,
    stated_repair,
    stated_rewrites,
)
from .sequence import advised
from .strategy import PROBED, Insight

log = logging.getLogger("toolcycle.playbook")

def answers_agree(data: dict[str, Any]) -> bool:
    """Whether a sequence candidate (the curator's record of its evidence) holds two runs of
    different tasks, whose prompts share a word to apply to, that each showed where the
    answer was: a probe's finding in a failed run, or a successful run's answer chain.

    Why: co-occurrence needs three runs to tell a pattern from chance when what is counted is
    every call a run made, since a run may hold detours that happened to come before its
    answer. Neither of these holds one. A probe's finding is the one call whose result held
    the task's expected answer; a success's sequence is its answer chain (the call whose
    result its judged answer quotes and the calls whose results fed that call's arguments,
    :func:`~toolcycle.playbook.evidence.answer_chain`), never the calls beside it. The same
    chain answering two different tasks of a kind is not chance, as a chain fed the same way
    twice is not (:func:`~toolcycle.playbook.flow.flow_shown`). Where a kind of task is seen
    in two train tasks, a rule that waits for three learns nothing of it, whether the model
    found the answer (a success) or gave up and a probe found it; one of each counts too
    (docs/playbook.md, "Where each rule comes from")."""
    # Every run a sequence candidate counts is one of these: a success, or a probe's finding
    # (recorded as a success, :func:`probed_sequence`); a failed run's chain is kept apart
    # (``data["flows"]``, :func:`~toolcycle.playbook.flow.flow_shown`) and counts nothing here.
    evidence = data["insights"]
    if len(evidence) < 2 or evidence[0].get("kind") != "sequence":
        return False
    return bool(applicability([Insight.from_dict(d) for d in evidence]))


#: The most characters of a probe's result that are judged (and read for a chain's values).
MAX_RESULT_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class Probe:
    """What a learning run's misses may be probed with.

    ``tools``: the agent's tools by name; ``holds_answer(text)``: whether a tool's result
    holds the task's expected answer (the learning evaluator); ``expected``: that answer as
    text, to tell which field of a result held it (what a lesson applies to,
    :func:`~toolcycle.playbook.applicability.answer_labels`); ``max_calls``: the most probe
    calls per run; ``timeout``: the most seconds one probe call may take (within the tool's
    own timeout): a probe runs on the playbook's learning thread, which a tool that never
    returns would otherwise hold for good.
    """

    tools: Mapping[str, Tool[Any]]
    holds_answer: Callable[[str], bool]
    max_calls: int = 6
    timeout: float = 30.0
    expected: str = ""


#: Set by :func:`~toolcycle.playbook.learning.learn` around each run (like ``current_grader``),
#: so that the run's observation probes its misses; None everywhere else.
current_probe: contextvars.ContextVar[Probe | None] = contextvars.ContextVar(
    "toolcycle_playbook_probe", default=None
)


def probe_targets(miss: CallEvidence, tools: Mapping[str, Tool[Any]]) -> list[Tool[Any]]:
    """The tools that may be asked what ``miss`` asked (see the module docstring), in the
    agent's order."""
    args = miss.call.args if isinstance(miss.call.args, dict) else {}
    guess = _may_rename(miss)
    return [tool for tool in tools.values() if tool.name != miss.call.name and eligible(tool)
            and _call_of(args, tool, guess) is not None]


def _may_rename(miss: CallEvidence) -> bool:
    """Whether a probe of ``miss`` may pass its value under another parameter name: not where
    the call's error was about its arguments (:func:`~toolcycle.playbook.evidence.
    blames_arguments`). Why: a probe that passes a rejected value to another tool's other
    parameter may find an answer there, for this task, and teach "X fails ... Call Y
    instead." for every task that meets X's error, most of which Y cannot answer (a status
    question's system name refused by a device lookup, then answered by a status page,
    would reroute every device question to the status page). A value a tool
    rejected is likely the wrong kind of thing, and the same value as another tool's other
    parameter a guess on a guess; a tool that failed whatever it was given (a quota, an
    outage, a certificate) says nothing against its arguments."""
    return miss.status != "error" or not blames_arguments(miss.call.error or "", miss.call.args)


def _call_of(args: Mapping[str, Any], tool: Tool[Any], guess: bool = True
             ) -> tuple[dict[str, Any], Rename | None] | None:
    """The probe call of ``tool`` that ``args`` make: by name, else (where ``guess``) with one
    parameter named apart (a guess, which the probe's check against the expected answer
    settles)."""
    by_name = carried(args, tool)
    if by_name is not None:
        return by_name, None
    if not guess:
        return None
    rename = guess_rename(args, tool)
    renamed = carried(args, tool, rename) if rename is not None else None
    return (renamed, rename) if renamed is not None else None


async def probe_repairs(calls: Sequence[CallEvidence], known: Mapping[int, Repair],
                        probe: Probe, *, run_id: str = "", agent_name: str = "agent",
                        results: dict[int, str] | None = None, prompt: str = "",
                        ) -> dict[int, Repair]:
    """The ``alternative`` repairs probing finds for the misses of a failed run's ``calls``
    (errors and empty results, by call index) that ``known`` has no repair for; ``results``,
    when given, gets the result that held the answer for each."""
    asked = _Asked(probe, probe_context(run_id, agent_name))
    found: dict[int, Repair] = {}
    for miss in calls:
        if miss.status not in ("error", "empty"):
            continue
        rewrites = _as_the_error_asks(miss, calls, prompt, probe.tools)
        for tool, given, key in rewrites:
            if asked.spent(tool, given):  # (a run that made the refused call twice: asked once)
                return found
            if (held := await asked.held(tool, given)) is not None:
                # the repair the reflector reads from the error, now checked, keeps its
                # example (the error's own, where it gave one and it settles the format:
                # no train task's own date goes into advice where the error wrote one);
                # else the value that answered, its day and month made unmistakable
                stated = stated_repair(miss, prompt)
                found[miss.index] = stated if (
                    stated is not None and stated.kind == "argument" and len(rewrites) == 1
                    and stated.argument == key and stated.example) else Repair(
                    "argument", miss.call.name, argument=key,
                    example=unmistakable(str(given[key]), prompt))
                if results is not None:
                    results[miss.index] = held
                break
        if miss.index in found:
            continue
        if miss.index in known:
            continue
        args = respelled(miss.call.args, prompt) if isinstance(miss.call.args, dict) else {}
        guess = _may_rename(miss)  # (once a miss, not once a tool)
        for tool in probe_targets(miss, probe.tools):
            given, rename = _call_of(args, tool, guess) or ({}, None)
            if asked.spent(tool, given):
                return found
            held = await asked.held(tool, given)
            shaped = asked.reshaped(tool, given) if held is None else None
            if shaped is not None and not asked.spent(tool, shaped[0]):
                held = await asked.held(tool, shaped[0])
            if held is not None:  # (a reshaped value is shown by its example: argument)
                argument, example = (shaped[1], str(shaped[0][shaped[1]])) if shaped else ("", "")
                found[miss.index] = Repair("alternative", miss.call.name, via=tool.name,
                                           via_args=tuple(sorted(given)), rename=rename,
                                           argument=argument, example=example)
                if results is not None:
                    results[miss.index] = held
                break
    return found


class _Asked:
    """The probe calls of one failed run: each call (tool and arguments) made once, and no
    more of them than the probe's budget allows."""

    def __init__(self, probe: Probe, ctx: RunContext[Any]) -> None:
        self.probe = probe
        self.ctx = ctx
        self.budget = probe.max_calls
        self._held: dict[str, str | None] = {}  # a call's signature -> the result that held it
        self._refused: dict[str, str] = {}  # a call's signature -> the error it failed with

    @staticmethod
    def _signature(tool: Tool[Any], given: Mapping[str, Any]) -> str:
        return f"{tool.name}:{sorted(given.items())!r}"

    def spent(self, tool: Tool[Any], given: Mapping[str, Any]) -> bool:
        """Whether this call is a new one and the budget has none left."""
        return self._signature(tool, given) not in self._held and self.budget <= 0

    async def held(self, tool: Tool[Any], given: dict[str, Any]) -> str | None:
        """The call's result where it holds the answer (made now, or earlier in this run),
        else None."""
        signature = self._signature(tool, given)
        if signature not in self._held:
            self.budget -= 1
            text, error = await attempt(tool, given, self.ctx, self.probe)
            self._held[signature] = (text if text is not None and answers(text, self.probe)
                                     else None)
            if error:
                self._refused[signature] = error
        return self._held[signature]

    def reshaped(self, tool: Tool[Any], given: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
        """The call made again with the one value its error refused written in the shape of
        the id the error shows (:func:`~toolcycle._id_shape.in_example_shape`: "77160" as
        "CX-77160" beside "numbers look like CX-00000"), and that value's parameter; None
        where the call did not fail so, or no one value is settled.

        Why: a failed run's value is the task's, and the tool that holds the answer may take
        it only in its own shape; the probe asks other tools with the value as the run had
        it, and such a tool refuses it, though its error says what it takes."""
        error = first_line(self._refused.get(self._signature(tool, given), ""))
        own = [v for v in given.values() if isinstance(v, str)]
        shaped = {k: fixed for k, v in given.items() if isinstance(v, str)
                  and (fixed := in_example_shape(v, error, own)) is not None} if error else {}
        if len(shaped) != 1:
            return None
        [(key, value)] = shaped.items()
        return {**given, key: value}, key


def _as_the_error_asks(miss: CallEvidence, calls: Sequence[CallEvidence], prompt: str,
                      tools: Mapping[str, Tool[Any]]
                      ) -> list[tuple[Tool[Any], dict[str, Any], str]]:
    """The call ``miss`` should have been: its own tool, with the one argument its error
    names written as the error asks (:func:`~toolcycle.playbook.evidence.stated_rewrites`,
    or in the format of a date the error shows, :func:`~toolcycle.datetimes.
    example_readings`: both orders where its example could be read either way round, for
    the probe to tell by which one answers, or in the shape of the one id it shows,
    :func:`~toolcycle._id_shape.in_example_shape`: "77160" as "CX-77160" beside "numbers
    look like CX-00000"), where the run never called that tool again
    successfully and the tool may be probed; as ``(tool, arguments, the argument
    rewritten)``, one per reading, else none.

    Why: a small model that reads "invalid date '2026-11-23': expected YYYYMMDD" may answer
    that the date is invalid instead of rewriting it, run after run. The reflector then
    reads the format from the error (a pitfall with its example), but nothing checked that
    the rewritten call answers, and a pitfall waits for three runs: a kind seen in two
    train tasks, both given up, taught nothing. A rewritten call whose result holds the
    expected answer is a probe's finding like any other: it repairs the miss, and two of
    them teach the sequence with its format (:func:`answers_agree`)."""
    tool = tools.get(miss.call.name)
    args = miss.call.args
    if (miss.status != "error" or tool is None or not eligible(tool)
            or not isinstance(args, dict)
            or any(c.ok and c.call.name == miss.call.name and c.index > miss.index
                   for c in calls)):
        return []
    written = {key: [value] for key, value in stated_rewrites(miss, prompt).items()}
    line = first_line(miss.call.error or "")
    own = [v for v in args.values() if isinstance(v, str)]
    if not written:  # the format of a date the error shows, for an argument it names
        low = line.lower()
        written = {str(k): fixed for k, v in args.items() if isinstance(v, str)
                   and (v.lower() in low or says(low, str(k)))
                   and (fixed := in_example_readings(v, line, own))}
    if not written:  # the shape of an id the error shows ("numbers look like CX-00000")
        written = {str(k): [shaped] for k, v in args.items() if isinstance(v, str)
                   and (shaped := in_example_shape(v, line, own)) is not None}
    if len(written) != 1:
        return []
    [(key, values)] = written.items()
    calls_asked: list[tuple[Tool[Any], dict[str, Any], str]] = []
    for value in values:
        try:
            calls_asked.append((tool, tool.validate({**args, key: value}), key))
        except ToolArgumentsError:
            continue
    return calls_asked


async def ask(tool: Tool[Any], arguments: dict[str, Any], ctx: RunContext[Any], probe: Probe
              ) -> str | None:
    """What ``tool`` called with ``arguments`` returns, as text; None when it fails or finds
    nothing (a probe that fails found nothing: it was never the model's call)."""
    return (await attempt(tool, arguments, ctx, probe))[0]


async def attempt(tool: Tool[Any], arguments: dict[str, Any], ctx: RunContext[Any],
                  probe: Probe) -> tuple[str | None, str]:
    """:func:`ask`'s text, and the error the tool failed with ("" where it did not)."""
    try:
        value = await asyncio.wait_for(invoke_step(tool, ctx, tool.validate(arguments)),
                                       probe.timeout)
    except ToolArgumentsError:
        return None, ""
    except Exception as exc:
        log.debug("playbook: probe %s failed: %s", tool.name, exc)
        return None, str(exc)
    text, ok = serialize_result(value)
    # a stranger's tool may return anything: what is judged and read for values is bounded
    return (text[:MAX_RESULT_CHARS] if ok and not is_empty_result(text) else None), ""


def answers(text: str, probe: Probe) -> bool:
    """Whether ``text`` holds the expected answer (the caller's evaluator says so)."""
    try:
        return bool(probe.holds_answer(text))
    except Exception as exc:  # the caller's evaluator: a failure there proves nothing
        log.debug("playbook: judging a probe's result failed: %s", exc)
        return False


def eligible(tool: Tool[Any]) -> bool:
    """Whether a probe may call ``tool`` (see the module docstring)."""
    return (tool.function is not None and not tool.requires_approval
            and tool.policy.read_only and tool.context_param is None)


def probe_context(run_id: str, agent_name: str) -> RunContext[Any]:
    """The context a probe's calls get: no deps, no budgets (no run)."""
    return RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(), run_id=run_id,
                      agent_name=agent_name)


def probed_sequence(prompt: str, calls: Sequence[CallEvidence], found: Mapping[int, Repair],
                    probe: Probe, *, domain: str, run_id: str, keywords: Sequence[str],
                    task: str, descriptions: Mapping[str, frozenset[str]] | None = None,
                    results: Mapping[int, str] | None = None) -> Insight | None:
    """The sequence the first probe ``found`` shows, as a run that made that call would have
    taught it: "Call warehouse_ledger(item), then answer. Do not use inventory_live ...", with
    the failed run's other tools skipped; for a call the probe made again with one value as
    its error asked (an ``argument`` repair), "Call day_stats(course, date like
    "24.07.2026"), then answer.". Only where every value the probe passed is in the
    task's ``prompt`` (as for an alternative a run showed: a value from nowhere carries to no
    other task). ``iterations`` is 0: no run took that way; the run id ends in
    :data:`~toolcycle.playbook.strategy.PROBED`, so the strategy says what it was seen in.
    A value the prompt did not say counts as said where the result that held the answer names
    what it found by words the value and the prompt both hold (:func:`named`)."""
    lowered = prompt.lower()
    for index, repair in sorted(found.items()):
        miss = next((c for c in calls if c.index == index), None)
        reshaped = repair.kind == "argument"  # the same tool, one value as its error asked
        tool = probe.tools.get(repair.tool if reshaped else repair.via)
        if miss is None or tool is None or not isinstance(miss.call.args, dict):
            continue
        args = (respelled(miss.call.args, prompt) if reshaped
                else carried(respelled(miss.call.args, prompt), tool, repair.rename))
        said = {k: v for k, v in (args or {}).items()
                if not (reshaped and k == repair.argument)}  # (the rewritten value is shown
        if not args or not all(v.lower() in lowered for v in  # by its format, not said)
                               arg_values(named(said, (results or {}).get(index), prompt))):
            continue
        skipped = sorted({c.call.name for c in calls} - {tool.name})
        formats = ({tool.name: {repair.argument: repair.example}}
                   if repair.argument and repair.example else None)
        return advised(Insight(
            kind="sequence", domain=domain, tools=[tool.name], keywords=list(keywords),
            advice="", run_id=run_id + PROBED, success=True, iterations=0, task=task,
            tool_words=sequence_words(keywords, [tool.name], descriptions,
                                      (results or {}).get(index), probe.expected, prompt),
        ), [tool.name], {tool.name: sorted(args)}, skipped, formats)
    return None


def named(args: Mapping[str, Any], result: str | None, prompt: str) -> dict[str, Any]:
    """``args`` with each text value the ``prompt`` does not hold narrowed to the longest text
    of ``result`` (a JSON leaf) that both the value and the prompt hold as whole words: the
    name of the thing the tool found, as the task said it. A leaf of one word counts only as
    a name the prompt gives (:func:`~toolcycle.words.names`): "heat" in
    "Ember heat gun" names no thing.

    Why: a model's search query ("heat gun delivery time") is no text of the task, so a
    probe that passes it on, though the tool answers (``{"item": "heat gun", ...}``), teaches
    no sequence: a lesson's first call must take a value the task gives. The tool naming the
    item the task named is what a value from nowhere lacks.
    """
    given = names(prompt)
    leaves = [leaf for leaf in _text_leaves(result)
              if len(leaf.split()) > 1 or leaf.lower() in given]
    out = dict(args)
    lowered = prompt.lower()
    for key, value in args.items():
        if not isinstance(value, str) or value.lower() in lowered:
            continue
        inside = [leaf for leaf in leaves if says(value, leaf) and says(prompt, leaf)]
        if inside:
            out[key] = max(inside, key=len)
    return out


def _text_leaves(result: str | None) -> list[str]:
    """The text leaves of a JSON ``result`` with a letter in them (none of a result that is no
    JSON, or too long to read)."""
    if not result or len(result) > MAX_RESULT_CHARS:
        return []
    try:
        parsed = json.loads(result)
    except (ValueError, RecursionError):  # (nested past the parser's depth: no leaves read)
        return []
    return [v.strip() for _, v in json_leaves(parsed)
            if isinstance(v, str) and any(c.isalpha() for c in v) and len(v.strip()) >= 3]


