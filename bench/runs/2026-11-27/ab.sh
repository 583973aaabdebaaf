#!/bin/bash
# interleaved A/B: before tree (4cf7b2c) vs /work/main, same venv
out=$1; mkdir -p $out
for i in 1 2 3 4 5; do
  (cd /tmp/before && PYTHONPATH=/tmp/before /work/main/.venv/bin/python bench/overhead.py --only S1,S3,S4 --json $out/before-$i.json >/dev/null 2>&1)
  (cd /work/main && PYTHONPATH=/work/main .venv/bin/python bench/overhead.py --only S1,S3,S4 --json $out/after-$i.json >/dev/null 2>&1)
done
cd /work/main && .venv/bin/python bench/compare.py "$out/before-*.json" "$out/after-*.json" > $out/compare.txt
for i in 1 2 3; do (cd /tmp/before && /work/main/.venv/bin/python /work/main/bench/run_split.py --concurrent); (cd /work/main && .venv/bin/python bench/run_split.py --concurrent); done > $out/run_split.txt 2>&1
