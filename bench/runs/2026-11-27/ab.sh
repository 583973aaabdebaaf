#!/bin/bash
# Interleaved A/B of the loop's overhead: a pre-v2 tree against this one, same interpreter.
#   git worktree add /tmp/before 4cf7b2c
#   bash bench/runs/2026-11-27/ab.sh OUTDIR [BEFORE_TREE]
# Five rounds of `bench/overhead.py --only S1,S3,S4` per tree, each tree's own bench and
# package (PYTHONPATH names the tree: without it the editable install would be measured twice),
# then bench/compare.py, then three `bench/run_split.py --concurrent` pairs.
set -e
out=$(realpath -m "$1"); before=${2:-/tmp/before}
here=$(cd "$(dirname "$0")/../../.." && pwd)
py=$here/.venv/bin/python
mkdir -p "$out"
for i in 1 2 3 4 5; do
  (cd "$before" && PYTHONPATH="$before" "$py" bench/overhead.py --only S1,S3,S4 --json "$out/before-$i.json" >/dev/null 2>&1)
  (cd "$here" && PYTHONPATH="$here" "$py" bench/overhead.py --only S1,S3,S4 --json "$out/after-$i.json" >/dev/null 2>&1)
done
(cd "$here" && "$py" bench/compare.py "$out/before-*.json" "$out/after-*.json" > "$out/compare.txt")
for i in 1 2 3; do
  (cd "$before" && "$py" "$here/bench/run_split.py" --concurrent)
  (cd "$here" && "$py" bench/run_split.py --concurrent)
done > "$out/run_split.txt" 2>&1
