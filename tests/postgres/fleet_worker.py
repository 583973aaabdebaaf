"""One worker of the fleet test: ``python fleet_worker.py URL TAG RUNS``.

Runs ``RUNS`` agent runs that record their traces into, and learn into the playbook of, the
one PostgreSQL database at ``URL``; every run is shown the seeded strategy ``s-fleet``, so its
counters grow by one per run. Prints how many runs succeeded.
"""

from __future__ import annotations

import sys

from toolcycle import Agent
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook


def quote(ticker: str) -> str:
    """The latest price of a ticker."""
    return f"{ticker}: 123.4"


def main() -> None:
    url, tag, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    playbook = Playbook(url)
    script = [call("quote", {"ticker": f"T{tag}"}), "123.4"] * runs
    agent = Agent(ScriptedModel(script), "Answer with the price.", tools=[quote], name="fleet",
                  trace_store=url, playbook=playbook)
    done = 0
    for _ in range(runs):
        # the same words every time: the runs add evidence to s-fleet, never a new pattern
        if agent.run_sync("What is the share price please?").output == "123.4":
            done += 1
    playbook.close()  # waits until every run has been learned from
    assert not playbook.errors, list(playbook.errors)
    print(done)


if __name__ == "__main__":
    main()
