"""A schema's grammar admits every number JSON writes, ``2e-07`` included.

llama.cpp's converter writes an exponent with an integer's rule (no leading zero), so a model
that writes ``2e-07`` (Python's way of printing 2e-7) is cut at ``2e-0`` and its call carries
2.0. Checked here with llama.cpp's own grammar sampler over the 0.5B pack's real vocabulary
(``vocab_only``: no weights), token by token as decoding would.
"""

from __future__ import annotations

import ctypes
import json
from typing import Any

import pytest

from toolcycle.models.base import ModelSettings, ToolDefinition
from toolcycle.models.local.llama import LlamaChatModel
from toolcycle.models.local.packs import pack_path
from toolcycle.models.text.constrained import reply_schema, schema_gbnf
from toolcycle.models.text.hermes import reply_grammar

NUMBER = json.dumps({"type": "object", "properties": {"c": {"type": "number"}},
                     "required": ["c"]})
CAPACITOR = ToolDefinition("resonance", "Resonant frequency of an LC circuit.", {
    "type": "object", "properties": {"capacitance": {"type": "number"}},
    "required": ["capacitance"]})


def admits(vocabulary: Any, grammar: str, text: str) -> bool:
    """Whether decoding under ``grammar`` may write ``text``'s tokens, one after another."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(vocabulary.model)
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    try:
        for token in vocabulary.tokenize(text.encode(), add_bos=False, special=False):
            data = (llama_cpp.llama_token_data * 1)()
            data[0].id, data[0].logit, data[0].p = token, 0.0, 0.0
            candidates = llama_cpp.llama_token_data_array(data, 1, -1, False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
            if data[0].logit == float("-inf"):
                return False
            llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


def test_llama_cpps_own_rule_refuses_a_leading_zero_exponent(vocabulary: Any) -> None:
    """The defect :func:`schema_gbnf` mends (if an upgrade of llama.cpp mends it, this fails
    and the replacement can go)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    assert not admits(vocabulary, str(json_schema_to_gbnf(NUMBER)), '{"c": 2e-07}')


@pytest.mark.parametrize("text", ['{"c": 2e-07}', '{"c": 2e-7}', '{"c": 1.5E+10}',
                                  '{"c": -0.25e-308}', '{"c": 12}'])
def test_the_grammar_admits_every_exponent_json_writes(vocabulary: Any, text: str) -> None:
    assert admits(vocabulary, schema_gbnf(NUMBER), text)


@pytest.mark.parametrize("text", ['{"c": 2e-0x}', '{"c": 2e-0777}', '{"c": "2"}', '{"c": 2e}'])
def test_the_grammar_still_refuses_what_is_no_number(vocabulary: Any, text: str) -> None:
    assert not admits(vocabulary, schema_gbnf(NUMBER), text + "}")


def test_the_json_protocols_reply_schema_decodes_under_the_mended_grammar() -> None:
    """The JSON protocol sends its reply schema as llama_cpp's ``response_format``; in
    process it becomes :func:`schema_gbnf`'s grammar, not llama.cpp's own conversion."""
    schema = reply_schema([CAPACITOR], "auto")
    model = LlamaChatModel(pack_path("qwen2.5-coder-0.5b"))
    kwargs = model._completion_kwargs(ModelSettings(
        extra={"response_format": {"type": "json_object", "schema": schema}}))
    assert "response_format" not in kwargs
    assert kwargs["grammar"]._grammar == schema_gbnf(json.dumps(schema))


def test_a_schema_that_does_not_convert_is_left_to_llama_cpp() -> None:
    odd = {"type": "object", "properties": {"x": {"$ref": "#/nowhere"}}}
    model = LlamaChatModel(pack_path("qwen2.5-coder-0.5b"))
    kwargs = model._completion_kwargs(ModelSettings(
        extra={"response_format": {"type": "json_object", "schema": odd}}))
    assert kwargs["response_format"]["schema"] == odd
    assert "grammar" not in kwargs


def test_the_model_familys_layout_uses_the_mended_grammar(vocabulary: Any) -> None:
    grammar = reply_grammar([CAPACITOR], ModelSettings(tools=[CAPACITOR]))
    assert grammar is not None
    assert admits(vocabulary, grammar,
                  '<tool_call>\n{"name": "resonance", "arguments": {"capacitance": 2e-07}}')
