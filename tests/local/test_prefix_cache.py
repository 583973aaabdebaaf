"""A run's replies do not depend on what ran before it in the process (models.local.loaded).

llama.cpp reuses the longest token prefix a prompt shares with what its context last held. A
prompt evaluated as a cached prefix plus a tail gives slightly different logits from the same
prompt evaluated at once, and a greedy small model flips near-ties on them: a generated task
was answered right alone and wrong after three other tasks. With ``prefix_cache=
"conversation"`` (the default) a context is reused only while a request continues the last
one; here that is checked on a real model by what llama.cpp evaluated (``cache_read_tokens``)
and by the replies themselves, and the rule on its own with a recording stand-in for llama.cpp.

The real model is the smallest pack, SmolLM2-135M: what is checked is the context's reuse,
which is llama.cpp's and ours whatever the weights, and the same checks on the 0.5B took
37 s of the suite's time against 20 s (measured alone on the 2-core machine, 2026-12-05).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.cli.demo import sayHello
from toolcycle.models.base import ModelSettings
from toolcycle.models.local.control import ControlText
from toolcycle.models.local.llama import (
    DEFAULT_SEED,
    LlamaChatModel,
    local_model,
    model_from_string,
)
from toolcycle.models.local.loaded import LoadedModel

PACK = "smollm2-135m"
DETERMINISTIC = ModelSettings(temperature=0.0, seed=DEFAULT_SEED, max_tokens=128)


class Resets:
    """Stands in for ``llama_cpp.Llama`` where only ``reset`` is called."""

    def __init__(self) -> None:
        self.count = 0

    def reset(self) -> None:
        self.count += 1


def entry() -> tuple[LoadedModel, Resets]:
    llama = Resets()
    return LoadedModel(llama, threading.Lock(), 0.0, ControlText.of_texts([])), llama


def chat(*texts: str) -> list[dict[str, str]]:
    """System, user, then assistant and user turns in alternation."""
    roles = ["system", "user"] + ["assistant", "user"] * len(texts)
    return [{"role": role, "content": text} for role, text in zip(roles, texts, strict=False)]


def test_a_continuation_keeps_the_context_and_anything_else_starts_afresh() -> None:
    loaded, llama = entry()
    loaded.begin(chat("sys", "task one"), "conversation")
    assert llama.count == 1  # the first request: nothing to continue
    loaded.begin(chat("sys", "task one", "call", "observation"), "conversation")
    assert llama.count == 1  # the same conversation, one turn on
    loaded.begin(chat("sys", "task two"), "conversation")
    assert llama.count == 2  # another run, though it shares the system prompt
    loaded.begin(chat("sys", "task two"), "conversation")
    assert llama.count == 3  # the same request again computes as it did the first time
    loaded.begin(chat("sys", "task 2", "call", "observation"), "conversation")
    assert llama.count == 4  # an earlier message differs: not a continuation


def test_shared_keeps_llama_cpp_behaviour() -> None:
    loaded, llama = entry()
    loaded.begin(chat("sys", "task one"), "shared")
    loaded.begin(chat("sys", "task two"), "shared")
    assert llama.count == 0


def prefix_cache_of(text: str) -> str:
    chat = model_from_string(text).inner
    assert isinstance(chat, LlamaChatModel)
    return chat.prefix_cache


def test_the_model_string_sets_it_and_refuses_what_it_does_not_know() -> None:
    assert prefix_cache_of(f"{PACK}?prefix_cache=shared") == "shared"
    assert prefix_cache_of(PACK) == "conversation"
    with pytest.raises(ValueError, match=r"prefix_cache='everything'.*conversation or shared"):
        model_from_string(f"{PACK}?prefix_cache=everything")


def hello_agent(model: Any) -> Agent[None, str]:
    return Agent(model, "You greet people. Use the sayHello tool.", [sayHello],
                 limits=Limits(max_iterations=3), model_settings=DETERMINISTIC)


@pytest.mark.real_model
async def test_each_run_starts_from_an_empty_context_on_the_real_model() -> None:
    model = local_model(PACK)
    agent = hello_agent(model)
    alone = await agent.run("Say hello to Alice.")
    await agent.run("Say hello to Bob, who is new here.")  # shares the system prompt
    after = await agent.run("Say hello to Alice.")
    # Nothing of the run before is reused, though the system prompt is the same.
    assert after.trace.steps[0].usage.cache_read_tokens == 0
    # Within the run, the second request continues the first: llama.cpp reuses it.
    assert after.trace.steps[1].usage.cache_read_tokens > 0
    assert [m.text for m in after.messages] == [m.text for m in alone.messages]


@pytest.mark.real_model
async def test_shared_reuses_the_system_prompt_across_runs_on_the_real_model() -> None:
    model = local_model(PACK, prefix_cache="shared")
    agent = hello_agent(model)
    await agent.run("Say hello to Bob, who is new here.")
    after = await agent.run("Say hello to Alice.")
    assert after.trace.steps[0].usage.cache_read_tokens > 0
