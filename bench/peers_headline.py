"""The shared harness's headline tables with toolcycle in them.

`../shared/bench-peers/headline.py` lists the peers it prints in a fixed ORDER (and shared/ is
read-only for the project), so this wrapper adds toolcycle first and runs it unchanged.
Usage: python3 bench/peers_headline.py RESULTS_DIR [MORE_DIRS...]
"""

import os
import sys
from pathlib import Path

peers = Path(os.environ.get("BENCH_PEERS", Path(__file__).resolve().parents[2] / "shared"
                            / "bench-peers"))
sys.path.insert(0, str(peers))
import headline  # type: ignore[import-not-found]  # noqa: E402

headline.ORDER.insert(0, "toolcycle")
headline.main()
