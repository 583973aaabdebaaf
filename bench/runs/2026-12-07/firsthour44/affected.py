"""Which runs of a first-hour run folder the code after it could change: the wrong answers,
and those whose trace holds an asked re-ask that named a converter (``asked.convert_first``)
or a failed call given the request's name with words of its own
(``request_spelling.name_within``). Prints them and their ``--only`` keys.

    .venv/bin/python bench/runs/2026-12-07/firsthour44/affected.py bench/runs/2026-12-07/firsthour44
"""

from __future__ import annotations

import glob
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from toolcycle.run.request_spelling import name_within

STEPS = "select data from steps where run_id = ? order by position"


def traces(folder: str) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    runs = {}
    for db in glob.glob(f"{folder}/traces-*.db"):
        with sqlite3.connect(db) as store:
            for run_id, header in store.execute("select run_id, header from runs"):
                steps = [json.loads(x) for (x,) in store.execute(STEPS, (run_id,))]
                runs[run_id] = (json.loads(header), steps)
    return runs


def why(header: dict[str, Any], steps: list[dict[str, Any]]) -> set[str]:
    found = set()
    if any(a["validator"] == "asked" and any("converts to" in e for e in a["errors"])
           for a in header["attempts"]):
        found.add("converter named")
    request = header["user_prompt"]
    for step in steps:
        for record in step.get("tool_calls") or []:
            if record.get("error") and isinstance(record.get("args"), dict):
                found.update(f"name within {v!r}" for v in record["args"].values()
                             if isinstance(v, str) and v not in request
                             and name_within(v, request))
    return found


def main(folder: str) -> None:
    runs, keys = traces(folder), []
    for log in sorted(glob.glob(f"{folder}/heldout-default-6c0d05a*/h*.jsonl")):
        agent = Path(log).stem
        for line in Path(log).read_text().splitlines():
            record = json.loads(line)
            if "case" not in record:
                continue
            reasons = why(*runs[record["run_id"]])
            if reasons or not record["scores"][0]["passed"]:
                keys.append(f"{agent}/{record['case']}")
                print(agent, record["case"], record["status"], record["scores"][0]["passed"],
                      sorted(reasons))
    print(",".join(keys))


if __name__ == "__main__":
    main(sys.argv[1])
