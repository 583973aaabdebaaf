#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# This session's labels name their commits: llm95c2 (95c2b7e, --reflector llm), dev95c2 (95c2b7e),
# h86073fc (86073fc), hb79e5b7 (b79e5b7).
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
