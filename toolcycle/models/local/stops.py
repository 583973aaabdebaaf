"""Stop sequences of a streamed reply, applied here rather than by llama-cpp-python.

The library applies a request's ``stop`` strings itself, and counts the tokens that complete
one though their text is cut; but its stream then says only ``finish_reason="stop"``, the same
as for the end-of-generation token, which is not counted. The two cannot be told apart
afterwards (a stop sequence that begins exactly where a token begins leaves the same text as a
reply that ended there), so the streamed usage could not match the library's own. A stream
therefore hands the library no ``stop`` strings: :class:`StopText` applies them to the text as
it comes, the way the library would (the reply ends before the earliest stop sequence found;
text that may begin one is held back until it cannot), and says whether one ended the reply.

The library checks its stop strings after each token whose text is complete, and streams that
token's text in the same step, so stopping at the first piece that completes a stop sequence
stops after the same token: the reply and its usage are those of the same request not streamed.
"""

from __future__ import annotations

from collections.abc import Sequence


class StopText:
    """A streamed reply's text, cut at its first stop sequence; feed it piece by piece."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(stop for stop in stops if stop)
        self.text = ""
        #: Whether a stop sequence ended the reply (the text then ends before it).
        self.stopped = False
        self._sent = 0

    def feed(self, piece: str) -> str:
        """The text that can be shown now: all of it up to a stop sequence or to what may
        begin one. After a stop, :attr:`stopped` is set and nothing more is taken."""
        if self.stopped:
            return ""
        self.text += piece
        found = [self.text.find(stop) for stop in self.stops if stop in self.text]
        if found:
            self.stopped = True
            self.text = self.text[:min(found)]
            return self._send(len(self.text))
        return self._send(len(self.text) - self._held())

    def flush(self) -> str:
        """What was held back, once the reply ended without completing a stop sequence."""
        return self._send(len(self.text))

    def _held(self) -> int:
        """The length of the longest end of the text that begins a stop sequence."""
        return max((size for stop in self.stops for size in range(len(stop) - 1, 0, -1)
                    if self.text.endswith(stop[:size])), default=0)

    def _send(self, end: int) -> str:
        shown = self.text[self._sent:end]
        self._sent = max(self._sent, end)
        return shown


def stop_strings(stop: object) -> tuple[str, ...]:
    """A request's ``stop`` as the OpenAI API takes it: a string, a list of them, or none."""
    if stop is None:
        return ()
    if isinstance(stop, str):
        return (stop,)
    if isinstance(stop, list | tuple) and all(isinstance(item, str) for item in stop):
        return tuple(stop)
    raise ValueError(f"stop must be a string or a list of strings, not {stop!r}")
