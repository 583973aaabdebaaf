"""What a run's requests cost: each reply priced by the model that served it.

The run's usage adds costs as it adds tokens (:class:`~toolcycle.messages.Usage`), and a team
member's spend is counted in every run it sits inside (``RunState.spend``), so pricing each
reply once, here, as it arrives is what makes a team's cost the sum of its members' and a
fallback's the sum of what each model served (:mod:`toolcycle.pricing`). The summaries that
context compaction writes are priced where they are written, by the summarising model
(:mod:`toolcycle.run.compaction`).
"""

from __future__ import annotations

from ..messages import Usage
from ..pricing import cost_of
from .state import RunState


def priced(state: RunState, usage: Usage, answered_by: str | None) -> Usage:
    """``usage`` (one reply's, served by ``answered_by``: its ``model_name``) with its cost at
    the run's model's price. A model of unknown price is named in the trace
    (``metadata["unpriced_models"]``) of this run and of every run it sits inside (their
    cost is unknown too), so a result whose cost is unknown says why."""
    usage.cost = cost_of(usage, state.setup.model, answered_by)
    if usage.cost is None:
        name = answered_by or state.setup.model.name
        for run in (state, *state.ancestors):
            unpriced = run.trace.trace.metadata.setdefault("unpriced_models", [])
            if isinstance(unpriced, list) and name not in unpriced:
                unpriced.append(name)
    return usage
