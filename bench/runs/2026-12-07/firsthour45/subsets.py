"""Which questions of a first-hour run an arm can change, read from the run's traces and logs
(greedy decoding: an arm that acts only after some event gives the same run where that
event never happened, so only these need running again):

- ``refused``: an attempt before the last refused by grounding or the asked check
  (what ``withdrawn`` and the asked-field message act on);
- ``last_attempt``: three attempts and a status other than ``success`` (where a fourth
  attempt, the ``attempts4`` arm, could re-ask);
- ``asked_again``: a reply the local model's adapter asked again (the invented-values
  question among others: the ``no-invented`` arm can act only there).

    python3 bench/runs/2026-12-07/firsthour45/subsets.py DB [DB ...] --logs DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dbs", nargs="+")
    parser.add_argument("--logs", nargs="+", required=True)
    args = parser.parse_args()
    keys: dict[str, str] = {}
    for folder in args.logs:
        for log in Path(folder).glob("*.jsonl"):
            if log.name == "meta.jsonl":
                continue
            for line in log.read_text().splitlines():
                record = json.loads(line)
                if "run_id" in record:
                    keys[record["run_id"]] = f"{log.stem}/{record['case']}"
    found: dict[str, list[str]] = {"refused": [], "last_attempt": [], "asked_again": []}
    for db in args.dbs:
        with sqlite3.connect(db) as store:
            for run_id, status, header in store.execute(
                    "select run_id, status, header from runs"):
                if run_id not in keys:
                    continue
                attempts = json.loads(header)["attempts"]
                steps = [json.loads(d) for (d,) in store.execute(
                    "select data from steps where run_id = ? order by position", (run_id,))]
                if any(not a["success"] and a["validator"] in ("grounding", "asked")
                       for a in attempts):
                    found["refused"].append(keys[run_id])
                if len(attempts) >= 3 and status != "success":
                    found["last_attempt"].append(keys[run_id])
                if any(s.get("asked_again") for s in steps):
                    found["asked_again"].append(keys[run_id])
    for name, chosen in found.items():
        print(f"{name} ({len(chosen)}): {','.join(sorted(chosen))}")


if __name__ == "__main__":
    main()
