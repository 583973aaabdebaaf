"""A streamed request reports the usage the same request reports unstreamed (models.local.usage).

llama-cpp-python's stream carries no usage, and its chunks are not tokens; the streamed usage
was counted from the chunks and was wrong whenever a reply did not end on the
end-of-generation token: one prompt token short at the length limit, one reply token short at
a stop sequence (the token that completes it counts, though its text is cut). Both are checked
here on the real 0.5B against the library's own usage of the unstreamed request, with the
tokens read from the prefix cache on a continued conversation and on a context's first
request; :class:`StopText`, which applies stop sequences to a stream, is checked on its own.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle.messages import Message
from toolcycle.models.base import ModelResponse, ModelSettings
from toolcycle.models.local.llama import DEFAULT_SEED, LlamaChatModel
from toolcycle.models.local.packs import pack_path
from toolcycle.models.local.stops import StopText, stop_strings

PACK = "qwen2.5-coder-0.5b"
COUNT = [Message.system("You are terse."),
         Message.user("Write the numbers 1 to 12 separated by commas, then say done.")]


def settings(max_tokens: int = 64, **extra: Any) -> ModelSettings:
    return ModelSettings(temperature=0.0, seed=DEFAULT_SEED, max_tokens=max_tokens, extra=extra)


async def streamed(model: LlamaChatModel, messages: list[Message],
                   how: ModelSettings) -> tuple[Message, str]:
    """The stream's final message and the text its deltas showed."""
    shown: list[str] = []
    async for item in model.stream(messages, how):
        if isinstance(item, ModelResponse):
            return item.message, "".join(shown)
        shown.append(item.text)
    raise AssertionError("the stream ended without its message")


@pytest.fixture(scope="module")
def model() -> LlamaChatModel:
    return LlamaChatModel(pack_path(PACK), name=PACK)


@pytest.mark.real_model
@pytest.mark.parametrize("how", [
    pytest.param(settings(), id="end-of-generation"),
    pytest.param(settings(max_tokens=5), id="length-limit"),
    pytest.param(settings(stop=["7"]), id="stop-sequence-at-a-token"),
    pytest.param(settings(stop=[", done", "11"]), id="stop-sequence-inside-tokens"),
])
async def test_a_streamed_request_reports_the_usage_of_the_same_request(
        model: LlamaChatModel, how: ModelSettings) -> None:
    whole = await model.request(COUNT, how)
    message, shown = await streamed(model, COUNT, how)
    assert (message.text, shown, message.finish_reason) == (whole.text, whole.text,
                                                            whole.finish_reason)
    assert message.usage == whole.usage
    assert whole.usage.output_tokens > 0


@pytest.mark.real_model
async def test_a_continued_conversation_reads_the_same_prefix_from_the_cache(
        model: LlamaChatModel) -> None:
    first = await model.request(COUNT, settings(max_tokens=16))
    more = [*COUNT, first, Message.user("Now the numbers 20 to 24.")]
    whole = await model.request(more, settings(max_tokens=16))
    await streamed(model, COUNT, settings(max_tokens=16))  # the same first turn, streamed
    message, _ = await streamed(model, more, settings(max_tokens=16))
    assert whole.usage.cache_read_tokens > 0
    assert message.usage == whole.usage


@pytest.mark.real_model
async def test_a_contexts_first_request_reads_nothing_from_the_cache() -> None:
    """llama.cpp reports its counters as at least 1, so a difference of two readings taken
    around a context's first request was one short: one token "read" from an empty cache."""
    fresh = LlamaChatModel(pack_path(PACK), name=PACK, n_ctx=1536)  # a context of its own
    first = await fresh.request(COUNT, settings(max_tokens=4))
    assert first.usage.input_tokens > 0
    assert first.usage.cache_read_tokens == 0


def fed(stops: list[str], *pieces: str) -> tuple[list[str], StopText]:
    text = StopText(stops)
    return [text.feed(piece) for piece in pieces], text


def test_text_that_may_begin_a_stop_sequence_waits_until_it_cannot() -> None:
    shown, text = fed(["Observation:"], "I call it.\nObs", "erv", "ed that.")
    assert shown == ["I call it.\n", "", "Observed that."]
    assert not text.stopped and text.flush() == ""


def test_a_stop_sequence_across_pieces_ends_the_reply_before_it() -> None:
    shown, text = fed(["Observation:", "\n\n"], "Action: x\nObserv", "ation: 42", "more")
    assert shown == ["Action: x\n", "", ""]
    assert text.stopped and text.text == "Action: x\n"


def test_the_earliest_stop_sequence_found_ends_the_reply() -> None:
    shown, text = fed(["b", "a"], "xab")
    assert (shown, text.text) == (["x"], "x")


def test_what_was_held_back_is_shown_when_the_reply_ends() -> None:
    shown, text = fed(["<end>"], "a <e")
    assert (shown, text.flush(), text.text) == (["a "], "<e", "a <e")


def test_a_stop_that_is_not_text_is_refused() -> None:
    assert stop_strings("x") == ("x",) and stop_strings(None) == ()
    with pytest.raises(ValueError, match="stop must be a string or a list of strings"):
        stop_strings([1])
