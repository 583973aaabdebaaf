"""The learner's steps, each behind one seam (issue 69): the trace is read once into its
analysis, a failed run of offline learning is probed by a :class:`~toolcycle.playbook.lesson.
Prober` (the learner runs no tool itself), the lesson types propose from the evidence, and
the store answers what the domain knows (its dead ends) in one query."""

from __future__ import annotations

from collections.abc import Mapping

from toolcycle.playbook import Insight, Playbook
from toolcycle.playbook.dead_end import FOUND_NOTHING
from toolcycle.playbook.lesson import TraceAnalysis
from toolcycle.playbook.reflector import Findings
from toolcycle.playbook.strategy import Strategy
from toolcycle.tracing.trace import Trace

from .conftest import make_trace


class Asked:
    """A prober that found, for every run it is asked about, the sequence ``finds``."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def findings(self, trace: Trace, analysis: TraceAnalysis, *, domain: str,
                 descriptions: Mapping[str, frozenset[str]] | None = None) -> Findings:
        self.asked.append(trace.run_id)
        return Findings({}, Insight(kind="sequence", domain=domain, advice="Call ledger(item), "
                                    "then answer.", tools=["ledger"], keywords=["stock"],
                                    run_id=trace.run_id + "#probe", success=True))


def test_only_a_failed_run_is_probed_and_what_the_prober_found_is_learned() -> None:
    pb = Playbook(":memory:")
    prober = Asked()
    try:
        good = make_trace("Stock of bolts?", [[("ledger", {"item": "bolts"}, "12", None)]])
        pb.learn_from(good, True, prober)
        failed = make_trace("Stock of nuts?", [[("live", {"item": "nuts"}, None, "down")]],
                            status="failure")
        deltas = pb.learn_from(failed, False, prober)
        assert prober.asked == [failed.run_id]
        assert any(d.op == "candidate" and "1/3" in d.detail for d in deltas)
    finally:
        pb.close()


def test_the_store_names_the_tools_of_a_domains_dead_ends_learned_or_pending() -> None:
    pb = Playbook(":memory:")
    try:
        dead = Strategy(id="d1", domain="shop", advice="crm found nothing for this kind of task.",
                        kind="pitfall", tools=["crm"], detail=FOUND_NOTHING,
                        error_class=FOUND_NOTHING)
        other = Strategy(id="p1", domain="shop", advice="x fails.", kind="pitfall",
                         tools=["x"], detail="boom", error_class="boom")
        pb.store.put([dead, other])
        pb.store.put_candidate("k", "shop", {"key": "k", "insights": [
            {"kind": "pitfall", "tools": ["files", "y"], "detail": FOUND_NOTHING + "|alt:y",
             "error_class": FOUND_NOTHING, "repair": {"kind": "alternative", "tool": "files",
                                                      "via": "y"}}]})
        assert pb.store.pitfall_tools("shop", FOUND_NOTHING) == {"crm", "files"}
        assert pb.store.pitfall_tools("elsewhere", FOUND_NOTHING) == set()
    finally:
        pb.close()
