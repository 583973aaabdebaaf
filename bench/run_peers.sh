#!/usr/bin/env bash
# toolcycle side by side with the peers, in the shared harness: every figure from one run on
# one machine, interleaved and order-rotated like ../shared/bench-peers/run_all.sh (which we
# cannot edit: shared/ is read-only for the project). Peer venvs are set up as their READMEs say
# (see ../shared/bench-peers/<peer>/README.md); missing ones are skipped with a message.
#
#   REPS=2 SCENARIOS=S1,MEM,S2,S3,S4 bench/run_peers.sh     -> bench/results/<stamp>/summary.md
set -u
here=$(cd "$(dirname "$0")" && pwd)
peers=${BENCH_PEERS:-$(cd "$here/../../shared/bench-peers" && pwd)}
REPS=${REPS:-2}
SCENARIOS=${SCENARIOS:-S1,MEM,S2,S3,S4}
VENV_ROOT=${VENV_ROOT:-/tmp}
OUT=${OUT:-$here/results/$(date -u +%Y%m%dT%H%M%SZ)}
EXTRA=""
[ -n "${QUICK:-}" ] && EXTRA="--quick"
mkdir -p "$OUT"
# tag | script | python | extra args
PEERS=(
  "toolcycle|$here/peers_adapter.py|$here/../.venv/bin/python|"
  "pydantic-ai|$peers/pydantic_ai/bench.py|$VENV_ROOT/peer-pydanticai/bin/python|"
  "openai-agents|$peers/openai_agents/bench.py|$VENV_ROOT/peer-openaiagents/bin/python|"
  "langgraph-create_react_agent|$peers/langgraph/bench.py|$VENV_ROOT/peer-langgraph/bin/python|--variant prebuilt"
  "smolagents|$peers/smolagents/bench.py|$VENV_ROOT/peer-smolagents/bin/python|"
  "dspy-react|$peers/dspy/bench.py|$VENV_ROOT/peer-dspy/bin/python|"
  "baseline-minimal-loop|$peers/baseline_minimal/bench.py|$(command -v python3)|"
)
N=${#PEERS[@]}
for rep in $(seq 1 "$REPS"); do
  for i in $(seq 0 $((N - 1))); do
    IFS='|' read -r tag script py extra <<< "${PEERS[$(( (i + rep - 1) % N ))]}"
    if [ ! -x "$py" ]; then echo "skip $tag: no $py" >&2; continue; fi
    echo "[$(date -u +%H:%M:%S)] rep $rep/$REPS  $tag" >&2
    # shellcheck disable=SC2086
    BENCH_PEERS="$peers" "$py" "$script" --rep "$rep" --scenarios "$SCENARIOS" $extra $EXTRA \
      >> "$OUT/$tag.jsonl" 2>> "$OUT/$tag.stderr" || echo "  $tag rep $rep FAILED" >&2
  done
done
python3 "$peers/aggregate.py" "$OUT" > "$OUT/summary.md"
BENCH_PEERS="$peers" python3 "$here/peers_headline.py" "$OUT" > "$OUT/headline.md"
echo "wrote $OUT/summary.md" >&2
