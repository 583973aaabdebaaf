"""Tolerant parsing of tool calls written as text.

The hand-written cases cover each form the parser promises; ``test_fixture_corpus`` replays
real replies of the three packed models (``fixtures/replies.json``, collected by
``collect_fixtures.py``) against expectations reviewed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcycle.models.text.calls import (
    TRUNCATED,
    decode_lenient,
    parse_tool_calls,
    render_tool_call,
)

FIXTURES = Path(__file__).parent / "fixtures"


def calls_of(text: str, tools: set[str] | None = None) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in parse_tool_calls(text, "t", tools).calls]


def test_bare_json_call() -> None:
    assert calls_of('{"name": "add", "arguments": {"a": 1, "b": 2}}') == [("add", {"a": 1, "b": 2})]


def test_a_call_written_again_inside_its_own_arguments_is_the_call() -> None:
    """The 1.5B wrapped each call inside its own arguments through a whole run (issue 68)."""
    wrapped = ('{"name": "get_ward", "arguments": {"name": "get_ward", '
               '"arguments": {"ward_name": "Oak Ward"}}}')
    assert calls_of(wrapped) == [("get_ward", {"ward_name": "Oak Ward"})]
    # another tool's name, or more keys than a call has, are arguments as written
    other = '{"name": "note", "arguments": {"name": "get_ward", "arguments": {"a": 1}}}'
    assert calls_of(other) == [("note", {"name": "get_ward", "arguments": {"a": 1}})]
    extra = '{"name": "f", "arguments": {"name": "f", "arguments": {"a": 1}, "b": 2}}'
    assert calls_of(extra) == [("f", {"name": "f", "arguments": {"a": 1}, "b": 2})]


def test_tagged_calls_several_and_unclosed_last_tag() -> None:
    text = (
        "I will look both up.\n<tool_call>\n"
        '{"name": "weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "weather", "arguments": {"city": "Oslo"}'
    )
    parsed = parse_tool_calls(text, "call_3")
    assert [(c.id, c.arguments) for c in parsed.calls] == [
        ("call_3_1", {"city": "Paris"}),
        ("call_3_2", {"city": "Oslo"}),
    ]
    assert parsed.thought == "I will look both up."


def test_fenced_json_with_text_around_becomes_thought() -> None:
    text = 'Let me check.\n```json\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n```\nDone.'
    parsed = parse_tool_calls(text)
    assert [c.name for c in parsed.calls] == ["add"]
    assert parsed.thought == "Let me check.\n\nDone."


def test_fenced_list_of_calls_and_openai_shape() -> None:
    text = (
        "```\n[{\"name\": \"a\", \"arguments\": {}}, "
        '{"type": "function", "function": {"name": "b", "arguments": "{\\"x\\": 1}"}}]\n```'
    )
    assert calls_of(text) == [("a", {}), ("b", {"x": 1})]


def test_alternative_key_spellings() -> None:
    assert calls_of('{"tool": "add", "parameters": {"a": 1}}') == [("add", {"a": 1})]
    assert calls_of('{"function": "add", "args": {"a": 1}}') == [("add", {"a": 1})]


def test_python_literal_and_missing_closing_braces() -> None:
    assert calls_of("{'name': 'f', 'arguments': {'on': True, 'n': None}}") == [
        ("f", {"on": True, "n": None})
    ]
    assert calls_of('{"name": "f", "arguments": {"a": 1}') == [("f", {"a": 1})]


def test_doubled_braces() -> None:
    assert calls_of('{{"name": "f", "arguments": {"a": 1}}}') == [("f", {"a": 1})]


def test_arguments_as_json_string_that_is_broken_keeps_a_parse_error() -> None:
    [call] = parse_tool_calls('{"name": "f", "arguments": "{\\"a\\": 1,"}').calls
    assert call.arguments is None
    assert call.parse_error is not None and "not valid JSON" in call.parse_error


def test_undecodable_call_is_kept_with_an_error() -> None:
    text = '<tool_call>{"name": "add", "arguments": {"a": 1,, }}</tool_call>'
    [call] = parse_tool_calls(text).calls
    assert call.name == "add"
    assert call.arguments is None and call.parse_error


def test_non_object_arguments_are_an_error_not_a_crash() -> None:
    [call] = parse_tool_calls('{"name": "f", "arguments": [1, 2]}').calls
    assert call.arguments is None
    assert call.parse_error == "arguments must be a JSON object, got list"


def test_list_cut_off_by_the_token_limit_keeps_its_complete_calls_once_each() -> None:
    # SmolLM2-135M under the parallel grammar (BFCL simple_python_1): the same call over and
    # over until the token limit cuts one mid-item.
    one = '{"name": "math_factorial", "arguments": {"number": 5}}'
    text = "[" + ", ".join([one] * 6) + ', {"name": "math_fa'
    parsed = parse_tool_calls(text, "call_1", {"math_factorial"})
    assert [(c.id, c.name, c.arguments) for c in parsed.calls] == [
        ("call_1_1", "math_factorial", {"number": 5})]
    assert parsed.thought == ""


def test_cut_off_list_keeps_distinct_calls_in_order_and_drops_the_cut_one() -> None:
    text = ('```json\n[{"name": "w", "arguments": {"city": "Paris"}},\n'
            '{"name": "w", "arguments": {"city": "Oslo"}},'
            ' {"name": "w", "arguments": {"city": "Paris"}},'
            ' {"name": "w", "arguments": {"ci')
    assert calls_of(text) == [("w", {"city": "Paris"}), ("w", {"city": "Oslo"})]


def test_closed_list_keeps_repeated_calls_as_written() -> None:
    # "Roll the die twice": a list the model closed itself is not a repetition loop.
    text = '[{"name": "roll", "arguments": {}}, {"name": "roll", "arguments": {}}]'
    assert calls_of(text, {"roll"}) == [("roll", {}), ("roll", {})]


def test_fence_of_calls_one_per_line_cut_by_the_limit_keeps_its_complete_calls_once_each(
) -> None:
    # Qwen2.5-Coder-0.5B in its family's own layout (BFCL parallel_multiple, dev entries):
    # a fence of calls one per line that repeats them until the token limit cuts one. Read
    # whole it was one unreadable call; the calls written whole are what the model meant.
    lines = ['{"name": "ttest", "arguments": {"group": [1, 2]}}',
             '{"name": "traits", "arguments": {"hobby": "painting"}}',
             '{"name": "traits", "arguments": {"hobby": "painting"}}',
             '{"name": "tra']
    text = "```json\n" + "\n".join(lines)
    parsed = parse_tool_calls(text, "t", {"ttest", "traits"}, truncated=True)
    assert [(c.name, c.arguments) for c in parsed.calls] == [
        ("ttest", {"group": [1, 2]}), ("traits", {"hobby": "painting"})]


def test_fence_the_model_closed_keeps_its_calls_as_written_the_last_closed_leniently() -> None:
    # Not the token limit: repeats stay ("roll the die twice"), a missing last brace is mended.
    text = ('```json\n{"name": "roll", "arguments": {}}\n{"name": "roll", "arguments": {}}\n'
            '{"name": "add", "arguments": {"a": 1}\n```')
    assert calls_of(text, {"roll", "add"}) == [("roll", {}), ("roll", {}), ("add", {"a": 1})]


def test_list_cut_inside_its_only_call_stays_one_unreadable_call() -> None:
    [call] = parse_tool_calls('[{"name": "add", "arguments": {"a": 1, "b"', "t", {"add"}).calls
    assert call.name == "add" and call.arguments is None and call.parse_error


def test_plain_text_is_no_call() -> None:
    parsed = parse_tool_calls("The answer is 42 {not json}.")
    assert parsed.calls == [] and parsed.answer is None
    assert parsed.thought == "The answer is 42 {not json}."


def test_bare_record_in_an_answer_is_not_a_call() -> None:
    text = 'The customer is {"name": "Ada", "city": "London"}.'
    assert calls_of(text, {"find_customer"}) == []


def test_bare_object_naming_a_known_tool_without_arguments_is_a_call() -> None:
    assert calls_of('{"name": "now"}', {"now"}) == [("now", {})]


def test_an_object_keyed_by_an_offered_tools_name_is_that_call() -> None:
    """The 1.5B on the JSON protocol wrote ``{"supply_feed": {"article": "WT9598"}}`` and it
    was read as its final answer (issue 69, a generated depot suite)."""
    assert calls_of('{"supply_feed": {"article": "WT9598"}}', {"supply_feed"}) == [
        ("supply_feed", {"article": "WT9598"})]
    assert calls_of('[{"a": {"x": 1}}, {"b": {}}]', {"a", "b"}) == [("a", {"x": 1}), ("b", {})]
    # not a call: a key no tool has, a value that is no object, a second key beside it
    assert calls_of('{"weather": {"city": "Oslo"}}', {"supply_feed"}) == []
    assert calls_of('{"supply_feed": "WT9598"}', {"supply_feed"}) == []
    assert calls_of('{"supply_feed": {"article": "A"}, "units": 3}', {"supply_feed"}) == []


def test_answer_object() -> None:
    parsed = parse_tool_calls('{"answer": "It arrives on 27 November."}')
    assert parsed.calls == [] and parsed.answer == "It arrives on 27 November."


@pytest.mark.parametrize("reply", [
    # the 1.5B in a RAG answer: an unquoted chunk id after the whole answer string
    '```json\n{\n  "answer": "The exam counts for 60 percent.",\n  "arguments": '
    '{"passages": [[grading#0]]}\n}\n```',
    '{"answer": "The exam counts for 60 percent.", "ids": [grading#0]}',
])
def test_an_answer_object_broken_after_its_answer_string_still_answers(reply: str) -> None:
    parsed = parse_tool_calls(reply)
    assert parsed.calls == [] and parsed.answer == "The exam counts for 60 percent."


def test_only_a_whole_answer_string_is_taken_from_broken_json() -> None:
    from toolcycle.models.text.calls import answer_before_broken_json

    assert answer_before_broken_json('{"answer": "The exam counts for') is None
    assert answer_before_broken_json('{"answer": 60, "x": [a#0]}') is None
    assert answer_before_broken_json('{"name": "f", "answer": "x", [') is None


def test_ids_are_stable() -> None:
    text = '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}'
    first = [c.id for c in parse_tool_calls(text, "call_2").calls]
    again = [c.id for c in parse_tool_calls(text, "call_2").calls]
    assert first == again == ["call_2_1", "call_2_2"]


def test_render_round_trips() -> None:
    [call] = parse_tool_calls('{"name": "add", "arguments": {"a": 1}}').calls
    assert calls_of(render_tool_call(call)) == [("add", {"a": 1})]


def test_decode_lenient_gives_up_on_prose() -> None:
    assert decode_lenient("not a value") is None


def _corpus() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads((FIXTURES / "replies.json").read_text())
    return [r for r in records if r["protocol"] != "react"]


@pytest.mark.parametrize(
    "record", _corpus(), ids=lambda r: f"{r['model']}-{r['protocol']}-{r['task'][:18]}-{r['turn']}"
)
def test_fixture_corpus(record: dict[str, Any]) -> None:
    """Every real JSON-protocol reply parses to the calls/answer reviewed by hand."""
    parsed = parse_tool_calls(record["reply"], "f", set(record["tools"]))
    expected = record["expected"]
    assert [[c.name, c.arguments] for c in parsed.calls] == expected["calls"]
    assert parsed.answer == expected["answer"]
    assert all(c.parse_error is None for c in parsed.calls) == (not expected.get("broken"))


_names = st.sampled_from(["add", "roll", "weather"])
_args = st.dictionaries(st.sampled_from(["a", "b", "city"]),
                        st.one_of(st.integers(-5, 5), st.text("xyz ]}{\"", max_size=4)),
                        max_size=2)


_TOOLS = {"add", "roll", "weather"}


def _only_calls_written_whole_each_once(written: list[tuple[str, dict[str, Any]]],
                                        pieces: list[str], text: str, cut: int,
                                        truncated: bool) -> None:
    """What a reply cut at ``cut`` gives: only calls written whole (``pieces`` are their
    texts in ``text``), each once, and at most the one unreadable cut call; the whole reply
    gives every call as written, repeats included."""
    calls = [(c.name, c.arguments) for c in
             parse_tool_calls(text[:cut], "t", _TOOLS, truncated=truncated).calls]
    whole = [(n, a) for (n, a), piece in zip(written, pieces, strict=True)
             if text.index(piece) + len(piece) <= cut]
    complete = [c for c in calls if c[1] is not None]
    assert all(c in whole for c in complete)  # nothing invented, nothing half-read
    assert len(complete) == len({json.dumps(c, sort_keys=True) for c in complete})  # once each
    assert len(calls) - len(complete) <= 1  # at most the one unreadable cut call
    assert [(c.name, c.arguments) for c in parse_tool_calls(text, "t", _TOOLS).calls] == written


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_names, _args), min_size=1, max_size=6), st.data())
def test_any_cut_of_a_list_gives_only_calls_written_whole_each_once(
        written: list[tuple[str, dict[str, Any]]], data: st.DataObject) -> None:
    items = [json.dumps({"name": n, "arguments": a}) for n, a in written]
    text = "[" + ", ".join(items) + "]"
    # anywhere before the closing bracket, inside the first call included
    cut = data.draw(st.integers(1, len(text) - 1))
    _only_calls_written_whole_each_once(written, items, text, cut, truncated=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_names, _args), min_size=1, max_size=6), st.data())
def test_any_cut_of_a_fence_of_calls_gives_only_calls_written_whole_each_once(
        written: list[tuple[str, dict[str, Any]]], data: st.DataObject) -> None:
    lines = [json.dumps({"name": n, "arguments": a}) for n, a in written]
    body = "\n".join(lines)
    text = "```json\n" + body + "\n```"
    cut = data.draw(st.integers(len("```json\n") + 1, len("```json\n") + len(body) - 1))
    _only_calls_written_whole_each_once(written, lines, text, cut, truncated=True)


@pytest.mark.parametrize("text", ['{"name": "add', '[{"name": "add', '{"name": "add"',
                                  '{"function": {"name": "add"'])
def test_a_call_cut_off_before_its_arguments_is_unreadable_not_run_with_none(text: str) -> None:
    # Read by closing its brackets, this was add({}): arguments nobody wrote, which a tool
    # whose parameters are all optional would run with its defaults.
    [call] = parse_tool_calls(text, "t", {"add"}).calls
    assert call.name == "add" and call.arguments is None
    assert call.parse_error == "the call was cut off before its arguments"


def test_a_closed_call_without_arguments_still_runs() -> None:
    assert calls_of('{"name": "now"}', {"now"}) == [("now", {})]
    assert calls_of('[{"name": "now"}]', {"now"}) == [("now", {})]


@pytest.mark.parametrize("text", [
    '{"name": "add", "arguments": {"a": "xy',
    '```json\n{"name": "add", "arguments": {"a": 1, "b": 2',
    '<tool_call>{"name": "add", "arguments": {"a": 1}',
    '{"function": {"name": "add", "arguments": {"a": 1',
])
def test_a_call_the_token_limit_cut_inside_its_arguments_is_unreadable(text: str) -> None:
    """With the finish reason `length` the open call was cut mid-value; without it, an open
    call is a model that forgot its closing braces (seen on complete replies) and is closed."""
    [cut] = parse_tool_calls(text, "t", {"add"}, truncated=True).calls
    assert cut.name == "add" and cut.arguments is None and cut.parse_error == TRUNCATED
    [closed] = parse_tool_calls(text, "t", {"add"}).calls
    assert closed.arguments is not None and closed.parse_error is None


def test_a_reply_cut_after_a_closed_call_keeps_the_call() -> None:
    text = '{"name": "add", "arguments": {"a": 1}} Then I will add the next pa'
    assert calls_of(text, {"add"}) == [("add", {"a": 1})]
    [call] = parse_tool_calls(text, "t", {"add"}, truncated=True).calls
    assert (call.name, call.arguments) == ("add", {"a": 1})


@pytest.mark.parametrize("truncated", [False, True])
def test_the_complete_items_of_a_cut_list_are_not_taken_for_the_cut_one(truncated: bool) -> None:
    # the last complete item has no arguments; it is not "cut off before its arguments"
    text = '[{"name": "now"}, {"name": "add", "argu'
    calls = parse_tool_calls(text, "t", {"now", "add"}, truncated=truncated).calls
    assert [(c.name, c.arguments, c.parse_error) for c in calls] == [("now", {}, None)]


def test_a_python_literal_with_a_stray_escape_is_read_without_a_warning() -> None:
    """``ast.literal_eval`` warns about "\\[" in a string (Python 3.12); the real-model fuzz
    printed 28 such SyntaxWarnings from replies the parser read."""
    import warnings

    from toolcycle.models.text.calls import decode_lenient

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert decode_lenient("{'pattern': '\\[a-z]'}") == {"pattern": "\\[a-z]"}
    assert [w for w in caught if issubclass(w.category, SyntaxWarning)] == []


@pytest.mark.parametrize(("text", "answer"), [
    ('{"name": "answer", "arguments": {"answer": "At sorting centre Leeds."}}',
     "At sorting centre Leeds."),
    ('```json\n{"name": "answer", "arguments": {"price": "2.215"}}\n```', "2.215"),
    ('{"name": "final_answer", "arguments": {"value": 14}}', "14"),
    ('<tool_call>{"name": "Final Answer", "arguments": {"answer": "12 C", "note": "x"}}',
     "12 C"),
])
def test_a_call_to_an_answer_tool_not_offered_is_the_answer(text: str, answer: str) -> None:
    parsed = parse_tool_calls(text, "t", {"weather", "get_quote"})
    assert parsed.calls == []
    assert parsed.answer == answer


@pytest.mark.parametrize("text", [
    # offered: a real tool named answer is called like any
    '{"name": "answer", "arguments": {"answer": "x"}}',
])
def test_an_offered_answer_tool_is_called(text: str) -> None:
    assert calls_of(text, {"answer"}) == [("answer", {"answer": "x"})]


@pytest.mark.parametrize("text", [
    # beside a real call: the calls count, and the loop answers the unknown one
    '[{"name": "weather", "arguments": {"city": "Oslo"}}, '
    '{"name": "answer", "arguments": {"answer": "x"}}]',
    # no value, several values without an answer key, a nested value, null, an empty string
    '{"name": "answer", "arguments": {}}',
    '{"name": "answer", "arguments": {"a": "1", "b": "2"}}',
    '{"name": "answer", "arguments": {"answer": {"temp": 12}}}',
    '{"name": "answer", "arguments": {"answer": null}}',
    '{"name": "answer", "arguments": {"answer": ""}}',
    # a name that is not an answer
    '{"name": "lookup", "arguments": {"answer": "x"}}',
])
def test_calls_that_are_not_an_answer_stay_calls(text: str) -> None:
    parsed = parse_tool_calls(text, "t", {"weather"})
    assert parsed.calls and parsed.answer is None
