"""A fuzz scenario: every random choice of one run, drawn from its seed, and its model.

:func:`generate` turns a seed into a :class:`Scenario` (plain data, printable); the scenario's
model replies through :class:`FuzzModel`, a ``ScriptedModel`` with a function script that
materializes the planned turn for the request it answers. Each reply depends only on the seed
and the request's position (plus, for a reused id, the ids already in the history), so a run
is reproducible from its seed up to the timing of sleeps, timeouts and delayed cancellations.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from toolcycle import Message, ModelSettings, TextPart, ThinkingPart, ToolCall
from toolcycle.testing import ScriptedModel, call

from .offers import WRAPPED, offers_drawn
from .tools import ALL_TOOLS, STOPPED, valid_arguments

OUTPUT_TOOL = "final_result"
HOOKS = ["on_run_start", "on_attempt_start", "on_iteration_start", "on_text_delta",
         "on_model_response", "on_tool_call", "on_tool_result", "on_loop_guard",
         "on_validation_failure",
         "on_attempt_end", "on_final_result", "on_success", "on_failure"]
BAD_NAMES = ["functions.add", "get weather", "", "x" * 70, "add()"]
RAW_ARGS = ["{broken", "[1, 2]", "", "null", '"text"', '{"a": 1,}', "{}"]
CALL_KINDS = ["valid"] * 8 + ["schema", "raw", "deep_raw", "bigint_raw", "unknown", "badname",
                              "output", "output", "output_bad", "submit", "deep_args"]
TURN_KINDS = ["calls"] * 6 + ["text", "empty", "whitespace", "thinking"]


class Answer(BaseModel):
    """The structured output of the fuzzed agents."""

    value: int
    note: str = ""


@dataclass
class CancelPlan:
    """Where the run is cancelled: ``how`` is token_event, task_event, task_after,
    token_after, thread_after or token_before; ``hook``/``nth`` for *_event, ``delay_ms``."""

    how: str
    hook: str = ""
    nth: int = 1
    delay_ms: float = 0.0


@dataclass
class Scenario:
    seed: int
    output_mode: str  # text, model, validators, reflect
    tool_names: list[str]
    parallel: bool
    streaming: bool
    agent_limits: dict[str, Any]
    run_limits: dict[str, Any]
    plan: list[dict[str, Any]]
    tail: str  # finish or loop
    forced: list[str]
    latency_ms: float
    model_error_at: int | None
    cancel: CancelPlan | None
    pass_token: bool
    prior: str | None  # same_model, other_model, failed, cancelled
    async_callbacks: bool
    failing_hook: str | None
    trace_store: bool
    buggy_validator: bool
    async_preview: bool
    features: set[str] = field(default_factory=set)
    #: Tool approval: None, "policy" / "policy_async" (the agent's policy approves, denies or
    #: defers each call) or "tools" (some tools require approval; no policy, so they defer).
    approval: str | None = None
    #: Whether the model's valid calls go to the tools a playbook offer wraps (and to
    #: ``limited``), under a tool-call budget: the runs where the offers' own calls meet the
    #: run's budgets (invariant 11). Only with offers (tests/fuzz/offers.py); off in the main
    #: campaign.
    offer_focus: bool = False
    #: A team (tests/fuzz/members.py): the agents offered as tools, and whether the model may
    #: hand the conversation to a twin; some of the model's valid calls go to them.
    members: tuple[str, ...] = ()
    handoff: bool = False
    #: A team with approvals (tests/fuzz/approvals.py): how its first resume is cancelled,
    #: if at all ("token": under a cancelled token; "task": as the resume is announced).
    resume_cancel: str | None = None

    @property
    def structured(self) -> bool:
        return self.output_mode != "text"


def _limits(rng: random.Random) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    if rng.random() < 0.5:
        limits["max_iterations"] = rng.randint(1, 6)
    if rng.random() < 0.3:
        limits["max_attempts"] = rng.randint(1, 3)
    if rng.random() < 0.25:
        limits["max_tool_calls"] = rng.randint(1, 8)
    if rng.random() < 0.15:
        key = rng.choice(["max_input_tokens", "max_output_tokens", "max_total_tokens"])
        limits[key] = rng.choice([5, 50, 300, 2000])
    if rng.random() < 0.15:
        limits["timeout"] = rng.choice([0.003, 0.01, 0.03, 0.06])
    if rng.random() < 0.6:
        limits["on_limit"] = rng.choice(["final_answer", "partial", "error"])
    if rng.random() < 0.1:
        limits["max_observation_chars"] = rng.choice([40, 500])
    return limits


def _call_spec(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(CALL_KINDS)
    spec: dict[str, Any] = {"kind": kind, "name": rng.choice(list(ALL_TOOLS)),
                            "n": rng.randint(0, 999)}
    roll = rng.random()
    spec["id"] = "dup" if roll < 0.06 else "reuse" if roll < 0.12 else (
        "explicit" if roll < 0.2 else None)
    return spec


def _turn(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(TURN_KINDS)
    turn: dict[str, Any] = {"kind": kind, "n": rng.randint(0, 999)}
    if kind in ("calls", "thinking"):
        turn["calls"] = [_call_spec(rng) for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4]))]
        if kind == "thinking" and rng.random() < 0.3:
            turn["calls"] = []
        turn["text"] = rng.random() < 0.3
    return turn


def _cancel_plan(rng: random.Random, streaming: bool) -> CancelPlan | None:
    if rng.random() < 0.55:
        return None
    how = rng.choice(["token_event", "token_event", "task_event", "task_event", "task_after",
                      "token_after", "thread_after", "token_before"])
    hooks = [h for h in HOOKS if streaming or h != "on_text_delta"]
    return CancelPlan(how, rng.choice(hooks), rng.choice([1, 1, 2, 3]),
                      rng.choice([0.0, 0.5, 2.0, 5.0, 12.0, 25.0]))


def _approval(seed: int) -> str | None:
    """Drawn from a generator of its own, so that every other choice of a seed stays what it
    was before approval joined the mix (the regression seeds replay the same scenarios)."""
    rng = random.Random(f"approval:{seed}")
    if rng.random() >= 0.2:
        return None
    return rng.choice(["policy", "policy_async", "tools"])


#: The approval mode ``seed`` draws (None, "policy", "policy_async" or "tools").
approval_of = _approval


def approval_decision(seed: int, call_id: str, name: str) -> str:
    """What the fuzzed policy (or a tool's requirement, mode "tools") decides for one call."""
    return random.Random(f"{seed}:{call_id}:{name}").choice(
        ["approve", "approve", "deny", "defer"])


def generate(seed: int, offer_focus: bool = False) -> Scenario:
    """Every random choice of the run with this seed; ``offer_focus``: where the agent gets
    the playbook's offers, its model calls them under a budget (:func:`_focus_on_offers`)."""
    rng = random.Random(seed)
    mode = rng.choice(["text", "text", "model", "validators", "reflect"])
    tool_names = sorted(rng.sample(list(ALL_TOOLS), rng.randint(0, len(ALL_TOOLS))))
    streaming = rng.random() < 0.3
    scenario = Scenario(
        seed=seed,
        output_mode=mode,
        tool_names=tool_names,
        parallel=rng.random() < 0.3,
        streaming=streaming,
        agent_limits=_limits(rng) if rng.random() < 0.5 else {},
        run_limits=_limits(rng),
        plan=[_turn(rng) for _ in range(rng.choice([0, 1, 2, 3, 4, 6, 9, 14]))],
        tail=rng.choice(["finish", "finish", "loop"]),
        forced=[rng.choice(["text", "text", "empty", "calls", "thinking", "output", "output",
                            "output_bad", "output_helper", "two_outputs", "slip"])
                for _ in range(8)],
        latency_ms=rng.choice([0.0] * 6 + [0.5, 2.0, 5.0]),
        model_error_at=rng.randint(1, 6) if rng.random() < 0.05 else None,
        cancel=_cancel_plan(rng, streaming),
        pass_token=rng.random() < 0.5,
        prior=rng.choice([None] * 6 + ["same_model", "other_model", "failed", "cancelled"]),
        async_callbacks=rng.random() < 0.3,
        failing_hook=rng.choice(HOOKS) if rng.random() < 0.1 else None,
        trace_store=rng.random() < 0.05,
        buggy_validator=mode != "text" and rng.random() < 0.05,
        async_preview=rng.random() < 0.5,
    )
    scenario.approval = _approval(seed)
    if offer_focus and offers_eligible(seed):
        _focus_on_offers(scenario)
    scenario.features = features_of(scenario)
    return scenario


def offers_eligible(seed: int) -> bool:
    """Whether the agent of ``seed``'s scenario gets the playbook's offers (not with approval:
    the library's own stand-ins refuse tools that need it)."""
    return _approval(seed) is None and offers_drawn(seed)


def _focus_on_offers(s: Scenario) -> None:
    """Make the model call the wrapped tools, turn after turn, under a tool-call budget.

    Without it a wrapped tool's wrapper ran a step of its own in about 1 run of 250 (offers
    answer the tools the model happens to call, and most plans end early), so invariant 11
    (tool bodies entered never exceed the budgets) was seldom put to the test. The plan
    becomes 2-6 turns of 1-3 calls, most of them valid calls of the wrapped tools; limits,
    cancellation, streaming, parallelism and the rest stay as drawn. A campaign of its own
    (``offer_focus=True``), so the main one's seeds, the regression seeds among them, replay
    what they did."""
    rng = random.Random(f"offer-focus:{s.seed}")
    s.offer_focus = True
    if "max_tool_calls" not in s.run_limits and "max_tool_calls" not in s.agent_limits:
        s.run_limits["max_tool_calls"] = rng.randint(1, 6)
    s.tool_names = sorted({*s.tool_names, *rng.sample(WRAPPED, rng.randint(1, len(WRAPPED)))})
    s.plan = [{"kind": "calls", "n": rng.randint(0, 999), "text": rng.random() < 0.2,
               "calls": [_call_spec(rng) | {"kind": "valid" if rng.random() < 0.8 else "schema"}
                         for _ in range(rng.choice([1, 1, 2, 3]))]}
              for _ in range(rng.randint(2, 6))]


def features_of(s: Scenario) -> set[str]:
    """The scenario's features, for the counts that show what the fuzzer exercised."""
    found = {f"output:{s.output_mode}", f"tail:{s.tail}"}
    for flag, name in [(s.parallel, "parallel_tools"), (s.streaming, "streaming"),
                       (s.pass_token, "cancel_token_passed"),
                       (s.async_callbacks, "async_callbacks"),
                       (s.trace_store, "trace_store"), (s.buggy_validator, "buggy_validator"),
                       (s.latency_ms > 0, "model_latency"), (s.model_error_at, "model_error"),
                       (s.failing_hook, "failing_callback"), (not s.tool_names, "no_tools"),
                       (s.offer_focus, "offer_focus")]:
        if flag:
            found.add(name)
    for limits in (s.agent_limits, s.run_limits):
        found.update(f"limit:{k}" if k != "on_limit" else f"on_limit:{v}"
                     for k, v in limits.items())
    if s.cancel is not None:
        found.add(f"cancel:{s.cancel.how}")
        if s.cancel.how.endswith("_event"):
            found.add(f"cancel_at:{s.cancel.hook}")
    if s.prior:
        found.add(f"prior:{s.prior}")
    if s.approval:
        found.add(f"approval:{s.approval}")
    for turn in s.plan:
        found.add(f"turn:{turn['kind']}")
        for spec in turn.get("calls", ()):
            found.add(f"call:{spec['kind']}")
            if spec["kind"] == "valid":
                found.add(f"tool:{spec['name']}")
            if spec["id"]:
                found.add(f"id:{spec['id']}")
        if len(turn.get("calls", ())) > 1:
            found.add("turn:several_calls")
    return found


# -- the model -------------------------------------------------------------------------------


class FuzzModel(ScriptedModel):
    """A ``ScriptedModel`` with an optional latency before each reply (so that cancellation
    and timeouts can land while a request is in flight)."""

    latency_s: float = 0.0

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return await super().request(messages, settings)


class ModelBehaviour:
    """The scenario's script: ``(messages, settings) -> reply`` for :class:`FuzzModel`."""

    def __init__(self, scenario: Scenario) -> None:
        self.s = scenario
        self.requests = 0
        self.forced_requests = 0
        self.requests_after_cancel = 0
        self.token: Any = None  # the run's CancelToken, when one was passed

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> Any:
        self.requests += 1
        if self._cancelled():
            self.requests_after_cancel += 1
        if self.s.model_error_at == self.requests:
            raise RuntimeError("provider unavailable (fuzzed model error)")
        rng = random.Random(f"{self.s.seed}:{self.requests}")
        if settings.tool_choice != "auto":
            self.forced_requests += 1
            kind = self.s.forced[(self.forced_requests - 1) % len(self.s.forced)]
            return self._forced(kind, settings.tool_choice, rng, messages)
        index = self.requests - 1
        # a team: the handoff (the twin goes on with this model), then each member, once each
        team = [*(["transfer_to_specialist"] if self.s.handoff else []), *self.s.members]
        if index < len(team):
            from .members import member_call

            return [member_call(team[index], index)]
        index -= len(team)
        if index < len(self.s.plan):
            return self._turn(self.s.plan[index], rng, messages)
        if self.s.tail == "loop":
            return [call("add", {"a": index, "b": 1})]
        return self._finish(rng)

    def _cancelled(self) -> bool:
        stopped = STOPPED["token"]
        return bool((self.token is not None and self.token.cancelled)
                    or (stopped is not None and stopped.cancelled))

    def _finish(self, rng: random.Random) -> Any:
        if not self.s.structured:
            return f"final answer {rng.randint(0, 99)}"
        out = call(OUTPUT_TOOL, {"value": rng.randint(0, 999), "note": "tail"})
        return [out, call("submit")] if self.s.output_mode == "reflect" else out

    def _forced(self, kind: str, choice: str, rng: random.Random,
                messages: Sequence[Message]) -> Any:
        value = {"value": rng.randint(0, 999)}
        if kind == "text":
            return f"forced answer {value['value']}"
        if kind == "empty":
            return rng.choice(["", "   "])
        if kind == "calls":
            return [call("add", {"a": 1, "b": 2})]
        if kind == "thinking":
            return Message("assistant", [ThinkingPart("forced thinking", signature="sig"),
                                         TextPart("thought, then answered")])
        if choice == "none" or kind == "slip":
            return "no tool this time"
        if kind == "output":
            return call(OUTPUT_TOOL, value)
        if kind == "output_bad":
            return call(OUTPUT_TOOL, {"value": "not a number"})
        if kind == "output_helper":
            return [call("add", {"a": 2, "b": 3}), call(OUTPUT_TOOL, value)]
        return [call(OUTPUT_TOOL, {"value": 3}), call(OUTPUT_TOOL, value)]

    def _turn(self, turn: dict[str, Any], rng: random.Random,
              messages: Sequence[Message]) -> Any:
        kind = turn["kind"]
        if kind == "text":
            return f"text answer {turn['n']}"
        if kind == "empty":
            return ""
        if kind == "whitespace":
            return rng.choice([" ", "\n\t ", "   "])
        earlier = [c.id for m in messages if m.role == "assistant" for c in m.tool_calls]
        calls = [self._call(spec, i, earlier) for i, spec in enumerate(turn["calls"])]
        parts: list[Any] = []
        if kind == "thinking":
            parts.append(ThinkingPart(f"thinking {turn['n']}", signature=f"sig-{turn['n']}"))
        if turn.get("text") or (kind == "thinking" and not calls):
            parts.append(TextPart(f"let me see ({turn['n']})"))
        if kind == "thinking" or parts:
            return Message("assistant", parts + calls,
                           finish_reason="tool_calls" if calls else "stop")
        return calls

    def _call(self, spec: dict[str, Any], index: int, earlier: list[str]) -> ToolCall:
        kind, name, n = spec["kind"], spec["name"], spec["n"]
        if self.s.offer_focus and kind == "valid":
            wrapped = [t for t in WRAPPED if t in self.s.tool_names]
            name = wrapped[n % len(wrapped)] if wrapped else name
        team = [*self.s.members, *(["transfer_to_specialist"] if self.s.handoff else [])]
        if team and kind in ("valid", "schema", "unknown") and n % 2 == 0:
            from .members import member_call

            made = member_call(team[n % len(team)], n)
        else:
            made = _make_call(kind, name, n, self.s.output_mode == "reflect")
        mode = spec["id"]
        if mode == "dup":
            made.id = "dup-id"
        elif mode == "reuse" and earlier:
            made.id = earlier[n % len(earlier)]
        elif mode == "explicit":
            made.id = f"fz-{self.s.seed}-{self.requests}-{index}"
        return made


def _nested_raw(depth: int) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + ', "b": 1}'


def _make_call(kind: str, name: str, n: int, reflect: bool) -> ToolCall:
    if kind == "valid":
        return call(name, valid_arguments(name, n))
    if kind == "schema":
        wrong: list[dict[str, Any]] = [{"a": "x", "b": 1}, {"zzz": 1}, {"ms": -1.5}, {"kind": 3}]
        return call(name, wrong[n % 4])
    if kind == "raw":
        return call(name, raw=RAW_ARGS[n % len(RAW_ARGS)])
    if kind == "deep_raw":
        return call(rng_name(name, n), raw=_nested_raw([30, 300, 3000][n % 3]))
    if kind == "bigint_raw":
        return call("add", raw='{"a": 1' + "0" * [20, 400, 5000][n % 3] + ', "b": 2}')
    if kind == "deep_args":
        return call("add", {"a": _nested_list([20, 200][n % 2]), "b": 1})
    if kind == "unknown":
        return call(["nope", "search", "final_answer"][n % 3], {"q": n})
    if kind == "badname":
        return call(BAD_NAMES[n % len(BAD_NAMES)], {"a": 1, "b": 2})
    if kind == "output":
        return call(OUTPUT_TOOL, {"value": n, "note": f"n={n}"})
    if kind == "output_bad":
        return [call(OUTPUT_TOOL, {"value": "abc"}), call(OUTPUT_TOOL, {}),
                call(OUTPUT_TOOL, raw="{oops")][n % 3]
    return call("submit") if reflect or n % 2 else call("submit", {"now": True})


def rng_name(name: str, n: int) -> str:
    """Deep arguments go to a tool with a schema (add) or to the drawn tool, alternately."""
    return "add" if n % 2 else name


def _nested_list(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value
