#!/bin/bash
# Waits for a running measurement (PID) to end, then measures SEED at the commit checked out in
# /work/wt/measure2 (the default guide there is 0: no --guide).  after.sh PID SEED LABEL
set -u
pid=$1; seed=$2; label=$3
out=/work/main/bench/runs/2026-12-05/learn26
while kill -0 $pid 2>/dev/null; do sleep 10; done
cd /work/wt/measure2
PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/learning_gen/measure.py run --seed $seed \
  --protocol react --label $label --kinds unreliable,empty_source,arg_format,id_first \
  --train 2 --test 1 --threads 1 --out $out >> $out/$label-react-$seed.out 2>&1
echo "seed $seed done rc=$? $(date +%H:%M)" >> $out/$label-react.progress
