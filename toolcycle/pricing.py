"""What model requests cost: a typed :class:`Price`, and a small dated table of known prices.

Why here and why this shape: a run (a team's especially) makes requests to several models,
each billed at its own rate, and nobody added them up (issue 66: "costs that no one adds
up"). So every reply's usage carries its cost, priced by the model that answered it, and the
run's usage adds those costs as it adds tokens (:class:`~toolcycle.messages.Usage`), across
fallback models and across every agent of a team.

Money is a :class:`~decimal.Decimal`, not a float: prices are decimal figures
(``0.15`` USD per million tokens has no exact binary form), and a team's total is the sum of
its members' in whatever order they ran. With decimals each reply's cost is exact and the sum
is the same in every order, so "the parent's cost is the sum of its members'" holds to the
last digit, as the token counts do; floats would be off in the last bits and tests comparing
sums could not be exact.

An unknown price is never a zero: a reply from a model this module has no price for has an
unknown cost (``None``), and so has every total it is part of (``usage.cost is None``, shown
as "unknown"). Local models and the test models cost nothing (:data:`FREE`).

Where each figure came from is in its ``source``, honestly: the Anthropic figures were read
from Anthropic's own pricing page; the OpenAI and Gemini figures were taken from pages quoting
those providers' official price lists (the official pages themselves could not be read from
here), so check them against the live pages before you rely on them. Prices change, so a
model may carry its own (``OpenAIModel(..., price=...)``,
``model.price = Price(...)``), and :data:`PRICES` may be edited or extended in place
(``PRICES["my-finetune"] = Price(...)``): a model's own price wins over the table. The table
holds the standard (on-demand) tier; batch discounts, long-prompt tiers (Gemini 2.5 Pro above
200k prompt tokens) and regional surcharges are not modelled: give such a model its own price.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Literal, Protocol

from ._errors_base import ConfigurationError

if TYPE_CHECKING:
    from .usage import Usage

__all__ = ["FREE", "PRICES", "Money", "Price", "Priced", "cost_of", "known_price", "money"]

#: What a price or a limit may be given as; kept as :class:`~decimal.Decimal`.
Money = Decimal | int | float | str

_MILLION = Decimal(1_000_000)


def money(value: Money, what: str, problems: list[str]) -> Decimal:
    """``value`` as an exact decimal (a float through its shortest text, so ``0.15`` is
    ``Decimal("0.15")``, not the binary ``0.1499999...``); a problem is noted for a value
    that is not a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float | str):
        problems.append(f"{what} must be a number of USD, got {value!r}")
        return Decimal(0)
    if isinstance(value, float) and not math.isfinite(value):
        problems.append(f"{what} must be a finite number, got {value!r}")
        return Decimal(0)
    try:
        amount = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        problems.append(f"{what} must be a number of USD, got {value!r}")
        return Decimal(0)
    if not amount.is_finite():
        problems.append(f"{what} must be a finite number, got {value!r}")
        return Decimal(0)
    if amount < 0:
        problems.append(f"{what} must be >= 0, got {value!r}")
        return Decimal(0)
    return amount


@dataclass(frozen=True, slots=True, init=False)
class Price:
    """A model's price in USD per million tokens.

    - ``input``: an uncached input (prompt) token;
    - ``output``: an output token (reasoning tokens are billed as output by every provider);
    - ``cached_input``: an input token read from the provider's prompt cache (default: the
      ``input`` price, the most it can be);
    - ``cache_write``: an input token written to the cache (Anthropic bills 1.25 times the
      input price for a five-minute write; default: the ``input`` price);
    - ``source``: where the figures come from (a URL and the date it was read), shown
      nowhere but kept with the price so a reader can check it.

    Usage counts input tokens in total (uncached, written and read alike: every adapter maps
    its provider's fields so); :meth:`cost` bills each kind at its own rate.
    """

    input: Decimal
    output: Decimal
    cached_input: Decimal
    cache_write: Decimal
    currency: Literal["USD"]
    source: str

    def __init__(self, input: Money, output: Money, *, cached_input: Money | None = None,
                 cache_write: Money | None = None, source: str = "") -> None:
        problems: list[str] = []
        given = money(input, "input", problems)
        set_ = object.__setattr__
        set_(self, "input", given)
        set_(self, "output", money(output, "output", problems))
        set_(self, "cached_input", given if cached_input is None
             else money(cached_input, "cached_input", problems))
        set_(self, "cache_write", given if cache_write is None
             else money(cache_write, "cache_write", problems))
        set_(self, "currency", "USD")
        if not isinstance(source, str):
            problems.append(f"source must be a string, got {source!r}")
            source = ""
        set_(self, "source", source)
        if problems:
            raise ConfigurationError(problems, subject="price")

    def cost(self, usage: Usage) -> Decimal:
        """What ``usage`` cost at this price, exactly (see the module docstring)."""
        read = usage.cache_read_tokens
        written = usage.cache_write_tokens
        uncached = max(usage.input_tokens - read - written, 0)
        return (uncached * self.input + read * self.cached_input + written * self.cache_write
                + usage.output_tokens * self.output) / _MILLION

    def __repr__(self) -> str:
        return (f"Price(input={self.input}, output={self.output}, "
                f"cached_input={self.cached_input}, cache_write={self.cache_write})")


#: What local models and the test models cost: nothing.
FREE = Price(0, 0, source="runs on this machine")

_OPENAI = ("OpenAI's standard tier as quoted from https://platform.openai.com/docs/pricing by "
           "third-party pages, 2026-12-05; not checked against the live page")
_ANTHROPIC = "https://platform.claude.com/docs/en/about-claude/pricing, read 2026-12-05"
_GEMINI = ("Gemini API paid tier, prompts up to 200k tokens, as quoted from "
           "https://ai.google.dev/gemini-api/docs/pricing by third-party pages, 2026-12-05; "
           "not checked against the live page")

#: Known prices by model id. A dated snapshot (``gpt-4o-2024-08-06``,
#: ``claude-haiku-4-5-20251001``) or ``-latest`` takes its model's price; any other variant
#: (``gpt-5-pro``, ``gpt-5.2``) is a different model with a different price, so it is unknown
#: rather than priced as its family. Edit or extend it in place; a model's own ``price`` wins.
PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4o": Price("2.50", "10.00", cached_input="1.25", source=_OPENAI),
    "gpt-4o-mini": Price("0.15", "0.60", cached_input="0.075", source=_OPENAI),
    "gpt-4.1": Price("2.00", "8.00", cached_input="0.50", source=_OPENAI),
    "gpt-4.1-mini": Price("0.40", "1.60", cached_input="0.10", source=_OPENAI),
    "gpt-4.1-nano": Price("0.10", "0.40", cached_input="0.025", source=_OPENAI),
    "gpt-5": Price("1.25", "10.00", cached_input="0.125", source=_OPENAI),
    "gpt-5-mini": Price("0.25", "2.00", cached_input="0.025", source=_OPENAI),
    "gpt-5-nano": Price("0.05", "0.40", cached_input="0.005", source=_OPENAI),
    # Anthropic (cache writes: the five-minute rate, which the adapter's breakpoints use)
    **dict.fromkeys(("claude-opus-4-5", "claude-opus-4-6"), Price(
        "5", "25", cached_input="0.50", cache_write="6.25", source=_ANTHROPIC)),
    **dict.fromkeys(("claude-opus-4", "claude-opus-4-1"), Price(
        "15", "75", cached_input="1.50", cache_write="18.75", source=_ANTHROPIC)),
    **dict.fromkeys(("claude-sonnet-4", "claude-sonnet-4-5", "claude-3-7-sonnet"), Price(
        "3", "15", cached_input="0.30", cache_write="3.75", source=_ANTHROPIC)),
    "claude-haiku-4-5": Price("1", "5", cached_input="0.10", cache_write="1.25",
                              source=_ANTHROPIC),
    "claude-3-5-haiku": Price("0.80", "4", cached_input="0.08", cache_write="1",
                              source=_ANTHROPIC),
    # Google Gemini
    "gemini-2.5-pro": Price("1.25", "10.00", cached_input="0.125", source=_GEMINI),
    "gemini-2.5-flash": Price("0.30", "2.50", cached_input="0.03", source=_GEMINI),
    "gemini-2.5-flash-lite": Price("0.10", "0.40", cached_input="0.01", source=_GEMINI),
}

#: What may follow a known model id and keep its price: a snapshot's date, or ``-latest``.
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)")


def known_price(model_name: str) -> Price | None:
    """The table's price for ``model_name`` (a provider prefix such as ``models/`` dropped,
    a snapshot's date allowed after the id), or ``None``: unknown."""
    name = model_name.lower().rsplit("/", 1)[-1]
    if (price := PRICES.get(name)) is not None:
        return price
    for model_id, price in PRICES.items():
        if name.startswith(model_id) and _SNAPSHOT.fullmatch(name, len(model_id)):
            return price
    return None


class Priced(Protocol):
    """What prices a reply: a model (:meth:`toolcycle.models.Model.pricing`)."""

    def pricing(self, answered_by: str | None = None) -> Price | None: ...


def cost_of(usage: Usage, model: Priced, answered_by: str | None = None) -> Decimal | None:
    """What ``usage`` (one reply's, served by ``answered_by``) cost at ``model``'s price:
    ``None`` when the price is unknown, nothing for a request that was billed no tokens (a
    request that failed before the provider counted any) whatever the price."""
    if not (usage.input_tokens or usage.output_tokens):
        return Decimal(0)
    price = model.pricing(answered_by)
    return None if price is None else price.cost(usage)
