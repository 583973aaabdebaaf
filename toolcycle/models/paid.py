"""What a model request had paid for when it failed or was cancelled.

Most adapters make one request per reply, and a request that fails costs the loop one request
of usage. An adapter that makes several for one reply (a text protocol asking the model again,
the lazy grammar's free reply then its constrained one) has already been served whole replies
when a later request fails, or is cut off by a cancellation or the run's timeout: their tokens
were spent, and their text was written. :func:`paying` records that on the exception on its
way out; the loop reads it back with :func:`paid_before` into the run's usage and the step of
the trace, as it would for a reply that arrived.

Why: driven by real llama.cpp models writing at random (tests/local/test_real_model_fuzz.py),
a run cancelled while the ReAct protocol asked the model again reported one request and no
tokens, where the model had served two and written a whole reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..messages import Usage

_ATTRIBUTE = "_toolcycle_paid"


@dataclass(frozen=True, slots=True)
class Paid:
    """The usage of every request made (the failed one counted, its tokens unknown), and the
    text of each reply that was served whole and then asked again after."""

    usage: Usage
    replies: tuple[str, ...] = ()


#: A single request that failed: what the loop counts when nothing was recorded.
ONE_REQUEST = Paid(Usage(requests=1))


@contextmanager
def paying(usage: Usage, replies: list[str]) -> Iterator[None]:
    """Within it, a failure carries ``usage`` (the replies served so far) and ``replies``
    (their text), plus the request that failed; an inner adapter's own record is added to
    it rather than the single request. A generator closed by its consumer is no failure."""
    try:
        yield
    except GeneratorExit:
        raise
    except BaseException as exc:
        inner = paid_before(exc)
        total = usage.copy()
        total.add(inner.usage)
        setattr(exc, _ATTRIBUTE, Paid(total, (*replies, *inner.replies)))
        raise


def paid_before(exc: BaseException) -> Paid:
    """What the request that raised ``exc`` had paid (see :func:`paying`); one request when
    the adapter recorded nothing."""
    paid = getattr(exc, _ATTRIBUTE, None)
    return paid if isinstance(paid, Paid) else ONE_REQUEST


def carried[E: BaseException](source: BaseException, signal: E) -> E:
    """``signal``, raised in place of ``source`` (the loop's guard turns the cancellation
    that cut a request off into its own cancel or timeout), with ``source``'s record. Only
    the exception itself is read, never its ``__context__``: a request made while an earlier
    failure is handled (the final answer at a limit) would otherwise be charged its usage."""
    paid = getattr(source, _ATTRIBUTE, None)
    if isinstance(paid, Paid):
        setattr(signal, _ATTRIBUTE, paid)
    return signal
