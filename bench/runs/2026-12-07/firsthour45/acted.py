"""The first-hour runs in which session 46's call-time checks spoke: a refusal of a conversion
the request does not ask for (``unasked_conversion``), a refusal of a call over made-up
figures (``unsourced_arguments``: the peers rule and its "what would work first" line act
there), or a failed lookup told a common word of the request is not a name, or the ids its
names gave. Greedy decoding makes the same calls until one of these speaks, so only these
runs can differ from the code before them: they are the ones to rerun on it for a pair.

    python3 bench/runs/2026-12-07/firsthour45/acted.py --db TRACES.db [...] --logs DIR [...]

Prints the ``agent/question`` keys (``--only``'s form), comma-separated.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

SIGNS = ("is a word of the request, not a name", "' for '")
KINDS = ("unasked_conversion", "unsourced_arguments")


def acted_runs(path: str) -> set[str]:
    found: set[str] = set()
    with sqlite3.connect(path) as db:
        for run_id, data in db.execute("select run_id, data from steps"):
            for call in json.loads(data).get("tool_calls", []):
                error = call.get("error") or ""
                if call.get("error_type") in KINDS or any(sign in error for sign in SIGNS):
                    found.add(run_id)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", nargs="+", required=True)
    parser.add_argument("--logs", nargs="+", required=True)
    args = parser.parse_args()
    runs = set().union(*(acted_runs(p) for p in args.db))
    keys = []
    for folder in args.logs:
        for log in sorted(Path(folder).glob("h*.jsonl")):
            for line in log.read_text().splitlines():
                record = json.loads(line)
                if record.get("run_id") in runs:
                    keys.append(f"{log.stem}/{record['case']}")
    print(",".join(keys))


if __name__ == "__main__":
    main()
