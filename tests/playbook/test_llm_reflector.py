"""The LLM reflector pass: structured output through a real Agent, merged by the curator."""

from __future__ import annotations

from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import LLMReflector, Playbook

from .conftest import stock_trace


async def test_lessons_come_back_as_advice_insights_naming_only_known_tools() -> None:
    model = ScriptedModel([call("final_result", {"lessons": [
        {"advice": "Call find_ticker before get_quote.",
         "tools": ["find_ticker", "get_quote", "made_up_tool"],
         "applies_when": "stock price questions"},
    ]})])
    insights = await LLMReflector(model).reflect(stock_trace("Acme"), success=True, domain="d")
    [insight] = insights
    assert insight.kind == "advice"
    assert insight.tools == ["find_ticker", "get_quote"]  # the invented tool is dropped
    assert insight.keywords == ["stock", "price", "questions"]


def test_the_playbook_adds_llm_advice_in_the_background() -> None:
    model = ScriptedModel([call("final_result", {"lessons": [
        {"advice": "Skip web_search; call find_ticker first.", "tools": ["find_ticker"],
         "applies_when": "stock price"},
    ]})])
    pb = Playbook(":memory:", llm_reflector=LLMReflector(model))
    pb.observe(stock_trace("Acme"))
    assert pb.flush(60)
    assert list(pb.errors) == []
    [strategy] = pb.strategies("support")
    assert strategy.kind == "advice" and strategy.advice.startswith("Skip web_search")
    text, shown = pb.instructions_for("stock price of Globex", "support", ["find_ticker"])
    assert shown == [strategy.id] and "Skip web_search" in text


def test_a_failing_llm_reflector_keeps_the_deterministic_lessons() -> None:
    # A small model that never writes valid lessons: the agent run fails after its retries.
    model = ScriptedModel([call("final_result", {"lessons": "not a list"})] * 10)
    pb = Playbook(":memory:", llm_reflector=LLMReflector(model))
    pb.observe(stock_trace("Acme"))
    assert pb.flush(60)
    assert len(pb.errors) == 1  # the reflector's failure, recorded
    assert pb.tool_stats("support")  # what needs no model was still learned


def test_lessons_can_be_left_to_the_llm_reflector_alone() -> None:
    model = ScriptedModel([call("final_result", {"lessons": [
        {"advice": "Call find_ticker first.", "tools": ["find_ticker"],
         "applies_when": "stock price"}]})] * 5)
    pb = Playbook(":memory:", llm_reflector=LLMReflector(model), rule_lessons=False)
    for company in ("Acme", "Globex", "Initech"):  # rules would promote this sequence
        pb.observe(stock_trace(company))
    assert pb.flush(60) and list(pb.errors) == []
    assert {s.kind for s in pb.strategies("support")} == {"advice"}
    # advice may come from a failed run: its evidence is not called successful
    assert all("successful" not in s.render() for s in pb.strategies("support"))
    assert pb.tool_stats("support")  # statistics need no lessons


async def test_a_react_model_is_asked_for_its_lessons_through_the_json_protocol() -> None:
    """The lessons are structured output; under ReAct the 1.5B gave none valid (`rail`,
    17 of 18 train runs logged failing, none valid), so the reflector asks the same inner
    model through the JSON protocol."""
    from toolcycle.messages import Message, TextPart
    from toolcycle.models.text.protocol import JsonToolsModel
    from toolcycle.models.text.react import ReActModel

    written = ('{"name": "final_result", "arguments": {"lessons": [{"advice": "Call '
               'find_ticker before get_quote.", "tools": ["find_ticker", "get_quote"]}]}}')
    inner = ScriptedModel([Message("assistant", [TextPart(written)])])
    reflector = LLMReflector(ReActModel(inner))
    writer = reflector.writer()
    assert isinstance(writer, JsonToolsModel) and writer.inner is inner
    [insight] = await reflector.reflect(stock_trace("Acme"), success=True, domain="d")
    assert insight.tools == ["find_ticker", "get_quote"]
    other = ScriptedModel([])
    assert LLMReflector(other).writer() is other  # any other model is asked as it is
