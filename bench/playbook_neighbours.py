"""How long choosing a run's advice takes with 2,000 remembered tasks (playbook/neighbours.py).

    .venv/bin/python bench/playbook_neighbours.py

50 sequences and 2,000 remembered tasks of 5 words from 300 in one domain; 300 tasks of 8
words; prints the p50 and p95 of ``Playbook.instructions_for`` (retrieval, the neighbours'
filter, the budget), each read of the remembered tasks served from the store's cache.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from toolcycle.playbook import Playbook
from toolcycle.playbook.strategy import Strategy


def main() -> None:
    folder = tempfile.mkdtemp()
    pb = Playbook(Path(folder) / "playbook.db", learn=False)
    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(300)]
    for i in range(2000):
        pb.store.mark_observed(f"r{i}", "dom", rng.sample(vocabulary, 5))
    pb.store.put([Strategy(id=f"s{i}", domain="dom", advice=f"Call t{i}(x), then answer.",
                           kind="sequence", tools=[f"t{i}"],
                           applies_when=rng.sample(vocabulary, 4),
                           provenance=[f"r{rng.randrange(2000)}"]) for i in range(50)])
    tools = [f"t{i}" for i in range(50)]
    tasks = [" ".join(rng.sample(vocabulary, 8)) for _ in range(300)]
    pb.instructions_for(tasks[0], "dom", tools)  # the first read fills the cache
    seconds = []
    for task in tasks:
        started = time.perf_counter()
        pb.instructions_for(task, "dom", tools)
        seconds.append(time.perf_counter() - started)
    cuts = statistics.quantiles(seconds, n=20)
    print(f"instructions_for with 2,000 remembered tasks: p50 {cuts[9] * 1e3:.2f} ms, "
          f"p95 {cuts[18] * 1e3:.2f} ms")
    pb.close()


if __name__ == "__main__":
    main()
