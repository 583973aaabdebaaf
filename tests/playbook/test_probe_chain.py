"""Chain probes (toolcycle.playbook.probe_chain): the id lookup a failed learning run never
made, found by the learner from a value its first step returned under the detail tool's
parameter name."""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Playbook, learn
from toolcycle.playbook.evidence import CallEvidence
from toolcycle.playbook.probe import Probe
from toolcycle.playbook.probe_chain import MAX_CHAIN_CALLS, probe_chain
from toolcycle.tracing.trace import ToolCallRecord

LABS = {"ada marsh": [("LO-5521", "HbA1c", "6.1 %"), ("LO-5522", "lipid panel", "LDL 3.2")],
        "tobias renn": [("LO-6104", "ferritin", "48 ug/L"), ("LO-6105", "HbA1c", "5.8 %")],
        "priya sethi": [("LO-7310", "vitamin D", "41 nmol/L"), ("LO-7311", "HbA1c", "5.4 %")],
        "hamish doyle": [("LO-3355", "ferritin", "22 ug/L"), ("LO-3356", "HbA1c", "7.3 %")]}
CALLS: list[str] = []


def patient_file(patient: str, topic: str) -> str:
    """A patient's file: what it says about one topic."""
    return json.dumps({"matches": [{"topic": topic, "note": "no entries this year"}]})


def lab_orders(patient: str) -> str:
    """A patient's lab orders."""
    CALLS.append("lab_orders")
    orders = LABS.get(patient.lower(), [])
    return json.dumps([{"order_id": o, "test": t, "status": "final"} for o, t, _ in orders])


def lab_result(order_id: str) -> str:
    """The result of a lab order."""
    CALLS.append(f"lab_result {order_id}")
    for orders in LABS.values():
        for oid, test, value in orders:
            if oid == order_id.strip().upper():
                return json.dumps({"test": test, "result": value})
    raise LookupError(f"unknown order {order_id!r}")


def asks_the_file(messages: list[Message], settings: ModelSettings) -> Any:
    """Asks the look-alike patient_file, then lab_result with the name, then answers
    whatever it has: what the 1.5B did with lab questions on `clinic`."""
    prompt = next(m.text for m in messages if m.role == "user")
    patient = prompt.split("of ")[1].rstrip("?")
    results = [p for m in messages if m.role == "tool" for p in m.parts]
    if not results:
        return call("patient_file", {"patient": patient, "topic": "HbA1c"})
    if len(results) == 1:
        return call("lab_result", {"order_id": patient})
    return "No entries this year."


def _agent(pb: Playbook) -> Agent[Any, str]:
    tools = [tool(f, read_only=True) for f in (patient_file, lab_orders, lab_result)]
    return Agent(ScriptedModel(asks_the_file), "Answer with the tools.", tools, name="clinic",
                 playbook=pb)


TASKS = [{"id": f"t{i}", "prompt": f"What was the HbA1c result of {name.title()}?",
          "expected": next(v for _, t, v in LABS[name] if t == "HbA1c").split()[0]}
         for i, name in enumerate(["ada marsh", "tobias renn", "priya sethi"])]


async def test_a_chain_no_run_made_is_learned_from_probes(tmp_path: Any) -> None:
    # (without routines: offered the routine the first two probes made, the third run's
    # lab_orders call would be the routine's, not evidence of the tool)
    pb = Playbook(str(tmp_path / "pb.db"), routines=False)
    report = await learn(TASKS, _agent(pb), playbook=pb, progress=False)
    assert report.success_rate == 0.0
    assert pb.flush(30)
    [sequence] = [s for s in pb.strategies("clinic") if s.kind == "sequence"]
    assert sequence.advice == (
        "Call lab_orders(patient), then lab_result(order_id), then answer (feed each result "
        "into the next call; pick the lab_orders row whose test the task names). Do not use "
        "patient_file for this kind of task.")
    assert sequence.probed == 3 and len(sequence.feeds) == 3
    assert {f[0]["value"] for f in sequence.feeds} == {"LO-5521", "LO-6105", "LO-7311"}
    # the model's own failed lab_result(name) learned its prerequisite
    [pitfall] = [s for s in pb.strategies("clinic") if s.kind == "pitfall"]
    assert pitfall.advice == ("lab_result needs order_id from lab_orders: call "
                              "lab_orders(patient) first and pass its result as order_id.")


def _record(name: str, args: dict[str, Any], result: str | None = None,
            error: str | None = None, index: int = 0) -> CallEvidence:
    rec = ToolCallRecord(call_id=f"c{index}", name=name, args=args, iteration=1, result=result,
                         error=error)
    return CallEvidence(index, rec, "error" if error else "ok")


def _tools() -> dict[str, Any]:
    return {t.name: t for t in [tool(f, read_only=True) for f in (patient_file, lab_orders,
                                                                    lab_result)]}


async def test_a_first_step_the_run_made_is_not_asked_again() -> None:
    CALLS.clear()
    made = _record("lab_orders", {"patient": "Hamish Doyle"}, lab_orders("Hamish Doyle"))
    CALLS.clear()
    chain = await probe_chain([made], Probe(_tools(), lambda t: "7.3" in t),
                              "HbA1c of Hamish Doyle?")
    assert chain is not None and (chain.first, chain.then, chain.value) == (
        "lab_orders", "lab_result", "LO-3356")
    assert CALLS == ["lab_result LO-3355", "lab_result LO-3356"]  # no lab_orders call again


async def test_chain_probes_are_bounded_and_need_a_parameter_named_as_the_key() -> None:
    CALLS.clear()
    asked = _record("patient_file", {"patient": "Hamish Doyle", "topic": "x"},
                    patient_file("Hamish Doyle", "x"))
    assert await probe_chain([asked], Probe(_tools(), lambda t: False),
                             "HbA1c of Hamish Doyle?") is None
    assert len(CALLS) <= MAX_CHAIN_CALLS
    CALLS.clear()
    assert await probe_chain([asked], Probe(_tools(), lambda t: "7.3" in t),
                             "HbA1c of Hamish Doyle?", max_calls=1) is None
    assert CALLS == ["lab_orders"]  # the budget spent on the first step


async def test_values_the_task_gave_are_not_fed() -> None:
    def echo(order_id: str) -> str:
        """Answers whatever it is given."""
        return f"result for {order_id}: 7.3"

    tools = {t.name: t for t in [tool(lab_orders, read_only=True), tool(echo, read_only=True)]}
    made = _record("lab_orders", {"patient": "Hamish Doyle"},
                   json.dumps({"order_id": "hamish doyle"}))
    assert await probe_chain([made], Probe(tools, lambda t: "7.3" in t),
                             "HbA1c of Hamish Doyle?") is None


async def test_hostile_results_are_bounded_and_break_nothing() -> None:
    def deep(patient: str) -> str:
        """Nests deeper than Python recurses."""
        return "[" * 100_000 + "]" * 100_000

    def huge(patient: str) -> str:
        """Returns a very large page."""
        return json.dumps({"order_id": "LO-5521", "pad": "x" * 1_000_000})

    judged: list[int] = []
    for first in (deep, huge):
        tools = {t.name: t for t in [tool(first, read_only=True),
                                      tool(lab_result, read_only=True)]}
        asked = _record("patient_file", {"patient": "Ada Marsh"}, "[]", index=0)
        asked.status = "empty"
        await probe_chain([asked], Probe(tools, lambda t: judged.append(len(t)) or False),
                          "HbA1c of Ada Marsh?")
    assert judged and max(judged) <= 100_000  # the huge page was cut before it was judged


async def test_a_name_the_task_gave_is_a_first_step_where_no_call_of_the_run_makes_one() -> None:
    """The run asked only a made-up tag of a tool no chain starts from; the task's name
    ("Hamish Doyle") asked of each tool of one required parameter finds the orders, and the
    chain closes (the helpdesk device runs that never called user_devices)."""

    def asset_register(asset_tag: str) -> str:
        """What the register knows of a tag."""
        return json.dumps({"status": "ok", "data": {"items": []}})

    tools = {t.name: t for t in [tool(asset_register, read_only=True), *_tools().values()]}
    made = _record("asset_register", {"asset_tag": "HD-1234"}, asset_register("HD-1234"))
    CALLS.clear()
    chain = await probe_chain([made], Probe(tools, lambda t: "7.3" in t),
                              "What was the HbA1c result of Hamish Doyle?")
    assert chain is not None and (chain.first, chain.first_args, chain.then, chain.value) == (
        "lab_orders", {"patient": "Hamish Doyle"}, "lab_result", "LO-3356")
    # a task that names nothing asks nothing of it
    CALLS.clear()
    assert await probe_chain([made], Probe(tools, lambda t: "7.3" in t),
                             "What was my latest blood sugar result?") is None
    assert CALLS == []
