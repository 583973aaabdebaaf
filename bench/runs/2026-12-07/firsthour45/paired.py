"""Two arms' answers to the same first-hour questions, paired by agent/question: right and
status in each, the questions one arm got right and the other wrong, and whether the two
runs' first attempts made the same calls (greedy decoding: they should, where an arm acts
only after the first refusal).

    python3 bench/runs/2026-12-07/firsthour45/paired.py --a DIR [DIR ...] --b DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def records(folders: list[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for folder in folders:
        seed = json.loads((Path(folder) / "meta.jsonl").read_text().splitlines()[0]).get("seed")
        for log in sorted(Path(folder).glob("h*.jsonl")):
            for line in log.read_text().splitlines():
                record = json.loads(line)
                if "case" in record:
                    found[f"{seed}/{log.stem}/{record['case']}"] = record
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", nargs="+", required=True)
    parser.add_argument("--b", nargs="+", required=True)
    args = parser.parse_args()
    a, b = records(args.a), records(args.b)
    both = sorted(set(a) & set(b))
    right = {k: (a[k]["scores"][0]["passed"], b[k]["scores"][0]["passed"]) for k in both}
    print(f"{len(both)} questions in both arms")
    print(f"right: A {sum(r[0] for r in right.values())}, B {sum(r[1] for r in right.values())}")
    print(f"success status: A {sum(a[k]['status'] == 'success' for k in both)}, "
          f"B {sum(b[k]['status'] == 'success' for k in both)}")
    print("only A right:", [k for k, r in right.items() if r[0] and not r[1]])
    print("only B right:", [k for k, r in right.items() if r[1] and not r[0]])
    for k in both:
        print(f"  {k}: A {'R' if right[k][0] else 'w'}/{a[k]['status']} {a[k]['iterations']} it,"
              f" B {'R' if right[k][1] else 'w'}/{b[k]['status']} {b[k]['iterations']} it,"
              f" tools same start: {a[k]['tools'][:2] == b[k]['tools'][:2]}")
    for name, arm in (("A", a), ("B", b)):
        wrong_success = [k for k in both if arm[k]["status"] == "success"
                         and not arm[k]["scores"][0]["passed"]]
        print(f"{name} wrong with status success: {wrong_success}")
    print(f"mean iterations A {sum(a[k]['iterations'] for k in both) / len(both):.1f}, "
          f"B {sum(b[k]['iterations'] for k in both) / len(both):.1f}; tokens A "
          f"{sum(a[k]['input_tokens'] + a[k]['output_tokens'] for k in both) / len(both):.0f}, "
          f"B {sum(b[k]['input_tokens'] + b[k]['output_tokens'] for k in both) / len(both):.0f}")


if __name__ == "__main__":
    main()
