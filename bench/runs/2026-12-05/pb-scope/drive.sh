#!/bin/bash
# Measures learning on the generated suites' test seeds, one protocol, seed after seed
# (each seed resumable: measure.py keeps its JSONL logs). Run from a frozen worktree at the
# commit measured:  drive.sh PROTOCOL LABEL [SEED ...]  (default: every test seed in order)
set -u
protocol=$1; label=$2; shift 2
seeds=${*:-1001 1002 1003 1004 1005 1006 1007 1008}
out=/work/wt/pb-scope/bench/runs/2026-12-05/pb-scope
for seed in $seeds; do
  PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/learning_gen/measure.py run --seed $seed \
    --protocol $protocol --label $label --kinds unreliable,empty_source,arg_format,id_first \
    --train 2 --test 1 --threads 1 --out $out >> $out/$label-$protocol-$seed.out 2>&1
done
