"""repair_reply (rel-18, rel-20): a model reply is made fit for the history before it enters
it, so that the next request is accepted on every wire. The loop calls it on every reply."""

from __future__ import annotations

import random

import pytest

from toolcycle.messages import Message, Part, TextPart, ThinkingPart, ToolCall, ToolResult
from toolcycle.models.protocol import HistoryChecker
from toolcycle.models.repair import INVALID_TOOL_NAME, repair_reply


def _call(name: str, id: str) -> ToolCall:
    return ToolCall.from_args(id, name, {"a": 1})


def _answered(history: list[Message], reply: Message, used: set[str]) -> Message:
    """Repair ``reply``, append it with results for its calls, and return the repaired one."""
    repaired, _ = repair_reply(reply, used)
    used.update(c.id for c in repaired.tool_calls)
    history.append(repaired)
    if repaired.tool_calls:
        history.append(Message.tool_results(
            [ToolResult(c.id, c.name, "unknown tool", True) for c in repaired.tool_calls]))
    else:
        history.append(Message.user("go on"))
    return repaired


def test_a_reply_that_needs_nothing_comes_back_as_the_same_object() -> None:
    reply = Message("assistant", [TextPart("thinking aloud"), _call("add", "c1"),
                                  _call("add", "c2")])
    repaired, repairs = repair_reply(reply, {"c0"})
    assert repaired is reply and repairs == []


@pytest.mark.parametrize(
    "name", ["functions.add", "get weather", "", "x" * 65, "the tool to use, one of [add]"])
def test_an_invalid_tool_name_becomes_a_placeholder_and_the_written_name_is_kept(
    name: str,
) -> None:
    reply = Message("assistant", [_call(name, "c1")])
    repaired, repairs = repair_reply(reply, set())
    (made,) = repaired.tool_calls
    assert made.name == INVALID_TOOL_NAME and made.original_name == name
    assert made.id == "c1" and made.original_id is None
    assert len(repairs) == 1 and repr(name) in repairs[0]
    assert reply.parts[0].name == name  # type: ignore[union-attr]  # the input is untouched


@pytest.mark.parametrize(
    ("ids", "used", "rekeyed"),
    [
        (["c1", "c1"], set(), [False, True]),
        (["c1"], {"c1"}, [True]),
        ([""], set(), [True]),
        (["call.1", "id with space", "x" * 65], set(), [True, True, True]),
        (["call_r2", "call_r2"], {"a"}, [False, True]),
    ],
    ids=["repeated in the turn", "repeated across turns", "empty", "invalid", "fresh-looking"],
)
def test_bad_call_ids_are_rekeyed_to_fresh_unique_ones(
    ids: list[str], used: set[str], rekeyed: list[bool]
) -> None:
    reply = Message("assistant", [_call("add", i) for i in ids])
    repaired, repairs = repair_reply(reply, used)
    made = repaired.tool_calls
    assert [c.original_id is not None for c in made] == rekeyed
    assert [c.original_id for c in made if c.original_id is not None] == [
        i for i, r in zip(ids, rekeyed, strict=True) if r]
    new_ids = [c.id for c in made]
    assert len(set(new_ids)) == len(new_ids) and not set(new_ids) & used
    assert len(repairs) == sum(rekeyed)
    assert repair_reply(reply, used)[0].tool_calls == made  # deterministic


@pytest.mark.parametrize("parts", [[], [TextPart("")], [TextPart("  \n\t")],
                                   [TextPart(" "), TextPart("")]],
                         ids=["no parts", "empty text", "whitespace", "both"])
def test_a_blank_assistant_turn_is_kept_as_the_model_said_it(parts: list[Part]) -> None:
    """r2-15: the history, the trace and the stream agree on what the model said; the
    placeholder a wire may need is the adapter's business (tests/providers/test_blank_turns)."""
    reply = Message("assistant", parts)
    repaired, repairs = repair_reply(reply, set())
    assert repaired is reply and repairs == []


def test_blank_text_beside_calls_or_thinking_is_kept() -> None:
    reply = Message("assistant", [ThinkingPart("hmm"), TextPart("  "), _call("add", "c1")])
    repaired, repairs = repair_reply(reply, set())
    assert repaired is reply and repairs == []


def test_the_originals_survive_serialisation() -> None:
    reply = Message("assistant", [_call("functions.add", "c1")])
    repaired, _ = repair_reply(reply, {"c1"})
    data = repaired.to_dict()["parts"][0]
    assert data["original_name"] == "functions.add" and data["original_id"] == "c1"
    assert Message.from_dict(repaired.to_dict()) == repaired
    assert "original_name" not in Message("assistant", [_call("add", "c9")]).to_dict()["parts"][0]


@pytest.mark.parametrize(
    "replies",
    [
        [[_call("functions.add", "c1")]],
        [[_call("get weather", "c1")]],
        [[_call("", "c1")]],
        [[_call("add", "c1"), _call("add", "c1")]],
        [[_call("add", "c1")], [_call("add", "c1")]],
        [[]],
        [[TextPart("  ")]],
    ],
    ids=["dotted name", "name with space", "empty name", "id reused in a turn",
         "id reused across turns", "empty reply", "whitespace reply"],
)
def test_the_repro_histories_pass_the_checker_once_repaired(replies: list[list[Part]]) -> None:
    checker = HistoryChecker("both")
    history = [Message.system("t"), Message.user("go")]
    used: set[str] = set()
    for parts in replies:
        _answered(history, Message("assistant", list(parts)), used)
        checker.check(history)


_NAMES = ["add", "lookup", "functions.add", "", "get weather", "a" * 70, "ok-name_2"]
_IDS = ["c1", "c2", "", "call_r3", "bad id", "call.9", "call_1", "x" * 80]
_TEXTS = ["", " ", "\n", "fine", " padded "]


def _random_reply(rng: random.Random) -> Message:
    parts: list[Part] = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.3:
            parts.append(TextPart(rng.choice(_TEXTS)))
        elif kind < 0.4:
            parts.append(ThinkingPart("hmm", signature="sig"))
        else:
            parts.append(_call(rng.choice(_NAMES), rng.choice(_IDS)))
    return Message("assistant", parts)


@pytest.mark.parametrize("wire", ["both", "openai", "anthropic"])
def test_any_repaired_history_is_accepted(wire: str) -> None:
    rng = random.Random(18_20)
    for _ in range(300):
        checker = HistoryChecker(wire)  # type: ignore[arg-type]
        history = [Message.system("t"), Message.user("go")]
        used: set[str] = set()
        for _ in range(rng.randint(1, 6)):
            _answered(history, _random_reply(rng), used)
            checker.check(history)


@pytest.mark.parametrize("name, call_id", [("add\n", "c1"), ("add", "c1\n"), ("add\n", "c1\n")])
def test_a_trailing_newline_is_not_a_valid_name_or_id(name: str, call_id: str) -> None:
    """Python's ``$`` also matches before a final newline, so ``^...$`` let ``"add\\n"``
    through; the providers' validators do not. The check anchors at the very end."""
    reply = Message("assistant", [ToolCall.from_args(call_id, name, {"a": 1})])
    repaired, repairs = repair_reply(reply, set())
    call = repaired.tool_calls[0]
    assert repairs and "\n" not in call.name and "\n" not in call.id
    HistoryChecker().check([Message.user("go"), repaired, Message.tool_results(
        [ToolResult(call.id, call.name, "unknown tool", True)])])


def test_a_tool_name_with_a_trailing_newline_is_refused_at_construction() -> None:
    from toolcycle import Tool
    from toolcycle.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="must match"):
        Tool.from_function(lambda a: a, name="add\n")


def test_the_id_check_agrees_with_the_pattern_on_random_ids() -> None:
    """The reply check skips the regex for ASCII identifiers (its fast path); on any id it must
    decide exactly as ``CALL_ID_PATTERN`` does."""
    from toolcycle.models.repair import CALL_ID_PATTERN, _sound

    rng = random.Random(7)
    alphabets = ["aZ09_", "aZ09_-", "aZ09_-. \n\té$"]  # mostly valid, then anything
    for _ in range(6000):
        alphabet = rng.choice(alphabets)
        length = rng.choice([0, 1, 2, 5, 29, 63, 64, 65, 80])
        call_id = "".join(rng.choice(alphabet) for _ in range(length))
        reply = Message("assistant", [ToolCall.from_args(call_id, "add", {"a": 1})])
        assert _sound(reply, set()) is (CALL_ID_PATTERN.match(call_id) is not None), call_id


@pytest.mark.parametrize("call_id", ["call 1", "c1\n", "id/1", "x" * 65])
def test_the_test_model_refuses_a_call_id_the_providers_refuse(call_id: str) -> None:
    """The checker behind ScriptedModel holds ids to the pattern repair_reply enforces, so an
    engine path that wrote an unrepaired id back would fail the tests as it fails Anthropic."""
    from toolcycle.models.protocol import ProtocolViolation

    reply = Message("assistant", [ToolCall.from_args(call_id, "add", {"a": 1})])
    with pytest.raises(ProtocolViolation, match="does not match"):
        HistoryChecker().check([Message.user("go"), reply, Message.tool_results(
            [ToolResult(call_id, "add", "3")])])
