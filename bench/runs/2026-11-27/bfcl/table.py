"""The markdown table of a bench/bfcl_local.py --log file, per arm: accuracy per category (and
how many entries of it the arm ran), overall over the categories it completed, tokens and
seconds per call, questions stopped at the deadline.

    .venv/bin/python bench/runs/2026-11-27/bfcl/table.py bench/runs/2026-11-27/bfcl/bfcl-100.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
rows: dict[str, list[dict[str, object]]] = defaultdict(list)
with open(sys.argv[1], encoding="utf-8") as log:
    for line in log:
        record = json.loads(line)
        rows[str(record["arm"])].append(record)
print("| arm | " + " | ".join(CATEGORIES) + " | overall | tokens/call | s/call | timed out |")
print("|---" * (len(CATEGORIES) + 5) + "|")
for arm, records in rows.items():
    cells, right, total = [], 0, 0
    for category in CATEGORIES:
        done = [r for r in records if r["category"] == category]
        ok = sum(bool(r["right"]) for r in done)
        cells.append(f"{100 * ok / len(done):.0f} % ({len(done)})" if done else "—")
        right, total = right + ok, total + len(done)
    tokens = sum(int(r["tokens"]) for r in records) / len(records)  # type: ignore[call-overload]
    seconds = sum(float(r["seconds"]) for r in records) / len(records)  # type: ignore[arg-type]
    stopped = sum(bool(r.get("timed_out")) or float(r["seconds"]) >= 60  # type: ignore[arg-type]
                  for r in records)
    print(f"| {arm} | " + " | ".join(cells) + f" | {100 * right / total:.1f} % ({total}) | "
          f"{tokens:.0f} | {seconds:.1f} | {stopped} |")
