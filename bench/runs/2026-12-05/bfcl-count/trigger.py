"""How the value test (toolcycle.models.text.coverage) would fire on BFCL, without a model.

For every entry of the five categories that is NOT in the held-out spread selection
(bench/runs/2026-12-05/bfcl/selection.json), the ground truth's calls stand in for a reply
(each parameter's first accepted value, "" options left out):

- "all calls": the complete right reply: how often would the test fire on a reply that is
  already right (a needless second request, and a chance to add a wrong call);
- "first call only" (parallel categories): the typical wrong_count miss: how often does the
  test see that something is missing.

    PYTHONPATH=$PWD .venv/bin/python bench/runs/2026-12-05/bfcl-count/trigger.py [--show N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from bfcl_local import CATEGORIES, DATA, _jsonl

from toolcycle.messages import ToolCall
from toolcycle.models.text.coverage import unused_values
from toolcycle.tools import ToolDefinition

HELD_OUT = Path(__file__).resolve().parents[1] / "bfcl" / "selection.json"


def truth_calls(truth: list[dict]) -> list[ToolCall]:
    calls = []
    for n, item in enumerate(truth):
        (name, params), = item.items()
        arguments = {k: next((v for v in options if v != ""), None)
                     for k, options in params.items()}
        calls.append(ToolCall(f"c{n}", name, {k: v for k, v in arguments.items()
                                              if v is not None}))
    return calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", type=int, default=0, help="print N examples per row")
    parser.add_argument("--kinds", default="number,quoted,name,address",
                        help="only these kinds of value count")
    args = parser.parse_args()
    held = {i for v in json.loads(HELD_OUT.read_text())["categories"].values() for i in v["ids"]}
    print("| category | dev entries | fires on the right reply | fires on its first call only |")
    print("|---|---|---|---|")
    for category in CATEGORIES:
        if category == "irrelevance":
            continue
        answers = {a["id"]: a["ground_truth"]
                   for a in _jsonl(DATA / "possible_answer" / f"BFCL_v4_{category}.json")}
        fired_all, fired_first, total, kinds = 0, 0, 0, Counter()
        shown = 0
        for entry in _jsonl(DATA / f"BFCL_v4_{category}.json"):
            if entry["id"] in held:
                continue
            request = "\n".join(m["content"] for m in entry["question"][0] if m["role"] == "user")
            calls = truth_calls(answers[entry["id"]])
            tools = [ToolDefinition(f["name"], f.get("description", ""), f["parameters"])
                     for f in entry["function"]]
            total += 1
            kinds_on = set(args.kinds.split(","))
            left = [v for v in unused_values(request, calls, tools) if v.kind in kinds_on]
            fired_all += bool(left)
            kinds.update(v.kind for v in left)
            if left and shown < args.show:
                shown += 1
                print(f"  {entry['id']}: {[v.text for v in left]}\n    {request[:200]}")
            if len(calls) > 1:
                fired_first += any(v.kind in kinds_on
                                   for v in unused_values(request, calls[:1], tools))
        multi = "" if category in ("simple_python", "multiple") else \
            f"{fired_first}/{total} ({100 * fired_first / total:.0f} %)"
        print(f"| {category} | {total} | {fired_all}/{total} ({100 * fired_all / total:.0f} %)"
              f" {dict(kinds)} | {multi} |")


if __name__ == "__main__":
    main()
