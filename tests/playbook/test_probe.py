"""Probes: offline learning asks the other tools what a failed run's missed call asked
(toolcycle.playbook.probe), so a model that gives up after a failure still teaches the repair.

The scripted model here does what the JSON 1.5B did on the held-out `depot` suite: it calls
the obvious tool once and, when that fails or finds nothing, answers without looking further.
"""

from __future__ import annotations

import json
from typing import Any

from toolcycle import Agent, Message, RunContext, tool
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.playbook import Curator, Playbook, learn
from toolcycle.playbook.evidence import CallEvidence
from toolcycle.playbook.fallback import alternative_of, fell_back
from toolcycle.playbook.parts import Rename
from toolcycle.playbook.probe import Probe, probe_repairs, probe_targets
from toolcycle.tools import Tool
from toolcycle.tracing.trace import ToolCallRecord

STOCK = {"halden torque wrench": 318, "pelkin cable reel": 42, "ostrova pallet jack": 7,
         "corwen ladder": 61}
SUPPLIERS = {"vessel caulk gun": "Arnfeld Tools", "prisk floor scraper": "Dovecote Supply",
             "tollin pipe cutter": "Weylan Bros", "fenby staple gun": "Lumen & Rook"}
PROBED: list[str] = []


def inventory_live(item: str) -> str:
    """Live stock of an item."""
    raise ConnectionError("inventory service unreachable: 503 Service Unavailable")


def warehouse_ledger(item: str) -> str:
    """The warehouse's ledger of an item."""
    PROBED.append("warehouse_ledger")
    count = STOCK.get(item.lower())
    return "No records found." if count is None else json.dumps({"units_on_hand": count})


def product_catalog(item: str, field: str) -> str:
    """Catalog data of an item."""
    return "null"


def purchasing_records(item: str) -> str:
    """Purchasing records of an item."""
    PROBED.append("purchasing_records")
    supplier = SUPPLIERS.get(item.lower())
    return "null" if supplier is None else json.dumps({"supplier": supplier})


def web_search(query: str) -> str:
    """Search the web."""
    return "No results found."


def gives_up(first: str, extra: dict[str, Any] | None = None) -> Any:
    """Calls ``first`` with the item the prompt names, then answers whatever came back."""
    def reply(messages: list[Message], settings: ModelSettings) -> Any:
        prompt = next(m.text for m in messages if m.role == "user")
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            item = prompt.split(" the ", 1)[1].rstrip("?. ").replace(" do we hold", "")
            item = item.replace(" are in stock", "")
            return call(first, {"item": item, **(extra or {})})
        if fell_back(first, results[-1].content):
            return "Answer: " + results[-1].content.splitlines()[-1]
        return "The service is unavailable."
    return reply


def _tools(*, read_only: bool = True) -> list[Tool[Any]]:
    return [tool(f, read_only=read_only) for f in (inventory_live, warehouse_ledger,
                                                    product_catalog, purchasing_records,
                                                    web_search)]


def _agent(model: Any, pb: Playbook, **kwargs: Any) -> Agent[Any, str]:
    return Agent(ScriptedModel(model), "Answer with the tools.", _tools(**kwargs), name="depot",
                 playbook=pb)


STOCK_TASKS = [
    {"id": "t1", "prompt": "How many of the Halden torque wrench are in stock?",
     "expected": "318"},
    {"id": "t2", "prompt": "How many of the Pelkin cable reel are in stock?", "expected": "42"},
    {"id": "t3", "prompt": "How many of the Ostrova pallet jack are in stock?", "expected": "7"},
]


async def test_a_model_that_gives_up_still_teaches_the_alternative(tmp_path: Any) -> None:
    db = str(tmp_path / "pb.db")
    pb = Playbook(db, routines=True)
    report = await learn(STOCK_TASKS, _agent(gives_up("inventory_live"), pb), playbook=pb,
                         progress=False)
    assert report.success_rate == 0.0  # the model never found the ledger itself
    assert pb.flush(30)
    [pitfall] = [s for s in pb.strategies("depot") if s.kind == "pitfall"]
    assert pitfall.advice == (
        "inventory_live fails with: inventory service unreachable: … Service Unavailable. "
        "Call warehouse_ledger(item) instead.")
    [sequence] = [s for s in pb.strategies("depot") if s.kind == "sequence"]
    assert sequence.tools == ["warehouse_ledger"] and sequence.probed == 3
    assert alternative_of(pitfall) == ("inventory_live", "warehouse_ledger")
    assert pb.tool_stats("depot")["inventory_live"].alternatives == (("warehouse_ledger", 3),)
    # served frozen, it answers a task worded apart from those it was learned from
    frozen = Playbook(db, learn=False, routines=True)
    result = await _agent(gives_up("inventory_live"), frozen).run(
        "What quantity of the Corwen ladder do we hold?")
    assert result.output == 'Answer: warehouse_ledger({"item": "Corwen ladder"}) -> ' \
                            '{"units_on_hand": 61}'
    assert len(result.trace.steps) == 2


async def test_without_probing_the_pitfall_has_no_repair(tmp_path: Any) -> None:
    pb = Playbook(str(tmp_path / "pb.db"))
    await learn(STOCK_TASKS, _agent(gives_up("inventory_live"), pb), playbook=pb,
                progress=False, probe=False)
    assert pb.flush(30)
    [pitfall] = [s for s in pb.strategies("depot") if s.kind == "pitfall"]
    assert pitfall.advice.endswith("It is down: try another tool that can answer.")


SUPPLIER_TASKS = [
    {"id": "s1", "prompt": "Who supplies the Vessel caulk gun?", "expected": "Arnfeld Tools"},
    {"id": "s2", "prompt": "Who supplies the Prisk floor scraper?", "expected": "Dovecote Supply"},
    {"id": "s3", "prompt": "Who supplies the Tollin pipe cutter?", "expected": "Weylan Bros"},
]


async def test_a_dead_end_learns_where_the_answer_is(tmp_path: Any) -> None:
    db = str(tmp_path / "pb.db")
    pb = Playbook(db, routines=True)
    model = gives_up("product_catalog", {"field": "supplier"})
    await learn(SUPPLIER_TASKS, _agent(model, pb), progress=False, playbook=pb)
    assert pb.flush(30)
    [pitfall] = [s for s in pb.strategies("depot") if s.kind == "pitfall"]
    assert pitfall.advice == ("product_catalog found nothing for this kind of task. "
                              "Call purchasing_records(item) instead.")
    assert pitfall.detail.startswith("found nothing|alternative:purchasing_records")
    [sequence] = [s for s in pb.strategies("depot") if s.kind == "sequence"]
    assert sequence.advice == ("Call purchasing_records(item), then answer. Do not use "
                               "product_catalog for this kind of task.")

    frozen = Playbook(db, learn=False, routines=True)
    shown = await _agent(model, frozen).run("Who supplies the Fenby staple gun?")
    assert shown.trace.strategies_shown == [sequence.id]  # the pitfall it covers waits
    assert "Lumen & Rook" in str(shown.output)  # the model still called the catalog: fell back
    # a run not shown it gets the catalog's empty answer: an empty result proves nothing
    apart = await _agent(model, frozen).run("Which firm sells us the Fenby staple gun?")
    assert apart.trace.strategies_shown == []
    assert apart.trace.tool_calls[0].result == "null"


async def test_a_successful_run_is_not_probed(tmp_path: Any) -> None:
    def finds_it(messages: list[Message], settings: ModelSettings) -> Any:
        results = [p for m in messages if m.role == "tool" for p in m.parts]
        if not results:
            return call("inventory_live", {"item": "Halden torque wrench"})
        if len(results) == 1:
            return call("warehouse_ledger", {"item": "Halden torque wrench"})
        return "318"
    PROBED.clear()
    pb = Playbook(str(tmp_path / "pb.db"))
    await learn(STOCK_TASKS[:1], _agent(finds_it, pb), progress=False, playbook=pb)
    assert pb.flush(30)
    assert PROBED == ["warehouse_ledger"]  # the model's own call, no probe


async def test_no_probe_calls_a_tool_that_may_change_something(tmp_path: Any) -> None:
    PROBED.clear()
    pb = Playbook(str(tmp_path / "pb.db"))
    await learn(STOCK_TASKS, _agent(gives_up("inventory_live"), pb, read_only=False),
                progress=False, playbook=pb)
    assert pb.flush(30)
    assert PROBED == []
    [pitfall] = [s for s in pb.strategies("depot") if s.kind == "pitfall"]
    assert "Call warehouse_ledger" not in pitfall.advice


def _miss(name: str, args: dict[str, Any], *, error: str | None = None,
          result: str | None = None, index: int = 0) -> CallEvidence:
    record = ToolCallRecord(call_id=f"c{index}", name=name, args=args, iteration=1,
                            result=result, error=error)
    return CallEvidence(index, record, "error" if error else "empty")


def test_what_a_probe_may_call() -> None:
    def needs_deps(ctx: RunContext[Any], item: str) -> str:
        """Takes the run's context."""
        return "318"

    def two_required(item: str, site: str) -> str:
        """Needs a site too."""
        return "318"

    def unrelated(code: str = "x") -> str:
        """Shares no argument."""
        return "318"

    tools = {t.name: t for t in [
        tool(inventory_live, read_only=True), tool(warehouse_ledger, read_only=True),
        tool(purchasing_records, read_only=True, requires_approval=True),
        tool(web_search), tool(needs_deps, read_only=True), tool(two_required, read_only=True),
        tool(unrelated, read_only=True)]}
    miss = _miss("inventory_live", {"item": "Corwen ladder"}, error="ConnectionError: 503")
    assert [t.name for t in probe_targets(miss, tools)] == ["warehouse_ledger"]


async def test_probes_are_bounded_and_a_failing_probe_finds_nothing() -> None:
    calls: list[str] = []

    def broken(item: str) -> str:
        """Always fails."""
        calls.append("broken")
        raise RuntimeError("down too")

    def empty(item: str) -> str:
        """Knows nothing."""
        calls.append("empty")
        return "[]"

    def wrong(item: str) -> str:
        """Answers something else."""
        calls.append("wrong")
        return '{"units_on_hand": 5}'

    tools = {t.name: t for t in [tool(inventory_live, read_only=True),
                                  tool(broken, read_only=True), tool(empty, read_only=True),
                                  tool(wrong, read_only=True)]}
    misses = [_miss("inventory_live", {"item": f"thing {i}"}, error="ConnectionError: 503",
                    index=i) for i in range(3)]
    probe = Probe(tools, lambda text: "318" in text, max_calls=4)
    assert await probe_repairs(misses, {}, probe) == {}
    assert calls == ["broken", "empty", "wrong", "broken"]  # 4 calls, then no more


async def test_the_same_question_is_asked_once_and_known_repairs_are_kept() -> None:
    tools = {t.name: t for t in [tool(inventory_live, read_only=True),
                                  tool(warehouse_ledger, read_only=True)]}
    PROBED.clear()
    misses = [_miss("inventory_live", {"item": "Corwen ladder"}, error="ConnectionError: 503",
                    index=i) for i in range(3)]
    probe = Probe(tools, lambda text: "61" in text)
    found = await probe_repairs(misses, {2: object()}, probe)  # type: ignore[dict-item]
    assert sorted(found) == [0, 1] and PROBED == ["warehouse_ledger"]
    assert found[0].via == "warehouse_ledger" and found[0].via_args == ("item",)


async def test_a_plain_run_outside_learning_is_not_probed(tmp_path: Any) -> None:
    PROBED.clear()
    pb = Playbook(str(tmp_path / "pb.db"), curator=Curator(promote_after=1))
    await _agent(gives_up("inventory_live"), pb).run(STOCK_TASKS[0]["prompt"])
    assert pb.flush(30)
    assert PROBED == []  # no expected answer to probe for


async def test_a_probe_that_hangs_is_given_up() -> None:
    import asyncio

    async def hangs(item: str) -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "318"

    tools = {t.name: t for t in [tool(inventory_live, read_only=True),
                                  tool(hangs, read_only=True)]}
    miss = _miss("inventory_live", {"item": "Corwen ladder"}, error="ConnectionError: 503")
    probe = Probe(tools, lambda text: "318" in text, timeout=0.05)
    assert await probe_repairs([miss], {}, probe) == {}


def test_a_probe_teaches_a_sequence_only_with_values_the_task_gave() -> None:
    from toolcycle.playbook.evidence import Repair
    from toolcycle.playbook.probe import probed_sequence

    tools = {t.name: t for t in _tools()}
    miss = _miss("inventory_live", {"item": "Corwen ladder"}, error="ConnectionError: 503")
    found = {0: Repair("alternative", "inventory_live", via="warehouse_ledger",
                       via_args=("item",))}
    probe = Probe(tools, lambda text: True)
    kwargs: dict[str, Any] = {"domain": "depot", "run_id": "r1", "keywords": ["quantity"],
                              "task": "t"}
    made = probed_sequence("What quantity of the Corwen ladder do we hold?", [miss], found,
                           probe, **kwargs)
    assert made is not None and made.run_id == "r1#probe" and made.success
    assert made.advice == ("Call warehouse_ledger(item), then answer. Do not use "
                           "inventory_live for this kind of task.")
    # the model's value came from nowhere in the task: a guess carries to no other task
    assert probed_sequence("How many ladders?", [miss], found, probe, **kwargs) is None


def test_a_probed_sequence_applies_to_the_field_that_held_the_answer() -> None:
    from toolcycle.playbook.evidence import Repair
    from toolcycle.playbook.probe import probed_sequence

    tools = {t.name: t for t in _tools()}
    miss = _miss("product_catalog", {"item": "Ember heat gun", "field": "vendor"}, result="null")
    found = {0: Repair("alternative", "product_catalog", via="purchasing_records",
                       via_args=("item",))}
    prompt = "From which supplier do we get the Ember heat gun?"
    held = {0: json.dumps({"item": "ember heat gun", "supplier": "Karsk Industrial"})}
    kwargs: dict[str, Any] = {"domain": "depot", "run_id": "r", "task": "t",
                              "keywords": ["supplier", "get"]}
    labelled = probed_sequence(prompt, [miss], found, Probe(tools, bool, expected=(
        "Karsk Industrial")), results=held, **kwargs)
    assert labelled is not None and labelled.tool_words == ["supplier"]
    unlabelled = probed_sequence(prompt, [miss], found, Probe(tools, bool), results=held,
                                 **kwargs)
    assert unlabelled is not None and unlabelled.tool_words == []


def test_a_query_counts_as_said_where_the_result_names_what_the_task_named() -> None:
    """A web query holds the item among other words; the tool that answered echoes the
    item, which the task said: the probe teaches the sequence. A result naming nothing the
    task said, or no JSON at all, leaves the query a value from nowhere."""
    from toolcycle.playbook.evidence import Repair
    from toolcycle.playbook.probe import probed_sequence

    tools = {t.name: t for t in _tools()}
    miss = _miss("web_search", {"query": "Ember heat gun delivery time"},
                 result="No results found.")
    found = {0: Repair("alternative", "web_search", via="purchasing_records",
                       via_args=("item",), rename=Rename("query", "item"))}
    prompt = "How many days does it take for an Ember heat gun order to arrive?"
    kwargs: dict[str, Any] = {"domain": "depot", "run_id": "r", "task": "t",
                              "keywords": ["days", "take", "order", "arrive"]}
    echoed = {0: json.dumps({"item": "ember heat gun", "lead_time_days": 16})}
    made = probed_sequence(prompt, [miss], found, Probe(tools, bool), results=echoed, **kwargs)
    assert made is not None
    assert made.advice.startswith("Call purchasing_records(item), then answer.")
    for held in ("[]", "{}", "null", '""', "No records found.", json.dumps({"lead": 16}),
                 json.dumps({"item": "heat"}), json.dumps({"item": "Ember heat gun deliver"})):
        # (one common word names no thing; a leaf the prompt does not hold is no name of it)
        assert probed_sequence(prompt, [miss], found, Probe(tools, bool), results={0: held},
                               **kwargs) is None, held
    assert probed_sequence(prompt, [miss], found, Probe(tools, bool), **kwargs) is None


def test_named_narrows_only_values_the_prompt_does_not_hold() -> None:
    from toolcycle.playbook.probe import named

    result = json.dumps({"item": "garrow tile saw", "rows": [{"note": "tile saw"}],
                         "n": 34, "flag": None, "id": "GT"})
    prompt = "How long is the lead time for the Garrow tile saw, in days?"
    assert named({"query": "lead time for Garrow tile saw"}, result, prompt) == {
        "query": "garrow tile saw"}  # the longest leaf both hold
    assert named({"item": "Garrow tile saw", "n": 3}, result, prompt) == {
        "item": "Garrow tile saw", "n": 3}  # said already: kept as the model wrote it
    assert named({"query": "sawmill prices"}, result, prompt) == {"query": "sawmill prices"}
    assert named({"query": "Garrow saws"}, json.dumps({"maker": "Garrow"}), prompt) == {
        "query": "Garrow"}  # one word, but a name the task gave
    deep = "[" * 49_000 + '"garrow tile saw"' + "]" * 49_000  # nested past the parser
    for empty in ("", "[]", "{}", "null", '""', "not json", None, "[" * 100_001, deep):
        assert named({"query": "x garrow tile saw"}, empty, prompt) == {
            "query": "x garrow tile saw"}


async def test_a_probe_asks_with_the_name_as_the_task_wrote_it() -> None:
    """`helpdesk` (JSON, held out): monitor_api("payroll_portal") failed, and a probe of
    the status page with "payroll_portal" found nothing; it knows "payroll portal"."""
    def status_page(system: str) -> str:
        """Every system's state."""
        return json.dumps({"state": "operational"} if system.lower() == "payroll portal"
                          else {"items": []})

    tools = {t.name: t for t in [tool(inventory_live, read_only=True),
                                  tool(status_page, read_only=True)]}
    miss = _miss("inventory_live", {"item": "payroll_portal"}, error="RuntimeError: TLS")
    probe = Probe(tools, lambda text: "operational" in text)
    assert await probe_repairs([miss], {}, probe) == {}  # (as the model wrote it: nothing)
    found = await probe_repairs([miss], {}, probe,
                                prompt="What state is the payroll portal in?")
    assert found[0].via == "status_page" and found[0].rename == Rename("item", "system")


async def test_a_value_a_tool_rejected_is_not_passed_as_another_tools_other_parameter() -> None:
    """`helpdesk` (ReAct, at ad97fc0): device_details("vpn_gateway") for a status question
    failed with "unknown device 'vpn_gateway'"; a probe passed the name to
    status_page(system), and the learned reroute sent every device question there."""
    def device_details(device_id: str) -> str:
        """A device's details."""
        raise LookupError(f"unknown device {device_id!r}")

    def status_page(system: str) -> str:
        """Every system's state."""
        return json.dumps({"state": "degraded"})

    tools = {t.name: t for t in [tool(device_details, read_only=True),
                                  tool(status_page, read_only=True)]}
    probe = Probe(tools, lambda text: "degraded" in text)
    rejected = _miss("device_details", {"device_id": "vpn_gateway"},
                     error="LookupError: unknown device 'vpn_gateway'")
    assert await probe_repairs([rejected], {}, probe) == {}
    # a failure that says nothing of the value (the tool's own) is still asked elsewhere
    broken = _miss("device_details", {"device_id": "vpn_gateway"},
                   error="RuntimeError: TLS handshake failed")
    found = await probe_repairs([broken], {}, probe)
    assert found[0].via == "status_page" and found[0].rename == Rename("device_id", "system")
