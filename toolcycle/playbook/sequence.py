"""The ``sequence`` lesson type: the chain of calls that held a successful run's answer, as
advice ("Call find_booking(name), then booking_detail(ref), then answer.") and, with
routines, as one tool (:mod:`.routine`).

The chain is the evidence of the trace (:mod:`.evidence`), not the order the model tried
things in; the advice shows argument names and, where the model had to shape a value itself,
its format, never the task's own words (:func:`~.evidence.shaped_values`).

Acted on, with routines, as a head start too: the sequence's first call made for the model
before its first turn, where the runs it was learned from show which argument took the
task's one named value (the part below "head starts").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..tools import Tool
from ..words import PHRASE_ENDS, name_phrases
from .applicability import sequence_words
from .carry import properties, typed
from .evidence import CallEvidence, shaped_values
from .flow import chain_feeds, data_flow
from .lesson import RunEvidence
from .strategy import Argument, Insight, Strategy, UseVerdict, skip_clause


def sequence_advice(
    sequence: list[str], arg_names: dict[str, list[str]], skipped: list[str],
    formats: dict[str, dict[str, str]] | None = None, picks: dict[str, str] | None = None,
) -> str:
    """Plain advice a small model can follow: the calls in order, with their argument names;
    ``picks``: tool -> the field its result's row was picked by, a word of the task's."""
    steps = [f"{t}({', '.join(map(str, call_arguments(t, arg_names, formats)))})"
             for t in sequence]
    text = "Call " + ", then ".join(steps) + ", then answer"
    if len(sequence) > 1:
        rows = [f"the {t} row whose {by} the task names" for t, by in (picks or {}).items()]
        text += " (feed each result into the next call" + (
            f"; pick {' and '.join(rows)}" if rows else "") + ")"
    return text + "." + skip_clause(skipped)


def call_arguments(tool: str, arg_names: dict[str, list[str]],
                   formats: dict[str, dict[str, str]] | None = None) -> list[Argument]:
    """The arguments of ``tool``'s call as a sequence's advice names them: by name, with the
    format the run shaped a value in where it did (``formats``: tool -> argument -> example)."""
    shaped = (formats or {}).get(tool, {})
    return [Argument(name, shaped.get(name, "")) for name in arg_names.get(tool, [])]


def advised(lesson: Insight, sequence: list[str], arg_names: dict[str, list[str]],
            skipped: list[str], formats: dict[str, dict[str, str]] | None = None,
            picks: dict[str, str] | None = None) -> Insight:
    """``lesson`` (a sequence insight) with its advice (:func:`sequence_advice`) and,
    typed beside it, what the code acts on: its first call's arguments and the tools it
    says to skip (its routine's line shows both: :func:`~toolcycle.playbook.offer.
    render_line`)."""
    lesson.advice = sequence_advice(sequence, arg_names, skipped, formats, picks)
    lesson.first_args = call_arguments(sequence[0], arg_names, formats) if sequence else []
    lesson.skips = list(skipped)
    return lesson


class Sequences:
    """The ``sequence`` lesson: a successful run's answering chain (its advice names the
    tools called outside the chain, so the curator can say what to skip); a failed run's
    data flow of a chain is evidence for one a success taught (the curator counts it only
    beside such a run)."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        analysis, trace = run.analysis, run.trace
        if run.success and analysis.sequence:
            skipped = sorted({c.call.name for c in analysis.calls} - set(analysis.sequence))
            feeds = chain_feeds(analysis.chain, run.prompt)
            picks = {analysis.chain[i].call.name: str(f["pick"][1])
                     for i, f in enumerate(feeds) if f.get("pick")}
            lesson = _chain_lesson(run, analysis.chain, list(analysis.sequence), feeds)
            return [advised(lesson, analysis.sequence, analysis.arg_names, skipped,
                            shaped_values(trace, analysis.calls, analysis.chain), picks)]
        if not run.success and (flow := data_flow(trace, analysis.calls)) is not None:
            return [_chain_lesson(run, flow[0], [c.call.name for c in flow[0]], flow[1])]
        return []

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        return None  # followed: its tools called in order (outcome.use_verdict)

    def owns(self, strategy: Strategy) -> bool:
        return strategy.kind == "sequence"


def _chain_lesson(run: RunEvidence, chain: list[CallEvidence], tools: list[str],
                  feeds: list[dict[str, Any]]) -> Insight:
    """A sequence insight of ``run``'s ``chain``, without advice (a failed run's data flow
    lends none; :func:`advised` writes a success's)."""
    lesson = run.insight("sequence", "", tools)
    trace = run.trace
    lesson.feeds, lesson.head = feeds, run_head(chain, run.prompt)
    lesson.tool_words = sequence_words(
        run.analysis.keywords, lesson.tools, run.descriptions,
        chain[-1].call.result if chain else None, str(trace.output or ""), run.prompt,
        [(c.call.result or "", str(f["value"]), c.call.args or {})
         for c, f in zip(chain, lesson.feeds, strict=False)])
    return lesson


# -- head starts -------------------------------------------------------------------------------
# Head starts: the first call of a learned sequence, made for the model before its first turn.
#
# Why: a run shown "Call staff_directory(name), then answer" (or offered its routine) takes two
# model turns at best: one to make the call, one to answer. Where the call's argument is
# plainly the one thing the task names ("How warm is it at the office of Ingrid Halvorsen?"),
# the first turn only copies it. Once a playbook's runs are at that floor, two turns a task, no
# advice can cut more (and a model that answers wrong without any call costs one turn). A
# head start makes that call for the run, so the model's first turn reads the result and
# answers: one request instead of two, and the whole history sent once less.
#
# When, learned and not guessed: a sequence keeps, per run it was learned from, which argument
# of its first call took the task's one named value (:func:`head_param`: a name as written,
# "Ingrid Halvorsen", an id, "C-3019", or a number, "room 1126"), or that none did. A run of a
# task that names exactly one value is given a head start only where the first sequence it is
# shown learned so from at least :data:`MIN_HEAD_RUNS` runs and from most of its runs
# (:data:`HEAD_SHARE`), and the first tool takes that one argument alone. "Tavish shelf
# brackets" is an item the task names in more words than its one name ("Tavish"): where the
# runs passed the name with the words after it (:func:`named_phrase`), that is what a head start
# passes.
#
# What it may call is what a fallback may: a tool declared ``read_only`` (or a routine of such
# tools) needing no approval. The call is the run's own, in its history and trace like any, and
# the model may call again when the result is not what it needed (an unknown name, say): a head
# start costs at most one tool call and its result's tokens. Only a playbook with
# ``routines=True`` makes them (its tool selection does, :class:`~toolcycle.playbook.offer.
# RoutineOffer`); the engine makes the call (:mod:`toolcycle.run.head_start`).

#: Runs a sequence must have learned the head start from before one is made.
MIN_HEAD_RUNS = 2
#: The share of a sequence's runs (those it keeps the head of) whose first call took the
#: task's one named value in that argument.
HEAD_SHARE = 0.75
#: A name shorter than this is an abbreviation or an initial ("Dr" in "Dr. Abernethy").
MIN_NAME_CHARS = 3
#: The longest value a head start passes.
MAX_VALUE_CHARS = 120
#: The key a run whose first call took no named value is counted under.
NO_HEAD = ""
#: Ends the key of an argument that took the named value with the words after it
#: (:func:`named_phrase`): ``"item+"``.
PHRASE = "+"
#: The most words a phrase adds to the name it begins with.
MAX_PHRASE_WORDS = 3
_NEXT_WORD = re.compile(r" ([a-z][a-z-]*)(?=[\s,.;:?!)]|$)")

# ids written with a hyphen ("C-3019", "AT-42015": letters, a hyphen, digits), and numbers of
# three digits or more standing alone ("room 1126"; not in a time, date or decimal)
_CODE = re.compile(r"(?<![\w.-])[A-Z]{1,5}-\d{2,}(?:-[A-Z0-9]+)*(?![\w-])")
# a capitalised word beginning the text or a sentence, right before where a name begins
_SENTENCE_START_WORD = re.compile(r"(?:^|[.?!;:]\s+)([A-Z][a-z]+) $")
_NUMBER = re.compile(r"(?<![\w.:/-])\d{3,}(?![\w:/-]|\.\d)")


def named_values(task: str) -> list[str]:
    """The values ``task`` names, as written, in order, once each: its names
    (:func:`~toolcycle.words.name_phrases`, "Ingrid Halvorsen", "KL644"),
    its hyphenated ids ("C-3019") and its numbers of three digits or more ("1126")."""
    found = [(m.start(), m.group()) for m in (*_CODE.finditer(task), *_NUMBER.finditer(task))]
    at = 0
    for phrase in name_phrases(task):
        if len(phrase) >= MIN_NAME_CHARS:
            start = task.find(phrase, at)
            found.append((start, phrase))
            at = max(at, start)
            # "Carraway Opticians has an open balance": a sentence's first word is no name by
            # its capital alone, so the task names "Opticians" or "Carraway Opticians"
            before = _SENTENCE_START_WORD.search(task, 0, max(start, 0))
            if start > 0 and before is not None:
                found.append((before.start(1), task[before.start(1):start + len(phrase)]))
    return list(dict.fromkeys(value for _, value in sorted(found)))


def named_phrase(task: str, name: str) -> str:
    """``name`` with the lower-case words that follow it in ``task`` (at most
    :data:`MAX_PHRASE_WORDS`, up to a word such as "are", "in" or "do", or a punctuation mark):
    what a thing the task names by more words than its name is called. "How many Tavish shelf
    brackets are in stock?" names "Tavish"; the item is "Tavish shelf brackets"."""
    at = task.find(name)
    if at < 0:
        return name
    end = at + len(name)
    for _ in range(MAX_PHRASE_WORDS):
        word = _NEXT_WORD.match(task, end)
        if word is None or word.group(1) in PHRASE_ENDS:
            break
        end = word.end()
    return task[at:end]


def head_param(arguments: Mapping[str, Any] | None, task: str) -> str | None:
    """The argument of a run's first call that took the task's one named value (compared
    without case or surrounding space), that value's :func:`named_phrase` where it is longer
    (the argument's name then ends with :data:`PHRASE`: "item+"), or :data:`NO_HEAD`: no
    argument took either, or two did; None where the task names no value or more than one
    (then the run says nothing about head starts either way: a task that names no value
    cannot show which argument takes it, and counted as "none did" it would hold a sequence
    every naming task of which passed the name below :data:`HEAD_SHARE`)."""
    values = named_values(task)
    if len(values) != 1:
        return None
    if not isinstance(arguments, Mapping):
        return NO_HEAD
    name = values[0]
    phrase = named_phrase(task, name)
    for wanted, key in ((name, ""), (phrase, PHRASE)):
        took = [arg for arg, value in arguments.items()
                if isinstance(value, str | int) and not isinstance(value, bool)
                and str(value).strip().casefold() == wanted.casefold()]
        if len(took) == 1 and (not key or phrase != name):
            return took[0] + key
    return NO_HEAD


def run_head(chain: Sequence[CallEvidence], task: str) -> str | None:
    """What a run whose answering chain is ``chain`` teaches about head starts: the
    :func:`head_param` of the chain's first call, or None (no evidence) where that call was
    itself a head start (made before the model's first turn: iteration 0)."""
    if not chain or chain[0].call.iteration == 0:
        return None
    return head_param(chain[0].call.args, task)


def learned_param(strategy: Strategy) -> str | None:
    """The argument a head start of ``strategy``'s first tool passes, where its runs taught
    one (:data:`MIN_HEAD_RUNS`, :data:`HEAD_SHARE`); None otherwise."""
    runs = Counter(strategy.heads)
    param, taken = max(((p, n) for p, n in runs.items() if p != NO_HEAD),
                       key=lambda item: item[1], default=(NO_HEAD, 0))
    if taken < MIN_HEAD_RUNS or taken < HEAD_SHARE * len(strategy.heads):
        return None
    return param


def head_call(strategy: Strategy, tool: Tool[Any] | None, task: str
              ) -> dict[str, Any] | None:
    """The arguments of the head start of a run of ``task`` whose first call ``tool`` makes
    (the sequence's first tool, or the routine standing in for it), or None: no head start
    learned, the task names no single value, the tool may not be called unasked or takes
    more than that argument."""
    learned = learned_param(strategy)
    if learned is None or tool is None or not tool.policy.read_only or tool.requires_approval:
        return None
    values = named_values(task)
    if len(values) != 1:
        return None
    props = properties(tool)
    # "item+": the phrase into "item" (a parameter whose own name ends with "+" is itself)
    phrase = learned.endswith(PHRASE) and learned not in props
    param = learned.removesuffix(PHRASE) if phrase else learned
    value = named_phrase(task, values[0]) if phrase else values[0]
    if len(value) > MAX_VALUE_CHARS:
        return None
    required = tool.spec.parameters.get("required")
    needed = set(required) if isinstance(required, list) else set()
    if param not in props or not needed <= {param}:
        return None
    return {param: typed(value, props[param])}
