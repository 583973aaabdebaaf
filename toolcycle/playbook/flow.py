"""A tool chain's data flow: which argument of each call the previous call's result fed.

Its own concept because three parts read it: the reflector records a run's flow (each step's
fed argument and where its value stood, :func:`chain_feeds`), also from a failed run whose
calls made a chain (:func:`data_flow`); the curator promotes a chain whose flow two runs
showed (:func:`flow_shown`); and a routine is induced from the same examples
(:func:`~toolcycle.playbook.routine.induce`).
"""

from __future__ import annotations

import itertools
from typing import Any

from ..tracing.trace import Trace
from .applicability import applicability, row_pick
from .evidence import CallEvidence, fed_chains
from .routine import MIN_FEED_EXAMPLES, feed_example, induce
from .strategy import Insight, Strategy


def chain_feeds(chain: list[CallEvidence], prompt: str) -> list[dict[str, Any]]:
    """Per step after the first, the one argument the previous step's result fed, and where
    the value stood in that result; empty unless every step was fed that way (the chain is
    then a candidate routine, :mod:`.routine`)."""
    if len(chain) < 2 or len({c.call.name for c in chain}) != len(chain):
        return []
    feeds: list[dict[str, Any]] = []
    for before, step in itertools.pairwise(chain):
        result = before.call.result or ""
        fed = [(key, str(value)) for key, value in sorted((step.call.args or {}).items())
               if isinstance(value, str | int | float) and not isinstance(value, bool)
               and len(str(value).strip()) >= 2 and str(value) not in prompt
               and str(value).lower() in result.lower()]
        example = feed_example(result, fed[0][1]) if len(fed) == 1 else None
        if example is None:
            return []
        feeds.append({"arg": fed[0][0], **example,
                      "pick": row_pick(result, fed[0][1], before.call.args or {}, prompt)})
    return feeds


def data_flow(trace: Trace, calls: list[CallEvidence]
              ) -> tuple[list[CallEvidence], list[dict[str, Any]]] | None:
    """The longest chain of a run's good calls in which each call took an argument out of
    the previous one's result (two tools or more, each once), with its feed examples; None
    where no call fed another.

    Why: a run can make the right chain and still fail after it (call a tool that does not
    exist, wander off, answer wrong); its calls still show how the chain's data flows. Where
    a kind of task succeeds rarely, a learner that counts successes alone never sees enough
    of them, and every later task of the kind finds the chain by hand again; two runs
    showing a chain's data flow, one of them a success, promote it (:func:`flow_shown`).
    """
    prompt = trace.user_prompt or ""
    for chain in fed_chains(trace, calls):
        if len(chain) < 2:
            return None
        if feeds := chain_feeds(chain, prompt):
            return chain, feeds
    return None


def flow_shown(data: dict[str, Any]) -> bool:
    """Whether a sequence candidate's runs showed its data flow: each step fed a value taken
    out of the previous result, found by one extraction rule in
    :data:`~toolcycle.playbook.routine.MIN_FEED_EXAMPLES` (2) runs of different tasks (the
    rule a routine is induced by, :func:`~toolcycle.playbook.routine.induce`), at least one
    of them a success; the others may be failed runs that made the chain the same way
    (``data["flows"]``, :func:`data_flow`).

    Why: co-occurrence needs three runs to tell a pattern from chance, but a chain whose every
    later call took its argument from the earlier result, the same way in two different
    tasks, is not chance. Where a model succeeds about half the time and a domain has several
    kinds of task, a kind may see only two runs of its whole chain in a training set, and a
    rule that waits for three learns nothing of it.
    """
    evidence = data["insights"]
    runs = [*evidence, *data.get("flows", [])]  # a failed run's flow counts beside a success
    if not evidence or len(runs) < MIN_FEED_EXAMPLES or evidence[0].get("kind") != "sequence":
        return False
    if not applicability([Insight.from_dict(d) for d in runs]):
        return False  # tasks worded apart: promoted now, it would be shown to no task
    tools = list(evidence[0].get("tools", []))
    trial = Strategy(id="", domain="", advice="", kind="sequence", tools=tools,
                     feeds=[list(i.get("feeds") or []) for i in runs])
    return induce(trial) is not None
