#!/bin/bash
# Learning on generated suites, one seed after another, from a frozen checkout of the commit
# measured (its HEAD), logged into OUT:
#   OUT=bench/runs/DAY/NAME WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA" SEED...
# Each seed's log is OUT/LABEL-PROTOCOL-SEED.out, and OUT/LABEL-PROTOCOL.progress says when each
# ended. Run from any folder: OUT is made absolute before the checkout is entered.
set -u
protocol=$1; label=$2; train=$3; extra=$4; shift 4
out=$(realpath "${OUT:?set OUT to the folder the logs go to}")
cd "${WORKTREE:?set WORKTREE to a checkout of the commit to measure}" || exit 1
for seed in "$@"; do
  PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/learning_gen/measure.py run --seed $seed \
    --protocol $protocol --label $label --kinds unreliable,empty_source,arg_format,id_first \
    --train $train --test 1 --threads 1 --out $out $extra >> $out/$label-$protocol-$seed.out 2>&1
  echo "seed $seed done rc=$? $(date +%H:%M)" >> $out/$label-$protocol.progress
done
