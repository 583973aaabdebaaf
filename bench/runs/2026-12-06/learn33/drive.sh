#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 33's label names its commit: h068b9a2 (all of session 32's changes), on held-out
# seeds 1049-1054, fixed at the commit before this folder's, before any run.
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
