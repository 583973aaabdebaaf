#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 30's labels name their commits: h3d14d6d (routines="read_only" by default).
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
