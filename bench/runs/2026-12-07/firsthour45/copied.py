"""How many first-hour runs ended on a copied refused figure: over every trace store of
2026-12-06 and 07 (development and held-out runs alike), the runs of more than one attempt
whose last answer holds a number that an earlier attempt's answer held and that no tool
result, no call's arguments and not the request hold; by the run's status.

    python3 bench/runs/2026-12-07/firsthour45/copied.py

Counted at 18:00 UTC on 2026-12-07 (27 runs, none a success), before this folder's own runs;
run now, it counts those too.
"""

from __future__ import annotations

import glob
import json
import re
import sqlite3
from collections import Counter
from typing import Any

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
STEPS = "select data from steps where run_id = ? order by position"


def numbers(text: str) -> set[float]:
    return {float(n) for n in NUMBER.findall(text or "")}


def answer_of(step: dict[str, Any]) -> str | None:
    """A step's answer: its text where it made no call, its output call's arguments."""
    calls = step.get("tool_calls") or []
    if not calls:
        return str(step.get("thought") or "")
    given = [json.dumps(c.get("args")) for c in calls if c["name"] == "final_result"]
    return " ".join(given) if given else None


def main() -> None:
    statuses: Counter[str] = Counter()
    runs = 0
    for db in sorted(glob.glob("bench/runs/2026-12-0[67]/firsthour*/traces-*.db")):
        with sqlite3.connect(db) as store:
            for run_id, status, header in store.execute("select run_id, status, header from runs"):
                steps = [json.loads(d) for (d,) in store.execute(STEPS, (run_id,))]
                runs += 1
                if not steps or len({s.get("attempt") for s in steps}) < 2:
                    continue
                held: set[float] = set()
                for step in steps:
                    for call in step.get("tool_calls") or []:
                        held |= numbers(str(call.get("result") or ""))
                        held |= numbers(json.dumps(call.get("args")))
                last = steps[-1].get("attempt")
                earlier: set[float] = set()
                for step in steps[:-1]:
                    said = answer_of(step)
                    if said and step.get("attempt") != last:
                        earlier |= numbers(said)
                final = answer_of(steps[-1]) or ""
                request = numbers(json.loads(header)["user_prompt"])
                if (numbers(final) & earlier) - held - request:
                    statuses[status] += 1
    print(f"{runs} runs; ended on a copied refused figure: {sum(statuses.values())}, "
          f"by status {dict(statuses)}")


if __name__ == "__main__":
    main()
