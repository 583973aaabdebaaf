"""Misnamed arguments (toolcycle.playbook.respell): a call of a tool a learned sequence
uses, refused by the schema only for its arguments' names, is made with the names the tool
takes where they allow one reading, and the result says so; otherwise the refusal stands."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from toolcycle import Agent, Message, RunContext, tool
from toolcycle.context import CancelToken
from toolcycle.messages import Usage
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.respell import mended_names, renamed_call, respelled_call, respelling_tool
from toolcycle.playbook.strategy import Strategy
from toolcycle.tools import Tool, ToolArgumentsError

SLOTS = {"abernethy": "2026-12-09 10:15"}


def rota_board(clinician: str) -> str:
    """The rota board: a clinician's next slot open for booking.

    Args:
        clinician: The clinician's name.
    """
    found = next((k for k in SLOTS if k in clinician.lower()), None)
    return "[]" if found is None else json.dumps({"next_open_slot": SLOTS[found]})


def uptime(system: str, days: int = 30) -> str:
    """A system's uptime over some days.

    Args:
        system: The system's name.
        days: How many days back.
    """
    return json.dumps({"system": system, "uptime_pct": 99.6, "days": days})


def fee(visit_type: str, minutes: int) -> str:
    """A visit's fee."""
    return json.dumps({"eur": minutes * 2})


ROTA = tool(rota_board, read_only=True)
UPTIME = tool(uptime, read_only=True)
FEE = tool(fee, read_only=True)


@pytest.mark.parametrize(("target", "arguments", "expected"), [
    (ROTA, {"doctor": "Dr. Abernethy"}, {"clinician": "Dr. Abernethy"}),  # renamed
    (ROTA, {"doctor": ""}, {"clinician": ""}),  # the value is the model's, "" included
    (ROTA, {"doctor": None}, {"clinician": None}),  # the schema then refuses null
    (ROTA, {"doctor": []}, {"clinician": []}),
    (ROTA, {"doctor": {}}, {"clinician": {}}),
    (UPTIME, {"system": "CRM", "time_range": "30 days"}, {"system": "CRM"}),  # left out
    (UPTIME, {"system": "CRM", "a": 1, "b": None}, {"system": "CRM"}),
    (UPTIME, {"name": "CRM", "time_range": "30 days"}, None),  # two names for one gap
    (FEE, {"kind": "physio"}, None),  # two parameters missing
    (FEE, {"visit_type": "physio", "minutes": "x"}, None),  # a refusal about values
    (ROTA, {}, None),  # nothing misnamed, only missing
    (ROTA, {"clinician": "x"}, None),
])
def test_names_are_mended_only_where_they_allow_one_reading(
        target: Tool[Any], arguments: dict[str, Any], expected: dict[str, Any] | None) -> None:
    mended = mended_names(target, arguments)
    assert (mended[0] if mended else None) == expected


def test_a_schema_that_takes_any_name_has_no_names_left_out() -> None:
    schema = dict(UPTIME.spec.parameters)
    schema.pop("additionalProperties", None)
    open_tool = Tool(replace(UPTIME.spec, parameters=schema), uptime, policy=UPTIME.policy)
    assert mended_names(open_tool, {"system": "CRM", "time_range": "30 days"}) is None
    mended = mended_names(open_tool, {"name": "CRM"})  # one name for the one gap still
    assert mended is not None and mended[0] == {"system": "CRM"}


def test_the_note_bounds_what_the_model_wrote() -> None:
    mended = mended_names(ROTA, {"x" * 5000: "y" * 5000})
    assert mended is not None
    note = mended[1]
    assert len(note) < 250 and renamed_call("rota_board", note)


def _ctx(prompt: str) -> RunContext[Any]:
    return RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(), prompt=prompt)


async def test_the_stand_in_calls_with_the_tools_names_and_says_so() -> None:
    stand_in = respelling_tool(ROTA)
    assert stand_in is not None
    text = await stand_in.invoke(_ctx("Next free slot for Dr. Abernethy?"),
                                 {"doctor": "Dr. Abernethy"})
    assert text == ('rota_board takes no doctor: called it with clinician "Dr. Abernethy" '
                    "under the names it takes (already called; answer from its result):\n"
                    '{"next_open_slot": "2026-12-09 10:15"}')
    assert respelled_call("rota_board", text)
    dropped = respelling_tool(UPTIME)
    assert dropped is not None
    text = await dropped.invoke(_ctx("CRM uptime?"), {"system": "CRM", "time_range": "30d"})
    assert text.startswith("uptime takes no time_range: called it without it under the names")
    assert text.endswith('{"system": "CRM", "uptime_pct": 99.6, "days": 30}')


@pytest.mark.parametrize("arguments", [
    {"doctor": None}, {"doctor": []}, {"doctor": {}}, {"who": "a", "doctor": "b"}, {}])
async def test_the_refusal_stands_where_the_mended_call_would_be_refused_too(
        arguments: dict[str, Any]) -> None:
    stand_in = respelling_tool(ROTA)
    assert stand_in is not None
    with pytest.raises(ToolArgumentsError) as refused:
        await stand_in.invoke(_ctx("Next free slot for Dr. Abernethy?"), arguments)
    assert "clinician" in str(refused.value)  # the schema's own words, for the model's call


async def test_a_tool_that_writes_gets_no_mending() -> None:
    assert respelling_tool(tool(rota_board)) is None  # not read-only: the model's call stands


SEQUENCE = Strategy(id="s", domain="clinic", kind="sequence", applies_when=["slot"],
                    advice="Call rota_board(clinician), then answer.", tools=["rota_board"],
                    support=3)


async def test_a_run_with_the_learned_sequence_answers_from_the_mended_call() -> None:
    pb = Playbook(":memory:", routines=True, learn=False)
    pb.store.put([SEQUENCE])

    def model(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("rota_board", {"doctor": "Dr. Abernethy"})
        return json.loads(str(getattr(results[-1], "content", "")).splitlines()[-1])[
            "next_open_slot"]

    agent = Agent(ScriptedModel(model), "Answer with the tools.", [ROTA], name="clinic",
                  playbook=pb)
    result = await agent.run("When is the next free slot for Dr. Abernethy?")
    [record] = result.trace.tool_calls
    assert record.error is None and renamed_call("rota_board", record.result)
    assert result.output == "2026-12-09 10:15"


async def test_without_a_playbook_the_schema_refusal_reaches_the_model() -> None:
    seen: list[str] = []

    def model(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("rota_board", {"doctor": "Dr. Abernethy"})
        seen.append(str(getattr(results[-1], "content", "")))
        return "done"

    agent = Agent(ScriptedModel(model), "Answer with the tools.", [ROTA], name="clinic")
    await agent.run("When is the next free slot for Dr. Abernethy?")
    assert "doctor" in seen[0] and "clinician" in seen[0]
