"""Pilot: which toolcycle protocol, with tool selection, declines best when no tool fits?

On BFCL entries *after* the first 100 of each category (the graded ones are not used to
choose): irrelevance and simple_python entries [start, start + n), every arm with
ToolSelection() at its default threshold.

    nice .venv/bin/python bench/runs/2026-11-27/bfcl/protocol_pilot.py --start 100 --n 15
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
from toolcycle.models.text.react import ReActModel
from toolcycle.tool_selection import ToolSelection

parser = argparse.ArgumentParser()
parser.add_argument("--start", type=int, default=100)
parser.add_argument("--n", type=int, default=15)
parser.add_argument("--model", default="qwen2.5-coder-0.5b")
parser.add_argument("--categories", default="irrelevance,simple_python")
args = parser.parse_args()
checker = _checker()
path = pack_path(args.model)
chat = LlamaChatModel(path, name=args.model, n_threads=2)
load_llama(path, n_threads=2)
selection = ToolSelection()
arms = {
    "json+grammar+parallel+select": toolcycle_arm(JsonToolsModel(chat, constrained=True),
                                                  parallel=True, selection=selection),
    "json+parallel+select": toolcycle_arm(JsonToolsModel(chat), parallel=True,
                                          selection=selection),
    "json+select": toolcycle_arm(JsonToolsModel(chat), selection=selection),
    "react+select": toolcycle_arm(ReActModel(chat), selection=selection),
}
right: dict[str, dict[str, list[bool]]] = {arm: {} for arm in arms}
for category in args.categories.split(","):
    for case in cases(args.start + args.n, (category,))[args.start:]:
        row = []
        for arm, run in arms.items():
            outcome = run(case)
            ok = not verdict(checker, case, outcome)
            right[arm].setdefault(category, []).append(ok)
            row.append(f"{arm}={'ok' if ok else 'miss'}")
        print(case.entry["id"], " ".join(row), flush=True)
for arm, by in right.items():
    print(arm, {c: f"{sum(v)}/{len(v)}" for c, v in by.items()})
