"""Pilot: does a pseudo-tool for "answer directly" make the 0.5B decline irrelevant tools?

Run on BFCL entries *after* the first 100 of each category (the graded ones are not used to
choose the mechanism): irrelevance and simple_python entries [start, start + n).

    nice .venv/bin/python bench/runs/2026-11-27/bfcl/answer_tool_pilot.py --start 100 --n 20
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from bench.bfcl_local import _checker, cases, toolcycle_arm, verdict
from toolcycle.models.base import ToolDefinition
from toolcycle.models.local.llama import LlamaChatModel, load_llama
from toolcycle.models.local.packs import pack_path
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.tool_selection import ToolSelection

WORDINGS = {
    "respond": ToolDefinition(
        "respond_directly",
        "Answer the user in words, without a tool, when none of the other tools does what the "
        "user asks.", {"type": "object", "properties": {"message": {"type": "string"}},
                       "required": ["message"]}),
}

parser = argparse.ArgumentParser()
parser.add_argument("--start", type=int, default=100)
parser.add_argument("--n", type=int, default=20)
parser.add_argument("--model", default="qwen2.5-coder-0.5b")
parser.add_argument("--wording", default="respond")
args = parser.parse_args()
checker = _checker()
path = pack_path(args.model)
chat = LlamaChatModel(path, name=args.model, n_threads=2)
load_llama(path, n_threads=2)
pseudo = WORDINGS[args.wording]
selection = ToolSelection()
plain = toolcycle_arm(JsonToolsModel(chat, constrained=True), parallel=True, selection=selection)
offered = toolcycle_arm(JsonToolsModel(chat, constrained=True), parallel=True)
right = {"plain": {}, "pseudo": {}}
for category in ("irrelevance", "simple_python"):
    for case in cases(args.start + args.n, (category,))[args.start:]:
        kept = selection.select("\n".join(m["content"] for m in case.entry["question"][0]
                                          if m["role"] == "user"), case.tools)
        outcome = plain(case)
        right["plain"].setdefault(category, []).append(not verdict(checker, case, outcome))
        if kept:
            case.tools = (*kept, pseudo)
            outcome = offered(case)
            outcome.calls = [c for c in outcome.calls if pseudo.name not in c]
        right["pseudo"].setdefault(category, []).append(not verdict(checker, case, outcome))
        print(category, case.entry["id"], "kept" if kept else "hidden",
              right["plain"][category][-1], right["pseudo"][category][-1], outcome.raw[:120],
              flush=True)
for arm, by in right.items():
    print(arm, {c: f"{sum(v)}/{len(v)}" for c, v in by.items()})
