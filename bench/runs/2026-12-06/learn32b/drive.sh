#!/bin/bash
# This folder's measurements: bench/learning_gen/drive.sh with OUT set to this folder.
# WORKTREE=/path/to/checkout drive.sh PROTOCOL LABEL TRAIN "EXTRA ARGS" SEED...
# Session 32's pointer after its measurement (learn32): the label names the commit measured
# (the grounding second look, a fallback that found nothing as a failed call, the field
# mismatch, the skipped-tool filter), on held-out seeds 1047 and 1048, fixed at 438f3d4.
here=$(dirname "$(realpath "$0")")
OUT=$here exec "$here/../../../learning_gen/drive.sh" "$@"
