#!/bin/bash
# The frozen arm of seeds already measured, again with Playbook(routines=True) (ablate.py),
# from /work/main's checkout (its test-time code is that of the labels measured: the commits
# since changed learning only): ablate.sh PROTOCOL LABEL SEED...
set -u
protocol=$1; label=$2; shift 2
out=/work/main/bench/runs/2026-12-05/learn29
cd /work/main
for seed in "$@"; do
  PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/learning_gen/ablate.py --seed $seed \
    --protocol $protocol --label $label --routines --threads 1 --out $out \
    >> $out/$label-$protocol-$seed-routines.out 2>&1
  echo "routines seed $seed done rc=$? $(date +%H:%M)" >> $out/$label-$protocol.progress
done
