"""Qwen2.5's own tool-call layout (HermesToolsModel) through the real Agent loop.

A scripted inner text model plays the local model; every request it is sent is checked
against what Qwen2.5's chat template would take (:mod:`.hermes_wire`), so a history the
template could not have rendered fails the test that produced it. The template itself is read
from the shipped 0.5B pack's GGUF metadata and rendered with Jinja, and the protocol's turns
must come out as the same text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import jinja2
import pytest

from toolcycle import Agent, Limits
from toolcycle.messages import Message, TextPart
from toolcycle.models.base import ModelSettings, ToolDefinition
from toolcycle.models.local.llama import local_model, model_from_string
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.hermes import (
    DEFAULT_SYSTEM,
    GRAMMAR,
    HermesToolsModel,
    reply_grammar,
)
from toolcycle.tools import Tool

from .hermes_wire import WireError, check_conversation
from .test_json_protocol import Capture as RecordingCapture


def find_customer(name: str) -> dict[str, str]:
    """Look a customer up by name."""
    return {"customer_id": f"C-{len(name)}", "name": name}


def latest_order(customer_id: str) -> dict[str, str]:
    """The latest order of a customer."""
    return {"customer_id": customer_id, "arrives": "2026-11-27"}


class Capture(RecordingCapture):
    """A script step that records what the inner model was sent, after checking it."""

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> str:
        check_conversation(messages)
        return super().__call__(messages, settings)


def block(name: str, arguments: dict[str, Any]) -> str:
    return ("<tool_call>\n" + json.dumps({"name": name, "arguments": arguments})
            + "\n</tool_call>")


async def test_parallel_calls_as_blocks_and_their_responses_in_one_user_turn() -> None:
    first = Capture(block("find_customer", {"name": "Ada"}) + "\n"
                    + block("find_customer", {"name": "Grace"}))
    second = Capture(block("latest_order", {"customer_id": "C-3"}))
    third = Capture("Ada's order arrives on 2026-11-27.")
    agent = Agent(HermesToolsModel(ScriptedModel([first, second, third]), constrained=False),
                  "", [find_customer, latest_order], limits=Limits(max_iterations=5))
    result = await agent.run("Look up Ada and Grace; when does Ada's order arrive?")
    assert result.output == "Ada's order arrives on 2026-11-27."
    assert [(r.name, r.args) for r in result.tool_calls] == [
        ("find_customer", {"name": "Ada"}), ("find_customer", {"name": "Grace"}),
        ("latest_order", {"customer_id": "C-3"})]
    system = first.messages[0].text
    assert system.startswith(DEFAULT_SYSTEM + "\n\n# Tools\n\nYou may call one or more")
    assert '{"type": "function", "function": {"name": "find_customer", "description": ' \
           '"Look a customer up by name."' in system
    # the past turn is written back in the template's layout, the results as one user turn
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user"]
    assert second.messages[2].text == (
        '<tool_call>\n{"name": "find_customer", "arguments": {"name": "Ada"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "find_customer", "arguments": {"name": "Grace"}}\n</tool_call>')
    assert second.messages[3].text == (
        '<tool_response>\n{"customer_id": "C-3", "name": "Ada"}\n</tool_response>\n'
        '<tool_response>\n{"customer_id": "C-5", "name": "Grace"}\n</tool_response>')


async def test_the_agents_own_system_prompt_replaces_qwens() -> None:
    capture = Capture("Hello.")
    agent = Agent(HermesToolsModel(ScriptedModel([capture])), "You help with orders.",
                  [find_customer])
    await agent.run("hi")
    assert capture.messages[0].text.startswith("You help with orders.\n\n# Tools\n")


async def test_unknown_tool_and_bad_json_become_error_responses() -> None:
    final = Capture("Sorry, I cannot tell.")
    inner = ScriptedModel([
        block("weather", {"city": "Paris"}),
        '<tool_call>\n{"name": "find_customer", "arguments": {"name": "Ada",, }\n</tool_call>',
        final,
    ])
    agent = Agent(HermesToolsModel(inner, constrained=False), "", [find_customer],
                  limits=Limits(max_iterations=5))
    result = await agent.run("Weather in Paris?")
    assert result.output == "Sorry, I cannot tell."
    assert [bool(r.error) for r in result.tool_calls] == [True, True]
    responses = [m.text for m in final.messages if m.role == "user"][1:]
    assert responses[0].startswith("<tool_response>\nError: ") and "weather" in responses[0]
    assert responses[1].startswith("<tool_response>\nError: ")


@pytest.mark.parametrize("reply", [
    '{"name": "find_customer", "arguments": {"name": "Ada"}}\n'
    '{"name": "find_customer", "arguments": {"name": "Bo"}}',
    '```json\n{"name": "find_customer", "arguments": {"name": "Ada"}}\n'
    '{"name": "find_customer", "arguments": {"name": "Bo"}}\n```',
    block("find_customer", {"name": "Ada"}) + "\n" + block("find_customer", {"name": "Bo"}),
])
def test_each_form_the_grammar_admits_is_read_as_its_calls(reply: str) -> None:
    """Bare lines, a fence holding a call per line, tagged blocks: Qwen2.5-Coder-1.5B writes
    the first two when shown the template's tools block (a fence of several objects was read
    as one undecodable call before)."""
    tools = [ToolDefinition("find_customer", "", {"type": "object", "properties": {
        "name": {"type": "string"}}})]
    parts = HermesToolsModel(ScriptedModel([])).parse_reply(reply, tools, "c")
    assert [(p.name, p.arguments) for p in parts if p.kind == "tool_call"] == [
        ("find_customer", {"name": "Ada"}), ("find_customer", {"name": "Bo"})]


TOOLS = (ToolDefinition("find_customer", "Find one.", {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    ToolDefinition("latest_order", "Latest.", {
        "type": "object", "properties": {"customer_id": {"type": "string"}}}))


@pytest.mark.parametrize(("choice", "parallel", "answer", "several"), [
    ("auto", True, True, True), ("auto", None, True, False), ("required", None, False, False),
    ("latest_order", True, False, True)])
def test_the_grammar_follows_tool_choice_and_parallel_calls(
        choice: str, parallel: bool | None, answer: bool, several: bool) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    settings = ModelSettings(tools=TOOLS, tool_choice=choice, parallel_tool_calls=parallel)
    grammar = reply_grammar(TOOLS, settings)
    assert grammar is not None
    LlamaGrammar.from_string(grammar, verbose=False)  # llama.cpp parses it
    root = grammar.splitlines()[0]
    assert ("toolcycle-answer" in root) is answer
    assert ('("\\n" toolcycle-block)*' in grammar) is several
    assert ('"\\"latest_order\\""' in grammar) and (
        ('"\\"find_customer\\""' in grammar) is (choice != "latest_order"))
    assert reply_grammar(TOOLS, ModelSettings(tools=TOOLS, tool_choice="none")) is None


async def test_constrained_requests_carry_the_grammar_and_no_json_schema() -> None:
    capture = Capture("Fine.")
    agent = Agent(HermesToolsModel(ScriptedModel([capture])), "", [find_customer])
    await agent.run("hi")
    assert capture.settings is not None
    assert GRAMMAR in capture.settings.extra and "response_format" not in capture.settings.extra
    free = Capture("Fine.")
    await Agent(HermesToolsModel(ScriptedModel([free]), constrained=False), "",
                [find_customer]).run("hi")
    assert free.settings is not None and GRAMMAR not in free.settings.extra


@pytest.mark.parametrize(("turns", "problem"), [
    ([("user", "hi")], "system"),
    ([("system", "no tools here"), ("user", "hi")], "<tools>"),
    ([("system", "S"), ("user", "hi"), ("user", "again")], "expected assistant"),
    ([("system", "S"), ("user", "hi"), ("assistant", block("find_customer", {"name": "A"})),
      ("user", "<tool_response>\n1\n</tool_response>\n<tool_response>\n2\n</tool_response>")],
     "2 tool responses answer 1 calls"),
    ([("system", "S"), ("user", "hi"), ("assistant", block("find_customer", {"name": "A"})),
      ("user", "thanks")], "no tool response"),
    ([("system", "S"), ("user", "hi"), ("assistant", "<tool_call>\ndelete_all()\n</tool_call>"),
      ("user", "<tool_response>\n1\n</tool_response>")], "not a call in the template's form"),
])
def test_the_checker_rejects_what_the_template_could_not_render(
        turns: list[tuple[str, str]], problem: str) -> None:
    """The wire checker is what makes the tests above mean something: it must fail."""
    system = HermesToolsModel(ScriptedModel([])).render_conversation(
        [Message.user("x")], ModelSettings(tools=TOOLS))[0].text
    messages = [Message(role, [TextPart(system if text == "S" else text)])  # type: ignore[arg-type]
                for role, text in turns]
    with pytest.raises(WireError, match=problem):
        check_conversation(messages)


def test_model_strings_choose_the_protocol() -> None:
    assert isinstance(model_from_string("qwen2.5-coder-0.5b?protocol=hermes"), HermesToolsModel)
    free = local_model("qwen2.5-coder-0.5b", protocol="hermes", constrained=False)
    assert isinstance(free, HermesToolsModel) and free.constrained is False
    with pytest.raises(ValueError, match="use json, react, hermes"):
        model_from_string("qwen2.5-coder-0.5b?protocol=xml")


# -- against the real template (the model file's metadata) ---------------------------------------


def _template_of(pack: str) -> str:
    from llama_cpp import Llama

    from toolcycle.models.local.packs import pack_path

    llama = Llama(model_path=str(pack_path(pack)), vocab_only=True, verbose=False)
    try:
        return str(llama.metadata["tokenizer.chat_template"])
    finally:
        llama.close()


def _chatml(messages: Sequence[Message]) -> str:
    return "".join(f"<|im_start|>{m.role}\n{m.text}<|im_end|>\n" for m in messages) \
        + "<|im_start|>assistant\n"


@pytest.mark.real_model
async def test_the_turns_are_what_the_ggufs_own_template_renders() -> None:
    """Rendered by the 0.5B pack's template (Qwen2.5's, as Hugging Face renders it: ``tojson``
    keeps key order and non-ASCII), the same conversation is the same text."""
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    environment = jinja2.Environment()
    environment.filters["tojson"] = lambda value: json.dumps(value, ensure_ascii=False)
    template = environment.from_string(_template_of("qwen2.5-coder-0.5b"))
    last = Capture("done")
    inner = ScriptedModel([block("find_customer", {"name": "Zoë"}) + "\n"
                           + block("latest_order", {"customer_id": "C-9"}), last])
    agent = Agent(HermesToolsModel(inner, constrained=False), "", [find_customer, latest_order])
    result = await agent.run("Zoë's order?")
    outcomes = [r.result for r in result.tool_calls]
    specs = [Tool.from_function(f).spec for f in (find_customer, latest_order)]
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": t.parameters}} for t in specs]
    expected = template.render(tools=tools, add_generation_prompt=True, messages=[
        {"role": "user", "content": "Zoë's order?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": r.name, "arguments": r.args}}
            for r in result.tool_calls]},
        *({"role": "tool", "content": json.dumps(o, ensure_ascii=False)
           if not isinstance(o, str) else o} for o in outcomes)])
    assert _chatml(last.messages) == expected


@pytest.mark.real_model
async def test_the_05b_pack_calls_a_tool_in_its_own_format() -> None:
    agent = Agent("local:qwen2.5-coder-0.5b?protocol=hermes", "Answer order questions.",
                  [find_customer], limits=Limits(max_iterations=3),
                  model_settings=ModelSettings(temperature=0.0, max_tokens=128))
    result = await agent.run("Look up the customer named Ada.")
    first = result.tool_calls[0]
    assert (first.name, first.args, first.error) == ("find_customer", {"name": "Ada"}, None), \
        result.trace.render()


async def test_native_mode_is_the_json_protocols_union_said_after_the_tools_block() -> None:
    """Where the inner model decodes under a schema's grammar (llama.cpp), the layout offers
    native output mode: the reply is decoded under the offered calls or ``{"answer": <the
    output's schema>}`` (the response format, no GBNF of its own), the tools block ends by
    saying those forms, and the history stays in the template's form."""
    import pydantic

    from toolcycle import Output

    class Order(pydantic.BaseModel):
        customer_id: str
        arrives: str

    class Grammared(ScriptedModel):
        schema_grammar = True

    first = Capture('{"name": "find_customer", "arguments": {"name": "Ada"}}')
    second = Capture('{"answer": {"customer_id": "C-3", "arrives": "2026-11-27"}}')
    model = HermesToolsModel(Grammared([first, second]))
    assert model.output_modes() == ("tool", "native")
    assert HermesToolsModel(ScriptedModel([])).output_modes() == ("tool",)
    result = await Agent(model, "Answer order questions.", [find_customer],
                         output=Output(Order, mode="native"), grounding=False).run(
        "When does Ada's order arrive?")
    assert result.output == Order(customer_id="C-3", arrives="2026-11-27")
    assert result.trace.mode_fallbacks == []
    assert first.settings is not None and first.settings.response_format is not None
    schema = json.dumps(first.settings.response_format.schema)
    assert '"answer"' in schema and "arrives" in schema and "find_customer" in schema
    assert GRAMMAR not in first.settings.extra  # the response format is the grammar
    system = first.messages[0].text
    assert system.endswith('or with {"answer": {customer_id: string, arrives: string}} to '
                           "answer the user."), system
    assert "<tool_call>" in second.messages[-2].text  # the call, as the template writes it
