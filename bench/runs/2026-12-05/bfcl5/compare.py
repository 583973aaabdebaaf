"""Issue 68, the graded selection's two parallel categories again, with further calls on.

    .venv/bin/python bench/runs/2026-12-05/bfcl5/compare.py [--first N] [--skip M]

``--first N`` (20 unless given): the first N of each category's run order; 20 is the set fixed
before the run (``ids.txt``), 40 adds the next 20 of each (``ids-40.txt``), run after the
first 40 were looked at, so reported beside them, never instead of them; ``--skip 20
--first 40`` counts those 20 of each alone.

Pairs, question by question, this directory's run (``further-1.5b.jsonl``: the arm
``json+grammar+parallel+select+further``, the current defaults of ``local_model``) with the
graded run on the same entries (``../bfcl/graded-1.5b.jsonl``, at 517bf8d, before further
calls existed). Only a balanced prefix counts: K is the largest number such that the first K
of both categories' run orders (``../bfcl/selection.json``) have a result in the new log, so a
run stopped early is compared on the same entries in both runs, chosen before any result.

``first_right`` (logged by the further-calls arm) grades the first reply alone: the same
greedy first request as the arm without further calls, on this run's code and threads. It
separates what further calls changed from what the rest of the code (and one thread instead
of two) changed. ``raw-1.5b.jsonl``, when present, is llama-cpp-python's
``chatml-function-calling`` handler run again on the same entries.

The last figure combines two code versions: the graded run's 200 answers with these K x 2
replaced by this run's. It is not a measurement of one code version.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))
from toolcycle.evals.stats import sign_test, wilson  # noqa: E402

GRADED = HERE.parent / "bfcl" / "graded-1.5b.jsonl"
SELECTION = HERE.parent / "bfcl" / "selection.json"
BEFORE = "json+grammar+parallel+select"
NOW = f"{BEFORE}+further"
RAW = "llama-cpp fc"
CATEGORIES = ("parallel", "parallel_multiple")
GRADED_K = 40  # the graded table's balanced count (docs/benchmarks.md): 40 per category


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def balanced(order: dict[str, list[str]], done: set[str]) -> int:
    return min(next((n for n, i in enumerate(ids) if i not in done), len(ids))
               for ids in order.values())


def row(name: str, arm: dict[str, dict], counted: dict[str, list[str]],
        key: str = "right") -> str:
    ids = [i for c in counted.values() for i in c]
    cells = [f"{sum(bool(arm[i][key]) for i in c)}/{len(c)}" for c in counted.values()]
    right = sum(bool(arm[i][key]) for i in ids)
    share = wilson(right, len(ids))
    if key != "right":
        return (f"| {name} | " + " | ".join(cells) + f" | {right}/{len(ids)} "
                f"({100 * share.mean:.0f} %) | | | |")
    tokens = sum(arm[i]["tokens"] for i in ids) / len(ids)
    seconds = sum(arm[i]["seconds"] for i in ids) / len(ids)
    requests = sum(arm[i].get("requests", 1) for i in ids) / len(ids)
    return (f"| {name} | " + " | ".join(cells) + f" | {right}/{len(ids)} "
            f"({100 * share.mean:.0f} %) | {tokens:.0f} | {seconds:.1f} | {requests:.2f} |")


def paired(label: str, now: dict[str, dict], before: dict[str, dict], ids: list[str],
           now_key: str = "right") -> None:
    both = sum(bool(now[i][now_key]) and before[i]["right"] for i in ids)
    only_now = [i for i in ids if now[i][now_key] and not before[i]["right"]]
    only_before = [i for i in ids if before[i]["right"] and not now[i][now_key]]
    neither = len(ids) - both - len(only_now) - len(only_before)
    print(f"- {label}: right in both {both}, only now {len(only_now)}, only before "
          f"{len(only_before)}, neither {neither} (exact sign test p = "
          f"{sign_test(len(only_now), len(only_before)):.3g})")
    for name, which in (("only now", only_now), ("only before", only_before)):
        if which:
            print(f"    {name}: {', '.join(which)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", type=int, default=20,
                        help="the first N of each category's run order (20: ids.txt)")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave the first M of each run order out (20 --first 40: the "
                        "entries added after the first 40 were looked at)")
    args = parser.parse_args()
    first, skip = args.first, args.skip
    selection = json.loads(SELECTION.read_text(encoding="utf-8"))["categories"]
    graded = records(GRADED)
    before = {r["id"]: r for r in graded if r["arm"] == BEFORE}
    raw_before = {r["id"]: r for r in graded if r["arm"] == RAW}
    now = {r["id"]: r for r in records(HERE / "further-1.5b.jsonl") if r["arm"] == NOW}
    raw_now = {r["id"]: r for r in records(HERE / "raw-1.5b.jsonl") if r["arm"] == RAW}
    order = {c: selection[c]["run_order"][skip:first] for c in CATEGORIES}
    k = balanced(order, set(now))
    counted = {c: ids[:k] for c, ids in order.items()}
    ids = [i for c in counted.values() for i in c]
    if not ids:
        print("no balanced prefix in further-1.5b.jsonl yet")
        return
    print(f"K = {k} of entries {skip + 1}-{first} per category counted (the first K of them "
          "in each run order), "
          f"{len(ids)} entries; {len(set(now) - set(ids))} results beyond them left out\n")
    head = " | ".join(f"{c} ({k})" for c in CATEGORIES)
    print(f"| arm | {head} | overall | tokens/entry | s/entry (under load) | requests/entry |")
    print("|---" * (len(CATEGORIES) + 5) + "|")
    print(row("now: `+further` (current defaults), 1 thread", now, counted))
    print(row("now: its first reply alone (= no further calls)", now, counted, "first_right"))
    print(row("graded run at 517bf8d: `json+grammar+parallel+select`, 2 threads", before,
              counted))
    print(row("graded run: llama-cpp-python `chatml-function-calling`", raw_before, counted))
    raw_k = balanced(counted, set(raw_now))
    if raw_k == k:
        print(row("now: llama-cpp-python `chatml-function-calling`, rerun, 1 thread", raw_now,
                  counted))
    elif raw_now:
        print(f"(raw-1.5b.jsonl covers only the first {raw_k} per category: not tabled)")
    print("\nPaired by question (now against the graded run's toolcycle arm):")
    paired("further calls now vs graded run", now, before, ids)
    paired("first reply alone now vs graded run", now, before, ids, "first_right")
    first_as_before = {i: {"right": now[i]["first_right"]} for i in ids}
    paired("further calls now vs first reply alone now (same run)", now, first_as_before, ids)
    if raw_k == k:
        paired("raw handler rerun vs graded run's raw handler", raw_now, raw_before, ids)
    order_all = {c: v["run_order"][:GRADED_K] for c, v in selection.items()}
    everything = [i for c in order_all.values() for i in c]
    combined = sum(now[i]["right"] if i in now and i in ids else before[i]["right"]
                   for i in everything)
    graded_right = sum(before[i]["right"] for i in everything)
    share, old = wilson(combined, len(everything)), wilson(graded_right, len(everything))
    print(f"\nThe graded selection's {len(everything)} counted answers: {graded_right} right "
          f"({100 * old.mean:.0f} % [{100 * old.low:.0f}, {100 * old.high:.0f}]) in the graded "
          f"run; with these {len(ids)} taken from this run and the other "
          f"{len(everything) - len(ids)} from the graded run: {combined} "
          f"({100 * share.mean:.0f} % [{100 * share.low:.0f}, {100 * share.high:.0f}]), "
          "a combination of two code versions, not a measurement of one")


if __name__ == "__main__":
    main()
