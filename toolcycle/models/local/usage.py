"""What a request to the in-process llama.cpp model cost in tokens, counted as the library counts.

A completion's usage is llama-cpp-python's own: ``prompt_tokens`` is the prompt its chat
handler rendered and tokenized, ``completion_tokens`` every token it sampled except an
end-of-generation token (which ends the reply and adds no text). A *stream* reports no usage
at all, and its chunks are not tokens: a chunk holds back the bytes of an unfinished UTF-8
character and any text that may begin a stop sequence, and the tokens that complete a stop
sequence count though their text is cut. So :class:`StreamedUsage` reads the same two numbers
from the library's state rather than from the chunks:

- the prompt: the library hands every sampling step the context it samples from, through a
  logits processor (its public hook); at the first step the context holds exactly the prompt;
- the reply: every sampled token but the last is evaluated into the context after the prompt;
  the last one counts unless it was the end-of-generation token: it was when the reply ran its
  course (finish reason ``"stop"``) and no stop sequence ended it, which the stream knows since
  it applies them itself (:mod:`.stops`); a stop sequence, the length limit or a consumer that
  stopped reading leaves the last sampled token counted and unevaluated.

Tokens read from llama.cpp's prefix cache (``cache_read_tokens``) are the prompt's tokens that
were not evaluated for this request, on both paths: :func:`start_counting` before it and
:func:`prompt_tokens_evaluated` after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...messages import Usage

if TYPE_CHECKING:  # numpy comes with llama-cpp-python (the ``local`` extra)
    import numpy as np
    import numpy.typing as npt


def start_counting(llama: Any) -> None:
    """Zero llama.cpp's evaluation counters of this context (call with its lock held).

    Counting from zero rather than subtracting a reading taken before matters because
    llama.cpp reports a counter as at least 1: before a context's first request it reads 1,
    and a difference taken from it was one short (the first request of a process reported one
    prompt token read from a cache that was empty).
    """
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llama.ctx)


def prompt_tokens_evaluated(llama: Any) -> int:
    """Prompt tokens evaluated since :func:`start_counting`.

    llama.cpp counts a decode of several tokens as prompt and a decode of one as generation,
    and reports at least 1: a prompt whose every token but the last was cached (the last is
    always evaluated again, for its logits) has one token evaluated, which is what is read.
    """
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llama.ctx).n_p_eval)


def usage_of(prompt_tokens: int, output_tokens: int, evaluated: int) -> Usage:
    """One request's usage; the prompt tokens not evaluated came from the prefix cache."""
    return Usage(input_tokens=prompt_tokens, output_tokens=output_tokens,
                 cache_read_tokens=max(0, prompt_tokens - evaluated), requests=1)


class StreamedUsage:
    """The usage of one streamed completion, as the library reports a non-streamed one.

    Pass it in ``logits_processor`` (a ``LogitsProcessorList`` holding it) to the streamed
    request; it changes no logit. Then :meth:`usage` after the stream ended, lock still held.
    """

    def __init__(self) -> None:
        #: The context's length at the first sampling step: the prompt the library tokenized.
        self.prompt_tokens: int | None = None

    def __call__(self, input_ids: npt.NDArray[np.intc],
                 scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        if self.prompt_tokens is None:
            self.prompt_tokens = len(input_ids)
        return scores

    def usage(self, llama: Any, finish_reason: str | None, stopped: bool) -> Usage:
        """The usage, given the stream's finish reason and whether a stop sequence ended it."""
        evaluated = prompt_tokens_evaluated(llama)
        if self.prompt_tokens is None:  # nothing was sampled: the prompt was never evaluated
            return usage_of(0, 0, evaluated)
        generated = int(llama.n_tokens) - self.prompt_tokens
        ended_on_eog = finish_reason == "stop" and not stopped
        return usage_of(self.prompt_tokens, generated + (0 if ended_on_eog else 1), evaluated)
