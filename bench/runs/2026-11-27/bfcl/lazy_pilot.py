"""Pilot: decide freely, call under the grammar ("lazy" constrained decoding).

The model first replies without the grammar (as the raw handlers let it); when that reply
calls no tool it is the answer, else the call is written again under the grammar. Simulated
here from two arms on the same entries (the grammar arm's reply is what the second request
would write: same prompt, greedy): ``free`` = json+parallel+select, ``grammar`` =
json+grammar+parallel+select. On BFCL entries *after* the first 100 of each category (the
graded ones are not used to choose the mechanism).

    nice .venv/bin/python bench/runs/2026-11-27/bfcl/lazy_pilot.py --start 100 --n 30
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from bench.bfcl_local import _checker, cases, toolcycle_arm, verdict
from toolcycle.models.local.llama import LlamaChatModel, load_llama
from toolcycle.models.local.packs import pack_path
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.tool_selection import ToolSelection

parser = argparse.ArgumentParser()
parser.add_argument("--start", type=int, default=100)
parser.add_argument("--n", type=int, default=30)
parser.add_argument("--model", default="qwen2.5-coder-0.5b")
parser.add_argument("--categories", default="irrelevance,simple_python,multiple")
args = parser.parse_args()
checker = _checker()
path = pack_path(args.model)
chat = LlamaChatModel(path, name=args.model, n_threads=2)
load_llama(path, n_threads=2)
selection = ToolSelection()
grammar = toolcycle_arm(JsonToolsModel(chat, constrained=True), parallel=True,
                        selection=selection)
free = toolcycle_arm(JsonToolsModel(chat), parallel=True, selection=selection)
tally: dict[str, dict[str, list[bool]]] = {"grammar": {}, "free": {}, "lazy": {}}
for category in args.categories.split(","):
    for case in cases(args.start + args.n, (category,))[args.start:]:
        g, f = grammar(case), free(case)
        lazy = g if f.calls else f
        row = {"grammar": g, "free": f, "lazy": lazy}
        for arm, outcome in row.items():
            tally[arm].setdefault(category, []).append(not verdict(checker, case, outcome))
        print(case.entry["id"], {a: v[category][-1] for a, v in tally.items()},
              "free called" if f.calls else "free answered", flush=True)
for arm, by in tally.items():
    print(arm, {c: f"{sum(v)}/{len(v)}" for c, v in by.items()})
