"""Calibrate and check :class:`toolcycle.tool_selection.ToolSelection` on BFCL, no model needed.

Calibration uses only BFCL's *live* categories (user-contributed questions, which
``bench/bfcl_local.py`` does not grade): the threshold is the highest relevance score that
still keeps the best-scoring tool of ``--keep`` (95 %) of the live questions some tool answers.
Then, on the non-live categories ``bench/bfcl_local.py`` grades, it prints how often that
threshold hides every tool: right on ``irrelevance``, a lost question elsewhere (an upper
bound: the model may still have missed it with the tool shown).

    .venv/bin/python bench/tool_selection.py
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

from toolcycle.models.base import ToolDefinition
from toolcycle.spec.formats.bfcl import import_functions
from toolcycle.tool_selection import ToolSelection

DATA = Path(str(resources.files("bfcl_eval") / "data"))
LIVE = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
GRADED = ("simple_python", "multiple", "parallel", "parallel_multiple")


def best_scores(selection: ToolSelection, category: str) -> list[float]:
    """Per entry, the highest relevance of any of its tools to its user turns."""
    out = []
    for line in (DATA / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        task = "\n".join(m["content"] for m in entry["question"][0] if m["role"] == "user")
        functions, _ = import_functions(entry["function"])
        tools = [ToolDefinition(f.spec.name, f.spec.description, f.spec.parameters)
                 for f in functions]
        out.append(max(selection.scores(task, tools), default=0.0))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=float, default=0.95,
                        help="share of answerable live questions whose best tool must stay")
    parser.add_argument("--entries", type=int, default=100,
                        help="also report the first N entries of each graded category")
    args = parser.parse_args()
    selection = ToolSelection(min_relevance=-1.0)
    answerable = sorted(s for c in LIVE for s in best_scores(selection, c))
    threshold = answerable[int((1 - args.keep) * len(answerable))]
    live_irrelevant = best_scores(selection, "live_irrelevance")
    print(f"calibration on {len(answerable)} answerable live questions: min_relevance "
          f"{threshold:.3f} keeps {args.keep:.0%}; it hides every tool from "
          f"{sum(s < threshold for s in live_irrelevant) / len(live_irrelevant):.0%} of "
          f"{len(live_irrelevant)} live_irrelevance questions\n")
    print(f"| category | entries | tools hidden, all | tools hidden, first {args.entries} |")
    print("|---|---|---|---|")
    for category in (*GRADED, "irrelevance"):
        scores = best_scores(selection, category)
        head = scores[:args.entries]
        print(f"| {category} | {len(scores)} | "
              f"{sum(s < threshold for s in scores) / len(scores):.1%} | "
              f"{sum(s < threshold for s in head) / len(head):.1%} |")


if __name__ == "__main__":
    main()
