"""Replay test tasks of this folder's measured seeds with their frozen playbooks (label
hb442ae4) on the code of the checkout this runs from: bench/learning_gen/replay.py.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/runs/2026-12-06/learn31/replay.py \\
        SEED PROTOCOL CASE[,CASE...] LABEL [--no-playbook]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # bench/
from learning_gen.replay import main

main(Path(__file__).resolve().parent, "hb442ae4", sys.argv[1:])
