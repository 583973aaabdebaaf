"""``toolcycle batch SPEC --tools MODULE --inputs in.jsonl --out out.jsonl [--ray [ADDRESS]]``.

Runs the bound spec over every input line and appends one JSON record per line to ``--out``
(docs/scaling.md). A rerun skips the lines ``--out`` already has a record for. Prints a summary
line on stderr; exits 0 when every input ran (failed runs are records, not command errors),
2 when the spec, the tools or the files cannot be used.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..batch import BatchFileError, BatchRecipe, run_batch
from ._loading import CommandError, guarded


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("batch", help="run an agent spec over every line of a file")
    parser.add_argument("spec", help="AGENT.gram or AGENT.json")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE",
                        help="python module (or .py file) with the implementations; repeatable")
    parser.add_argument("--inputs", required=True, metavar="IN.jsonl",
                        help='one input per line: "message" or {"input": ..., "id": ...}')
    parser.add_argument("--out", required=True, metavar="OUT.jsonl",
                        help="one record per input, appended in input order; reruns resume")
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
    parser.set_defaults(handler=_batch)


@guarded
def _batch(args: argparse.Namespace) -> int:
    store: str | bool = False if args.no_trace else (args.trace_db or True)
    recipe = BatchRecipe.from_files(args.spec, args.tools, model=args.model,
                                    trace_store=store, playbook=args.playbook,
                                    max_iterations=args.max_iterations)
    try:
        report = run_batch(recipe, args.inputs, args.out, concurrency=args.concurrency,
                           ray=args.ray, workers=args.workers, chunk_size=args.chunk_size)
    except (BatchFileError, OSError) as exc:
        raise CommandError(str(exc)) from exc
    by_status = ", ".join(f"{n} {status}" for status, n in sorted(report.statuses.items()))
    print(f"{report.written} records written to {args.out} ({report.skipped} already there, "
          f"{report.errors} errors, {report.malformed} malformed lines; by status: "
          f"{by_status or 'none'}) in {report.seconds:.1f} s", file=sys.stderr)
    return 0
