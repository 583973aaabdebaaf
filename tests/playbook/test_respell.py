"""Respelled calls: a lookup of a learned sequence that found nothing for the model's spelling
of a name the task wrote apart, asked again as the task wrote it (toolcycle.playbook.respell)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolcycle import Agent, Message, RunContext, tool
from toolcycle.context import CancelToken
from toolcycle.messages import Usage
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook
from toolcycle.playbook.respell import respelled_call, respelling_tool, respelling_tools
from toolcycle.playbook.strategy import Strategy

SYSTEMS = {"file share": "maintenance", "print server": "operational"}
EMPTY = json.dumps({"status": "ok", "data": {"items": []}})  # found nothing, "ok"


def status_page(system: str) -> str:
    """Every internal system's state."""
    state = SYSTEMS.get(system.lower())
    return EMPTY if state is None else json.dumps({"system": system.lower(), "state": state})


def device_details(device_id: str) -> str:
    """One device's details."""
    if device_id.lower() != "vpn gateway":
        raise LookupError(f"unknown device {device_id!r}")
    return '{"device": "vpn gateway", "os": "14.2"}'


SEQUENCE = Strategy(id="s", domain="helpdesk", kind="sequence",
                    applies_when=["state", "current"],
                    advice="Call status_page(system), then answer.", tools=["status_page"],
                    support=3)


def _model(system: str) -> Any:
    def model(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("status_page", {"system": system})
        return "State: " + results[-1].content.splitlines()[-1]
    return model


def _agent(system: str, *, read_only: bool = True, strategies: list[Strategy] | None = None,
           learn: bool = False) -> tuple[Agent[Any, str], Playbook]:
    pb = Playbook(":memory:", routines=True, learn=learn)
    pb.store.put(strategies if strategies is not None else [SEQUENCE])
    agent = Agent(ScriptedModel(_model(system)), "Answer with the tools.",
                  [tool(status_page, read_only=read_only)], name="helpdesk", playbook=pb)
    return agent, pb


async def test_a_sequences_lookup_that_found_nothing_is_asked_as_the_task_wrote_the_name(
        ) -> None:
    agent, _ = _agent("file_share")
    result = await agent.run("What is the current state of the file share?")
    [record] = result.trace.tool_calls
    assert record.result == (
        'status_page found nothing for system "file_share"; called it again with system '
        '"file share" as the task wrote it (already called; answer from its result):\n'
        '{"system": "file share", "state": "maintenance"}')
    assert respelled_call("status_page", record.result)
    assert result.output.endswith('"state": "maintenance"}')
    assert result.usage.tool_calls == 1  # the loop's call; the second is the stand-in's own


@pytest.mark.parametrize("system", ["file share", "File Share", "print_server", "mail_relay"])
async def test_any_other_call_is_the_tools_own(system: str) -> None:
    """Found something (as written, or in another case the tool takes), or the task wrote no
    such words: the model's call and its result stand."""
    agent, _ = _agent(system)
    result = await agent.run("What is the current state of the file share?")
    [record] = result.trace.tool_calls
    assert record.result == status_page(system)
    assert not respelled_call("status_page", record.result)


async def test_not_for_a_tool_that_may_change_something_or_that_no_sequence_calls() -> None:
    for agent, _ in (_agent("file_share", read_only=False),
                     _agent("file_share", strategies=[])):
        result = await agent.run("What is the current state of the file share?")
        assert result.trace.tool_calls[0].result == EMPTY
    assert respelling_tools([SEQUENCE], {"status_page": tool(status_page)}) == {}
    retired = Strategy(**{**SEQUENCE.to_dict(), "status": "retired"})
    assert respelling_tools([retired], {"status_page": tool(status_page, read_only=True)}) == {}


def _ctx(prompt: str | None) -> RunContext[Any]:
    return RunContext(deps=None, usage=Usage(), cancel_token=CancelToken(), prompt=prompt)


async def test_a_failed_call_is_made_again_and_the_first_failure_stands_when_that_fails_too(
        ) -> None:
    respelling = respelling_tool(tool(device_details, read_only=True))
    assert respelling is not None
    text = await respelling.invoke(_ctx("Which OS does the VPN Gateway run?"),
                                   {"device_id": "vpn_gateway"})
    assert text.startswith("device_details failed (LookupError: unknown device 'vpn_gateway') "
                           'for device_id "vpn_gateway"; called it again with device_id '
                           '"VPN Gateway" as the task wrote it')
    assert respelled_call("device_details", text)
    with pytest.raises(LookupError, match="'laptop_7'"):  # the task wrote no such words
        await respelling.invoke(_ctx("Which OS does laptop 8 run?"), {"device_id": "laptop_7"})
    with pytest.raises(LookupError, match="'vpn_gateway'"):  # no task text to read
        await respelling.invoke(_ctx(None), {"device_id": "vpn_gateway"})
    with pytest.raises(LookupError, match="'mail_relay'"):  # asked again, failed again
        await respelling.invoke(_ctx("Is the mail relay up?"), {"device_id": "mail_relay"})


async def test_a_respelled_call_teaches_no_sequence_and_no_statistic() -> None:
    agent, pb = _agent("file_share", learn=True)
    await agent.run("What is the current state of the file share?")
    assert pb.flush(30)
    assert "status_page" not in pb.tool_stats("helpdesk")  # its result is not the model's call
    assert pb.store.candidates() == []
