"""Held-out seed 6812 on 820e842, run as two processes (h01-h08 and h09-h12): one report.

    .venv/bin/python bench/runs/2026-12-06/firsthour39b/combine.py
"""

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[3]))
from toolcycle.evals.stats import wilson  # noqa: E402

rows = []
for folder in ("heldout-default-820e842", "heldout-default-820e842b"):
    for path in sorted((HERE / folder).glob("h*.jsonl")):
        for line in path.open():
            record = json.loads(line)
            if "case" in record:
                rows.append((path.stem, record))
right = [r for _, r in rows if r["scores"][0]["passed"]]
statuses = Counter(r["status"] for _, r in rows)
wrong_success = [f"{a}/{r['case']}" for a, r in rows
                 if not r["scores"][0]["passed"] and r["status"] == "success"]
interval = wilson(len(right), len(rows))
print(f"{len(rows)} questions, {len(set(a for a, _ in rows))} agents")
print(f"right {len(right)} / {len(rows)} = {len(right) / len(rows):.0%}, 95 % CI {interval}")
print(f"statuses {dict(statuses)}")
print(f"wrong answers whose status is success: {len(wrong_success)} {wrong_success}")
wrong = Counter(r["status"] for _, r in rows if not r["scores"][0]["passed"])
print(f"wrong, by status: {dict(wrong)}; right but not success: "
      f"{sum(1 for r in right if r['status'] != 'success')}")
print(f"mean iterations {sum(r['iterations'] for _, r in rows) / len(rows):.1f}, tokens "
      f"{sum(r['input_tokens'] + r['output_tokens'] for _, r in rows) / len(rows):.0f}, "
      f"latency {sum(r['latency_s'] for _, r in rows) / len(rows):.0f} s")
