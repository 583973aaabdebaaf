"""``toolcycle batch SPEC --tools MODULE --inputs in.jsonl --out out.jsonl [--ray [ADDRESS]]``.

Runs the bound spec over every input line and writes one JSON record per line to ``--out``
(docs/scaling.md), each as its run ends, in input order once all are there. A rerun skips the
lines ``--out`` already has a record for; ``--retry-errors`` reruns the failed ones and
``--resume`` with ``--approve``/``--deny``/``--approvals`` continues the paused ones. Prints a
summary on stderr; exits 0 when every input has a record (failed and paused runs are records,
not command errors), 2 when the spec, the tools or the files cannot be used, or another batch
is writing ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..batch import BatchApprovals, BatchFileError, BatchRecipe, BatchReport, run_batch
from ._loading import CommandError, guarded


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("batch", help="run an agent spec over every line of a file")
    parser.add_argument("spec", help="AGENT.gram or AGENT.json")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE",
                        help="python module (or .py file) with the implementations; repeatable")
    parser.add_argument("--inputs", required=True, metavar="IN.jsonl",
                        help='one input per line: "message" or {"input": ..., "id": ...}')
    parser.add_argument("--out", required=True, metavar="OUT.jsonl",
                        help="one record per input (in input order at the end); reruns resume")
    parser.add_argument("--model", help="model string (default: the spec's model)")
    parser.add_argument("--max-iterations", type=int, help="override the spec's limit")
    parser.add_argument("--concurrency", type=int, default=8, metavar="N",
                        help="inputs run at once (per Ray task with --ray; default 8)")
    parser.add_argument("--ray", nargs="?", const=True, default=None, metavar="ADDRESS",
                        help="run on Ray: alone, start a local Ray; with ADDRESS, join it")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="CPUs of the local Ray started by --ray (default: all)")
    parser.add_argument("--chunk-size", type=int, default=8, metavar="N",
                        help="inputs per Ray task (default 8)")
    parser.add_argument("--trace-db", metavar="PATH",
                        help="SQLite path or postgresql:// URL the traces go to")
    parser.add_argument("--no-trace", action="store_true", help="record no traces")
    parser.add_argument("--playbook", metavar="PATH",
                        help="SQLite path or postgresql:// URL of a playbook to use and learn into")
    again = parser.add_argument_group("resuming, retrying and approving")
    again.add_argument("--resume", action="store_true",
                       help="continue the batch in --out (it must exist): run the inputs "
                            "without a record, resume the paused ones the decisions answer")
    again.add_argument("--retry-errors", action="store_true",
                       help="run the inputs whose record failed again (the new record "
                            "replaces the old)")
    again.add_argument("--approve", action="append", default=[], metavar="WHICH",
                       help="with --resume: approve the pending calls of 'all' paused inputs, "
                            "of input LINE, or LINE:CALL_ID; repeatable")
    again.add_argument("--deny", action="append", default=[], metavar="WHICH",
                       help="with --resume: deny them (as --approve); repeatable")
    again.add_argument("--deny-reason", metavar="TEXT",
                       help="what the model is told about a call --deny denies")
    again.add_argument("--snapshot-ledger", metavar="PATH",
                       help="SQLite path or postgresql:// URL of the ledger of consumed "
                            "snapshots the resumes claim in (default: this machine's)")
    again.add_argument("--approvals", metavar="FILE",
                       help='with --resume: decisions as JSON lines, {"line": 3, "call_id": '
                            '"call_1", "approve": true} or {"line": 3, "deny": "why"}')
    parser.set_defaults(handler=_batch)


@guarded
def _batch(args: argparse.Namespace) -> int:
    approvals = _approvals(args)
    store: str | bool = False if args.no_trace else (args.trace_db or True)
    recipe = BatchRecipe.from_files(args.spec, args.tools, model=args.model,
                                    trace_store=store, playbook=args.playbook,
                                    max_iterations=args.max_iterations,
                                    snapshot_ledger=args.snapshot_ledger)
    try:
        report = run_batch(recipe, args.inputs, args.out, concurrency=args.concurrency,
                           ray=args.ray, workers=args.workers, chunk_size=args.chunk_size,
                           retry_errors=args.retry_errors, approvals=approvals)
    except (BatchFileError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    _summary(report, args.out)
    return 0


def _approvals(args: argparse.Namespace) -> BatchApprovals | None:
    """The decisions given, checked before anything runs (they need --resume)."""
    given = args.approve or args.deny or args.approvals is not None
    if given and not args.resume:
        raise CommandError("--approve, --deny and --approvals resume paused inputs: add "
                           "--resume")
    if args.deny_reason is not None and not args.deny:
        raise CommandError("--deny-reason needs --deny")
    if args.resume and not os.path.exists(args.out):
        raise CommandError(f"nothing to resume: {args.out} does not exist")
    if not given:
        return None
    return BatchApprovals.from_options(args.approve, args.deny, args.deny_reason,
                                       args.approvals)


def _summary(report: BatchReport, out: str) -> None:
    extra = (f", {report.retried} retried" if report.retried else "") + (
        f", {report.resumed} resumed" if report.resumed else "")
    by_status = ", ".join(f"{n} {status}" for status, n in report.statuses.items())
    print(f"{report.written} records written to {out} ({report.skipped} already there, "
          f"{report.errors} errors, {report.malformed} malformed lines{extra}; by status: "
          f"{by_status or 'none'}) in {report.seconds:.1f} s", file=sys.stderr)
    holds = ", ".join(f"{count} {status}" for status, count in report.holds.items())
    print(f"{out} now holds: {holds or 'no records'}", file=sys.stderr)
    if report.paused:
        print(f"{report.paused} paused inputs wait for approval: see their 'pending' calls in "
              f"{out}, then rerun with --resume and --approve/--deny/--approvals",
              file=sys.stderr)
