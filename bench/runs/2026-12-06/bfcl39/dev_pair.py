"""The 1.5B's development entries with and without the question about invented values.

Entries where the first reply gave no invented value are the same reply in both arms (greedy,
the same requests), so the runs that asked about nothing stand for both arms; where it did,
both arms were rerun side by side on the final code (asked-both-arms*.jsonl).

    python3 bench/runs/2026-12-06/bfcl39/dev_pair.py
"""

import json
import math
from pathlib import Path

HERE = Path(__file__).parent
BASE = "json+grammar+parallel+select+further"
ASKED = f"{BASE}+invented"


def rows(name):
    return [json.loads(line) for line in (HERE / name).open()]


first = {r["id"]: r for name in ("dev-1.5b-invented.jsonl", "dev40-1.5b-B.jsonl")
         for r in rows(name)}
both: dict[str, dict[str, bool]] = {}
for name in ("asked-both-arms.jsonl", "asked-both-arms-p20.jsonl"):
    for r in rows(name):
        both.setdefault(r["id"], {})[r["arm"]] = r["right"]
base, asked, fired = {}, {}, set()
for entry, r in first.items():
    if r.get("asked_again"):
        if len(both.get(entry, {})) < 2:
            continue  # (not rerun yet)
        base[entry], asked[entry] = both[entry][BASE], both[entry][ASKED]
        fired.add(entry)
    else:
        base[entry] = asked[entry] = r["right"]
cats = sorted({e.rsplit("_", 1)[0] for e in base})
asked_now = sum(1 for name in ("asked-both-arms.jsonl", "asked-both-arms-p20.jsonl")
                for r in rows(name) if r["arm"] == ASKED and r.get("asked_again"))
print(f"{len(base)} entries; {len(fired)} rerun with both arms (the development runs' broader "
      f"reading asked on them), of which the final code asked on {asked_now}")
print("| category | without | with the question |")
print("|---|---|---|")
for c in cats:
    ids = [e for e in base if e.rsplit("_", 1)[0] == c]
    print(f"| {c} ({len(ids)}) | {sum(base[e] for e in ids)} | {sum(asked[e] for e in ids)} |")
better = [e for e in base if asked[e] and not base[e]]
worse = [e for e in base if base[e] and not asked[e]]
n = len(better) + len(worse)
tail = sum(math.comb(n, k) for k in range(min(len(better), len(worse)) + 1))
p = min(1.0, 2 * tail / 2 ** n) if n else 1.0
print(f"| all ({len(base)}) | {sum(base.values())} | {sum(asked.values())} |")
print(f"right only with the question: {len(better)} {better}")
print(f"right only without: {len(worse)} {worse}; exact sign test p = {p:.3g}")
