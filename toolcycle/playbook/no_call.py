"""The no-call lesson type: answers given without calling a tool were wrong, in a domain.

A lesson about the model in this domain, not about a tool, hence no tools of its own; a
routines playbook then has each run begin with a call (:meth:`~toolcycle.playbook.offer.
RoutineOffer.first_call`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tracing.trace import Trace
from .lesson import RunEvidence
from .strategy import Insight, Strategy, UseVerdict

#: The detail of the pitfall "answered without calling a tool".
NO_CALL = "answered without calling a tool"
NO_CALL_ADVICE = ("Answers given without calling a tool were wrong: look the facts up with a "
                  "tool before you answer.")


def answered_without_a_call(trace: Trace) -> bool:
    """Whether the model answered the run itself without calling any tool, though it was
    offered some (``tools_offered`` is None where the run's tools were not recorded).

    Why a lesson: a small model often answers a question about the agent's own data from
    memory in its first turn, with a made-up price, seat or count; such an answer is right
    only by chance, since the facts are in the tools and nowhere in the model.
    """
    return (not trace.tool_calls and trace.tools_offered != []
            and (trace.termination or {}).get("action") == "answered")


class NoCall:
    """Wrong: evidence for the lesson; right: evidence against it (the curator weighs both)."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        if not answered_without_a_call(run.trace):
            return []
        return [run.pitfall(NO_CALL_ADVICE, [], NO_CALL)]

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        return None

    def owns(self, strategy: Strategy) -> bool:
        return strategy.kind == "pitfall" and strategy.detail == NO_CALL
