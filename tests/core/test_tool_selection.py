"""Tool selection: a run is offered only the tools related to its prompt.

Driven through the agent the way a user would, with a scripted model that records what each
request offered; the scoring itself is checked on plain tool definitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from toolcycle import Agent, ConfigurationError, Tool, ToolSelection, tool
from toolcycle.models.base import ToolDefinition
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.tool_selection import tool_text


@tool
def get_weather(city: str) -> str:
    """Current weather for a city: temperature and sky.

    Args:
        city: The city to report on.
    """
    return f"{city}: 18 C, cloudy"


@tool
def body_mass_index(weight_kg: float, height_m: float) -> float:
    """Compute the body mass index of a person from weight and height.

    Args:
        weight_kg: The person's weight in kilograms.
        height_m: The person's height in metres.
    """
    return round(weight_kg / height_m**2, 1)


def offered(model: ScriptedModel) -> list[list[str]]:
    return [[t.name for t in r.settings.tools] for r in model.requests]


def definition(t: Tool[Any]) -> ToolDefinition:
    return ToolDefinition(t.spec.name, t.spec.description, t.spec.parameters)


def test_scores_rank_the_related_tool_first() -> None:
    selection = ToolSelection()
    tools = [definition(body_mass_index), definition(get_weather)]
    bmi, weather = selection.scores("What is the weather in Lisbon today?", tools)
    assert weather > selection.min_relevance > bmi
    assert selection.select("What is the weather in Lisbon today?", tools) == (tools[1],)


def test_a_task_in_another_language_keeps_every_tool() -> None:
    # the lexical reading shares no word with English tools; it must not drop them unread
    selection = ToolSelection()
    tools = [definition(body_mass_index), definition(get_weather)]
    for task in ("北京和上海现在的天气怎么样？", "¿Cuál es el clima actual en Cancún y Tulum?"):
        assert selection.select(task, tools) == tuple(tools)
        assert len(ToolSelection(max_tools=1).select(task, tools)) == 1
    # an English task unrelated to both still keeps none, a terse one too
    assert selection.select("Who painted the ceiling of the Sistine Chapel?", tools) == ()
    assert selection.select("hello", tools) == ()


@pytest.mark.parametrize(("text", "english"), [
    ("What is the weather in Lisbon today?", True), ("uk rainfall", True), ("hello", True),
    ("What's the weather in Zürich?", True), ("北京和上海现在的天气怎么样？", False),
    ("Qual a temperatura atual em Divinópolis, MG?", False),  # "a" is Portuguese too
    ("Peux-tu me donner la météo actuelle pour Paris ?", False),
    ("perform 다용도실 통돌이 중지", False)])
def test_which_requests_the_word_reading_reads(text: str, english: bool) -> None:
    from toolcycle.words import in_list_language

    assert in_list_language(text) is english


def test_unrelated_task_keeps_no_tool_but_keeps_named_ones() -> None:
    selection = ToolSelection()
    tools = [definition(body_mass_index), definition(get_weather)]
    task = "Write a haiku about autumn leaves."
    assert selection.select(task, tools) == ()
    assert selection.select(task, tools, keep=frozenset({"get_weather"})) == (tools[1],)
    assert selection.scores("", tools) == [0.0, 0.0]
    assert selection.scores(task, []) == []


def test_max_tools_keeps_the_best_in_the_given_order() -> None:
    tools = [ToolDefinition(f"tool_{i}", f"weather report number {i}", {}) for i in range(5)]
    tools.append(ToolDefinition("weather", "Weather report for a city", {}))
    chosen = ToolSelection(0.0, max_tools=2).select("weather report for a city", tools)
    assert len(chosen) == 2 and chosen[-1].name == "weather"
    assert [t.name for t in chosen] == [t.name for t in tools if t in chosen]


def test_tool_text_includes_names_descriptions_and_nested_parameters() -> None:
    text = tool_text(ToolDefinition("geo.find_city-by_name", "Look a place up.", {
        "type": "object", "properties": {
            "postal_code": {"type": "string", "description": "Five digits."},
            "filters": {"type": "array", "items": {"type": "object", "properties": {
                "country_iso": {"type": "string"}}}},
        }}))
    for words in ("geo find city by name", "Look a place up.", "postal code", "Five digits.",
                  "filters", "country iso"):
        assert words in text


def test_invalid_configuration_lists_every_problem() -> None:
    with pytest.raises(ConfigurationError) as caught:
        ToolSelection(2.0, max_tools=0, embedder="words")  # type: ignore[arg-type]
    assert len(caught.value.problems) == 3
    with pytest.raises(ConfigurationError, match="tool_selection must be"):
        Agent(ScriptedModel(["x"]), tool_selection="yes")  # type: ignore[arg-type]


async def test_agent_offers_only_related_tools_for_the_whole_run() -> None:
    model = ScriptedModel([call("get_weather", {"city": "Lisbon"}), "18 C and cloudy."])
    agent = Agent(model, tools=[body_mass_index, get_weather], tool_selection=ToolSelection())
    result = await agent.run("What is the weather in Lisbon?")
    assert result.output == "18 C and cloudy."
    assert offered(model) == [["get_weather"], ["get_weather"]]
    # the agent itself is unchanged: the next run selects again, for its own prompt
    model2 = ScriptedModel(["23.1"])
    agent.model = model2
    await agent.run("Body mass index for weight 70 kg and height 1.74 m?")
    assert offered(model2) == [["body_mass_index"]]


async def test_unrelated_prompt_gets_no_tools_and_a_text_answer() -> None:
    model = ScriptedModel(["Leaves drift and fall."])
    agent = Agent(model, tools=[body_mass_index, get_weather], tool_selection=ToolSelection())
    result = await agent.run("Write a haiku about autumn leaves.")
    assert result.output == "Leaves drift and fall." and offered(model) == [[]]
    assert result.trace.tools_offered == []
    assert "tools offered (tool selection): none" in result.trace.render()


async def test_the_trace_records_the_tools_offered_in_every_view() -> None:
    from toolcycle.tracing import Trace
    from toolcycle.tracing.html import render_html

    model = ScriptedModel([call("get_weather", {"city": "Lisbon"}), "Cloudy."])
    agent = Agent(model, tools=[body_mass_index, get_weather], tool_selection=ToolSelection())
    trace = (await agent.run("What is the weather in Lisbon?")).trace
    assert trace.tools_offered == ["get_weather"]
    assert Trace.from_dict(trace.to_dict()).tools_offered == ["get_weather"]
    assert "tools offered (tool selection): get_weather" in trace.render()
    assert "Tools offered (tool selection)" in render_html(trace)
    # without a selection nothing is claimed: every tool was offered
    plain = await Agent(ScriptedModel(["Hi."]), tools=[get_weather]).run("Hello")
    assert plain.trace.tools_offered is None and "tools offered" not in plain.trace.render()
    assert Trace.from_dict(plain.trace.to_dict()).tools_offered is None


async def test_a_call_to_a_tool_not_offered_is_an_unknown_tool() -> None:
    model = ScriptedModel([call("body_mass_index", {"weight_kg": 70, "height_m": 1.7}),
                           "Sorry."], wire="openai")
    agent = Agent(model, tools=[body_mass_index, get_weather], tool_selection=ToolSelection())
    result = await agent.run("What is the weather in Lisbon?")
    record = result.tool_calls[0]
    assert record.kind == "unknown" and record.error and "body_mass_index" in record.error
    assert result.output == "Sorry."


class Forecast(BaseModel):
    city: str
    summary: str


async def test_structured_output_tool_is_always_offered() -> None:
    model = ScriptedModel([call("final_result", {"city": "Oslo", "summary": "snow"})])
    agent = Agent(model, tools=[body_mass_index, get_weather], output=Forecast,
                  tool_selection=ToolSelection())
    result = await agent.run("Write a haiku about autumn leaves.")
    assert result.output == Forecast(city="Oslo", summary="snow")
    names = offered(model)[0]
    assert "body_mass_index" not in names and "get_weather" not in names and len(names) == 1


class Listed:
    """A toolset (as an MCP server is one) whose tools are known only at run time."""

    def __init__(self, tools: Sequence[Tool[Any]]) -> None:
        self.tools = list(tools)

    async def get_tools(self) -> Sequence[Tool[Any]]:
        return self.tools

    async def close(self) -> None:
        return None


async def test_toolset_tools_are_selected_too() -> None:
    model = ScriptedModel([call("get_weather", {"city": "Rome"}), "Sunny."])
    agent = Agent(model, tools=[Listed([body_mass_index, get_weather])],
                  tool_selection=ToolSelection())
    result = await agent.run("What is the weather in Rome?")
    assert result.output == "Sunny."
    assert offered(model) == [["get_weather"], ["get_weather"]]
    assert result.trace.tools_offered == ["get_weather"]  # the toolset's, once listed


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file from the disk.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


async def test_a_paused_run_resumes_with_the_tools_it_was_offered() -> None:
    model = ScriptedModel([call("delete_file", {"path": "/tmp/x"}), "Deleted."])
    agent = Agent(model, tools=[get_weather, delete_file], tool_selection=ToolSelection())
    paused = await agent.run("Delete the file /tmp/x from the disk.")
    assert paused.paused and paused.snapshot is not None
    resumed = await agent.resume(paused.snapshot, {paused.pending_approvals[0].call_id: True})
    assert resumed.output == "Deleted."
    assert offered(model) == [["delete_file"], ["delete_file"]]
    assert resumed.trace.tools_offered == ["delete_file"]
    # a snapshot whose prompt was changed no longer matches: its integrity check says so
    import json

    forged = json.loads(json.dumps(paused.snapshot))
    forged["user_prompt"] = "What is the weather?"
    with pytest.raises(ConfigurationError, match="integrity"):
        await agent.resume(forged, {paused.pending_approvals[0].call_id: True})


class Counting(ToolSelection):
    """Counts how often the run selects."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def select(self, task: str, tools: Sequence[ToolDefinition],
               keep: frozenset[str] = frozenset()) -> tuple[ToolDefinition, ...]:
        self.calls += 1
        return super().select(task, tools, keep)


async def test_toolset_selection_is_not_redone_before_every_request() -> None:
    selection = Counting()
    model = ScriptedModel([call("get_weather", {"city": "Rome"}),
                           call("get_weather", {"city": "Oslo"}), "Done."])
    agent = Agent(model, tools=[Listed([body_mass_index, get_weather])],
                  tool_selection=selection)
    await agent.run("What is the weather in Rome and Oslo?")
    assert offered(model) == [["get_weather"]] * 3
    assert selection.calls == 2  # at the start, and once for the listed core: not per request


# -- in agent specs ---------------------------------------------------------------------------

SPEC_TOOLS = '''
[weather_desk:Agent {
  instruction: "Answer with the tools.",
  tool_selection: {max_tools: 1}
} |
  [get_weather:Tool {description: "Current weather for a city: temperature and sky."} |
    (city::String)==>(::String)
  ],
  [body_mass_index:Tool {
    description: "Compute the body mass index of a person from weight and height."
  } |
    (weight_kg::Number)==>(height_m::Number)==>(::Number)
  ]
]
'''


async def test_a_spec_turns_on_tool_selection_in_gram_and_json() -> None:
    from toolcycle.spec import AgentSpec

    spec = AgentSpec.from_gram(SPEC_TOOLS)
    assert spec.tool_selection == {"max_tools": 1}
    assert AgentSpec.from_json(spec.to_json()) == spec == AgentSpec.from_gram(spec.to_gram())
    model = ScriptedModel([call("get_weather", {"city": "Lisbon"}), "18 C and cloudy."])
    agent = spec.bind([get_weather, body_mass_index], model=model)
    assert isinstance(agent.tool_selection, ToolSelection)
    assert agent.tool_selection.max_tools == 1
    result = await agent.run("What is the weather in Lisbon?")
    assert result.trace.tools_offered == ["get_weather"]
    assert offered(model) == [["get_weather"], ["get_weather"]]
    # without the field every tool is offered, as before
    spec.tool_selection = None
    plain = ScriptedModel(["Hi."])
    await spec.bind([get_weather, body_mass_index], model=plain).run("Hello")
    assert offered(plain) == [["get_weather", "body_mass_index"]]


@pytest.mark.parametrize(("setting", "problem"), [
    ("tool_selection: {min_relevance: 3, max_tools: 0}",
     "min_relevance must be a number from -1 to 1 (a cosine similarity), got 3; max_tools must "
     "be a positive integer or None, got 0"),
    ('tool_selection: {embedder: "bge"}', "unknown setting 'embedder'"),
    ("tool_selection: true", "'tool_selection' must be a record"),
])
def test_a_bad_tool_selection_in_a_spec_is_a_spec_error_at_its_line(setting: str,
                                                                    problem: str) -> None:
    from toolcycle.spec import AgentSpec, SpecError

    text = SPEC_TOOLS.replace("tool_selection: {max_tools: 1}", setting)
    with pytest.raises(SpecError) as caught:
        AgentSpec.from_gram(text, "desk.gram")
    assert problem in str(caught.value) and caught.value.line == 4


def test_bind_lists_a_bad_tool_selection_set_in_code_among_its_problems() -> None:
    from toolcycle.spec import AgentSpec

    spec = AgentSpec.from_gram(SPEC_TOOLS)
    spec.tool_selection = {"embedder": "bge", "max_tools": 0}  # the field is plain data
    with pytest.raises(ConfigurationError) as caught:
        spec.bind([get_weather], model=ScriptedModel(["x"]))
    assert caught.value.problems == [
        "tool 'body_mass_index': no implementation in the tool library (it has: get_weather)",
        "tool_selection: unknown setting 'embedder'; expected any of min_relevance, max_tools",
        "tool_selection: max_tools must be a positive integer or None, got 0",
    ]
