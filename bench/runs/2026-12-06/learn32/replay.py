"""Replay test tasks of this folder's measured seeds with their frozen playbooks (label
he1523ea) on the code of the checkout this runs from: bench/learning_gen/replay.py.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/runs/2026-12-06/learn32/replay.py \\
        SEED PROTOCOL CASE[,CASE...] LABEL [--no-playbook]
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # bench/
from learning_gen.replay import main

main(Path(__file__).resolve().parent, "he1523ea", sys.argv[1:])
