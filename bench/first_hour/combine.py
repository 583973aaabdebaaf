"""One report over first-hour runs split across processes (each an arm's log folder).

    .venv/bin/python -m bench.first_hour.combine RUN_FOLDER/heldout-default-TAG \
        RUN_FOLDER/heldout-default-TAGb

Right answers with a Wilson interval, statuses, the wrong answers whose status says
``success`` (the figure the status must keep at zero), and the means a question costs.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from toolcycle.evals.stats import wilson


def main(folders: list[str]) -> None:
    rows: list[tuple[str, dict[str, Any]]] = []
    for folder in folders:
        for path in sorted(Path(folder).glob("h*.jsonl")):
            for line in path.open():
                record = json.loads(line)
                if "case" in record:
                    rows.append((path.stem, record))
    if not rows:
        raise SystemExit(f"no answered questions under {folders}")
    right = [r for _, r in rows if r["scores"][0]["passed"]]
    statuses = Counter(r["status"] for _, r in rows)
    wrong_success = [f"{a}/{r['case']}" for a, r in rows
                     if not r["scores"][0]["passed"] and r["status"] == "success"]
    print(f"{len(rows)} questions, {len({a for a, _ in rows})} agents")
    print(f"right {len(right)} / {len(rows)} = {len(right) / len(rows):.0%}, 95 % CI "
          f"{wilson(len(right), len(rows))}")
    print(f"statuses {dict(statuses)}")
    print(f"wrong answers whose status is success: {len(wrong_success)} {wrong_success}")
    wrong = Counter(r["status"] for _, r in rows if not r["scores"][0]["passed"])
    print(f"wrong, by status: {dict(wrong)}; right but not success: "
          f"{sum(1 for r in right if r['status'] != 'success')}")
    print(f"mean iterations {sum(r['iterations'] for _, r in rows) / len(rows):.1f}, tokens "
          f"{sum(r['input_tokens'] + r['output_tokens'] for _, r in rows) / len(rows):.0f}, "
          f"latency {sum(r['latency_s'] for _, r in rows) / len(rows):.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
