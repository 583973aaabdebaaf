"""Carried arguments (toolcycle.playbook.carry): a failed call's arguments as the alternative
takes them, a parameter named apart only where a run showed it or a probe checked it."""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, learn
from toolcycle.playbook.carry import Rename, can_carry, carried, guess_rename, respelled
from toolcycle.playbook.fallback import fallback_for, fell_back
from toolcycle.playbook.reflector import reflect

from .conftest import make_trace

SLOTS = {"okafor": "09:40", "lindgren": "14:10", "varga": "11:20", "castillo": "15:45"}


def schedule_api(doctor: str) -> str:
    """A clinician's next free slot."""
    raise PermissionError("quota exceeded for this API key: 429 Too Many Requests")


def rota_board(clinician: str) -> str:
    """The rota board."""
    name = clinician.lower().split()[-1]
    return json.dumps({"next_open_slot": SLOTS[name]}) if name in SLOTS else "[]"


def station_board(station: str, day: int = 0) -> str:
    """Departures of a station."""
    return "-"


def counts(item: str, limit: int) -> str:
    """Needs a number too."""
    return "-"


TOOLS = {t.name: t for t in [tool(schedule_api, read_only=True), tool(rota_board, read_only=True),
                             tool(station_board, read_only=True), tool(counts, read_only=True)]}


def test_arguments_carry_by_name_and_by_a_learned_rename_only() -> None:
    rota = TOOLS["rota_board"]
    assert carried({"clinician": "Dr. Varga"}, rota) == {"clinician": "Dr. Varga"}
    assert carried({"doctor": "Dr. Varga"}, rota) is None  # a name alone says nothing
    assert carried({"doctor": "Dr. Varga"}, rota, Rename("doctor", "clinician")) == {
        "clinician": "Dr. Varga"}
    assert carried({"doctor": "Dr. Varga"}, rota, Rename("ward", "clinician")) is None
    assert can_carry({"doctor"}, rota, Rename("doctor", "clinician"))
    assert not can_carry({"doctor"}, rota)
    assert Rename.parse("doctor>clinician") == Rename("doctor", "clinician")
    assert str(Rename("doctor", "clinician")) == "doctor>clinician"
    assert [Rename.parse(t) for t in ("", "doctor", ">x", "x>", "a>b>c")] == [None] * 5


def test_a_probe_guesses_a_rename_only_where_one_text_value_fits_one_gap() -> None:
    assert guess_rename({"doctor": "Dr. Varga"}, TOOLS["rota_board"]) == Rename(
        "doctor", "clinician")
    assert guess_rename({"doctor": "Varga", "ward": "B"}, TOOLS["rota_board"]) is None
    assert guess_rename({"doctor": 7}, TOOLS["rota_board"]) is None  # not text
    assert guess_rename({"doctor": "Varga"}, TOOLS["counts"]) is None  # two gaps
    assert guess_rename({"doctor": "Varga", "limit": 3}, TOOLS["counts"]) == Rename(
        "doctor", "item")


def test_a_run_that_passed_the_value_under_the_alternatives_name_teaches_the_rename() -> None:
    trace = make_trace("When is Dr. Varga's next free slot?", [
        [("schedule_api", {"doctor": "Dr. Varga"}, None,
          "Tool `schedule_api` failed: PermissionError: quota exceeded for this API key: 429 "
          "Too Many Requests")],
        [("rota_board", {"clinician": "Dr. Varga"}, '{"next_open_slot": "11:20"}', None)]])
    trace.output = "11:20"
    [pitfall] = [i for i in reflect(trace, success=True, domain="clinic") if i.kind == "pitfall"]
    assert pitfall.advice.endswith("Call rota_board(clinician) instead.")
    assert pitfall.detail.endswith("|alternative:rota_board:doctor>clinician:")


def gives_up(messages: list[Message], settings: ModelSettings) -> Any:
    """Calls schedule_api with the doctor the prompt names and answers whatever came back."""
    prompt = next(m.text for m in messages if m.role == "user")
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("schedule_api", {"doctor": prompt.split("Dr. ")[1].split("'")[0]})
    if fell_back("schedule_api", results[-1].content):
        return "Next slot: " + json.loads(results[-1].content.split(" -> ", 1)[1])[
            "next_open_slot"]
    return "The scheduling service is unavailable."


def _agent(pb: Playbook) -> Agent[Any, str]:
    return Agent(ScriptedModel(gives_up), "Answer with the tools.", list(TOOLS.values()),
                 name="clinic", playbook=pb)


async def test_a_probe_learns_the_rename_and_the_fallback_uses_it(tmp_path: Any) -> None:
    db = str(tmp_path / "pb.db")
    pb = Playbook(db, routines=True)
    tasks = [{"id": n, "prompt": f"When is Dr. {n.title()}'s next free slot?",
              "expected": SLOTS[n]} for n in ("okafor", "lindgren", "varga")]
    await learn(tasks, _agent(pb), playbook=pb, progress=False)
    assert pb.flush(30)
    [pitfall] = [s for s in pb.strategies("clinic") if s.kind == "pitfall"]
    assert pitfall.advice.endswith("Call rota_board(clinician) instead.")
    assert pitfall.detail.endswith("|alternative:rota_board:doctor>clinician:")
    made = fallback_for(pitfall, TOOLS)
    assert made is not None and made.proven is not None
    # served frozen: the model's call of schedule_api(doctor) is answered by rota_board
    frozen = Playbook(db, learn=False, routines=True)
    result = await _agent(frozen).run("When is Dr. Castillo's next free slot?")
    assert result.output == "Next slot: 15:45" and len(result.trace.steps) == 2
    assert 'rota_board({"clinician": "Castillo"})' in result.trace.tool_calls[0].result
    # worded apart: the pitfall is with its tool (tool_lessons.py), its quota error proves
    # it applies, and the rename carries
    apart = await _agent(frozen).run("Could Dr. Castillo's earliest time be found?")
    assert apart.trace.strategies_shown == [pitfall.id]
    assert apart.output == "Next slot: 15:45"


def test_no_fallback_to_a_parameter_named_apart_without_a_learned_rename() -> None:
    from toolcycle.playbook.fallback import fallback_tool

    assert fallback_tool(TOOLS["schedule_api"], TOOLS["rota_board"]) is None
    assert fallback_tool(TOOLS["schedule_api"], TOOLS["rota_board"],
                         rename=Rename("doctor", "clinician")) is not None


def test_a_repair_keeps_its_rename() -> None:
    from toolcycle.playbook.evidence import Repair

    repair = Repair("alternative", "schedule_api", via="rota_board", via_args=("clinician",),
                    rename=Rename("doctor", "clinician"))
    assert Rename.of_repair(repair) == Rename("doctor", "clinician")
    assert repair.signature == "alternative:rota_board:doctor>clinician:"  # as stored before
    plain = Repair("alternative", "inventory_live", via="warehouse_ledger", via_args=("item",))
    assert Rename.of_repair(plain) is None
    shaped = Repair("argument", "fare_quote", argument="date", example="05.03.2026")
    assert Rename.of_repair(shaped) is None
    assert Rename.of_repair(None) is None


def test_a_probe_asks_with_a_name_spelled_as_the_task_spelled_it() -> None:
    """`helpdesk` (JSON, held out): the 1.5B wrote "payroll_portal" for "the payroll portal";
    the status page that held the answer knows the name as the task wrote it."""
    prompt = "What state is the Payroll Portal in? And the VPN-gateway?"
    assert respelled({"service": "payroll_portal", "n": 3}, prompt) == {
        "service": "Payroll Portal", "n": 3}
    assert respelled({"service": "vpn gateway"}, prompt) == {"service": "VPN-gateway"}
    # a value the task said as given, or one it did not say, stays as the model wrote it
    assert respelled({"service": "payroll"}, prompt) == {"service": "payroll"}
    assert respelled({"service": "git_server"}, prompt) == {"service": "git_server"}
    # a value longer than the task (a model's megabyte of output) is no re-spelling of it
    huge = "payroll_" * 200_000
    assert respelled({"service": huge}, prompt) == {"service": huge}
    assert respelled({"service": "portal_payroll"}, prompt) == {"service": "portal_payroll"}
    assert respelled({"q": "(.*)+_["}, prompt) == {"q": "(.*)+_["}  # no pattern of it
