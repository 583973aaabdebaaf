#!/bin/bash
# Learning on generated suites, one seed after another, from a frozen checkout of the commit
# measured (its HEAD): WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 29's labels name their commits: h578f0f0 (code of 424ef72 plus the seed list), ha409855 (a409855), hc2bc761 (c2bc761).
set -u
protocol=$1; label=$2; train=$3; extra=$4; shift 4
out=/work/main/bench/runs/2026-12-05/learn29
cd "${WORKTREE:?set WORKTREE to a checkout of the commit to measure}"
for seed in "$@"; do
  PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/learning_gen/measure.py run --seed $seed \
    --protocol $protocol --label $label --kinds unreliable,empty_source,arg_format,id_first \
    --train $train --test 1 --threads 1 --out $out $extra >> $out/$label-$protocol-$seed.out 2>&1
  echo "seed $seed done rc=$? $(date +%H:%M)" >> $out/$label-$protocol.progress
done
