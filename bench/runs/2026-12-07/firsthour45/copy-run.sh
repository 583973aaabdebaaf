#!/bin/bash
# Rerun the first-hour questions whose runs ended on a copied refused figure (copy-cases.txt:
# seed, then agent/question keys), from the checkout this is run in, into $1 (a folder),
# with tag $2. Sequential, one llama.cpp thread.
D=$(cd "$(dirname "$0")" && pwd); OUT=$1; TAG=$2
while read -r seed keys; do
  TOOLCYCLE_TRACE_DB=$OUT/traces-$TAG.db nice -n 5 .venv/bin/python -m bench.first_hour.run \
    --set heldout --seed "$seed" --arm default --tag "$TAG-$seed" --threads 1 --log-dir "$OUT" \
    --only "$keys"
done < "$D/copy-cases.txt"
