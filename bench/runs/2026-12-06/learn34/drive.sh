#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 34's label names its commit (the loop's honest-status and date-grounding changes),
# on held-out seeds 1055-1058, fixed before any run (1055-1056 by session 33, 1057+ by 34).
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
