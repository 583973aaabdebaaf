"""What a trace's tool calls show, call by call: misses, the answering call, its inputs, repairs.

The reflector learns from *evidence in the trace*, not from the order the model happened to try
things in. Three questions answer most of it:

- Which calls missed? An error, a repeat of an earlier call, or an empty result (``[]``,
  ``{}``, ``null``, ``""``, "No results.", a JSON object whose every value is empty).
- Which call held the answer? The one whose result shares the most numbers and words with the
  final output; the calls that fed it (a value in its arguments that came from an earlier
  result, not from the prompt) are its prerequisites. The chain of those calls is the lesson;
  anything else the run did is waste, however many detours it took, so one kind of task gives
  one pattern whatever the run order.
- What repaired a miss? The next good call of the same tool with another argument shape, the
  call whose result fed that retry (a prerequisite lookup), or another tool that answered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal

from ..datetimes import example_dates, in_stated_format, names_date, unmistakable
from ..tracing.trace import ToolCallRecord, Trace
from ..words import EXAMPLE_INTRO, keywords, roots, says
from ..words import is_empty_result as is_empty_result  # (moved there: the loop's too)
from .formats import example_kind, legend_code
from .formats import value_shape as value_shape  # (moved there; imported from here before)
from .parts import Rename
from .parts import Repair as Repair  # (moved there: a lesson keeps it; imported from here)
from .parts import RepairKind as RepairKind

CallStatus = Literal["ok", "error", "empty", "repeat"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


#: A quoted value in an error's text (what :func:`~toolcycle.playbook.reflector.shown_error`
#: keeps when the call did not supply it); numbers stay masked either way.
QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


#: A value an error writes without quotes: a run of letters, digits and ``./+-``
#: ("05.01.2026", "AB-00000"; one with a digit is a value, :func:`unquoted_example`); the
#: punctuation ending a sentence after it is no part. (No digit in the pattern itself: a
#: stranger's error line is scanned once, with no backtracking over a long word.)
UNQUOTED = re.compile(r"[\w./+-]+")
#: The words before a value that present it as an example of what a tool takes.
_INTRODUCED = re.compile(rf"(?:^|\W)(?:{EXAMPLE_INTRO}|format)\s*[:,]?\s*$", re.IGNORECASE)
#: How far before a value its introduction is looked for (the longest words of
#: :data:`_INTRODUCED` and their spacing; each value reads a bounded stretch of the line).
_INTRO_REACH = 32
#: The most values of an error's line read for an example: each takes at least one of the
#: 90 characters the advice shows of the line, so one further on never reaches it.
SCANNED = 90
#: The longest value kept as a tool's own example.
_LONGEST_EXAMPLE = 24


def supplied(value: str, args: Any, prompt: str) -> bool:
    """Whether ``value`` in an error is this task's, not the tool's: the call's ``args``
    gave it (a name or value, part of one or one's part; a name, or a number, inside it
    only as a whole word, so a weight of 20 is not in "20260105"), the task's ``prompt``
    says it as a word, or, for a date, either names the date it means in any writing
    (:func:`~toolcycle.datetimes.names_date`: "16.05.2026" for "16 May 2026")."""
    low = value.strip().lower()
    values = list(arg_values(args))
    names = [str(k) for k in args] if isinstance(args, dict) else []
    if (any(low in a.lower() or (says(low, a) if _NUMBER.fullmatch(a) else
                                 a.lower() in low) for a in values)
            or any(low in n.lower() or says(low, n) for n in names)
            or says(prompt.lower(), low)):
        return True
    return any(names_date(text, day) for day in example_dates(value.strip())
               for text in [*values, *names, prompt])


def unquoted_example(found: re.Match[str], args: Any, prompt: str) -> str | None:
    """The tool's own example an :data:`UNQUOTED` match in an error's line is, or None.

    Kept only where all three hold: the error presents it as an example ("dates look like
    05.01.2026", "e.g. AB-00000", "format: 20260105"); the format reader reads a shape in it
    (:func:`~toolcycle.playbook.formats.example_kind`: a numeric date, or a code of letters
    and digits); and the task did not supply it (:func:`supplied`). Why each: a number an
    error writes bare is most often this task's figure ("balance 1234.50 is too low", "only
    17 left", a date the task asked about in the tool's writing), and advice is read by
    other tasks; what a tool offers as an example is its own words, the one part of its
    error that shows the format, whether it quoted it or not."""
    value = found[0].rstrip("./+-")
    reach = max(0, found.start() - _INTRO_REACH)  # (``^`` is the line's start only)
    if (len(value) > _LONGEST_EXAMPLE
            or not _INTRODUCED.search(found.string, reach, found.start())
            or example_kind(value) is None or supplied(value, args, prompt)):
        return None
    return value


def blames_arguments(error: str, args: Any) -> bool:
    """Whether an error is about the call's arguments: it quotes a value (``'x'``, ``"x"``),
    or names one of the call's parameters or repeats one of its values.

    Why: an error such as "TLS handshake failed: certificate verify failed: certificate has
    expired" would be learned as "… Check the arguments against what earlier tools
    returned.", though no argument was wrong, and the list of outage words (``words.OUTAGE``) cannot
    name every way a service breaks. An error that says nothing of what it was given is the
    tool's, whatever its words."""
    line = first_line(error)
    if QUOTED.search(line):
        return True
    low = line.lower()
    names = [str(k) for k in args] if isinstance(args, dict) else []
    return any(says(low, k) for k in names) or any(
        v.lower() in low for v in arg_values(args))


def first_line(text: str) -> str:
    """The first line of ``text`` that is not blank (an error's message, not its trace)."""
    return next((ln for ln in text.strip().splitlines() if ln.strip()), "")


@dataclass(slots=True)
class CallEvidence:
    """One tool call with its verdict and its index in the run."""

    index: int
    call: ToolCallRecord
    status: CallStatus

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def classify(trace: Trace) -> list[CallEvidence]:
    """The task's tool calls (not output or submit calls), each marked ok or why it missed."""
    seen: set[str] = set()
    out: list[CallEvidence] = []
    for call in trace.tool_calls:
        if call.kind not in ("tool", "unknown"):
            continue
        signature = call.name + json.dumps(call.args, sort_keys=True, default=str)
        status: CallStatus
        if call.error is not None:
            status = "error"
        elif signature in seen:
            status = "repeat"
        elif is_empty_result(call.result):
            status = "empty"
        else:
            status = "ok"
        seen.add(signature)
        out.append(CallEvidence(len(out), call, status))
    return out


def answer_chain(trace: Trace, calls: list[CallEvidence]) -> list[CallEvidence]:
    """The answering call and, before it, the calls whose results fed its arguments."""
    good = [c for c in calls if c.ok]
    if not good:
        return []
    return feeding_chain(_answering_call(trace, good), good, trace.user_prompt or "")


def fed_chains(trace: Trace, calls: list[CallEvidence]) -> list[list[CallEvidence]]:
    """Each good call with the calls whose results fed its arguments, longest chains first
    (the later of two alike): what a run that answered wrong shows of a tool chain's data
    flow, whatever its answer quoted."""
    good = [c for c in calls if c.ok]
    prompt = trace.user_prompt or ""
    chains = [feeding_chain(end, good, prompt) for end in good]
    return sorted(chains, key=lambda chain: (-len(chain), -chain[-1].index))


def feeding_chain(answer: CallEvidence, good: list[CallEvidence],
                  prompt: str) -> list[CallEvidence]:
    """``answer`` and, before it, the good calls whose results fed its arguments (a value
    the prompt has fed nothing), in call order."""
    chain = [answer]
    frontier = [answer]
    while frontier:
        current = frontier.pop()
        for value in arg_values(current.call.args):
            source = _source_of(value, prompt, [c for c in good if c.index < current.index])
            if source is not None and source not in chain:
                chain.append(source)
                frontier.append(source)
    return sorted(chain, key=lambda c: c.index)


def _answering_call(trace: Trace, good: list[CallEvidence]) -> CallEvidence:
    """The good call whose result the final output quotes most: its numbers count double,
    its words once; what the output repeats from the prompt (a name, an order number) counts
    for nothing, since the lookup that was given it echoes it too."""
    output = "" if trace.output is None else str(trace.output)
    prompt = trace.user_prompt or ""
    numbers = _numbers(output) - _numbers(prompt)
    words = set(keywords(output)) - set(keywords(prompt))
    best, best_score = good[-1], 0
    for c in good:
        text = c.call.result or ""
        score = 2 * len(numbers & _numbers(text))
        score += len(words & set(keywords(text)))
        if score >= best_score and score > 0:
            best, best_score = c, score
    return best


def _numbers(text: str) -> set[float]:
    return {float(n) for n in _NUMBER.findall(text.replace(",", ""))}


def arg_values(args: Any) -> Iterator[str]:
    """The texts of a call's argument values (nested ones too; none shorter than 2)."""
    if isinstance(args, dict):
        for value in args.values():
            yield from arg_values(value)
    elif isinstance(args, list):
        for value in args:
            yield from arg_values(value)
    elif args is not None and not isinstance(args, bool):
        text = str(args).strip()
        if len(text) >= 2:
            yield text


def _source_of(value: str, prompt: str, earlier: list[CallEvidence]) -> CallEvidence | None:
    """The latest earlier call whose result contains ``value``, unless the prompt has it.

    The prompt check keeps case ("ACME" from a lookup is not "Acme" from the question); the
    result check ignores it (a model may lower-case what it copies).
    """
    if value in prompt:
        return None
    needle = value.lower()
    for c in reversed(earlier):
        if needle in (c.call.result or "").lower():
            return c
    return None


def repair_of(miss: CallEvidence, calls: list[CallEvidence], prompt: str = "",
              answered: set[str] | None = None) -> Repair | None:
    """What worked after ``miss``: a reshaped argument, a prerequisite call or another tool.

    ``prompt`` is the task's text: a value copied from it was not fed by another call.
    ``answered``: the tools that held the answer, when known; another tool is then an
    alternative only if it is one of them (not merely the next call that returned something).
    """
    later = [c for c in calls if c.index > miss.index]
    name = miss.call.name
    retry = next((c for c in later if c.ok and c.call.name == name), None)
    if retry is not None:
        between = [c for c in calls if miss.index < c.index < retry.index and c.ok]
        for key, value in _changed_args(miss.call.args, retry.call.args):
            source = _source_of(value, prompt, between)
            if source is not None and source.call.name != name:
                return Repair("prerequisite", name, via=source.call.name, argument=key,
                              example=value, via_args=tuple(sorted(source.call.args or {})))
        changed = _changed_args(miss.call.args, retry.call.args)
        if changed and miss.status == "error":
            key, value = changed[0]  # (the task's own words are no example for another task)
            example = "" if says_task_words(value, prompt) else unmistakable(value, prompt)
            return Repair("argument", name, argument=key, example=example)
        return None
    other = next((c for c in later if c.ok and c.call.name != name
                  and (answered is None or c.call.name in answered)), None)
    if other is None or not _grounded(other, calls, prompt):
        return None
    # the rest of the answering chain after the alternative: told only "Call Y(name)
    # instead", a small model calls Y and answers from its result, without the later call
    # that held the answer (a city looked up, the weather there never asked)
    then = [] if answered is None else list(dict.fromkeys(
        f"{c.call.name}({', '.join(sorted(c.call.args or {}))})" for c in later
        if c.index > other.index and c.ok and c.call.name in answered
        and c.call.name not in (name, other.call.name)))
    return Repair("alternative", name, via=other.call.name,
                  via_args=tuple(sorted(other.call.args or {})), then=tuple(then),
                  rename=_renamed(miss.call.args, other.call.args))


def says_task_words(value: str, prompt: str) -> bool:
    """Whether ``value`` carries a content word of the task (by its root: "bookings" is
    "booking"): then it is this task's content, not a format another task can follow.

    Why: advice is read by runs of other tasks. Shown a sequence whose example was one train
    task's query ("Call search(query like "<that task's words>")"), a small model copies
    those words into other tasks' calls. A value's format (digits,
    separators, case) generalises; its words do not."""
    return bool(roots(keywords(value)) & roots(keywords(prompt)))


def stated_repair(miss: CallEvidence, prompt: str = "") -> Repair | None:
    """An argument repair read from the error itself, for a failed call the run never got
    past: the one string argument the error quotes or names, written in the one date or time
    format the error spells out (:func:`~toolcycle.datetimes.in_stated_format`), where
    what the value means is certain; else as the code the error's legend gives for it ("P4"
    for "low" in "P1 (critical), ... P4 (low)", :func:`~toolcycle.playbook.formats.
    legend_code`); else the example value the error itself gives (:func:`_stated_example`).
    None otherwise.

    Why: a small model may never get past an error that names the format it wants
    ("invalid time '7:30 pm': expected HH:MM on the 24-hour clock"), and a lesson learned
    only from a repair then says "check the arguments" with no example, though the format
    was in the error all along. The
    example is not one a call passed with: a reshaped call that fails again leaves the
    model's own failure standing (:mod:`~toolcycle.playbook.reshape`)."""
    error, args = miss.call.error or "", miss.call.args
    if miss.status != "error" or not isinstance(args, dict):
        return None
    line = first_line(error)
    written = stated_rewrites(miss, prompt) or _stated_example(args, line, line.lower(), prompt)
    if len(written) != 1:
        return None
    key, example = written.popitem()
    return Repair("argument", miss.call.name, argument=str(key), example=example)


def stated_rewrites(miss: CallEvidence, prompt: str = "") -> dict[str, str]:
    """The string arguments of a failed call that its error quotes or names, each as the
    error asks it written: in the one date or time format the error spells out, where what
    the value means is certain, else as the code the error's legend gives for it. Each is
    the call's own value rewritten (never an example of the error's), so the call made with
    it is the one the model should have made: what a probe may check
    (:mod:`~toolcycle.playbook.probe`)."""
    error, args = miss.call.error or "", miss.call.args
    if miss.status != "error" or not isinstance(args, dict):
        return {}
    line = first_line(error)
    low = line.lower()
    named = {str(k): v for k, v in args.items() if isinstance(v, str) and v.strip()
             and (v.lower() in low or says(low, str(k)))}
    written = {k: fixed for k, v in named.items()
               if (fixed := in_stated_format(v, line, prompt)) is not None}
    # else a code the error's legend gives for the value: "P4 (low)" for "low"
    return written or {k: code for k, v in named.items()
                       if (code := legend_code(v, line)) is not None}


#: An example value an error gives: "give the two-letter country code, e.g. 'FR'".
_EXAMPLE = re.compile(rf"\b(?:{EXAMPLE_INTRO})\s*[:,]?\s*"
                      r"['\"`]([^'\"`\n]{1,40})['\"`]", re.IGNORECASE)


def _stated_example(args: dict[str, Any], line: str, low: str,
                    prompt: str) -> dict[str, str]:
    """The one string argument an error quotes or names, with the example value the error
    itself gives for it where the model's value is in another shape; ``{}`` otherwise.

    Why: an error that gives an example ("unknown destination 'Denmark': give the two-letter
    country code, e.g. 'FR'") says what shape the tool wants where no earlier tool's result
    does; a lesson that says only "check the arguments against what earlier tools returned"
    sends a model looking for a value no tool gives. The error's own example says the shape
    (what the model's value means in it is the model's to write: no stand-in can). An
    example the error writes unquoted counts where it shows a format
    (:func:`unquoted_example`: "dates look like 05.01.2026")."""
    found = _EXAMPLE.search(line)
    example = found.group(1).strip() if found is not None else next(
        (v for m in islice(UNQUOTED.finditer(line), SCANNED)
         if (v := unquoted_example(m, args, prompt))), "")
    named = {str(k): example for k, v in args.items() if isinstance(v, str) and v.strip()
             and (v.lower() in low or says(low, str(k)))
             and value_shape(v.strip()) != value_shape(example)}
    return named if example and len(named) == 1 else {}


def _renamed(before: Any, after: Any) -> Rename | None:
    """``doctor`` as ``clinician`` when ``after`` passed one value of ``before`` under a name
    ``before`` does not have (and that alone): the alternative's name for the same argument
    (:mod:`~toolcycle.playbook.carry`); else None."""
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    pairs = [(k, p) for p, v in new.items() if p not in old
             for k, w in old.items() if k not in new and str(w).strip() and str(w) == str(v)]
    return Rename(pairs[0][0], pairs[0][1]) if len(pairs) == 1 else None


def _grounded(call: CallEvidence, calls: list[CallEvidence], prompt: str) -> bool:
    """Whether every argument of ``call`` came from the prompt or an earlier result.

    An alternative called with a value from nowhere worked by a guess, and "call it instead"
    does not carry to the next task: a model that guessed a code after a lookup failed
    (``rate("XYZ")`` after ``find_code("Someland")``) would teach "find_code fails … Call
    rate(code) instead.", and a task shown it has no code to pass, so it loops between the
    two tools.
    """
    earlier = [c for c in calls if c.index < call.index]
    lowered = prompt.lower()
    return all(value.lower() in lowered or _source_of(value, prompt, earlier) is not None
               for value in arg_values(call.call.args))


def _changed_args(before: Any, after: Any) -> list[tuple[str, str]]:
    """The arguments of ``after`` whose value differs from ``before`` (as text)."""
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    return [(k, str(v)) for k, v in sorted(new.items()) if str(old.get(k)) != str(v)]


_DIGIT = re.compile(r"\d")


def shaped_values(trace: Trace, calls: list[CallEvidence], among: list[CallEvidence] | None = None,
                  ) -> dict[str, dict[str, str]]:
    """Per tool, the argument values of its good calls the model had to shape itself.

    A value with digits that is neither in the prompt nor in a result before the call (a date
    the model reformatted, a code it built) is the format the tool accepted: worth showing.
    One that carries the task's own words is not (:func:`~toolcycle.playbook.evidence.
    says_task_words`): it is the task's content, and other tasks would copy it.
    The call's own result and later ones do not count: tools often echo their arguments
    (a quote that repeats the date it was asked for). ``among`` limits the calls looked at
    (default: every good one).
    """
    prompt = (trace.user_prompt or "").lower()
    formats: dict[str, dict[str, str]] = {}
    for c in (among if among is not None else [c for c in calls if c.ok]):
        earlier = " ".join((e.call.result or "") for e in calls[:c.index] if e.ok).lower()
        for key, value in sorted((c.call.args or {}).items()):
            text = str(value)
            if (_DIGIT.search(text) and text.lower() not in prompt
                    and text.lower() not in earlier and not says_task_words(text, prompt)):
                formats.setdefault(c.call.name, {})[key] = unmistakable(text, prompt)
    return formats
