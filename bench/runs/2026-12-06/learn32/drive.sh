#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 32's label names its commit: he1523ea (the recovery fixes 708ae2a and e1523ea on
# top of session 31's code), on held-out seeds 1041-1046, fixed at 438f3d4 before any run.
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
