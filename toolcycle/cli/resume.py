"""``toolcycle resume SNAPSHOT --approve ID | --deny ID:REASON``: continue a paused run.

``SNAPSHOT`` is a JSON file (``-`` for stdin): a run snapshot, or the object ``toolcycle run
--json`` prints when a run pauses (its ``snapshot``, and under ``resume`` the spec, tool modules
and model it ran with, so they need not be given again). Every pending call needs one answer:
``--approve CALL_ID`` runs it, ``--deny CALL_ID:REASON`` refuses it with that reason. Each
answer is bound to the snapshot's pending call (its run and arguments), and the snapshot is
consumed by the resume: a second resume of the same snapshot, here or in any process sharing
the ledger (``$TOOLCYCLE_SNAPSHOT_LEDGER``), is refused with a one-line error and exit status 2
before anything runs. A resumed run that pauses again prints what waits and exits with 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._safe_text import terminal_safe
from ..agent_stream import thread_runner
from ..approval import ApprovalAnswer, bind_to_snapshot
from ..errors import AgentError, SnapshotConsumed
from ._loading import CommandError, guarded, load_library, load_spec, resolve_model_argument
from ._progress import progress_on_stderr
from .run import print_outcome, trace_store_argument


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("resume", help="continue a paused run with a person's answers")
    parser.add_argument("snapshot", help="the paused run's snapshot (JSON file, - for stdin), or "
                        "what `toolcycle run --json` printed when it paused")
    parser.add_argument("--approve", action="append", default=[], metavar="CALL_ID",
                        help="run this pending call; repeatable")
    parser.add_argument("--deny", action="append", default=[], metavar="CALL_ID:REASON",
                        help="refuse this pending call with REASON; repeatable")
    parser.add_argument("--spec", help="AGENT.gram or AGENT.json (default: the one recorded by "
                        "`toolcycle run --json`)")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE",
                        help="python module (or .py file) with the implementations; repeatable")
    parser.add_argument("--model", help="model string (default: the recorded one, else the "
                        "spec's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--trace-db", metavar="PATH",
                        help="where the trace is recorded (a SQLite path or postgresql:// URL)")
    parser.add_argument("--no-trace", action="store_true", help="record no trace")
    parser.set_defaults(handler=_resume)


@guarded
def _resume(args: argparse.Namespace) -> int:
    document = _read(args.snapshot)
    snapshot = document.get("snapshot", document) if "format" not in document else document
    if not isinstance(snapshot, dict):
        raise CommandError(f"{args.snapshot}: no run snapshot in it")
    recorded: dict[str, Any] = document.get("resume") or {}
    if not isinstance(recorded, dict):
        raise CommandError(f"{args.snapshot}: 'resume' must be an object")
    spec_path = args.spec or recorded.get("spec")
    if not isinstance(spec_path, str):
        raise CommandError("which agent resumes? give --spec (and --tools): the snapshot does "
                           "not record them")
    tools = args.tools or [t for t in recorded.get("tools", []) if isinstance(t, str)]
    model = args.model or (recorded.get("model") if isinstance(recorded.get("model"), str)
                           else None)
    answers = _answers(snapshot, args.approve, args.deny)
    agent = load_spec(spec_path).bind(load_library(tools), model=resolve_model_argument(model),
                                      trace_store=trace_store_argument(args))
    try:
        with progress_on_stderr() as callbacks:
            result = agent.resume_sync(snapshot, answers, callbacks=callbacks)
    except SnapshotConsumed as exc:
        print(terminal_safe(f"error: {exc}"), file=sys.stderr)
        return 2
    except AgentError as exc:
        print(terminal_safe(f"error: {exc}"), file=sys.stderr)
        return 1
    finally:
        thread_runner().run(agent.close())
    return print_outcome(result, args, {"spec": spec_path, "tools": tools, "model": model})


def _read(where: str) -> dict[str, Any]:
    try:
        text = sys.stdin.read() if where == "-" else Path(where).read_text(encoding="utf-8")
        document = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"cannot read the snapshot {where}: {exc}") from None
    if not isinstance(document, dict):
        raise CommandError(f"{where}: a snapshot is a JSON object")
    return document


def _answers(snapshot: dict[str, Any], approve: list[str], deny: list[str]
             ) -> dict[str, ApprovalAnswer]:
    """The person's answers, each bound to the snapshot's pending call of that id (the
    resume then checks them all against the checked snapshot and lists every problem)."""
    wanted: dict[str, bool | str] = dict.fromkeys(approve, True)
    for item in deny:
        call_id, colon, reason = item.partition(":")
        if not colon or not reason.strip():
            raise CommandError(f"--deny {item!r}: write CALL_ID:REASON")
        if call_id in wanted:
            raise CommandError(f"{call_id}: both approved and denied")
        wanted[call_id] = reason.strip()
    if not wanted:
        pending = snapshot.get("pending")
        ids = [str(p.get("call_id")) for p in pending if isinstance(p, dict)] \
            if isinstance(pending, list) else []
        raise CommandError("answer the pending calls: --approve CALL_ID or --deny "
                           f"CALL_ID:REASON (pending: {', '.join(ids) or 'none'})")
    return bind_to_snapshot(snapshot, wanted)
