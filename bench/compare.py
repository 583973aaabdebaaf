"""Side by side: two sets of `bench/overhead.py --json` runs (say, before and after a change).

    .venv/bin/python bench/compare.py 'bench/runs/DAY/overhead-before-*.json' \
        'bench/runs/DAY/overhead-after-*.json' [--all]

Prints, per figure, the median over the runs of each set with the range in brackets and the
change in percent. By default only N=50 for the per-iteration figures (the others are in the
JSON files); ``--all`` prints every figure. To take the runs, interleave them so that both sets
see the same machine: ``for i in 1 2 3; do (before) ...; (after) ...; done`` (docs/benchmarks.md
gives the commands used).
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
from typing import Any

Key = tuple[str, tuple[tuple[str, Any], ...]]


def load(pattern: str) -> dict[Key, list[float]]:
    figures: dict[Key, list[float]] = {}
    for path in sorted(glob.glob(pattern)):
        with open(path) as file:
            for figure in json.load(file):
                params = tuple(sorted((k, v) for k, v in figure.items()
                                      if k not in ("figure", "value", "unit")))
                figures.setdefault((figure["figure"], params), []).append(figure["value"])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--all", action="store_true", help="every figure, every N")
    args = parser.parse_args()
    before, after = load(args.before), load(args.after)
    print(f"{'figure':<36} {'parameters':<40} {'before':>18} {'after':>18} {'change':>8}")
    for key, old in before.items():
        new = after.get(key)
        name, params = key
        shown = " ".join(f"{k}={v}" for k, v in params)
        if new is None or (not args.all and name.startswith("S1") and "N=50" not in shown
                           and "turns" not in name):
            continue
        a, b = statistics.median(old), statistics.median(new)
        change = (b - a) / a * 100 if a else 0.0
        print(f"{name[:36]:<36} {shown[:40]:<40} "
              f"{a:8.2f} ({min(old):.1f}-{max(old):.1f}) {b:8.2f} ({min(new):.1f}-{max(new):.1f})"
              f" {change:+7.1f}%")


if __name__ == "__main__":
    main()
