"""``toolcycle run AGENT.gram|AGENT.json --tools MODULE --model MODEL "input"``.

Binds the spec to the tools found in the modules (late binding: the spec names the tools, the
modules supply them), runs it once, prints the answer on stdout and the trace on stderr, so
``toolcycle run ... > answer.txt`` keeps the answer alone. ``--json`` prints one JSON object
(output, termination, usage, trace) instead. The answer, errors and the trace are model and tool
text: terminal controls in them are printed as escapes (:mod:`toolcycle._safe_text`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .._safe_text import json_safe, terminal_safe
from ..errors import AgentError
from ..limits import Limits
from ..models.base import ModelSettings
from ..tracing.store import DEFAULT_PATH, ENV_VAR
from ._loading import guarded, load_library, load_spec, resolve_model_argument
from ._progress import progress_on_stderr


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("run", help="run an agent spec with tools from a module")
    parser.add_argument("spec", help="AGENT.gram or AGENT.json")
    parser.add_argument("input", help="the user's message")
    parser.add_argument("--tools", action="append", default=[], metavar="MODULE",
                        help="python module (or .py file) with the implementations; repeatable")
    parser.add_argument("--model", help="model string (default: the spec's model), e.g. "
                        "openai:gpt-4o-mini, anthropic:..., local:qwen2.5-coder-1.5b")
    parser.add_argument("--max-iterations", type=int, help="override the spec's limit")
    parser.add_argument("--temperature", type=float, help="sampling temperature")
    parser.add_argument("--seed", type=int, help="sampling seed (where the model takes one)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--trace-db", metavar="PATH",
                        help=f"where the trace is recorded (default: ${ENV_VAR} or "
                        f"{DEFAULT_PATH})")
    parser.add_argument("--no-trace", action="store_true",
                        help="record no trace and print the answer only")
    parser.set_defaults(handler=_run)


@guarded
def _run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    # Every run is recorded unless asked not to: `toolcycle trace show RUN` needs it afterwards.
    store: object = False if args.no_trace else (args.trace_db or True)
    agent = spec.bind(load_library(args.tools), model=resolve_model_argument(args.model),
                      trace_store=store,
                      model_settings=ModelSettings(temperature=args.temperature, seed=args.seed))
    limits = Limits(max_iterations=args.max_iterations) if args.max_iterations else None
    try:
        with progress_on_stderr() as callbacks:
            result = agent.run_sync(args.input, limits=limits, callbacks=callbacks)
    except AgentError as exc:
        print(terminal_safe(f"error: {exc}"), file=sys.stderr)
        if exc.result is not None and not args.no_trace:
            print(exc.result.trace.render(), file=sys.stderr)
            _where_recorded(exc.result.run_id, args)
        return 1
    if args.json:
        print(json_safe(json.dumps({
            "output": result.output,
            "termination": result.termination.to_dict(),
            "usage": result.usage.to_dict(),
            "trace": result.trace.to_dict(),
        }, ensure_ascii=False, default=str)))
        return 0
    if not args.no_trace:
        print(result.trace.render(), file=sys.stderr)
        _where_recorded(result.run_id, args)
    output = result.output
    print(terminal_safe(output) if isinstance(output, str)
          else json_safe(json.dumps(output, ensure_ascii=False)))
    return 0


def _where_recorded(run_id: str, args: argparse.Namespace) -> None:
    where = f" --db {args.trace_db}" if args.trace_db else ""
    print(f"trace recorded: toolcycle trace show{where} {run_id}", file=sys.stderr)
