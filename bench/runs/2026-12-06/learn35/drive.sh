#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 35: label names its commit (a date example shown as the task's day, the request without the advice,
# one reading of nothing, results read without the loop guard's note, ids in their shape); starts at d5d3269
# and 5905d01 were stopped after 5 and 3 minutes, nothing read,
# on held-out seeds 1061-1064, fixed before any run by session 34.
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
