"""Did the model follow a re-ask's "what would work"? Over every first-hour trace store of
2026-12-06 and 07: for each refused attempt whose message named a call that would work
("what would work: `add` over 400.1 and 622.8", or "it asks about `x` (`tool` gave ...):
add those figures instead"), whether the next attempt made that call (the tool, with those
figures among its arguments) and whether the answer after it gives its result.

    python3 bench/runs/2026-12-07/firsthour45/would_work_followed.py

At 18:10 UTC on 2026-12-07, before this folder's reruns: the call made in 24 of 28, its
result answered in 23 of those 24 (all 23 `success`). At 20:15 UTC, with this session's
runs: made in 35 of 42, answered in 34 of 35 (all 34 `success`).
"""

from __future__ import annotations

import glob
import json
import re
import sqlite3
from collections import Counter
from typing import Any

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
NAMED = re.compile(r"what would work: `(\w+)` over ([-\d., and]+)")
FIELD = re.compile(r"it asks about `\w+` \(`\w+` gave ([^)]*)\): add those figures instead")
STEPS = "select data from steps where run_id = ? order by position"


def numbers(text: str) -> set[float]:
    return {float(n) for n in NUMBER.findall((text or "").replace(",", ""))}


def answer_of(step: dict[str, Any]) -> str:
    calls = step.get("tool_calls") or []
    if not calls:
        return str(step.get("thought") or "")
    return " ".join(json.dumps(c.get("args")) for c in calls if c["name"] == "final_result")


def main() -> None:
    seen: Counter[tuple[str, str]] = Counter()
    for db in sorted(glob.glob("bench/runs/2026-12-0[67]/firsthour*/traces-*.db")):
        with sqlite3.connect(db) as store:
            for run_id, status, header in store.execute("select run_id, status, header from runs"):
                steps = [json.loads(d) for (d,) in store.execute(STEPS, (run_id,))]
                for attempt in json.loads(header)["attempts"]:
                    text = " ".join(attempt["errors"])
                    named, field = NAMED.search(text), FIELD.search(text)
                    if attempt["success"] or not (named or field):
                        continue
                    tool, wanted = ((named.group(1), numbers(named.group(2))) if named
                                    else ("add", numbers(field.group(1) if field else "")))
                    later = [s for s in steps if s.get("attempt") == attempt["attempt"] + 1]
                    made = None
                    for index, step in enumerate(later):
                        for call in step.get("tool_calls") or []:
                            if call["name"] == tool and wanted and wanted <= numbers(
                                    json.dumps(call.get("args"))):
                                made = (index, call.get("result"))
                    if made is None:
                        seen[("the call not made", status)] += 1
                        continue
                    after = later[made[0] + 1:]
                    used = bool(after) and bool(numbers(str(made[1]))
                                                & numbers(answer_of(after[-1])))
                    seen[("made; its result answered" if used else "made; not answered",
                          status)] += 1
    for key, count in sorted(seen.items()):
        print(key, count)


if __name__ == "__main__":
    main()
