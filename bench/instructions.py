"""Instructions per loop iteration, counted by valgrind (callgrind): a figure load cannot move.

Wall and CPU time on a shared 2-core machine move by more than the few microseconds an engine
change is worth; the number of machine instructions a run executes does not (callgrind counts
the same total twice for the same binary and inputs, whatever else the machine is doing). Each
variant runs the loop twice in a fresh interpreter under callgrind, ``--short`` and ``--long``
iterations of one ``add(a, b)`` call with a callback listening to every hook (the set-up of
``bench/overhead.py``'s S1), and reports ``(long - short) / (long - short iterations)``: the
start-up, import and interpreter exit cancel out.

    .venv/bin/python bench/instructions.py                       # this checkout
    .venv/bin/python bench/instructions.py --tree /tmp/before    # another checkout, same venv
    .venv/bin/python bench/instructions.py --tree /tmp/before --tree .   # side by side

Also ``import toolcycle`` in instructions (the interpreter's own start-up subtracted).
Instructions are not time (a cache miss costs more than an add), but for the same
interpreter and the same kind of code they move together; use them to compare two versions
of the engine, and ``bench/overhead.py`` on a quiet machine for the time itself.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: The child: one run of ``n`` tool turns (plus the final answer), as bench/overhead.py's S1.
CHILD = r'''
import asyncio, os, sys
from toolcycle import Agent, Limits, Tool
from toolcycle.messages import Message, ToolCall, Usage
from toolcycle.models.base import Model

variant, n = sys.argv[1], int(sys.argv[2])
exec(os.environ.get("TOOLCYCLE_BENCH_PATCH", ""))  # --patch: what does one part cost?

class LastResult(Model):
    name = "last-result"
    def __init__(self, n):
        self.n, self.ids = n, 0
    async def request(self, messages, settings):
        last = messages[-1]
        value = int(last.results[0].content) if last.role == "tool" else 0
        usage = Usage(input_tokens=10, output_tokens=5)
        if value >= self.n:
            return Message("assistant", Message.assistant(f"done {value}").parts, usage=usage)
        self.ids += 1
        return Message("assistant", [ToolCall(f"c{self.ids}", "add", {"a": value, "b": 1}, "")],
                       usage=usage)

def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

class Listener:
    def _seen(self, _event):
        pass
    on_run_start = on_attempt_start = on_iteration_start = on_model_response = _seen
    on_tool_call = on_tool_result = on_attempt_end = on_success = _seen

tool = {"async": Tool.from_function(add_async, name="add"),
        "inline": Tool.from_function(add, name="add", inline=True),
        "thread": Tool.from_function(add, name="add")}[variant]
agent = Agent(LastResult(n), "Add numbers.", [tool], callbacks=Listener(),
              limits=Limits(max_iterations=n + 10))
result = asyncio.run(agent.run("count"))
assert result.output == f"done {n}", result.output
'''

PATCH = [""]
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(tree: Path, args: list[str], code: str) -> int:
    """Total instructions of ``python -c code args`` with ``tree`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0",
               TOOLCYCLE_BENCH_PATCH=PATCH[0])
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, "-c", code, *args],
            env=env, cwd=tmp, capture_output=True, text=True, check=False)
    found = _COLLECTED.search(out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return int(found.group(1))


def per_iteration(tree: Path, variant: str, short: int, long: int) -> float:
    low = instructions(tree, [variant, str(short)], CHILD)
    high = instructions(tree, [variant, str(long)], CHILD)
    return (high - low) / (long - short)


def import_cost(tree: Path) -> int:
    bare = instructions(tree, [], "pass")
    return instructions(tree, [], "import toolcycle") - bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", type=Path,
                        help="checkout to measure (repeatable; default: this one)")
    parser.add_argument("--variants", default="async,inline,thread")
    parser.add_argument("--short", type=int, default=100)
    parser.add_argument("--long", type=int, default=300)
    parser.add_argument("--patch", default="",
                        help="Python run in the child before the agent is built, to take a part "
                             "out and see what it costs (e.g. replace a function by a no-op)")
    parser.add_argument("--no-import", action="store_true", help="skip the import figure")
    args = parser.parse_args()
    PATCH[0] = args.patch
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parents[1]])]
    width = max(len(str(t)) for t in trees)
    for tree in trees:
        for variant in filter(None, args.variants.split(",")):
            count = per_iteration(tree, variant, args.short, args.long)
            print(f"{tree!s:<{width}}  instructions/iteration  {variant:<7} {count:>10,.0f}",
                  flush=True)
        if args.no_import:
            continue
        print(f"{tree!s:<{width}}  import toolcycle        {'':<7} {import_cost(tree):>10,}",
              flush=True)


if __name__ == "__main__":
    main()
