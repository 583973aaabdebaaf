#!/usr/bin/env bash
# toolcycle's agent-as-tool and handoff overhead against the OpenAI Agents SDK's, interleaved
# rep by rep on the same machine (the only fair comparison on a shared host), order rotated.
#   bench/run_teams.sh [REPS] [N] [RUNS]      (PEER_PYTHON: the openai-agents venv's python)
# Prints every JSON line, then the median per (peer, scenario, metric) across reps.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
N=${2:-50}
RUNS=${3:-20}
PEER_PYTHON=${PEER_PYTHON:-/tmp/peer-openaiagents/bin/python}
OUT=$(mktemp)
for rep in $(seq 1 "$REPS"); do
  if (( rep % 2 )); then order="toolcycle peer"; else order="peer toolcycle"; fi
  for who in $order; do
    if [[ $who == toolcycle ]]; then
      PYTHONPATH=$PWD .venv/bin/python bench/teams.py --n "$N" --runs "$RUNS" --rep-id "$rep" | tee -a "$OUT"
    elif [[ -x $PEER_PYTHON ]]; then
      "$PEER_PYTHON" bench/teams_peer.py --n "$N" --runs "$RUNS" --rep-id "$rep" | tee -a "$OUT"
    fi
  done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
keys = sorted({(r["peer"], r["scenario"], r["metric"]) for r in rows})
print(f"{'peer':<15}{'scenario':<10}{'metric':<13}{'median':>10}  reps")
for key in keys:
    values = [r["value"] for r in rows if (r["peer"], r["scenario"], r["metric"]) == key]
    print(f"{key[0]:<15}{key[1]:<10}{key[2]:<13}{statistics.median(values):>10.1f}  {len(values)}")
PY
