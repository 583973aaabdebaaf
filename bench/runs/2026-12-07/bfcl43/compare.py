"""Baseline (dev-base.jsonl, 101ffa7) against the further-calls changes (dev-new.jsonl) on the
80 dev entries. dev-new ran only where the change can answer differently (see README): the
entries where the baseline asked for further calls, and the wrong ones whose first reply now
leaves an option out; on every other entry the first request is the baseline's (greedy) and
no further request is made either way, so the baseline's result stands for both arms.

    python3 bench/runs/2026-12-07/bfcl43/compare.py
"""

import json
import math
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def rows(name: str) -> dict[str, dict]:
    return {json.loads(line)["id"]: json.loads(line)
            for line in (HERE / name).read_text().splitlines()
            if line.strip()}


base, new = rows("dev-base.jsonl"), rows("dev-new.jsonl")
both = {i: (b["right"], new[i]["right"] if i in new else b["right"]) for i, b in base.items()}
by = Counter()
for i, (b, n) in both.items():
    category = base[i]["category"]
    by[category, "base"] += b
    by[category, "new"] += n
    by[category, "n"] += 1
for category in ("parallel", "parallel_multiple"):
    print(f"{category}: {by[category, 'base']}/{by[category, 'n']} -> "
          f"{by[category, 'new']}/{by[category, 'n']}")
better = sorted(i for i, (b, n) in both.items() if n and not b)
worse = sorted(i for i, (b, n) in both.items() if b and not n)
print(f"all: {sum(b for b, _ in both.values())}/80 -> {sum(n for _, n in both.values())}/80; "
      f"re-run {len(new)}; right only with the change {len(better)} {better}; "
      f"only without {len(worse)} {worse}")
k, m = len(better), len(better) + len(worse)
p = min(1.0, 2 * sum(math.comb(m, j) for j in range(0, min(k, m - k) + 1)) / 2 ** m) if m else 1
print(f"exact sign test p = {p:.2f}")
asked = Counter((base[i]["requests"], new[i]["requests"]) for i in new)
print("requests (base, new) on the re-run entries:", dict(asked))
