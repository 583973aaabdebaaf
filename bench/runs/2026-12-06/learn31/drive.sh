#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 31's labels name their commits: hb442ae4 (18b42fa's code: all four kinds after the
# arg_format fixes of session 30), on held-out seeds 1033-1040.
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
