"""The markdown table of a bench/bfcl_local.py --log file, per arm: accuracy per category (and
how many entries of it the arm ran), overall over the categories it completed, tokens and
seconds per call, questions stopped at the deadline.

    .venv/bin/python bench/runs/2026-11-27/bfcl/table.py bench/runs/2026-11-27/bfcl/bfcl-100.jsonl
        [--arms "json+lazy+parallel+select,llama-cpp fc,server+openai"]
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


# The target, on the entries every compared arm ran: toolcycle's best configuration
# (one arm: the best overall) against the best raw path of each category (ahead in every
# one?) and overall (by >= 10 points?). ``--arms a,b,c`` limits which arms are compared.
RAW = ("llama-cpp fc", "server+openai")
compared = [a for a in rows if len(sys.argv) < 4 or sys.argv[2] != "--arms"
            or a in sys.argv[3].split(",")]
by_key = {(str(r["arm"]), str(r["id"])): bool(r["right"]) for rs in rows.values() for r in rs}
entries = {str(r["id"]): str(r["category"]) for rs in rows.values() for r in rs}
common = {i: c for i, c in entries.items() if all((arm, i) in by_key for arm in compared)}
ours_arms = [a for a in compared if a not in RAW]
raw_arms = [a for a in compared if a in RAW]
if common and ours_arms and raw_arms:
    def score(arm: str, ids: list[str]) -> float:
        return 100 * sum(by_key[arm, i] for i in ids) / len(ids)

    everything = list(common)
    ours = max(ours_arms, key=lambda a: score(a, everything))
    print(f"\nOn the {len(common)} entries every compared arm ran: {ours} (toolcycle's best "
          "overall) vs the best raw path of each category")
    ahead, lines, gap = True, [], 0.0
    for category in [*CATEGORIES, None]:
        ids = [i for i, c in common.items() if category in (None, c)]
        if not ids:
            continue
        raw = max(raw_arms, key=lambda a: score(a, ids))
        gap = score(ours, ids) - score(raw, ids)
        if category is not None:
            ahead = ahead and gap > 0
        lines.append(f"- {category or 'overall'} ({len(ids)}): {score(ours, ids):.1f} % vs "
                     f"{raw} {score(raw, ids):.1f} % ({gap:+.1f} points)")
    print("\n".join(lines))
    print(f"ahead in every category: {'yes' if ahead else 'no'}; overall {gap:+.1f} points "
          f"(target: ahead everywhere and >= +10 overall)")
