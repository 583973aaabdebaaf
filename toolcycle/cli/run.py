"""``toolcycle run AGENT.gram|AGENT.json --tools MODULE --model MODEL "input"``.

Binds the spec to the tools found in the modules (late binding: the spec names the tools, the
modules supply them), runs it once, prints the answer on stdout and the trace on stderr, so
``toolcycle run ... > answer.txt`` keeps the answer alone. ``--json`` prints one JSON object
(output, termination, usage, trace) instead. The answer, errors and the trace are model and tool
text: terminal controls in them are printed as escapes (:mod:`toolcycle._safe_text`).

A run that returned without succeeding (docs/status.md: an answer a limit forced, a partial
one, a tool's error passed through) still prints what it had, says its status on stderr and
exits with status 4, so a script does not take it for an answer.

Calls of tools that require approval pause the run. ``--approve`` asks at the terminal for each
(``y`` runs it, ``n`` or an empty line denies it, any other text denies it with that text as the
reason) and resumes; ``--approve-all`` asks for every tool call. Without ``--approve`` a paused
run prints what waits and exits with status 3 (``--json`` includes the snapshot).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._safe_text import json_safe, terminal_safe
from ..agent.stream import thread_runner
from ..approval import Approval, ApprovalRequest, Defer
from ..context import RunContext
from ..errors import AgentError
from ..limits import Limits
from ..models.base import ModelSettings
from ..result import RunResult
from ..status import RETURNED_MEANINGS
from ..stores.postgres import describe
from ..tool_selection import DEFAULT_MIN_RELEVANCE, ToolSelection
from ..tracing.store import DEFAULT_PATH, ENV_VAR
from . import _exits
from ._loading import guarded, load_library, load_model, load_spec, resolve_model_argument
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
    parser.add_argument("--select-tools", type=float, nargs="?", const=DEFAULT_MIN_RELEVANCE,
                        metavar="MIN_RELEVANCE",
                        help="offer the run only the tools related to the input (lexical "
                        f"relevance, default {DEFAULT_MIN_RELEVANCE}; see ToolSelection)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--trace-db", metavar="PATH",
                        help="where the trace is recorded, a SQLite path or a postgresql:// URL "
                        f"(default: ${ENV_VAR} or {DEFAULT_PATH})")
    parser.add_argument("--no-trace", action="store_true",
                        help="record no trace and print the answer only")
    parser.add_argument("--approve", action="store_true",
                        help="ask at the terminal before calls of tools that require approval")
    parser.add_argument("--approve-all", action="store_true",
                        help="ask at the terminal before every tool call")
    parser.set_defaults(handler=_run)


@guarded
def _run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    store = trace_store_argument(args)
    options: dict[str, Any] = {"approval": _ask_for_all} if args.approve_all else {}
    if args.select_tools is not None:
        options["tool_selection"] = ToolSelection(args.select_tools)
    agent = spec.bind(load_library(args.tools), model=resolve_model_argument(args.model),
                      trace_store=store,
                      model_settings=ModelSettings(temperature=args.temperature, seed=args.seed),
                      **options)
    limits = Limits(max_iterations=args.max_iterations) if args.max_iterations else None
    try:
        load_model(agent.model)  # now, with progress, rather than inside the first request
        with progress_on_stderr() as callbacks:
            result = agent.run_sync(args.input, limits=limits, callbacks=callbacks)
            while result.paused and (args.approve or args.approve_all):
                assert result.snapshot is not None
                result = agent.resume_sync(result.snapshot, _ask(result.pending_approvals),
                                           callbacks=callbacks)
    except AgentError as exc:
        print(terminal_safe(f"error: {exc}"), file=sys.stderr)
        if exc.result is not None and not args.no_trace:
            print(exc.result.trace.render(), file=sys.stderr)
            _where_recorded(exc.result.run_id, args)
        return 1
    finally:  # a tools module's MCP servers end with the command, on the loop they ran on
        thread_runner().run(agent.close())
    return print_outcome(result, args, {"spec": str(Path(args.spec).resolve()),
                                        "tools": args.tools, "model": args.model})


def trace_store_argument(args: argparse.Namespace) -> object:
    """``trace_store=`` from ``--trace-db`` / ``--no-trace``. Every run is recorded unless asked
    not to: ``toolcycle trace show RUN`` needs it afterwards."""
    return False if args.no_trace else (args.trace_db or True)


def print_outcome(result: RunResult[Any], args: argparse.Namespace,
                  resume: dict[str, Any]) -> int:
    """Print a run's answer (or its pause) as ``run`` and ``resume`` do; the exit status. With
    ``--json`` a paused run's object carries its snapshot and, under ``resume``, what
    ``toolcycle resume`` needs to rebuild the agent (spec, tool modules, model)."""
    if args.json:
        print(json_safe(json.dumps({
            "status": result.status,
            "output": result.output,
            "termination": result.termination.to_dict(),
            "usage": result.usage.to_dict(),
            "trace": result.trace.to_dict(),
            **({"snapshot": result.snapshot, "resume": resume} if result.paused else {}),
        }, ensure_ascii=False, default=str)))
        return 3 if result.paused else _exit_status(result)
    if result.paused:
        return _report_pause(result, args)
    if not args.no_trace:
        print(result.trace.render(), file=sys.stderr)
        _where_recorded(result.run_id, args)
    output = result.output
    print(terminal_safe(output) if isinstance(output, str)
          else json_safe(json.dumps(output, ensure_ascii=False)))
    return _exit_status(result)



def _exit_status(result: RunResult[Any]) -> int:
    """0 for a success; for a forced, partial or tool-error answer, a line on stderr saying
    so and ``NOT_SUCCEEDED``: the answer printed is not to be trusted."""
    if result.succeeded:
        return _exits.OK
    meaning = RETURNED_MEANINGS.get(result.status, "the run did not succeed")
    print(f"status {result.status}: {meaning}", file=sys.stderr)
    return _exits.NOT_SUCCEEDED


def _where_recorded(run_id: str, args: argparse.Namespace) -> None:
    where = f" --db {describe(args.trace_db)}" if args.trace_db else ""
    print(f"trace recorded: toolcycle trace show{where} {run_id}", file=sys.stderr)


def _ask_for_all(request: ApprovalRequest, ctx: RunContext[Any]) -> Defer:
    """``--approve-all``: every tool call waits for the person at the terminal."""
    return Defer()


def _ask(pending: list[ApprovalRequest]) -> list[Approval]:
    """One question per pending call on stderr, one answer per line from stdin. A closed stdin
    denies what is left: nothing runs without a yes. Each answer is bound to the request's
    run (two agents of a team may both wait on a call ``call_1``)."""
    answers: list[Approval] = []
    for request in pending:
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        print(terminal_safe(f"approve {_who(request)}{request.tool_name}({arguments}) "
                            f"[{request.call_id}]? [y/n/reason] "), end="", file=sys.stderr,
              flush=True)
        line = sys.stdin.readline()
        answer = line.strip()
        if not line:
            answers.append(request.deny("denied: no answer (stdin closed)"))
            print(file=sys.stderr)
        elif answer.lower() in ("y", "yes"):
            answers.append(request.approve())
        elif answer.lower() in ("", "n", "no"):
            answers.append(request.deny("denied by the user"))
        else:
            answers.append(request.deny(answer))
    return answers


def _who(request: ApprovalRequest) -> str:
    """``agent: `` for a call of an agent called by another (a team's member), else empty."""
    return f"{request.agent_name}: " if request.via else ""


def _report_pause(result: RunResult[Any], args: argparse.Namespace) -> int:
    if not args.no_trace:
        print(result.trace.render(), file=sys.stderr)
        _where_recorded(result.run_id, args)
    for request in result.pending_approvals:
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        print(terminal_safe(f"waiting for approval: {_who(request)}{request.tool_name}"
                            f"({arguments}) [{request.call_id}]"), file=sys.stderr)
    print("paused: rerun with --approve to decide at the terminal, or with --json > FILE and "
          "answer later: toolcycle resume FILE --approve CALL_ID | --deny CALL_ID:REASON",
          file=sys.stderr)
    return 3
