"""The table of a bench/bfcl_local.py --spread run: only balanced, complete prefixes count.

Reads the --log and the committed selection; K is the largest number such that every arm has
a result for the first K entries of every category's run order (selection.json "run_order").
Only those K x 5 entries are counted, for every arm alike; anything run beyond them is
reported as left out, never mixed in. Also splits the counted entries by whether they lie in
the first 100 of their file (the entries earlier configurations were tuned on).

    .venv/bin/python bench/runs/2026-12-05/bfcl/table.py LOG [SELECTION]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from toolcycle.evals.stats import sign_test, wilson

log = Path(sys.argv[1])
selection = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name(
    "selection.json")
chosen = json.loads(selection.read_text(encoding="utf-8"))["categories"]
records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
arms = list(dict.fromkeys(r["arm"] for r in records))
done = {(r["arm"], r["id"]): r for r in records}
k = min(next((n for n, i in enumerate(v["run_order"]) if (arm, i) not in done),
             len(v["run_order"])) for v in chosen.values() for arm in arms)
counted = {c: v["run_order"][:k] for c, v in chosen.items()}
index_of = {i: n for v in chosen.values() for n, i in zip(v["indices"], v["ids"], strict=True)}
ids = [i for c in counted.values() for i in c]
left_out = sum(1 for r in records if r["id"] not in set(ids))
print(f"{log.name}: K = {k} entries per category counted (the first K of each run order), "
      f"{len(ids)} per arm; {left_out} results beyond them left out\n")
print("| arm | " + " | ".join(f"{c} ({k})" for c in chosen) + " | overall [95 % Wilson] | "
      "in first 100 | after 100 | tokens/entry | s/entry (under load) |")
print("|---" * (len(chosen) + 6) + "|")
for arm in arms:
    rows = [done[(arm, i)] for i in ids]
    cells = [f"{sum(done[(arm, i)]['right'] for i in c)}/{len(c)}" for c in counted.values()]
    right = sum(r["right"] for r in rows)
    interval = wilson(right, len(rows)) if rows else None
    early = [r for r in rows if index_of[r["id"]] < 100]
    late = [r for r in rows if index_of[r["id"]] >= 100]
    overall = (f"{100 * interval.mean:.0f} % [{100 * interval.low:.0f}, "
               f"{100 * interval.high:.0f}]" if interval else "—")
    print(f"| {arm} | " + " | ".join(cells) + f" | {overall} | "
          f"{sum(r['right'] for r in early)}/{len(early)} | "
          f"{sum(r['right'] for r in late)}/{len(late)} | "
          f"{sum(r['tokens'] for r in rows) / max(1, len(rows)):.0f} | "
          f"{sum(r['seconds'] for r in rows) / max(1, len(rows)):.1f} |")
if len(arms) > 1 and ids:
    first = arms[0]
    for arm in arms[1:]:
        better = sum(done[(arm, i)]["right"] and not done[(first, i)]["right"] for i in ids)
        worse = sum(done[(first, i)]["right"] and not done[(arm, i)]["right"] for i in ids)
        print(f"\n{arm} vs {first}: {better} better, {worse} worse of {len(ids)} "
              f"(exact sign test p={sign_test(better, worse):.3g})")
