"""Damaged snapshots raise ``SnapshotError`` listing the problems, never a raw ``TypeError`` or
``KeyError`` (r2-17): a snapshot is untrusted input even when its integrity holds (re-sealed
here, as a bug or a future writer would)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from toolcycle import Agent, ApprovalMismatch, SnapshotConsumed, SnapshotError, tool
from toolcycle.run import snapshot as snapshots
from toolcycle.testing import ScriptedModel, call


@tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay."""
    return "paid"


@tool
def look(query: str) -> str:
    """Look something up."""
    return "found"


def _agent(script: list[Any] | None = None) -> Agent:
    return Agent(ScriptedModel(script or ["done"]), tools=[pay, look], name="b")


def _paused() -> Any:
    paused = _agent([[call("look", {"query": "q"}), call("pay", {"amount": 1})]]).run_sync("go")
    assert paused.status == "paused"
    return paused


def _reseal(data: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in data.items() if k not in ("format", "version", "integrity")}
    return snapshots.seal(body, None)


def _answers(paused: Any) -> dict[str, bool]:
    return {paused.pending_approvals[0].call_id: True}


@pytest.mark.parametrize("damage", [
    lambda d: d["agent"].__setitem__("tools", 5),                 # digest broken too
    lambda d: d["counters"].pop("attempt"),
    lambda d: d["turn"].__setitem__("answers", []),
    lambda d: d["turn"].__setitem__("resume_from", 7),
    lambda d: d["turn"]["decisions"].__setitem__("call_9", {"decision": "maybe"}),
    lambda d: d.__setitem__("pending", [{"call_id": "call_2"}]),
    lambda d: d.__setitem__("messages", [{"role": "assistant", "parts": 3}]),
    lambda d: d.__setitem__("trace", "no"),
    lambda d: d.__setitem__("limits", {"max_iterations": "many"}),
    lambda d: d.__setitem__("held", {"call_id": "call_7", "arguments": {}}),
    lambda d: d.__setitem__("run_id", None),
])
def test_a_damaged_snapshot_raises_snapshot_error(damage: Any) -> None:
    paused = _paused()
    data = copy.deepcopy(paused.snapshot)
    damage(data)
    for candidate in (data, _reseal(data)):
        with pytest.raises(SnapshotError) as info:
            _agent().resume_sync(candidate, _answers(paused))
        assert info.value.problems


def _mutate(value: Any, rng: random.Random) -> Any:
    """``value`` with one random node replaced by a value of another type, or removed."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        if rng.random() < 0.2:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: _mutate(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        return [*value[:index], _mutate(value[index], rng), *value[index + 1:]]
    return rng.choice([None, 0, -1, 2.5, "", "x", [], {}, True, [1], {"a": 1}])


def test_random_damage_to_a_resealed_snapshot_never_raises_raw_errors() -> None:
    paused = _paused()
    rng = random.Random(63)
    outcomes: dict[str, int] = {}
    for _ in range(300):
        data = json.loads(json.dumps(paused.snapshot))
        key = rng.choice(sorted(set(data) - {"format", "version", "integrity"}))
        data[key] = _mutate(data[key], rng)
        data = _reseal(data)
        try:
            _agent().resume_sync(data, _answers(paused))
            outcome = "resumed"
        except (SnapshotError, ApprovalMismatch, SnapshotConsumed) as exc:
            outcome = f"refused: {type(exc).__name__}"
        except Exception as exc:  # the defect under test
            outcome = f"raw {type(exc).__name__}: {exc}"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    raw = {k: n for k, n in outcomes.items() if k.startswith("raw")}
    assert not raw, raw
    assert outcomes.get("refused: SnapshotError", 0) > 150  # most damage is caught as such
