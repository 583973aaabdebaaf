"""The ``pitfall`` lesson type: a failed call, its error class and its repair.

The error class is the first line of the error with values and numbers masked, so errors of
different tasks are one pitfall; the advice keeps an example the tool's own error gave
(:func:`shown_error`), and says what worked after it when the run shows it (another argument
shape, a prerequisite call, another tool) or what the tool's schema takes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..models.repair import INVALID_TOOL_NAME
from ..words import OUTAGE, REFUSING
from .applicability import described_words
from .evidence import (
    QUOTED,
    SCANNED,
    UNQUOTED,
    Repair,
    blames_arguments,
    stated_repair,
    supplied,
    unquoted_example,
)
from .lesson import RunEvidence
from .stats import timed_out
from .strategy import Argument, Insight, Strategy, UseVerdict

_VOLATILE = re.compile(r"'[^']*'|\"[^\"]*\"|\b\d+(\.\d+)?\b")
_NAMED = re.compile(r" for `[^`]+`")
_DIGIT = re.compile(r"\d")
#: An argument name worth repeating to the model (a schema quoted in an error is text a
#: stranger's tool or server may have written: nothing but names goes into advice).
_ARGUMENT_NAME = re.compile(r"[A-Za-z_][\w.-]{0,63}")
#: At most this many argument names in a schema repair.
_MAX_ARGUMENTS = 12


def normalise_error(error: str) -> str:
    """An error's class: first line, quoted values and numbers masked, at most 90 characters.
    ``error`` is the tool's own words (a trace's :meth:`~toolcycle.tracing.trace.
    ToolCallRecord.tool_error`, an exception's message): the loop's wrapping says nothing
    about the cause, and is never part of it.

    "unknown ticker 'ACME'" and "unknown ticker 'GLOBEX'" are the same pitfall. A first line
    that only announces a list ("Invalid arguments for `x`:", then "- (root): Additional
    properties are not allowed ('topic' was unexpected)") takes the list's first item: the
    header alone makes "x fails with: Invalid arguments for `x`:.", a lesson with nothing
    in it.
    """
    return _VOLATILE.sub("…", _first_line(error))[:90]


def _first_line(error: str) -> str:
    """The line of ``error`` that says what went wrong (see :func:`normalise_error`)."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    first = lines[0] if lines else "error"
    if first.endswith(":") and len(lines) > 1 and lines[1].startswith("- "):
        first = f"{_NAMED.sub('', first)} {lines[1][2:]}"  # the advice names the tool
    return first


def shown_error(error: str, args: Any = None, prompt: str = "") -> str:
    """An error as a pitfall's advice shows it: :func:`normalise_error`, but a value that
    neither the call's arguments nor the task supplied
    (:func:`~toolcycle.playbook.evidence.supplied`) is the tool's own words and is kept, so
    the advice carries the example the error gave: a quoted one when short and plain (up to
    24 letters, digits, spaces and ``.,:/+-``: the text is a tool's, and goes into later
    runs' prompts), an unquoted one when the error presents it as an example and it shows a
    format, a date's writing or a code's letters and digits
    (:func:`~toolcycle.playbook.evidence.unquoted_example`: "dates look like 05.01.2026").
    Every other number stays masked: a bare figure is most often this task's own.

    Why: the class masks every value (errors of different tasks are one pitfall), but the
    value an error gives as an example is the one part that shows the format: "unknown
    destination 'Portugal': give the two-letter country code, e.g. 'FR'" shown as "e.g. …",
    or "dates look like 05.01.2026" as "dates look like ….….", teaches nothing. The class
    stays what identifies the pitfall; this is its text.
    """
    kept: list[str] = []

    def hold(value: str) -> str:
        kept.append(value)
        return chr(_HOLD + len(kept) - 1)  # no digit: _VOLATILE must not see it

    def quoted(match: re.Match[str]) -> str:
        value = match.group(1) if match.group(1) is not None else match.group(2)
        if not _EXAMPLE.fullmatch(value) or supplied(value, args, prompt):
            return "…"
        return hold(match.group(0))

    scanned = 0

    def unquoted(match: re.Match[str]) -> str:
        nonlocal scanned
        scanned += 1
        if scanned > SCANNED:  # past what the advice shows: left to _VOLATILE
            return match[0]
        value = unquoted_example(match, args, prompt)
        if value is None:  # the task's own code ("ACME7") is masked whole, not its digits
            own = _DIGIT.search(match[0]) and supplied(match[0].rstrip("./+-"), args, prompt)
            return "…" if own else match[0]
        return hold(value) + match[0][len(value):]

    first = QUOTED.sub(quoted, _PRIVATE.sub("", _first_line(error)))
    text = _VOLATILE.sub("…", UNQUOTED.sub(unquoted, first))
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


def pitfall_advice(tool: str, error_class: str, repair: Repair | None, timeout: bool,
                   about_arguments: bool = True) -> str:
    """A failure mode and, when the run showed one, its repair (``about_arguments``: whether
    the error was, :func:`~toolcycle.playbook.evidence.blames_arguments`).

    A ``schema`` repair (the loop refused the arguments; no run showed a fix) leads with the
    call to make: a small model copies argument names from a look-alike tool it read
    (``topic`` where the tool takes none) and repeats the refused call; a lesson that says
    only that the call was refused keeps the model away from the very tool that holds the
    answer, where the call it should make is what it lacked."""
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
        return f"{failure}. Pass {Argument(repair.argument, repair.example)}."
    # (a value the alternative takes in its own shape is shown so: a probe's finding)
    given = [str(Argument(a, repair.example if a == repair.argument else ""))
             for a in repair.via_args]
    calls = [f"{repair.via}({', '.join(given)})", *repair.then]
    return f"{failure}. Call {', then '.join(calls)} instead."


# -- the LLM pass ------------------------------------------------------------------------


class Pitfalls:
    """The ``pitfall`` lesson: every failed call, keyed by its tool, its error class and its
    repair when the run shows one (so the advice says what to do, not only what to avoid),
    or, for arguments the loop refused (``error_type == "invalid_arguments"``), the
    arguments the tool's schema takes (a ``schema`` repair)."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        analysis, prompt, found = run.analysis, run.prompt, list[Insight]()
        seen: set[tuple[str, str]] = set()
        for c in analysis.calls:
            # a name no provider accepts is stood in for by one placeholder: no tool to warn of
            if c.status != "error" or (c.call.name, c.call.error or "") in seen or (
                    c.call.name == INVALID_TOOL_NAME):
                continue
            seen.add((c.call.name, c.call.error or ""))
            said = c.call.tool_error()  # the tool's words, not the loop's wrapping
            error_class = normalise_error(said)
            repair = analysis.repairs.get(c.index) or stated_repair(c, prompt)
            if repair is None and c.call.error_type == "invalid_arguments" and (
                    takes := expected_arguments((run.schemas or {}).get(c.call.name))):
                repair = Repair("schema", c.call.name, via_args=tuple(takes))
            tools = [c.call.name] + ([repair.via] if repair is not None and repair.via else [])
            shown = shown_error(said, c.call.args, prompt)
            blamed = blames_arguments(c.call.error or "", c.call.args)
            late = timed_out(c.call)
            advice = pitfall_advice(c.call.name, shown, repair, late, blamed)
            pitfall = run.pitfall(advice, tools, error_class, repair)
            pitfall.timed_out = late
            # another tool answered what this one refused this task's input for: where such
            # tasks are answered, not how the tool behaves (tool_lessons.py)
            pitfall.about_tool = not (blamed and repair is not None
                                      and repair.kind == "alternative")
            if run.descriptions:  # a task asking what the failing tool is for may call it
                pitfall.tool_words = described_words(analysis.keywords, [c.call.name],
                                                     run.descriptions)
            found.append(pitfall)
        return found

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        return None  # followed: its repair's tools called (outcome.use_verdict)

    def owns(self, strategy: Strategy) -> bool:
        return strategy.kind == "pitfall" and bool(strategy.tools)
