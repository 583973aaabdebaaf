"""The graded selection's 1.5B answers at 780252e, as a combination: the entries rerun here
(every entry where session 42's arm made more than one request, and those where the current
further-calls reading would ask where session 42's did not) and session 42's answers for the
rest (one request each, the same first request: the JSON protocol's first prompt did not
change since). Prints the table by category, the Wilson interval and the pairing."""

from __future__ import annotations

import json
from pathlib import Path

from toolcycle.evals.stats import sign_test, wilson

HERE = Path(__file__).parent
OLD = HERE.parent.parent / "2026-12-07" / "bfcl42"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")


def rows(*paths: Path) -> dict[str, dict[str, object]]:
    return {r["id"]: r for p in paths for r in map(json.loads, p.read_text().splitlines())}


before = rows(OLD / "ours-1.5b-a.jsonl", OLD / "ours-1.5b-b.jsonl")
rerun = rows(HERE / "rerun-1.5b-a.jsonl", HERE / "rerun-1.5b-b.jsonl")
now = {**before, **rerun}
print(f"entries {len(now)}, rerun {len(rerun)}")
cells = []
for category in CATEGORIES:
    ids = [i for i, r in now.items() if r["category"] == category]
    cells.append(f"{sum(now[i]['right'] for i in ids)}/{len(ids)}")
total = sum(r["right"] for r in now.values())
w = wilson(total, len(now))
print("| " + " | ".join(CATEGORIES) + " | overall [95 % Wilson] |")
print("| " + " | ".join(cells) + f" | {total}/{len(now)}, {100 * w.mean:.0f} % "
      f"[{100 * w.low:.0f}, {100 * w.high:.0f}] |")
better = sorted(i for i in rerun if rerun[i]["right"] and not before[i]["right"])
worse = sorted(i for i in rerun if before[i]["right"] and not rerun[i]["right"])
print(f"against session 42: right only now {len(better)} {better}")
p = sign_test(len(better), len(worse))
print(f"right only before {len(worse)} {worse}; sign test p = {p:.2g}")
print("requests > 2 (a second further round or more):",
      sum(r.get("requests", 1) > 2 for r in rerun.values()))
