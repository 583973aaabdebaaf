"""``toolcycle playbook show|stats|learn|prune|export``: look into and maintain a playbook file.

``learn`` needs an agent: ``--agent module:attribute`` names an :class:`~toolcycle.Agent` (or a
zero-argument function returning one) importable from the current directory, and ``--tasks`` a
JSON list of ``{"id", "prompt", "expected"}``. The session name makes it resumable.

Strategies are written by a model from recorded runs, so what they say (and tool names) is
untrusted: every line printed here goes through :func:`~toolcycle._safe_text.terminal_safe`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from .._safe_text import terminal_safe
from ..playbook import Curator, LearningTask, Playbook, Strategy, learn
from ..playbook.routine import induce
from ..playbook.stats import compute_stats, format_table
from ..stores.postgres import is_postgres_url

DEFAULT_DB = "playbook.db"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("playbook", help="show, learn and maintain a playbook")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="playbook_command", metavar="COMMAND")

    show = commands.add_parser("show", help="list strategies, best first")
    _common(show)
    show.add_argument("--all", action="store_true", help="include retired strategies")
    show.add_argument("--candidates", action="store_true", help="also list pending patterns")
    show.set_defaults(handler=_show)

    stats = commands.add_parser("stats", help="per-tool reliability from recorded runs")
    _common(stats)
    stats.set_defaults(handler=_stats)

    learn_cmd = commands.add_parser("learn", help="run an agent over a task set and learn")
    _common(learn_cmd)
    learn_cmd.add_argument("--agent", required=True, help="module:attribute of the agent")
    learn_cmd.add_argument("--tasks", required=True, help="JSON file: [{id, prompt, expected}]")
    learn_cmd.add_argument("--session", default="default", help="resumable session name")
    learn_cmd.add_argument("--epochs", type=int, default=1)
    learn_cmd.set_defaults(handler=_learn)

    prune = commands.add_parser("prune", help="retire harmful, stale and excess strategies")
    _common(prune)
    prune.add_argument("--stale-days", type=float, default=30.0)
    prune.add_argument("--max-per-domain", type=int, default=100)
    prune.add_argument("--min-uses", type=int, default=4, help="uses before judging harm")
    prune.add_argument("--purge", action="store_true", help="delete retired strategies")
    prune.set_defaults(handler=_prune)

    export = commands.add_parser("export", help="write the playbook as JSON or Markdown")
    _common(export)
    export.add_argument("--format", choices=("json", "markdown"), default="json")
    export.add_argument("--all", action="store_true", help="include retired strategies")
    export.set_defaults(handler=_export)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=DEFAULT_DB, help="playbook file or postgresql:// URL "
                        f"(default {DEFAULT_DB})")
    parser.add_argument("--domain", help="only this domain (agent name)")


def _open(args: argparse.Namespace) -> Playbook:
    if str(args.db) != ":memory:" and not is_postgres_url(args.db) and not Path(args.db).exists():
        raise SystemExit(f"error: no playbook at {args.db}")
    try:
        return Playbook(args.db, learn=False)
    except ConnectionError as exc:
        raise SystemExit(terminal_safe(f"error: {exc}")) from None


def _row(s: Strategy) -> str:
    rate = f"{s.success_rate:.0%}" if s.success_rate is not None else "-"
    iters = f"{s.mean_iterations:.1f}" if s.mean_iterations is not None else "-"
    return (f"{s.id}  {s.status:<7} {s.kind:<8} domain={s.domain}  support={s.support} "
            f"helpful={s.helpful} harmful={s.harmful} success={rate} iterations={iters}\n"
            f"    {s.advice}\n    applies when: {', '.join(s.applies_when) or '-'}"
            + _routine_line(s) + (f"\n    note: {s.note}" if s.note else ""))


def _routine_line(s: Strategy) -> str:
    """The routine a sequence supports (Playbook(routines=True)) and its extraction rules;
    the anchors are tool output, shown quoted."""
    routine = induce(s)
    if routine is None:
        return ""
    rules = "; ".join(
        f"{f.arg} of {routine.tools[i + 1]} = the {json.dumps(f.key)} of the row of "
        f"{routine.tools[i]}'s result whose {json.dumps(f.by)} the task names" if f.by else
        f"{f.arg} of {routine.tools[i + 1]} = the text of {routine.tools[i]}'s result between "
        f"{json.dumps(f.left or '(start)')} and {json.dumps(f.right or '(end)')}"
        for i, f in enumerate(routine.feeds))
    return f"\n    routine: {routine.name}: {rules}"


def _show(args: argparse.Namespace) -> int:
    pb = _open(args)
    strategies = pb.strategies(args.domain, None if args.all else "active")
    strategies.sort(key=lambda s: s.score(), reverse=True)
    for s in strategies:
        print(terminal_safe(_row(s)))
    print(f"{len(strategies)} strategies")
    if args.candidates:
        for c in pb.store.candidates(args.domain):
            first = c["insights"][0]
            print(terminal_safe(f"pending: {first['kind']} {' > '.join(first['tools'])} "
                                f"({len(c['insights'])} runs)"))
    return 0


def _stats(args: argparse.Namespace) -> int:
    pb = _open(args)
    stats = compute_stats(pb.store.tool_observations(args.domain))
    print(terminal_safe(format_table(stats)) if stats else "no tool calls recorded")
    return 0


def _load_agent(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    if not attribute:
        raise SystemExit("error: --agent must be module:attribute")
    sys.path.insert(0, str(Path.cwd()))
    obj = getattr(importlib.import_module(module_name), attribute)
    return obj() if callable(obj) and not hasattr(obj, "run") else obj


def _learn(args: argparse.Namespace) -> int:
    agent = _load_agent(args.agent)
    items = json.loads(Path(args.tasks).read_text())
    tasks = [LearningTask.coerce(t, i) for i, t in enumerate(items)]
    pb = Playbook(args.db, domain=args.domain)
    report = asyncio.run(learn(tasks, agent, playbook=pb, session=args.session,
                               epochs=args.epochs))
    pb.close()
    print(f"{len(report.outcomes)} tasks ({report.skipped} done earlier), "
          f"success {report.success_rate:.0%}")
    return 0


def _prune(args: argparse.Namespace) -> int:
    pb = _open(args)
    curator = Curator(stale_after_s=args.stale_days * 86400, max_per_domain=args.max_per_domain,
                      retire_min_uses=args.min_uses)
    domains = [args.domain] if args.domain else sorted({s.domain for s in pb.strategies()})
    for domain in domains:
        for delta in curator.retire(pb.store, domain, now=time.time()):
            print(terminal_safe(f"{delta.op} {delta.strategy_id}: {delta.detail}"))
    if args.purge:
        retired = [s.id for s in pb.strategies(args.domain, "retired")]
        pb.store.delete(retired)
        print(f"deleted {len(retired)} retired strategies")
    return 0


def _export(args: argparse.Namespace) -> int:
    pb = _open(args)
    strategies = pb.strategies(args.domain, None if args.all else "active")
    if args.format == "json":
        print(json.dumps([s.to_dict() for s in strategies], indent=1))
        return 0
    by_domain: dict[str, list[Strategy]] = {}
    for s in strategies:
        by_domain.setdefault(s.domain, []).append(s)
    for domain, items in sorted(by_domain.items()):
        print(terminal_safe(f"## {domain}\n"))
        for s in sorted(items, key=lambda s: s.score(), reverse=True):
            print(terminal_safe(s.render()))
        print()
    return 0
