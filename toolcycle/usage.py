"""What requests used and cost: :class:`Usage`, the figures that add up over a run.

Kept apart from the conversation (:mod:`toolcycle.messages`, which re-exports it) since it
carries money as well as counts (:mod:`toolcycle.pricing`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["Usage", "cost_from"]

_NO_COST = Decimal(0)


@dataclass(slots=True)
class Usage:
    """Tokens and counts that add up over requests, iterations, attempts and runs, and what
    they cost.

    ``cost``: USD, exact (:mod:`toolcycle.pricing` says why a decimal), priced by the model
    that served each request; ``None`` once any request in the sum came from a model whose
    price is unknown: the total is then unknown, never a guess. A usage nothing has priced
    (an adapter's, before the run prices it) costs nothing.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0
    #: Of ``output_tokens``, those the model spent reasoning (OpenAI's ``reasoning_tokens``,
    #: Gemini's ``thoughtsTokenCount``): billed as output, reported apart so a run can see them.
    reasoning_tokens: int = 0
    cost: Decimal | None = _NO_COST

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Add ``other`` in place (the loop's accumulator; avoids an allocation per step)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.requests += other.requests
        self.tool_calls += other.tool_calls
        self.reasoning_tokens += other.reasoning_tokens
        if self.cost is not None:  # unknown stays unknown
            self.cost = None if other.cost is None else self.cost + other.cost

    def __add__(self, other: Usage) -> Usage:
        total = Usage()
        total.add(self)
        total.add(other)
        return total

    def copy(self) -> Usage:
        return Usage() + self

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON values; the cost as a decimal string (exact), ``None`` when
        unknown."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": None if self.cost is None else str(self.cost),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Read :meth:`to_dict`'s form back. One written before requests were priced has no
        ``cost_usd``: its cost is unknown, not zero. Raises ``ValueError`` or ``TypeError`` for
        a damaged value."""
        counts: dict[str, Any] = {k: int(v) for k, v in data.items() if k in _TOKEN_FIELDS}
        usage = cls(**counts)
        usage.cost = cost_from(data.get("cost_usd"))
        return usage


def cost_from(value: Any) -> Decimal | None:
    """A stored cost (``None``: unknown; a decimal string or a number) as a decimal, or
    ``ValueError`` for anything else: a stored file is untrusted."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"cost_usd must be a decimal string or null, got {value!r}")
    try:
        cost = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"cost_usd must be a decimal string or null, got {value!r}") from None
    if not cost.is_finite() or cost < 0:
        raise ValueError(f"cost_usd must be a finite amount >= 0, got {value!r}")
    return cost


_TOKEN_FIELDS = frozenset(Usage.__dataclass_fields__) - {"cost"}
