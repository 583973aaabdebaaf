"""``toolcycle trace list|show|html|export``: look at recorded runs without reading JSON.

``show`` prints the same timeline the HTML page draws, coloured with ``rich`` (the ``cli``
extra; :mod:`.trace_timeline`): iterations, thoughts, calls with arguments, observations, what
a stand-in did in place of a call, errors, tokens and timings.
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
from ..status import NOT_SUCCESS, RUN_STATUSES
from ..stores.postgres import is_postgres_url
from ..tracing.html import format_ms, format_time, render_comparison_html, render_html
from ..tracing.store import DEFAULT_PATH, ENV_VAR, TraceStore, TraceSummary
from ..tracing.trace import Trace
from ..tracing.trace import _clip as _clip
from ..tracing.values import tally
from .trace_timeline import STATUS_STYLES, _span_ms
from .trace_timeline import print_timeline as print_timeline  # its home before the split

if TYPE_CHECKING:
    from rich.console import Console


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


# -- helpers ----------------------------------------------------------------------------------


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


