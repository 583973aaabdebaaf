#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 31's labels name their commits: hb442ae4 (18b42fa's code: all four kinds after the
# arg_format fixes of session 30), on held-out seeds 1033-1038 (1039 and 1040 were given too;
# each driver was stopped once its 1038 had started, for time: cap.log). replay.py replays
# test tasks with the frozen playbooks on later code (replay-*.jsonl).
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
