"""The dev comparison: the baseline arm, and the further-calls arm in each wording measured.

    .venv/bin/python bench/runs/2026-12-05/bfcl-count/compare.py

dev.jsonl holds the baseline arm (json+grammar+parallel+select) and the further-calls arm
with wording 2 ("... more calls whose arguments you already know ...") on all 35 dev
entries; dev-wording1.jsonl holds the further-calls arm with wording 1 ("... more calls ...")
on the entries where the value test fired (its first reply left request values out: those
entries' tokens differ from the baseline's). On every other entry the further-calls arm makes
no second request and its first request is the baseline's (greedy decoding, same prompt), so
wording 1's result there is wording 2's run's; this script fills them in from it and says so.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = "json+grammar+parallel+select"
FURTHER = f"{BASE}+further"
CATEGORIES = ("parallel", "parallel_multiple", "simple_python", "multiple", "irrelevance")


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line] \
        if path.exists() else []


def main() -> None:
    dev = rows(HERE / "dev.jsonl")
    base = {r["id"]: r for r in dev if r["arm"] == BASE}
    second = {r["id"]: r for r in dev if r["arm"] == FURTHER}
    fired = {i for i, r in second.items() if r["tokens"] != base[i]["tokens"]}
    first = {r["id"]: r for r in rows(HERE / "dev-wording1.jsonl") if r["arm"] == FURTHER}
    arms = {"baseline (list replies, no further calls)": base,
            "further calls, wording 2 (\"whose arguments you already know\")": second}
    if first:
        arms["further calls, wording 1 (the default)"] = {
            i: first.get(i, r) if i in fired else r for i, r in second.items()}
    ids = [i for i in base if i in second]
    print(f"{len(ids)} dev entries; the value test fired on {len(fired)}: {sorted(fired)}")
    missing = fired - set(first)
    if first and missing:
        print(f"wording 1 not run on: {sorted(missing)} (wording 2's result stands in)")
    print("\n| arm | " + " | ".join(CATEGORIES) + " | overall | tokens/entry | s/entry "
          "(under load) |")
    print("|---" * (len(CATEGORIES) + 4) + "|")
    for name, arm in arms.items():
        right: dict[str, int] = defaultdict(int)
        count: dict[str, int] = defaultdict(int)
        for i in ids:
            right[arm[i]["category"]] += arm[i]["right"]
            count[arm[i]["category"]] += 1
        cells = [f"{right[c]}/{count[c]}" for c in CATEGORIES]
        tokens = sum(arm[i]["tokens"] for i in ids) / len(ids)
        seconds = sum(arm[i]["seconds"] for i in ids) / len(ids)
        print(f"| {name} | " + " | ".join(cells) + f" | {sum(right.values())}/{len(ids)} | "
              f"{tokens:.0f} | {seconds:.1f} |")
    for name, arm in list(arms.items())[1:]:
        better = [i for i in ids if arm[i]["right"] and not base[i]["right"]]
        worse = [i for i in ids if base[i]["right"] and not arm[i]["right"]]
        print(f"\n{name} against the baseline: right only here {better}, "
              f"right only in the baseline {worse}")


def second_slice() -> None:
    """dev2.jsonl: 20 more parallel/parallel_multiple dev entries, the further-calls arm alone;
    each line's ``first_right`` grades its first reply alone, which is the baseline arm's reply
    (same greedy first request), so the pair comes from one run."""
    lines = [r for r in rows(HERE / "dev2.jsonl") if r["arm"] == FURTHER]
    if not lines:
        return
    print(f"\nsecond slice (dev2.jsonl), {len(lines)} entries:\n")
    print("| category | entries | baseline (first reply) | further calls | second request on |")
    print("|---|---|---|---|---|")
    for category in ("parallel", "parallel_multiple"):
        mine = [r for r in lines if r["category"] == category]
        print(f"| {category} | {len(mine)} | {sum(r['first_right'] for r in mine)} | "
              f"{sum(r['right'] for r in mine)} | {sum(r['requests'] > 1 for r in mine)} |")
    better = [r["id"] for r in lines if r["right"] and not r["first_right"]]
    worse = [r["id"] for r in lines if r["first_right"] and not r["right"]]
    print(f"\nright only with further calls {better}, only without {worse}")


if __name__ == "__main__":
    main()
    second_slice()
