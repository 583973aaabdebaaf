"""``toolcycle demo``: real agents on a real local model, offline.

Two runs on the in-process llama.cpp model (Qwen2.5-Coder-1.5B by default, from its PyPI
model pack): the hello-world agent with one ``sayHello`` tool, then a task that needs two
different tools in sequence, the second fed by the first one's observation (look a customer
up, then ask for that customer's latest order). Each run prints its trace (thoughts, calls,
observations, timings, usage) and its answer.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from .._safe_text import terminal_safe
from ..agent import Agent
from ..errors import AgentError
from ..limits import Limits
from ..models.base import Model
from ._loading import CommandError, load_model

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"

_CUSTOMERS = {"ada lovelace": {"customer_id": "C-1042", "name": "Ada Lovelace", "city": "London"}}
_ORDERS = {"C-1042": {"order_id": "O-7781", "status": "shipped", "arrives": "2026-11-27"}}


def sayHello(personName: str = "world") -> str:
    """Greet a person by name."""
    return f"Hello, {personName}!"


def find_customer(name: str) -> dict[str, str]:
    """Look a customer up by full name; returns their customer_id."""
    found = _CUSTOMERS.get(name.strip().lower())
    if found is None:
        raise LookupError(f"no customer named {name!r}")
    return found


def latest_order(customer_id: str) -> dict[str, str]:
    """The latest order of a customer (needs the customer_id from find_customer)."""
    found = _ORDERS.get(customer_id.strip())
    if found is None:
        raise LookupError(f"no orders for customer_id {customer_id!r}")
    return found


def hello_agent(model: Model | str) -> Agent[None, str]:
    return Agent(
        model,
        "You greet people. Use the sayHello tool.",
        [sayHello],
        name="hello",
        limits=Limits(max_iterations=4),
    )


def orders_agent(model: Model | str) -> Agent[None, str]:
    return Agent(
        model,
        "You answer questions about customers' orders. Use the tools; never guess ids.",
        [find_customer, latest_order],
        name="orders",
        limits=Limits(max_iterations=5),
    )


DEMO_RUNS: tuple[tuple[str, Any, str], ...] = (
    ("hello world", hello_agent, "Say hello to the world."),
    ("two tools in sequence", orders_agent, "When will Ada Lovelace's latest order arrive?"),
)


def run_demo(model_name: str, out: Any = sys.stdout) -> int:
    """Run both demo agents on one model; 0 when both produced an answer."""
    from ..models import resolve_model

    started = time.perf_counter()
    try:
        model = resolve_model(model_name)
    except (ValueError, ImportError) as exc:  # a model string that names nothing usable
        raise CommandError(str(exc)) from exc
    load_model(model)  # "ready" means loaded: else the first request pays for it, unannounced
    print(f"model {model_name} ready in {time.perf_counter() - started:.1f} s", file=out)
    failures = 0
    for title, build, prompt in DEMO_RUNS:
        print(f"\n=== {title}: {prompt}", file=out)
        try:
            result = build(model).run_sync(prompt)
        except AgentError as exc:
            failures += 1
            print(terminal_safe(f"run failed: {exc}"), file=out)
            if exc.result is not None:
                print(exc.result.trace.render(), file=out)
            continue
        print(result.trace.render(), file=out)
        print(terminal_safe(f"\nanswer: {result.output}"), file=out)
    print(f"\ndemo finished in {time.perf_counter() - started:.1f} s", file=out)
    return 1 if failures else 0


def _handle(args: argparse.Namespace) -> int:
    return run_demo(args.model)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="run the hello-world and a two-tool agent on a local model (offline)"
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"model string (default {DEFAULT_MODEL})"
    )
    parser.set_defaults(handler=_handle)
