"""Which structured-output mode a small local model should start in: tool, native or prompted.

Twenty structured-output tasks (fourteen extractions from the request's text, six that need a
tool's result first) run on an in-process llama.cpp model once per mode, each with
``Output(T, mode=...)``. A task succeeds when the run returns an output whose fields equal the
expected ones; "first mode" counts successes without a fallback to another mode (the mode's
own figure), "any" counts them with the fallback the profile gives. Tokens are the run's
input + output tokens (every attempt and fallback included). The figures decide the default
order of the local profile (``toolcycle.models.text.protocol.LOCAL_OUTPUT_MODES``).

Usage (results appended to a JSONL file; a rerun skips what is there)::

    nice -n 10 .venv/bin/python bench/output_modes_local.py --model qwen2.5-coder-0.5b \\
        --log bench/runs/2026-12-05/local-native/modes-0.5b.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pydantic

from toolcycle import Agent, Limits, Output
from toolcycle.models import ModelSettings
from toolcycle.models.local.llama import DEFAULT_SEED

MODES = ("tool", "native", "prompted")


class Person(pydantic.BaseModel):
    name: str
    age: int
    city: str


class Priority(StrEnum):
    low = "low"
    normal = "normal"
    high = "high"


class Ticket(pydantic.BaseModel):
    title: str
    priority: Priority


class Booking(pydantic.BaseModel):
    guest: str
    nights: int
    breakfast: bool


class Invoice(pydantic.BaseModel):
    number: str
    total_eur: float


class Tags(pydantic.BaseModel):
    tags: list[str]


class Weather(pydantic.BaseModel):
    city: str
    temperature_c: int
    sunny: bool


class Stock(pydantic.BaseModel):
    sku: str
    in_stock: int


def weather(city: str) -> dict[str, Any]:
    """Current weather of a city: temperature in Celsius and the sky."""
    table = {"oslo": (4, "cloudy"), "madrid": (27, "sunny"), "lima": (19, "sunny")}
    temp, sky = table.get(city.lower(), (12, "rain"))
    return {"city": city, "temperature_c": temp, "sky": sky}


def stock_level(sku: str) -> int:
    """How many units of a product (by SKU) are in the warehouse."""
    return {"A-100": 42, "B-220": 0, "C-7": 315}.get(sku.upper(), 5)


@dataclass
class Task:
    name: str
    prompt: str
    type: type[pydantic.BaseModel]
    expected: dict[str, Any]
    tools: list[Callable[..., Any]] = field(default_factory=list)


TASKS = [
    Task("person-1", "Maria Lopez is 34 and lives in Madrid.", Person,
         {"name": "Maria Lopez", "age": 34, "city": "Madrid"}),
    Task("person-2", "Extract the person: Kenji Sato, age 51, from Osaka.", Person,
         {"name": "Kenji Sato", "age": 51, "city": "Osaka"}),
    Task("person-3", "Our new hire, Ada Byron (29), moves to London next week.", Person,
         {"name": "Ada Byron", "age": 29, "city": "London"}),
    Task("ticket-1", "Ticket: 'Login page is down for all users' - this is urgent, high "
         "priority.", Ticket, {"title": "Login page is down for all users", "priority": "high"}),
    Task("ticket-2", "File a low priority ticket titled 'Typo in footer'.", Ticket,
         {"title": "Typo in footer", "priority": "low"}),
    Task("ticket-3", "Create a ticket 'Export to CSV fails' with normal priority.", Ticket,
         {"title": "Export to CSV fails", "priority": "normal"}),
    Task("booking-1", "Book 3 nights for Lena Park, breakfast included.", Booking,
         {"guest": "Lena Park", "nights": 3, "breakfast": True}),
    Task("booking-2", "Guest Omar Haddad stays 5 nights, no breakfast.", Booking,
         {"guest": "Omar Haddad", "nights": 5, "breakfast": False}),
    Task("booking-3", "One night for Sofia Rossi; she wants breakfast.", Booking,
         {"guest": "Sofia Rossi", "nights": 1, "breakfast": True}),
    Task("invoice-1", "Invoice INV-2231 comes to 149.90 EUR in total.", Invoice,
         {"number": "INV-2231", "total_eur": 149.9}),
    Task("invoice-2", "Please record invoice number INV-0007, total 1200 euros.", Invoice,
         {"number": "INV-0007", "total_eur": 1200.0}),
    Task("invoice-3", "The total of invoice INV-5120 is 18.50 EUR.", Invoice,
         {"number": "INV-5120", "total_eur": 18.5}),
    Task("tags-1", "Tag this article with exactly these tags: python, testing.", Tags,
         {"tags": ["python", "testing"]}),
    Task("tags-2", "Give the tags red, green and blue, in that order.", Tags,
         {"tags": ["red", "green", "blue"]}),
    Task("weather-1", "What is the weather in Oslo? Use the weather tool.", Weather,
         {"city": "Oslo", "temperature_c": 4, "sunny": False}, [weather]),
    Task("weather-2", "Check the weather in Madrid with the tool and report it.", Weather,
         {"city": "Madrid", "temperature_c": 27, "sunny": True}, [weather]),
    Task("weather-3", "Use the weather tool for Lima.", Weather,
         {"city": "Lima", "temperature_c": 19, "sunny": True}, [weather]),
    Task("stock-1", "How many units of A-100 are in stock? Use the tool.", Stock,
         {"sku": "A-100", "in_stock": 42}, [stock_level]),
    Task("stock-2", "Look up the stock level of B-220.", Stock,
         {"sku": "B-220", "in_stock": 0}, [stock_level]),
    Task("stock-3", "Check stock for SKU C-7 with the stock tool.", Stock,
         {"sku": "C-7", "in_stock": 315}, [stock_level]),
]


def run_order(tasks: list[Task]) -> list[Task]:
    """Extractions and tool tasks interleaved (two to one), so a run stopped early (under the
    time it was given) has measured both kinds."""
    plain = [t for t in tasks if not t.tools]
    tooled = [t for t in tasks if t.tools]
    ordered: list[Task] = []
    while plain or tooled:
        ordered += plain[:2] + tooled[:1]
        plain, tooled = plain[2:], tooled[1:]
    return ordered


def correct(output: pydantic.BaseModel, expected: dict[str, Any]) -> bool:
    got = output.model_dump(mode="json")
    return all(_same(got.get(key), value) for key, value in expected.items())


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, str) and isinstance(got, str):
        return got.strip().lower() == want.lower()
    if isinstance(want, float) and isinstance(got, int | float):
        return abs(got - want) < 1e-6
    return bool(got == want)


async def run_one(model: str, task: Task, mode: str) -> dict[str, Any]:
    agent = Agent(f"local:{model}", "You turn requests into structured data. Use the tools "
                  "when the request needs their data.", task.tools,
                  output=Output(task.type, mode=mode),  # type: ignore[arg-type]
                  limits=Limits(max_iterations=3, max_attempts=2),
                  model_settings=ModelSettings(temperature=0.0, seed=DEFAULT_SEED,
                                               max_tokens=160))
    started = time.perf_counter()
    record: dict[str, Any] = {"model": model, "task": task.name, "mode": mode}
    try:
        result = await agent.run(task.prompt)
    except Exception as exc:  # a failed run is a data point: its error and its usage
        partial = getattr(exc, "result", None)
        record.update(ok=False, first_mode=False, error=f"{type(exc).__name__}: {exc}"[:300])
        if partial is not None:
            record.update(tokens=partial.usage.input_tokens + partial.usage.output_tokens,
                          requests=partial.usage.requests,
                          fallbacks=partial.trace.mode_fallbacks)
    else:
        ok = correct(result.output, task.expected)
        record.update(ok=ok, first_mode=ok and not result.trace.mode_fallbacks,
                      output=result.output.model_dump(mode="json"),
                      tokens=result.usage.input_tokens + result.usage.output_tokens,
                      requests=result.usage.requests, fallbacks=result.trace.mode_fallbacks,
                      action=result.termination.action)
    record["seconds_under_load"] = round(time.perf_counter() - started, 1)
    return record


def summary(records: list[dict[str, Any]]) -> str:
    lines = ["| model | mode | first mode | any mode | tokens (mean) | requests (mean) |",
             "|---|---|---|---|---|---|"]
    for model in sorted({r["model"] for r in records}):
        for mode in MODES:
            rows = [r for r in records if r["model"] == model and r["mode"] == mode]
            if not rows:
                continue
            first = sum(r["first_mode"] for r in rows)
            any_ = sum(r["ok"] for r in rows)
            tokens = sum(r.get("tokens", 0) for r in rows) / len(rows)
            requests = sum(r.get("requests", 0) for r in rows) / len(rows)
            lines.append(f"| {model} | {mode} | {first}/{len(rows)} | {any_}/{len(rows)} | "
                         f"{tokens:.0f} | {requests:.1f} |")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--tasks", type=int, default=len(TASKS))
    parser.add_argument("--summary", action="store_true", help="only print the log's table")
    args = parser.parse_args()
    args.log.parent.mkdir(parents=True, exist_ok=True)
    done = ([json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
            if args.log.exists() else [])
    if not args.summary:
        seen = {(r["model"], r["task"], r["mode"]) for r in done}
        for task in run_order(TASKS)[:args.tasks]:
            for mode in MODES:  # modes interleaved per task: a run stopped early stays fair
                if (args.model, task.name, mode) in seen:
                    continue
                record = await run_one(args.model, task, mode)
                done.append(record)
                with args.log.open("a") as log:
                    log.write(json.dumps(record) + "\n")
                print(json.dumps(record), flush=True)
    print(summary(done))


if __name__ == "__main__":
    asyncio.run(main())
