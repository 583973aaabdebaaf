"""Per arm and category: right / run, and the miss kinds (the checker's error class)."""
import collections
import json
import sys

with open(sys.argv[1], encoding="utf-8") as log:
    rows = [json.loads(line) for line in log]
by = collections.defaultdict(lambda: [0, 0])
kinds = collections.defaultdict(collections.Counter)
for r in rows:
    key = (r["arm"], r["category"])
    by[key][0] += bool(r["right"])
    by[key][1] += 1
    if not r["right"]:
        kinds[r["arm"]][(r["category"], (r.get("miss") or "")[:60])] += 1
arms = sorted({a for a, _ in by})
for arm in arms:
    mine = [v for (a, _), v in by.items() if a == arm]
    total = [sum(v[0] for v in mine), sum(v[1] for v in mine)]
    cells = "  ".join(f"{c}:{v[0]}/{v[1]}" for (a, c), v in sorted(by.items()) if a == arm)
    print(f"{arm:45s} {total[0]}/{total[1]}  {cells}")
if "-v" in sys.argv:
    for arm in arms:
        print("\n", arm)
        for k, n in kinds[arm].most_common():
            print(f"  {n:3d} {k}")
