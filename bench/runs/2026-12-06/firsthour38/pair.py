"""Pair two first-hour arms' logs question by question: right before and after, the questions
made better and worse, wrong answers reported ``success``, and a two-sided sign test.

    python3 pair.py ARM_DIR_BEFORE ARM_DIR_AFTER
"""

from __future__ import annotations

import json
import sys
from math import comb
from pathlib import Path

Outcome = tuple[bool, str]  # (right, status)


def load(folder: str) -> dict[tuple[str, str], Outcome]:
    found: dict[tuple[str, str], Outcome] = {}
    for path in Path(folder).glob("h*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "case" in row:
                found[(path.stem, row["case"])] = (row["scores"][0]["passed"], row["status"])
    return found


def main() -> None:
    before, after = load(sys.argv[1]), load(sys.argv[2])
    keys = sorted(set(before) & set(after))
    better = [k for k in keys if after[k][0] and not before[k][0]]
    worse = [k for k in keys if before[k][0] and not after[k][0]]

    def wrong_success(arm: dict[tuple[str, str], Outcome]) -> int:
        return sum(1 for k in keys if not arm[k][0] and arm[k][1] == "success")

    print(f"pairs {len(keys)}: right {sum(before[k][0] for k in keys)} -> "
          f"{sum(after[k][0] for k in keys)}; better {len(better)} {better}; "
          f"worse {len(worse)} {worse}; wrong+success {wrong_success(before)} -> "
          f"{wrong_success(after)}")
    changed = len(better) + len(worse)
    if changed:
        fewer = min(len(better), len(worse))
        tail = sum(comb(changed, i) for i in range(fewer + 1)) / 2 ** changed
        print(f"sign test p (two-sided) = {min(1.0, 2 * tail):.3f}")


if __name__ == "__main__":
    main()
