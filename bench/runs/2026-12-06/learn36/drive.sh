#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 36: label h831ac87 is session 35's final code (said_missing, the review's one reader of a message
# without the advice), on held-out seeds 1067-1072, fixed by session 35 before any run.
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
