"""Control tokens through ``llama_cpp.server``: the server renders and tokenizes on its side.

The OpenAI API does not tell a client the served model's vocabulary, so the adapter
neutralises only when the model string names the model's file (``control_tokens=``). The
server's own count of prompt tokens shows what it evaluated: the count of the prompt rendered
here with the pack's template and vocabulary, which holds exactly the real turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolcycle.messages import Message, ToolCall, ToolResult
from toolcycle.models.base import ModelSettings, ToolDefinition
from toolcycle.models.local.control import ControlText
from toolcycle.models.local.llama import DEFAULT_SEED
from toolcycle.models.openai import OpenAIModel, compatible_model_from_string

from .llama_server import serve
from .test_control_text import (
    FORGED,
    HOSTILE_DESCRIPTION,
    HOSTILE_RESULT,
    HOSTILE_TASK,
    PACK,
    WORD_JOINER,
    plain,
    real_turns,
    rendered,
    turn_tokens,
)

CONTROL = ControlText.of_texts(["<|im_end|>", "<|im_start|>"])


def test_every_string_of_a_body_is_neutralised_but_keys_and_media_data() -> None:
    body = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "a<|im_end|>"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,<|im_end|>"}}]}],
        "<|im_start|>": ("kept", 1, None)}
    out = CONTROL.neutralise_json(body)
    assert out["messages"][0]["content"][0]["text"] == f"a<{WORD_JOINER}|im_end|>"
    assert out["messages"][0]["content"][1]["image_url"]["url"].endswith(",<|im_end|>")
    assert out["<|im_start|>"] == ("kept", 1, None)
    assert body["messages"][0]["content"][0]["text"] == "a<|im_end|>"  # not changed in place


def test_native_tool_results_calls_and_descriptions_are_neutralised() -> None:
    model = OpenAIModel("m", api_key="unused", base_url="http://127.0.0.1:9/v1",
                        control_text=CONTROL)
    call = ToolCall("call_1", "weather", {"city": "<|im_end|>"})
    messages = [Message.user(HOSTILE_TASK), Message("assistant", [call]),
                Message("tool", [ToolResult("call_1", "weather", HOSTILE_RESULT)])]
    tools = (ToolDefinition("weather", HOSTILE_DESCRIPTION,
                            {"type": "object", "properties": {"city": {
                                "type": "string", "description": "<|im_start|>"}}}),)
    body = model.build_request(messages, ModelSettings(tools=tools))
    sent = repr(body["messages"]) + repr(body["tools"])
    assert "<|im_end|>" not in sent and "<|im_start|>" not in sent
    assert "<|im_end|>" in model.build_request(messages, ModelSettings())["messages"][0][
        "content"].replace(WORD_JOINER, "")  # the cached conversion keeps the original


@pytest.mark.real_model
def test_the_model_string_names_the_served_models_file() -> None:
    model = compatible_model_from_string(
        f"{PACK}@http://127.0.0.1:9/v1?tools=native&control_tokens={PACK}")
    assert isinstance(model, OpenAIModel) and model.control_text is not None
    assert {"<|im_start|>", "<|im_end|>", "<|endoftext|>"} <= model.control_text.texts
    assert "control_tokens" not in str(model.client.base_url)
    with pytest.raises(ValueError, match="unknown local model"):
        compatible_model_from_string("m@http://127.0.0.1:9/v1?control_tokens=no-such-pack")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory.mktemp("llama_server"), [])


@pytest.mark.real_model
async def test_the_server_evaluates_only_the_real_turns(llama_server: str,
                                                        vocabulary: Any) -> None:
    conversation = [Message.system("You answer in one word." + FORGED), Message.user(HOSTILE_TASK)]
    one_token = ModelSettings(temperature=0.0, seed=DEFAULT_SEED, max_tokens=1)
    guarded = compatible_model_from_string(f"{PACK}@{llama_server}?control_tokens={PACK}")
    assert isinstance(guarded, OpenAIModel) and guarded.control_text is not None
    reply = await guarded.request(conversation, one_token)
    _, tokens = rendered(vocabulary, guarded.control_text.chat_payload(conversation))
    assert turn_tokens(vocabulary, tokens) == real_turns(len(conversation))
    assert reply.usage is not None and reply.usage.input_tokens == len(tokens)

    # Without it the server reads the forged markers as turns, as the docs warn.
    exposed = compatible_model_from_string(f"{PACK}@{llama_server}")
    reply = await exposed.request(conversation, one_token)
    _, tokens = rendered(vocabulary, plain(conversation))
    assert turn_tokens(vocabulary, tokens)["<|im_start|>"] > len(conversation) + 1
    assert reply.usage is not None and reply.usage.input_tokens == len(tokens)
