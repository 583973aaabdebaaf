"""The JSON text protocol through the real Agent loop, with a scripted *inner* text model.

The scripted model plays the part of a text-only model (it replies with text the way the
local models do); the wrapper must turn that text into neutral calls, the loop must execute
them, and the history the inner model sees next must be plain text turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcycle import Agent, Limits
from toolcycle.messages import Message, ToolCall, ToolResult
from toolcycle.models.base import ModelSettings, ToolDefinition
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.calls import calls_before_placeholder, parse_tool_calls
from toolcycle.models.text.protocol import CONSTRAINED, JsonToolsModel
from toolcycle.models.text.streaming import json_answer_so_far


def find_customer(name: str) -> dict[str, str]:
    """Look a customer up by name."""
    return {"customer_id": "C-1", "name": name}


def latest_order(customer_id: str) -> dict[str, str]:
    """The latest order of a customer."""
    if customer_id != "C-1":
        raise LookupError(f"no orders for {customer_id}")
    return {"arrives": "2026-11-27"}


class Capture:
    """An inner-model script step that records what it was sent."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.messages: list[Message] = []
        self.settings: ModelSettings | None = None

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> str:
        self.messages = list(messages)
        self.settings = settings
        return self.reply


async def test_two_tools_in_sequence_from_fenced_and_bare_json() -> None:
    second = Capture('{"name": "latest_order", "arguments": {"customer_id": "C-1"}}')
    third = Capture('{"answer": "It arrives on 2026-11-27."}')
    inner = ScriptedModel(
        [
            'I will look her up.\n```json\n{"name": "find_customer", "arguments": '
            '{"name": "Ada"}}\n```',
            second,
            third,
        ]
    )
    agent = Agent(JsonToolsModel(inner), "Answer order questions.", [find_customer, latest_order])
    result = await agent.run("When does Ada's order arrive?")
    assert result.output == "It arrives on 2026-11-27."
    assert [r.name for r in result.tool_calls] == ["find_customer", "latest_order"]
    assert all(r.error is None for r in result.tool_calls)
    assert result.trace.steps[0].thought == "I will look her up."
    # The inner model sees text only: no tools in its settings, calls and results as text.
    assert second.settings is not None and second.settings.tools == ()
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user"]
    assert "- find_customer(name: string): Look a customer up by name." in second.messages[0].text
    assert second.messages[2].text == '{"name": "find_customer", "arguments": {"name": "Ada"}}'
    assert second.messages[3].text.startswith('Result of find_customer: {"customer_id": "C-1"')
    assert third.messages[-1].text.startswith("Result of latest_order:")


async def test_unknown_tool_and_broken_json_go_back_to_the_model() -> None:
    final = Capture("Sorry, done.")
    inner = ScriptedModel(
        [
            '{"name": "Weather Tool", "arguments": {"city": "Paris"}}',
            '<tool_call>{"name": "find_customer", "arguments": {"name": "Ada",, }}</tool_call>',
            final,
        ]
    )
    agent = Agent(JsonToolsModel(inner), "", [find_customer], limits=Limits(max_iterations=5))
    result = await agent.run("Weather?")
    assert result.output == "Sorry, done."
    errors = [r.error for r in result.tool_calls]
    assert all(errors) and len(errors) == 2
    observations = [m.text for m in final.messages if m.role == "user"]
    assert any("Error from Weather Tool" in text for text in observations)
    assert any("Error from find_customer" in text for text in observations)


async def test_constrained_per_agent_sends_the_union_schema() -> None:
    capture = Capture('{"answer": "hi"}')
    agent = Agent(
        JsonToolsModel(ScriptedModel([capture])),
        "",
        [find_customer],
        model_settings=ModelSettings(extra={CONSTRAINED: True}),
    )
    assert (await agent.run("hi")).output == "hi"
    assert capture.settings is not None
    extra: dict[str, Any] = capture.settings.extra
    assert CONSTRAINED not in extra
    schema = extra["response_format"]["schema"]
    assert [b["properties"].get("name", {}).get("const") for b in schema["anyOf"]] == [
        "find_customer",
        None,
    ]


async def test_forced_final_answer_offers_no_tools_and_says_so() -> None:
    capture = Capture('{"answer": "It is 42."}')
    inner = ScriptedModel(['{"name": "find_customer", "arguments": {"name": "A"}}', capture])
    agent = Agent(JsonToolsModel(inner, constrained=True), "", [find_customer],
                  limits=Limits(max_iterations=1, on_limit="final_answer"))
    result = await agent.run("?")
    assert result.output == "It is 42."
    assert capture.settings is not None
    answer_only = capture.settings.extra["response_format"]["schema"]
    assert answer_only["required"] == ["answer"]
    assert all("Tools:" not in m.text for m in capture.messages)
    assert capture.messages[-1].text.endswith("without calling any tool.")


def test_placeholder_calls_are_dropped_with_what_follows() -> None:
    text = (
        '{"name": "find_customer", "arguments": {"name": "Ada"}}\n'
        '{"name": "latest_order", "arguments": {"customer_id": "<customer_id>"}}\n'
        '{"name": "find_customer", "arguments": {"name": "Bob"}}'
    )
    kept = calls_before_placeholder(parse_tool_calls(text).calls)
    assert [c.arguments for c in kept] == [{"name": "Ada"}]
    independent = '{"name": "a", "arguments": {"x": "1"}}\n{"name": "a", "arguments": {"x": "2"}}'
    assert len(calls_before_placeholder(parse_tool_calls(independent).calls)) == 2


def test_tool_descriptions_are_compact_signatures() -> None:
    from toolcycle.models.text.protocol import describe_tools

    tool = ToolDefinition(
        "greet",
        "Greet someone.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "world"},
                "tone": {"enum": ["warm", "dry"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["tone"],
        },
    )
    assert describe_tools([tool]) == (
        '- greet(name?: string = "world", tone: "warm" | "dry", tags?: list[string]): '
        "Greet someone."
    )


def test_sub_models_are_described_by_their_fields_not_a_bare_ref() -> None:
    import pydantic

    from toolcycle.models.text.protocol import describe_tools

    flight = pydantic.create_model("FlightInfo", flight_number=(str, ...), date=(str, ...))
    parameters = pydantic.create_model("book", user_id=(str, ...),
                                       flights=(list[flight], ...)).model_json_schema()
    text = describe_tools([ToolDefinition("book", "Book.", parameters)])
    assert "$ref" not in text
    assert "flights: list[{flight_number: string, date: string}]" in text
    legacy = {"type": "object", "definitions": {"Tag": {"enum": ["a", "b"]}},
              "properties": {"tag": {"$ref": "#/definitions/Tag"},
                             "node": {"$ref": "#/definitions/Node"}}}
    assert describe_tools([ToolDefinition("t", "T.", legacy)]) == (
        '- t(tag?: "a" | "b", node?: Node): T.')
    recursive = {"type": "object", "$defs": {"Tree": {"type": "object", "properties": {
        "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}},
        "properties": {"tree": {"$ref": "#/$defs/Tree"}}}
    assert describe_tools([ToolDefinition("r", "R.", recursive)]) == (
        "- r(tree?: {children?: list[Tree]}): R.")


async def test_a_repeated_call_is_answered_by_asking_without_tools() -> None:
    answer = Capture('{"answer": "C-1"}')
    same = '{"name": "find_customer", "arguments": {"name": "Ada"}}'
    inner = ScriptedModel([same, same, answer])
    agent = Agent(JsonToolsModel(inner, constrained=True), "", [find_customer])
    result = await agent.run("Ada's id?")
    assert result.output == "C-1"
    assert len(result.tool_calls) == 1  # the repeat never reached the loop
    assert len(inner.requests) == 3  # call, its repeat, the re-ask without tools
    assert answer.settings is not None
    assert answer.settings.extra["response_format"]["schema"]["required"] == ["answer"]
    assert answer.messages[-1].text.endswith("without calling any tool.")


_PREVIEW_TOOLS = (
    ToolDefinition("final_report", "", {"type": "object", "properties": {}}),
    ToolDefinition("submit", "", {"type": "object", "properties": {}}),
)


async def _repeat_preview(retry: Capture, settings: ModelSettings) -> tuple[Message, int]:
    """The model previews its output, then repeats the preview; the reply and request count."""
    preview = '{"name": "final_report", "arguments": {"text": "ok"}}'
    inner = ScriptedModel([preview, preview, retry])
    model = JsonToolsModel(inner, constrained=True)
    history = [Message.user("report")]
    first = await model.request(history, settings)
    history += [first, Message.tool_results([ToolResult("call_1_1", "final_report", "PREVIEW")])]
    return await model.request(history, settings), len(inner.requests)


async def test_a_repeated_output_preview_is_followed_by_the_tool_the_run_names() -> None:
    retry = Capture('{"name": "submit", "arguments": {}}')
    second, _ = await _repeat_preview(
        retry, ModelSettings(tools=_PREVIEW_TOOLS, on_repeat="submit"))
    assert [c.name for c in second.tool_calls] == ["submit"]
    assert retry.settings is not None
    assert retry.settings.extra["response_format"]["schema"]["properties"]["name"] == {
        "const": "submit"
    }
    assert retry.messages[-1].text.endswith("Call the tool submit now.")


async def test_the_adapter_does_not_know_submit_by_itself() -> None:
    # The way forward is the run's policy (ModelSettings.on_repeat), not the adapter's: by
    # default a repeat is answered by asking for the answer without tools, submit offered or not.
    retry = Capture('{"answer": "done"}')
    second, _ = await _repeat_preview(retry, ModelSettings(tools=_PREVIEW_TOOLS))
    assert second.text == "done" and not second.tool_calls
    assert retry.settings is not None
    assert retry.settings.extra["response_format"]["schema"]["required"] == ["answer"]


async def test_a_named_forward_that_is_itself_repeated_asks_without_tools() -> None:
    retry = Capture('{"answer": "done"}')
    settings = ModelSettings(tools=_PREVIEW_TOOLS, on_repeat="final_report")
    second, _ = await _repeat_preview(retry, settings)
    assert second.text == "done"


async def test_on_repeat_auto_keeps_the_repeated_call() -> None:
    second, requests = await _repeat_preview(
        Capture("never sent"), ModelSettings(tools=_PREVIEW_TOOLS, on_repeat="auto"))
    assert [c.name for c in second.tool_calls] == ["final_report"]
    assert requests == 2


async def test_a_call_written_after_tools_are_withdrawn_is_text() -> None:
    """Asked once more first (tests/local/test_answer_required.py); a second call stands."""
    written = '{"name": "find_customer", "arguments": {}}'
    model = JsonToolsModel(ScriptedModel([written, written]))
    reply = await model.request(
        [Message.user("hi")],
        ModelSettings(tools=(ToolDefinition("find_customer", "", {}),), tool_choice="none"),
    )
    assert reply.tool_calls == []
    assert reply.text == '{"name": "find_customer", "arguments": {}}'


def test_real_planning_reply_keeps_only_the_call_it_can_make_now() -> None:
    """Qwen2.5-Coder-1.5B's real first reply to the demo's two-tool task (see fixtures)."""
    import json
    from pathlib import Path

    records = json.loads((Path(__file__).parent / "fixtures" / "replies.json").read_text())
    [plan] = [r for r in records if r.get("source") == "demo prompt"]
    tools = [ToolDefinition(n, "", s) for n, s in plan["schemas"].items()]
    parts = JsonToolsModel(ScriptedModel([])).parse_reply(plan["reply"], tools, "call_1")
    calls = [(p.name, p.arguments) for p in parts if p.kind == "tool_call"]
    assert calls == [("find_customer", {"name": "Ada Lovelace"})]
    assert parts[0].kind == "text" and "follow these steps" in parts[0].text


async def test_in_a_reflection_run_a_repeated_preview_is_followed_by_submit() -> None:
    """The run (not the adapter) says where a repeat goes: with reflection, to ``submit``."""
    from pydantic import BaseModel

    from toolcycle import Output

    class Report(BaseModel):
        text: str

    preview = '{"name": "final_result", "arguments": {"text": "ok"}}'
    submit = Capture('{"name": "submit", "arguments": {}}')
    inner = ScriptedModel([preview, preview, submit])
    agent = Agent(JsonToolsModel(inner, constrained=True), "",
                  output=Output(Report, reflect=lambda report, ctx: f"PREVIEW {report.text}"))
    assert agent.model_settings.on_repeat == "submit"
    result = await agent.run("report")
    assert result.output == Report(text="ok")
    assert [r.name for r in result.tool_calls] == ["final_result", "submit"]


async def test_structured_output_requires_a_call_and_never_offers_a_text_answer() -> None:
    """new-01/new-02: in structured mode only a call can end the attempt, so the loop sends
    tool_choice="required": the grammar loses its answer branch and the prompt stops offering
    {"answer": ...} (which Qwen2.5-Coder-1.5B took three attempts running)."""
    import pydantic

    answer_model = pydantic.create_model("Answer", customer_id=(str, ...))
    second = Capture('{"name": "final_result", "arguments": {"customer_id": "C-1"}}')
    inner = ScriptedModel(['{"name": "find_customer", "arguments": {"name": "Ada"}}', second])
    agent = Agent(JsonToolsModel(inner, constrained=True), "Find ids.", [find_customer],
                  output=answer_model)
    result = await agent.run("Ada's id?")
    assert result.output.customer_id == "C-1"
    assert second.settings is not None
    schema = second.settings.extra["response_format"]["schema"]
    assert all("answer" not in b["properties"] for b in schema["anyOf"])
    prompt = "\n".join(m.text for m in second.messages)
    assert '{"answer"' not in prompt
    assert "the final answer, too, is given by calling a tool" in prompt


async def test_a_structured_run_that_repeats_a_call_is_asked_for_the_output() -> None:
    import pydantic

    answer_model = pydantic.create_model("Answer", customer_id=(str, ...))
    same = '{"name": "find_customer", "arguments": {"name": "Ada"}}'
    output = Capture('{"name": "final_result", "arguments": {"customer_id": "C-1"}}')
    inner = ScriptedModel([same, same, output])
    agent = Agent(JsonToolsModel(inner), "Find ids.", [find_customer], output=answer_model)
    result = await agent.run("Ada's id?")
    assert result.output.customer_id == "C-1" and len(result.tool_calls) == 2
    assert output.messages[-1].text.endswith("Call the tool final_result now.")


def test_calls_written_html_escaped_are_read() -> None:
    """llama_cpp.server's chatml-function-calling template HTML-escapes the history; Qwen 0.5B
    then writes its next call escaped the same way."""
    model = JsonToolsModel(ScriptedModel([]))
    tools = [ToolDefinition("find_customer", "", {"type": "object", "properties": {
        "name": {"type": "string"}}})]
    [call] = model.parse_reply('{&#34;name&#34;: &#34;find_customer&#34;, &#34;arguments&#34;: '
                               '{&#34;name&#34;: &#34;Ada&#34;}}', tools, "c")
    assert isinstance(call, ToolCall) and call.arguments == {"name": "Ada"}


def test_loose_tool_names_resolve_to_the_one_tool_they_can_mean() -> None:
    names = {"algebra_quadratic_roots", "math_hypot", "add", "add_"}
    written = ['{"name": "Algebra Quadratic Roots", "arguments": {"a": 1}}',
               '{"name": "math.hypot", "arguments": {"x": 4}}',
               '{"name": "functions.math_hypot", "arguments": {"x": 4}}']
    got = [parse_tool_calls(text, "c", names).calls[0].name for text in written]
    assert got == ["algebra_quadratic_roots", "math_hypot", "math_hypot"]
    # "ADD" could mean add or add_: kept as written, so the loop answers it as unknown.
    assert parse_tool_calls('{"name": "ADD", "arguments": {}}', "c", names).calls[0].name == "ADD"


async def test_parallel_tool_calls_ask_for_a_list_and_run_every_call() -> None:
    first = Capture('[{"name": "find_customer", "arguments": {"name": "Ada"}}, '
                    '{"name": "find_customer", "arguments": {"name": "Bo"}}]')
    inner = ScriptedModel([first, '{"answer": "both found"}'])
    agent = Agent(JsonToolsModel(inner), "Answer.", [find_customer],
                  model_settings=ModelSettings(parallel_tool_calls=True))
    result = await agent.run("Find Ada and Bo.")
    assert result.output == "both found"
    assert [c.args for c in result.tool_calls] == [{"name": "Ada"}, {"name": "Bo"}]
    assert 'Reply with a JSON list: [{"name"' in first.messages[0].text
    assert '[{"answer": "..."}] to answer' in first.messages[0].text


async def test_parallel_answers_come_as_a_list_and_stream_as_text() -> None:
    second = Capture('[{"answer": "Ada is C-7"}]')
    inner = ScriptedModel(['[{"name": "find_customer", "arguments": {"name": "Ada"}}, '
                           '{"answer": "too early"}]', second])
    agent = Agent(JsonToolsModel(inner), "Answer.", [find_customer],
                  model_settings=ModelSettings(parallel_tool_calls=True))
    result = await agent.run("Find Ada.")
    assert result.output == "Ada is C-7"  # the listed answer, not its JSON
    # the model's past calls come back in the form it is asked for: a list
    assert second.messages[2].text == '[{"name": "find_customer", "arguments": {"name": "Ada"}}]'
    # a call beside an early answer still runs; the answer is not taken
    assert [c.args for c in result.tool_calls] == [{"name": "Ada"}]
    assert json_answer_so_far('[{"answer": "Ada is') == "Ada is"
