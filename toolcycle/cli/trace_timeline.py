"""``toolcycle trace show``'s timeline: a recorded run printed with ``rich``, the terminal twin
of the HTML page (iterations, thoughts, calls with their arguments, observations, approvals,
what a stand-in did in place of a call, errors, tokens, timings).

Everything recorded is untrusted: it is printed only inside ``rich.text.Text`` objects, never
parsed as markup, and through :func:`~toolcycle._safe_text.terminal_safe`, so no escape
sequence reaches the terminal, with or without colour.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._safe_text import terminal_safe
from ..status import RETURNED_MEANINGS
from ..tracing.html import format_ms, format_time
from ..tracing.store import TraceSummary
from ..tracing.trace import Step, ToolCallRecord, Trace, _clip, offered_text
from ..tracing.values import (
    approval_text,
    finite,
    money,
    pause_rows,
    recorded_cost,
    stand_in_text,
    tally,
    unpriced,
)

if TYPE_CHECKING:
    from rich.console import Console

#: Green only for a run that did what was asked (docs/status.md): a forced or partial answer
#: is amber, a tool's error passed through red, as in the HTML viewer.
STATUS_STYLES = {
    "success": "bold green",
    "forced": "bold yellow",
    "partial": "bold yellow",
    "ungrounded": "bold yellow",
    "mismatched": "bold yellow",
    "tool_error": "bold red",
    "failure": "bold red",
    "crashed": "bold red",
    "cancelled": "bold yellow",
    "running": "bold yellow",
    "paused": "bold magenta",
}


def print_timeline(trace: Trace, console: Console, *, max_chars: int = 400) -> None:
    """Print a run as a readable timeline (the terminal twin of the HTML page)."""
    from rich.rule import Rule
    from rich.text import Text

    safe = terminal_safe
    head = Text.assemble(
        ("run ", "dim"), (safe(trace.run_id), "bold"), ("  agent ", "dim"),
        (safe(trace.agent_name), "bold"), ("  model ", "dim"), safe(trace.model_name or "unknown"),
        ("  status ", "dim"), (safe(trace.status), STATUS_STYLES.get(trace.status, "")),
    )
    console.print(head)
    ended = format_ms(_span_ms(trace)) if trace.ended_at is not None else "no end recorded"
    console.print(Text(f"started {format_time(trace.started_at)} · {ended}", style="dim"))
    if trace.user_prompt:
        console.print(Text.assemble(("user: ", "bold"), _shown(trace.user_prompt, max_chars)))
    if trace.tools_offered is not None:
        console.print(Text.assemble(("tools offered (tool selection): ", "bold"),
                                    _shown(offered_text(trace.tools_offered), max_chars)))
    attempt: int | None = None
    for step in trace.steps:
        if step.attempt != attempt:
            if attempt is not None:
                _print_validation(trace, attempt, console)
            attempt = step.attempt
            console.print(Rule(Text(safe(f"attempt {attempt}")), align="left", style="dim"))
        _print_step(step, console, max_chars, trace.model_name)
    if attempt is not None:
        _print_validation(trace, attempt, console)
    for pause in trace.pauses:
        _print_pause(pause, console)
    console.print(Rule(style="dim"))
    term = trace.termination or {}
    if term:
        line = Text.assemble(("termination: ", "bold"), safe(term.get("reason")))
        if term.get("action"):
            line.append(safe(f" ({term['action']})"))
        if term.get("detail"):
            line.append(safe(f" · {term['detail']}"), style="dim")
        console.print(line)
        said = RETURNED_MEANINGS.get(trace.status) if isinstance(trace.status, str) else None
        if said:  # an output that looks like an answer, and is not one
            console.print(Text.assemble((f"status {trace.status}: ", "bold"),
                                        (said, STATUS_STYLES[trace.status])))
    elif trace.status in ("crashed", "running"):
        console.print(Text.assemble(("termination: ", "bold"), (
            "none: the run's process ended without finishing it" if trace.status == "crashed"
            else "none yet: the run is in progress", "yellow")))
    if trace.error:
        console.print(Text.assemble(("error: ", "bold red"), (
            safe(f"{trace.error.get('code', '')}: {trace.error.get('message', '')}"), "red")))
    u = trace.usage
    cost = recorded_cost(u.cost, trace.metadata)
    missing = unpriced(trace.metadata)
    console.print(Text(
        f"usage: {u.requests} requests · {u.tool_calls} tool calls · tokens in "
        f"{tally(u.input_tokens)} / out {tally(u.output_tokens)} · cache read "
        f"{tally(u.cache_read_tokens)} / write {tally(u.cache_write_tokens)}",
        style="dim",
    ))
    console.print(Text(f"cost: {money(cost)}" + (
        safe(f" (no price for {', '.join(missing)})") if cost is None and missing else ""),
        style="dim"))
    if trace.output is not None:
        output = trace.output if isinstance(trace.output, str) else json.dumps(
            trace.output, ensure_ascii=False, default=str)
        console.print(Text.assemble(("output: ", "bold green"), _shown(output, max_chars)))


def _print_step(step: Step, console: Console, max_chars: int,
                trace_model: str | None = None) -> None:
    from rich.text import Text

    title = Text.assemble((f"iteration {step.iteration}", "bold cyan"))
    if step.forced:
        title.append(" forced final answer", style="yellow")
    if step.model and step.model != trace_model:  # a FallbackModel's answering model
        title.append(f" answered by {terminal_safe(step.model)}", style="magenta")
    title.append(
        f"  model {format_ms(step.model_ms)} · tools {format_ms(step.tools_ms)} · tokens in "
        f"{tally(step.usage.input_tokens)} / out {tally(step.usage.output_tokens)}",
        style="dim",
    )
    console.print(title)
    if step.thinking:
        console.print(Text(f"  thinking: {_shown(step.thinking, max_chars)}", style="dim italic"))
    for earlier in step.asked_again:  # a reply the model was asked again after
        console.print(Text(f"  asked again after: {_shown(earlier, max_chars)}", style="dim"))
    if step.thought:
        console.print(Text.assemble("  ", ("thought: ", "bold"), _shown(step.thought, max_chars)))
    for call in step.tool_calls:
        _print_call(call, console, max_chars)


def _print_call(call: ToolCallRecord, console: Console, max_chars: int) -> None:
    from rich.text import Text

    args = json.dumps(call.args, ensure_ascii=False) if call.args is not None else "?"
    failed = call.error is not None
    line = Text.assemble(
        "  ", ("→ ", "red" if failed else "magenta"), (terminal_safe(call.name), "bold"), " ",
        _shown(args, max_chars),
        (terminal_safe(f"  [{call.call_id}] {format_ms(call.duration_ms)}"), "dim"),
    )
    if call.kind != "tool":
        line.append(terminal_safe(f" ({call.kind})"), style="dim")
    console.print(line)
    approval = call.approval
    if approval is not None:
        denied = isinstance(approval, dict) and approval.get("decision") == "denied"
        console.print(Text.assemble("    ", ("⚑ ", "yellow" if denied else "magenta"), (
            terminal_safe(approval_text(approval).removeprefix("approval: ")),
            "bold yellow" if denied else "magenta")))
    if failed:
        console.print(Text.assemble("    ", ("✗ ", "bold red"),
                                    (_shown(call.error or "", max_chars), "red")))
    else:
        console.print(Text.assemble("    ", ("← ", "green"), _shown(call.result or "", max_chars)))
    if call.stand_in is not None:
        _print_stand_in(call.stand_in, console, max_chars)


def _print_stand_in(stand_in: object, console: Console, max_chars: int) -> None:
    """What a stand-in did in place of the call: its kind and outcome, then each call it made
    (the observation above is its answer)."""
    from rich.text import Text

    head, steps = stand_in_text(stand_in)
    console.print(Text.assemble("    ", ("↳ ", "cyan"), (terminal_safe(head), "cyan")))
    for step in steps:
        console.print(Text.assemble("      ", _shown(step, max_chars)))


def _print_pause(pause: dict[str, Any], console: Console) -> None:
    """A pause for approvals: which calls waited and what the person answered."""
    from rich.text import Text

    resumed = pause.get("resumed_at") if isinstance(pause, dict) else None
    paused_at = pause.get("paused_at") if isinstance(pause, dict) else None
    iteration = pause.get("iteration") if isinstance(pause, dict) else None
    console.print(Text.assemble(
        ("⏸ paused ", "bold magenta"),
        terminal_safe(f"at iteration {iteration} for approval"),
        (f" · resumed after {format_ms((resumed - paused_at) * 1000.0)}"
         if isinstance(resumed, int | float) and isinstance(paused_at, int | float)
         else " · not resumed", "dim")))
    for tool_name, call_id, _, answer in pause_rows(pause):
        verdict = answer.get("decision", "waiting") if answer is not None else "waiting"
        reason = f": {answer['reason']}" if answer is not None and answer.get("reason") else ""
        console.print(Text.assemble(
            "    ", (terminal_safe(str(tool_name)), "bold"),
            (terminal_safe(f" [{call_id}] "), "dim"),
            terminal_safe(f"{verdict}{reason}")))


def _print_validation(trace: Trace, attempt: int, console: Console) -> None:
    from rich.text import Text

    for record in trace.attempts:
        if record.attempt == attempt and record.errors:
            colour = "yellow" if record.validation_failed else "red"
            console.print(Text.assemble(
                ("  ✗ ", f"bold {colour}"),
                (terminal_safe(f"attempt {attempt} {record.outcome}: "), colour),
                terminal_safe("; ".join(map(str, record.errors)))))


# -- helpers -----------------------------------------------------------------------------------


def _span_ms(run: Trace | TraceSummary) -> float | None:
    """A run's duration, or None when a crafted store holds no numbers for its times."""
    start, end = finite(run.started_at), finite(run.ended_at)
    return None if start is None or end is None else (end - start) * 1000.0


def _shown(text: object, max_chars: int) -> str:
    """Recorded text as the timeline prints it: clipped, then made terminal-safe."""
    return terminal_safe(_clip(str(text), max_chars))

