"""Chain probes: the id lookup a failed learning run never made, found by the learner.

Why: a question that needs an id looked up first (``lab_orders(patient)``, then
``lab_result(order_id)`` with the id of the order asked about) is where a small model most
often fails: it asks a look-alike tool instead, rarely finds the chain by itself, so too few
runs show it for a sequence to be learned. No one tool answers such a task, so a
single probe (:mod:`.probe`) finds nothing. After a failed run whose single probes found
nothing, each of its calls that returned something, and each tool its arguments make a whole
call of (by name), is a first step to try; a value its JSON result holds under a key that is
the one required parameter of another tool feeds that tool (``"order_id": "LO-5521"`` →
``lab_result(order_id)``: APIs name an id where it comes from as where it goes), and a second
call whose result holds the expected answer closes the chain. It is learned as a run making
both calls would have taught it: the sequence, with the feed example a routine is induced
from (:mod:`.routine`), and, when the model itself called the second tool and failed, that
call's ``prerequisite`` repair ("lab_result needs order_id from lab_orders: call
lab_orders(patient) first ..."). What may be called is as for any probe; a run's chains take
at most :data:`MAX_CHAIN_CALLS` calls beyond its single probes', each bounded as theirs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..tracing.trace import Trace
from ..words import name_phrases
from .applicability import json_leaves, row_pick, sequence_words
from .carry import carried, properties, required_params, typed
from .evidence import CallEvidence, Repair, arg_values
from .lesson import TraceAnalysis
from .probe import Probe, answers, ask, eligible, probe_context, probe_repairs, probed_sequence
from .reflector import Findings
from .routine import feed_example
from .sequence import advised
from .strategy import PROBED, Insight

#: At most this many calls for the chains of one run (first steps and second steps).
MAX_CHAIN_CALLS = 12
#: At most this many values of one result are tried as a second step's argument.
MAX_FED_VALUES = 8
#: At most this many of the task's names are tried as a first step's argument.
MAX_NAMES = 2


@dataclass(frozen=True, slots=True)
class ProbedChain:
    """``first(first_args)`` returned ``first_result``, whose ``value`` (under the key
    ``arg``) made ``then(arg=value)`` return the expected answer."""

    first: str
    first_args: dict[str, Any]
    first_result: str
    then: str
    arg: str
    value: str
    #: what ``then`` returned (it holds the expected answer)
    answer: str = ""

    def repair_of(self, miss: CallEvidence) -> Repair | None:
        """The prerequisite repair of the model's own failed call of :attr:`then`."""
        if miss.call.name != self.then or miss.status != "error":
            return None
        return Repair("prerequisite", self.then, via=self.first, argument=self.arg,
                      example=self.value, via_args=tuple(sorted(self.first_args)))


async def probe_chain(calls: Sequence[CallEvidence], probe: Probe, prompt: str, *,
                      run_id: str = "", agent_name: str = "agent",
                      max_calls: int = MAX_CHAIN_CALLS) -> ProbedChain | None:
    """The first two-step chain that answers a failed run's task (see the module docstring),
    or None."""
    ctx = probe_context(run_id, agent_name)
    budget = max_calls
    tried: set[str] = set()
    for tool_name, args, result in _first_steps(calls, probe, prompt):
        key = _signature(tool_name, args)
        if key in tried:
            continue
        tried.add(key)
        if result is None:  # a first step the run did not make: ask it
            if budget <= 0:
                return None
            budget -= 1
            result = await ask(probe.tools[tool_name], args, ctx, probe)
        if result is None or answers(result, probe):
            continue  # nothing to feed on, or the answer itself (a single probe's matter)
        for arg, value, then in _second_steps(result, prompt, tool_name, probe):
            if budget <= 0:
                return None
            budget -= 1
            held = await ask(then, {arg: typed(value, properties(then).get(arg))}, ctx, probe)
            if held is not None and answers(held, probe):
                return ProbedChain(tool_name, dict(args), result, then.name, arg, value, held)
    return None


def _first_steps(calls: Sequence[CallEvidence], probe: Probe, prompt: str
                 ) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """The run's own calls that returned something (their result known), then the tools
    their arguments make a whole call of by name, then each tool of one required parameter
    asked for a name the task gave (those two to be asked).

    Why the names: a failed run's own calls are often no first step at all (a made-up tag
    passed to a register, a detail call whose arguments make no call of the lookup), so
    probing only what the run called finds the chain too rarely for a sequence; the name the
    task gave, passed to each tool of one required parameter, is a first step any run could
    have taken. The name is the task's own; the check against the expected answer settles
    the guess."""
    for c in calls:
        if c.status == "ok" and c.call.name in probe.tools and isinstance(c.call.args, dict):
            yield c.call.name, dict(c.call.args), c.call.result or None
    for c in calls:
        args = c.call.args if isinstance(c.call.args, dict) else {}
        for tool in probe.tools.values():
            if tool.name != c.call.name and eligible(tool) and (
                    given := carried(args, tool)) is not None:
                yield tool.name, given, None
    for name in name_phrases(prompt)[:MAX_NAMES]:
        for tool in probe.tools.values():
            required = required_params(tool) or []
            if eligible(tool) and len(required) == 1 and required[0] in properties(tool):
                yield tool.name, {required[0]: name}, None


def _second_steps(result: str, prompt: str, first: str, probe: Probe
                  ) -> Iterator[tuple[str, str, Any]]:
    """``(parameter, value, tool)``: a value of ``result`` under a key that is the one
    required parameter of another tool (not one the task gave: a fed value comes from the
    result)."""
    lowered = prompt.lower()
    values = [(k, v) for k, v in _leaves(result) if v.lower() not in lowered][:MAX_FED_VALUES]
    for tool in probe.tools.values():
        required = required_params(tool) or []
        if tool.name == first or not eligible(tool) or len(required) != 1 or (
                required[0] not in properties(tool)):
            continue
        for key, value in values:
            if key == required[0]:
                yield key, value, tool


def _leaves(text: str) -> list[tuple[str, str]]:
    """The ``(key, value)`` leaves of a JSON result (texts and integers of 2 or more
    characters), in order, at most 200; ``[]`` for text that is no JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    out: list[tuple[str, str]] = []
    for path, value in json_leaves(data):
        if path and isinstance(value, str | int) and not isinstance(value, bool) and len(
                str(value).strip()) >= 2:
            out.append((path[-1], str(value)))
            if len(out) >= 200:
                break
    return out


def _signature(tool: str, args: Mapping[str, Any]) -> str:
    return f"{tool}:{json.dumps(args, sort_keys=True, default=str)}"


@dataclass(frozen=True, slots=True)
class FailedRunProbe:
    """The :class:`~toolcycle.playbook.reflector.Prober` of offline learning: ``probe``'s single
    probes of a failed run's misses, then a chain (:func:`probe_failed_run`), in an event loop
    of their own on the learning thread."""

    probe: Probe

    def findings(self, trace: Trace, analysis: TraceAnalysis, *, domain: str,
                 descriptions: Mapping[str, frozenset[str]] | None = None) -> Findings:
        return asyncio.run(probe_failed_run(trace, analysis, self.probe, domain=domain,
                                            descriptions=descriptions))


async def probe_failed_run(trace: Trace, analysis: TraceAnalysis, probe: Probe, *,
                           domain: str,
                           descriptions: Mapping[str, frozenset[str]] | None = None,
                           ) -> Findings:
    """Single probes of the run's misses (:func:`~toolcycle.playbook.probe.probe_repairs`),
    and where they find nothing, a chain (:func:`probe_chain`)."""
    prompt = trace.user_prompt or ""
    common: dict[str, Any] = {"domain": domain, "keywords": analysis.keywords,
                              "task": analysis.task, "descriptions": descriptions}
    results: dict[int, str] = {}
    repairs = await probe_repairs(analysis.calls, analysis.repairs, probe, results=results,
                                  run_id=trace.run_id, agent_name=trace.agent_name,
                                  prompt=prompt)
    if repairs:
        return Findings(repairs, probed_sequence(prompt, analysis.calls, repairs, probe,
                                                 run_id=trace.run_id, results=results,
                                                 **common))
    chain = await probe_chain(analysis.calls, probe, prompt, run_id=trace.run_id,
                              agent_name=trace.agent_name)
    if chain is None:
        return Findings({})
    for c in analysis.calls:  # the model's own failed call of the detail tool, if any
        repair = chain.repair_of(c)
        if repair is not None and c.index not in analysis.repairs:
            repairs[c.index] = repair
            break
    return Findings(repairs, chain_sequence(chain, analysis.calls, prompt, probe.expected,
                                            run_id=trace.run_id, **common))


def chain_sequence(chain: ProbedChain, calls: Sequence[CallEvidence], prompt: str,
                   expected: str = "", *, domain: str, run_id: str, keywords: Sequence[str],
                   task: str, descriptions: Mapping[str, frozenset[str]] | None = None,
                   ) -> Insight | None:
    """The sequence ``chain`` teaches, with its feed example; None where the first step's
    values are not all the task's (a value from nowhere carries to no other task)."""
    lowered = prompt.lower()
    example = feed_example(chain.first_result, chain.value)
    if example is None or not chain.first_args or not all(
            v.lower() in lowered for v in arg_values(chain.first_args)):
        return None
    tools = [chain.first, chain.then]
    skipped = sorted({c.call.name for c in calls} - set(tools))
    pick = row_pick(chain.first_result, chain.value, chain.first_args, prompt)
    return advised(Insight(
        kind="sequence", domain=domain, tools=tools, keywords=list(keywords), advice="",
        run_id=run_id + PROBED, success=True, iterations=0, task=task,
        feeds=[{"arg": chain.arg, **example, "pick": pick}],
        tool_words=sequence_words(keywords, tools, descriptions, chain.answer, expected,
                                  prompt, [(chain.first_result, chain.value, chain.first_args)]),
    ), tools, {chain.first: sorted(chain.first_args), chain.then: [chain.arg]}, skipped, None,
        {chain.first: pick[1]} if pick else None)
