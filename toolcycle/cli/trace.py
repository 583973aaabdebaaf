"""``toolcycle trace list|show|html|export``: look at recorded runs without reading JSON.

``show`` prints the same timeline the HTML page draws, coloured with ``rich`` (the ``cli``
extra): iterations, thoughts, calls with arguments, observations, errors, tokens and timings.
Colours follow the terminal (``--no-color`` or ``NO_COLOR`` turn them off), so the output can
also be pasted into an issue. Bulk exports show a progress bar on stderr.

Everything recorded is untrusted (a tool result may be a hostile web page): it is printed only
inside ``rich.text.Text`` objects, never parsed as markup, and through
:func:`~toolcycle._safe_text.terminal_safe`, so no escape sequence reaches the terminal, with or
without colour. Exports escape C1 and bidi characters the same way inside their JSON strings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._safe_text import json_safe, terminal_safe
from ..status import NOT_SUCCESS, RETURNED_MEANINGS, RUN_STATUSES
from ..stores.postgres import is_postgres_url
from ..tracing.html import format_ms, format_time, render_comparison_html, render_html
from ..tracing.store import DEFAULT_PATH, ENV_VAR, TraceStore, TraceSummary
from ..tracing.trace import Step, ToolCallRecord, Trace, offered_text
from ..tracing.trace import _clip as _clip
from ..tracing.values import (
    approval_text,
    finite,
    money,
    pause_rows,
    recorded_cost,
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
    "tool_error": "bold red",
    "failure": "bold red",
    "crashed": "bold red",
    "cancelled": "bold yellow",
    "running": "bold yellow",
    "paused": "bold magenta",
}


def _statuses(text: str) -> list[str]:
    """``--status``: one status or several, comma-separated, each a word of the vocabulary."""
    wanted = [word.strip() for word in text.split(",") if word.strip()]
    unknown = [word for word in wanted if word not in RUN_STATUSES]
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(
            f"unknown status {', '.join(unknown) or repr(text)}: use {', '.join(RUN_STATUSES)}")
    return wanted


def _status_filter(args: argparse.Namespace) -> list[str] | None:
    """The statuses ``--status`` and ``--failed`` ask for (None: every run)."""
    wanted = list(args.status or [])
    if args.failed:
        wanted += sorted(NOT_SUCCESS)
    return wanted or None


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("trace", help="list, show, and export recorded runs")
    commands = parser.add_subparsers(dest="trace_command", metavar="ACTION", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--db", help="trace database, a SQLite path or a postgresql:// URL "
                         f"(default: ${ENV_VAR} or {DEFAULT_PATH})")

    ls = commands.add_parser("list", help="recent runs, newest first")
    common(ls)
    ls.add_argument("--agent", help="only runs of this agent")
    _filters(ls)
    ls.add_argument("--since", help="only runs started since: 30m, 12h, 7d or an ISO date")
    ls.add_argument("--limit", type=int, default=50, help="at most this many rows (default 50)")
    ls.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    ls.set_defaults(handler=_list)

    show = commands.add_parser("show", help="a coloured timeline of one run")
    common(show)
    show.add_argument("run", help="run id (a unique prefix is enough)")
    show.add_argument("--no-color", action="store_true", help="plain text, no colours")
    show.add_argument("--max-chars", type=int, default=400, help="clip long texts (default 400)")
    show.add_argument("--width", type=int, default=None, help="wrap at this many columns")
    show.set_defaults(handler=_show)

    html = commands.add_parser("html", help="write a self-contained HTML page for a run")
    common(html)
    html.add_argument("run", help="run id (a unique prefix is enough)")
    html.add_argument("--compare", metavar="RUN", help="a second run to show side by side")
    html.add_argument("-o", "--output", required=True, help="the .html file to write")
    html.set_defaults(handler=_html)

    export = commands.add_parser("export", help="export runs as JSON")
    common(export)
    export.add_argument("runs", nargs="*", help="run ids; none with --all")
    export.add_argument("--all", action="store_true", help="every run matching the filters")
    export.add_argument("--agent")
    _filters(export)
    export.add_argument("--since")
    export.add_argument("--format", choices=["json", "jsonl"], default="json")
    export.add_argument("-o", "--output", help="file to write (default: stdout)")
    export.set_defaults(handler=_export)


def _filters(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--status", type=_statuses, metavar="STATUS[,STATUS]",
                     help=f"only runs with these statuses: {', '.join(RUN_STATUSES)}")
    sub.add_argument("--failed", action="store_true", help="only runs that ended without "
                     "succeeding (every status but success and running: forced, tool_error...)")


# -- handlers -----------------------------------------------------------------------------------


def _open_store(args: argparse.Namespace) -> TraceStore | None:
    location = args.db or os.environ.get(ENV_VAR) or DEFAULT_PATH
    if is_postgres_url(location):  # a database the store creates its tables in
        try:
            return TraceStore(location)
        except ConnectionError as exc:
            print(terminal_safe(f"toolcycle trace: {exc}"), file=sys.stderr)
            return None
    path = Path(location).expanduser()
    if not path.exists():
        print(f"toolcycle trace: no trace database at {path}", file=sys.stderr)
        return None
    return TraceStore(path)


def _load(store: TraceStore, run_id: str) -> Trace | None:
    try:
        trace = store.get(run_id)
    except KeyError as exc:
        print(f"toolcycle trace: {exc.args[0]}", file=sys.stderr)
        return None
    except (TypeError, ValueError, AttributeError) as exc:  # a crafted or corrupt row
        print(terminal_safe(f"toolcycle trace: run {run_id!r} in {store.path} cannot be read: "
                            f"{type(exc).__name__}: {exc}"), file=sys.stderr)
        return None
    if trace is None:
        print(f"toolcycle trace: no run {run_id!r} in {store.path}", file=sys.stderr)
    return trace


def _list(args: argparse.Namespace) -> int:
    location = args.db or os.environ.get(ENV_VAR) or DEFAULT_PATH
    if not is_postgres_url(location) and not Path(location).expanduser().exists():
        print(f"no runs recorded yet: no trace database at {Path(location).expanduser()} "
              "(toolcycle run records each run there)", file=sys.stderr)
        return 0
    store = _open_store(args)
    if store is None:
        return 1
    with store:
        try:
            rows = store.list(agent=args.agent, status=_status_filter(args),
                              since=args.since, limit=args.limit)
        except ValueError as exc:
            print(f"toolcycle trace: {exc}", file=sys.stderr)
            return 2
    if not rows:  # said where the table would be; JSON lines stay data (none), it goes to stderr
        filtered = args.agent or args.status or args.since
        print("no runs match" if filtered else "no runs recorded yet",
              file=sys.stderr if args.json else sys.stdout)
        return 0
    if args.json:
        for row in rows:
            print(json_safe(json.dumps({**_summary_dict(row), "duration_ms": _span_ms(row)},
                                       default=str, ensure_ascii=False)))
        return 0
    console = _console(no_color=False)  # first: it explains a missing rich
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, header_style="bold", pad_edge=False)
    rendered = [tuple(terminal_safe(cell) for cell in (
        row.run_id, row.agent_name, row.status, format_time(row.started_at)[:16],
        str(row.iterations), f"{tally(row.input_tokens)}/{tally(row.output_tokens)}",
        "-" if row.ended_at is None else format_ms(_span_ms(row)),
        row.termination_reason or row.error_code or "-", row.prompt or "-", row.answer or "-",
    )) for row in rows]
    # the run id is what `trace show` takes: never clipped; long texts give way first
    table.add_column("run", no_wrap=True, min_width=max(len(r[0]) for r in rendered))
    for column in ("agent", "status", "started (UTC)", "iter", "tokens in/out", "duration"):
        table.add_column(column, no_wrap=True)
    table.add_column("termination", overflow="ellipsis", no_wrap=True, min_width=8)
    # what tells runs apart: the prompt and the answer, one clipped line each
    for headline in ("prompt", "answer"):
        table.add_column(headline, overflow="ellipsis", no_wrap=True, min_width=10, max_width=48)
    for row, cells in zip(rows, rendered, strict=True):
        # Text cells: a name like "billing[/x]" is shown as written, not parsed as markup
        table.add_row(*(Text(cell, style=STATUS_STYLES.get(row.status, "") if i == 2 else "")
                        for i, cell in enumerate(cells)))
    if not console.is_terminal:  # piped: do not squeeze the table to the 80-column default
        console.width = 200
    console.print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    traces = _load_named(args, args.run)
    if traces is None:
        return 1
    console = _console(no_color=args.no_color, width=args.width)
    print_timeline(traces[0], console, max_chars=args.max_chars)
    return 0


def _html(args: argparse.Namespace) -> int:
    traces = _load_named(args, args.run, *([args.compare] if args.compare else []))
    if traces is None:
        return 1
    page = render_comparison_html(*traces) if len(traces) == 2 else render_html(traces[0])
    Path(args.output).write_text(page, encoding="utf-8")
    print(f"wrote {args.output} ({len(page):,} bytes)", file=sys.stderr)
    return 0


def _load_named(args: argparse.Namespace, *run_ids: str) -> list[Trace] | None:
    """The named runs from the store of ``args``; ``None`` (after saying why) if any is missing."""
    store = _open_store(args)
    if store is None:
        return None
    with store:
        traces = [_load(store, run_id) for run_id in run_ids]
    found = [t for t in traces if t is not None]
    return found if len(found) == len(run_ids) else None


def _export(args: argparse.Namespace) -> int:
    if not args.runs and not args.all:
        print("toolcycle trace export: name run ids or pass --all", file=sys.stderr)
        return 2
    store = _open_store(args)
    if store is None:
        return 1
    with store:
        run_ids = list(args.runs)
        if args.all:
            try:
                rows = store.list(agent=args.agent, status=_status_filter(args),
                                  since=args.since, limit=None)
            except ValueError as exc:
                print(f"toolcycle trace: {exc}", file=sys.stderr)
                return 2
            run_ids.extend(row.run_id for row in rows)
        traces = _load_with_progress(store, run_ids)
    if traces is None:
        return 1
    if args.format == "jsonl":
        text = "".join(t.to_json() + "\n" for t in traces)
    elif len(traces) == 1 and not args.all:
        text = traces[0].to_json(indent=2) + "\n"
    else:
        text = json.dumps([t.to_dict() for t in traces], indent=2, ensure_ascii=False,
                          default=str) + "\n"
    text = json_safe(text)  # the same data; no raw C1 or bidi character reaches a terminal
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"exported {len(traces)} run(s) to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _load_with_progress(store: TraceStore, run_ids: list[str]) -> list[Trace] | None:
    """Load traces, with a progress bar on an interactive stderr when there are many."""
    err = _console(no_color=False, stderr=True)  # first: it explains a missing rich
    from rich.progress import Progress

    traces: list[Trace] = []
    with Progress(console=err, transient=True,
                  disable=len(run_ids) < 20 or not err.is_terminal) as progress:
        task = progress.add_task("loading traces", total=len(run_ids))
        for run_id in run_ids:
            trace = _load(store, run_id)
            if trace is None:
                return None
            traces.append(trace)
            progress.advance(task)
    return traces


# -- the timeline -----------------------------------------------------------------------------


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


# -- helpers ----------------------------------------------------------------------------------


def _span_ms(run: Trace | TraceSummary) -> float | None:
    """A run's duration, or None when a crafted store holds no numbers for its times."""
    start, end = finite(run.started_at), finite(run.ended_at)
    return None if start is None or end is None else (end - start) * 1000.0


def _shown(text: object, max_chars: int) -> str:
    """Recorded text as the timeline prints it: clipped, then made terminal-safe."""
    return terminal_safe(_clip(str(text), max_chars))


def _console(no_color: bool, width: int | None = None, stderr: bool = False) -> Console:
    try:
        from rich.console import Console
    except ImportError:  # the CLI's extra is not installed: say how to get it
        raise SystemExit("toolcycle trace needs rich: pip install 'toolcycle[cli]'") from None

    plain = no_color or bool(os.environ.get("NO_COLOR"))
    return Console(no_color=plain, color_system=None if plain else "auto", width=width,
                   stderr=stderr, highlight=False, emoji=False)


def _summary_dict(row: TraceSummary) -> dict[str, Any]:
    return {name: getattr(row, name) for name in row.__slots__}


