"""Held-out seed 6812 on 820e842, run as two processes (h01-h08 and h09-h12): one report.

    .venv/bin/python bench/runs/2026-12-06/firsthour39b/combine.py

(Now :mod:`bench.first_hour.combine` over this folder's two arm folders.)
"""

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[3]))
from bench.first_hour.combine import main  # noqa: E402

main([str(HERE / "heldout-default-820e842"), str(HERE / "heldout-default-820e842b")])
