"""The trace counts behind two of session 44's changes, over every first-hour trace store of
2026-12-06 and 07 (development and held-out runs alike):

- after an asked re-ask that named a converter ("converts to"), did the next attempt's first
  turn call, and how did the run end (``asked.convert_first``: 4 of 18 answered without a
  call, all ``mismatched``; 13 of the 14 that called ended ``success``);
- after a run's first tool error saying another tool "can give it", what came next
  (``producer_first``: 181 called that tool, 95 answered in words, 15 repeated the call).

    python3 bench/runs/2026-12-07/firsthour44/reask_outcomes.py

Counted before this folder's own runs were added, so running it now counts those too.
"""

from __future__ import annotations

import glob
import json
import re
import sqlite3
from collections import Counter

STEPS = "select data from steps where run_id = ? order by position"


def main() -> None:
    converter: Counter[tuple[str, str]] = Counter()
    after_error: Counter[str] = Counter()
    for db in glob.glob("bench/runs/2026-12-0[67]/firsthour*/traces-*.db"):
        with sqlite3.connect(db) as store:
            for run_id, status, header in store.execute("select run_id, status, header from runs"):
                steps = [json.loads(d) for (d,) in store.execute(STEPS, (run_id,))]
                for attempt in json.loads(header)["attempts"]:
                    if attempt["validator"] == "asked" and not attempt["success"] and any(
                            "converts to" in e for e in attempt["errors"]):
                        later = [s for s in steps if s.get("attempt") == attempt["attempt"] + 1]
                        if later:
                            first = "calls" if later[0].get("tool_calls") else "answers"
                            converter[(first, status)] += 1
                after_error[_after_first_error(steps)] += 1
    print("after a re-ask naming a converter (next first turn, run status):")
    for key, count in sorted(converter.items()):
        print(" ", key, count)
    print("after the first 'can give it' error:", dict(after_error))


def _after_first_error(steps: list[dict[str, object]]) -> str:
    for index, step in enumerate(steps):
        calls = step.get("tool_calls") or []
        assert isinstance(calls, list)
        failed = [c for c in calls if c.get("error") and "can give it" in c["error"]]
        if not failed:
            continue
        named = re.search(r"`(\w+)` can give it", failed[0]["error"])
        producer = named.group(1) if named else None
        names = [c["name"] for c in calls]
        if producer in names and names.index(producer) > names.index(failed[0]["name"]):
            return "called it later in the same reply"
        if index + 1 == len(steps):
            return "run ended"
        following = steps[index + 1].get("tool_calls") or []
        assert isinstance(following, list)
        called = [c["name"] for c in following]
        if not called:
            return "answered in words"
        if producer in called:
            return "called that tool next"
        return "repeated the call" if failed[0]["name"] in called else "another call"
    return "no such error"


if __name__ == "__main__":
    main()
