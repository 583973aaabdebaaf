"""Replaying BFCL multi-turn tasks through toolcycle's real agent loop, next to BFCL's own run.

For one task, per turn and in lock-step:

* **reference**: BFCL's executor (``execute_multi_turn_func_call``) evaluates the turn's
  ground-truth call strings on its own backend instances;
* **ours**, once per wire shape: fresh backend instances, their public methods exposed as
  toolcycle tools (specs from BFCL's docs through the ``bfcl`` dialect, implementations the
  bound methods), and an :class:`~toolcycle.Agent` driven by a
  :class:`~toolcycle.models.scripted.ScriptedModel` that emits the turn's ground-truth calls as
  tool calls (all in one reply; one per reply for legacy functions) and then a short answer.

After every turn the backends' public state is compared with BFCL's own ``state_checker``
(every public attribute equal) and the observations with BFCL's results, in order.
"""

from __future__ import annotations

import ast
import collections
import copy
import decimal
import importlib
import inspect
import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
from bfcl_eval.constants.executable_backend_config import (
    CLASS_FILE_PATH_MAPPING,
    MULTI_TURN_FUNC_DOC_FILE_MAPPING,
    STATELESS_CLASSES,
)
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import state_checker

from toolcycle import Agent, Limits, Tool
from toolcycle.messages import Message, ToolCall
from toolcycle.models.base import Model
from toolcycle.models.protocol import Wire
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.spec.formats.bfcl import import_function

from .bfcl_data import backend_docs
from .gemini_replay import ThroughGemini
from .responses_replay import ThroughResponses

#: ``openai-responses`` goes through the Responses adapter and the SDK (see responses_replay).
#: ``google`` goes through the Gemini adapter and the google-genai SDK (see gemini_replay).
WIRES: tuple[Any, ...] = (
    "openai", "openai-functions", "anthropic", "openai-responses", "google"
)
MAX_OBSERVATION_CHARS = 10_000_000  # the documented cap
ANSWER = "Done."
INSTRUCTIONS = "You operate the user's tools. Do exactly what each request asks."

#: Turn -> calls, a hook that may rewrite the ground truth (negative controls).
TurnEdit = Callable[[int, list[str]], list[str]]


@dataclass(frozen=True, slots=True)
class ParsedCall:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def parse_call(text: str) -> ParsedCall:
    """``mv(source='a', destination='b')`` or ``sort('a')``; arguments are literals."""
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {text!r}")
    return ParsedCall(
        node.func.id,
        tuple(ast.literal_eval(a) for a in node.args),
        {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None},
    )


def as_tool_call(parsed: ParsedCall, method: Callable[..., Any]) -> ToolCall:
    """Named JSON arguments for a call, positional ones named through the method signature."""
    bound = inspect.signature(method).bind(*parsed.args, **parsed.kwargs)
    return call(parsed.name, json.loads(json.dumps(dict(bound.arguments))))


def load_backends(entry: Mapping[str, Any], long_context: bool) -> dict[str, Any]:
    """Fresh instances of the task's classes, loaded the way BFCL's executor loads them."""
    instances: dict[str, Any] = {}
    for class_name in entry["involved_classes"]:
        module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
        instance = getattr(module, class_name)()
        if class_name not in STATELESS_CLASSES:
            config = copy.deepcopy(entry["initial_config"].get(class_name, {}))
            instance._load_scenario(config, long_context=long_context)
        instances[class_name] = instance
    return instances


def backend_tools(instances: Mapping[str, Any]) -> dict[str, Tool[Any]]:
    """Every documented method of the instances as a tool bound to that instance."""
    tools: dict[str, Tool[Any]] = {}
    for class_name, instance in instances.items():
        for doc in backend_docs()[MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]]:
            spec = import_function(doc, closed=True).spec
            tools[spec.name] = Tool(spec, getattr(instance, doc["name"]))
    return tools


_MPF = re.compile(r"mpf\('([^']*)'\)")
_MPF_MARK = "\x00mpf:"


@dataclass(frozen=True, slots=True)
class PrintedNumber:
    """A number as BFCL's ``str()`` printed it (``mpf('1.3027')``: mpmath at 5 digits).

    Equal to a number that rounds to the same digits: the float toolcycle would send for
    the same mpf is its exact binary value (1.302734375), of which BFCL shows 5 digits.
    """

    text: str

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PrintedNumber):
            return self.text == other.text
        if isinstance(other, bool) or not isinstance(other, int | float):
            return NotImplemented
        digits = max(1, len(decimal.Decimal(self.text).as_tuple().digits))
        return float(f"{other:.{digits}g}") == float(self.text)

    def __hash__(self) -> int:
        return hash(self.text)


def observation_value(text: str) -> Any:
    """An observation (ours: JSON; BFCL's: JSON or ``str()`` of the value) as a value."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        value = ast.literal_eval(_MPF.sub(lambda m: repr(_MPF_MARK + m.group(1)), text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return _printed_numbers(value)


def _printed_numbers(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_MPF_MARK):
        return PrintedNumber(value.removeprefix(_MPF_MARK))
    if isinstance(value, dict):
        return {k: _printed_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printed_numbers(v) for v in value]
    return value


@dataclass(slots=True)
class EntryOutcome:
    """What differed on each wire, by kind: ``"run"`` (the run itself failed: a protocol
    violation, a limit), ``"state"`` (a public attribute differs from BFCL's) or
    ``"outputs"`` (an observation differs from BFCL's result). Absent kinds matched."""

    entry_id: str
    mismatches: dict[Wire, dict[str, str]] = field(default_factory=dict)

    def kinds(self, wire: Wire) -> set[str]:
        return set(self.mismatches.get(wire, {}))


class Reference:
    """BFCL's own executor for one task (it keeps instances in its module globals)."""

    def __init__(self, entry: Mapping[str, Any], long_context: bool) -> None:
        self.entry = entry
        self.long_context = long_context
        self.model_name = f"toolcycle_conformance_{uuid.uuid4().hex}"

    def run_turn(self, calls: list[str]) -> tuple[list[str], dict[str, Any]]:
        results, instances = multi_turn_utils.execute_multi_turn_func_call(
            func_call_list=calls,
            initial_config=self.entry["initial_config"],
            involved_classes=self.entry["involved_classes"],
            model_name=self.model_name,
            test_entry_id=self.entry["id"],
            long_context=self.long_context,
        )
        return list(results), instances

    def close(self) -> None:
        prefix = re.sub(r"[-./:]", "_", self.model_name)
        module_globals = vars(multi_turn_utils)
        for name in [n for n in module_globals if n.startswith(prefix)]:
            del module_globals[name]


class OurRun:
    """toolcycle's side of one task on one wire shape."""

    def __init__(self, entry: Mapping[str, Any], wire: Wire, long_context: bool) -> None:
        self.wire = wire
        self.instances = load_backends(entry, long_context)
        self.tools = backend_tools(self.instances)
        excluded = set(entry.get("excluded_function") or ())
        self.held_back = {
            int(turn): set(names) for turn, names in (entry.get("missed_function") or {}).items()
        }
        self.hidden = excluded | set().union(*self.held_back.values())
        self.history: list[Message] = []
        # One model for the whole task, as a real conversation has: call ids stay unique.
        self.replies: collections.deque[Any] = collections.deque()
        self.model: Model = ScriptedModel(
            lambda messages, settings: self.replies.popleft(),
            wire="openai" if wire in ("openai-responses", "google") else wire,
        )
        if wire == "openai-responses":
            self.model = ThroughResponses(self.model)
        elif wire == "google":
            self.model = ThroughGemini(self.model)

    async def run_turn(self, turn: int, prompt: str, calls: list[str]) -> list[Any]:
        """Run one turn through the agent; returns the observations, in call order."""
        self.hidden -= self.held_back.get(turn, set())
        tool_calls = [
            as_tool_call(parsed, self.tools[parsed.name].function)  # type: ignore[arg-type]
            for parsed in map(parse_call, calls)
        ]
        script: list[Any]
        if not tool_calls:
            script = [ANSWER]
        elif self.wire == "openai-functions":
            script = [*tool_calls, ANSWER]
        else:
            script = [tool_calls, ANSWER]
        self.replies.extend(script)
        agent: Agent[None, str] = Agent(
            self.model,
            INSTRUCTIONS,
            tools=[t for name, t in self.tools.items() if name not in self.hidden],
            # Observations are compared whole: lift the default truncation (20,000 characters),
            # which long-context results exceed.
            limits=Limits(
                max_iterations=len(script) + 1,
                on_limit="error",
                max_observation_chars=MAX_OBSERVATION_CHARS,
            ),
        )
        result = await agent.run(prompt, message_history=self.history)
        if result.output != ANSWER or self.replies:
            raise AssertionError(f"turn {turn}: output {result.output!r}, {len(self.replies)} left")
        self.history = result.messages
        return [
            ("error", record.error) if record.error is not None else record.result
            for record in result.tool_calls
        ]


async def replay(
    entry: Mapping[str, Any],
    ground_truth: list[list[str]],
    category: str,
    wires: tuple[Wire, ...] = WIRES,
    edit: TurnEdit | None = None,
) -> EntryOutcome:
    """Replay one task on each wire next to BFCL's run of the (possibly edited) ground truth.

    ``edit`` changes only *our* calls, so a negative control shows whether a divergence is
    caught.
    """
    long_context = "long_context" in category
    outcome = EntryOutcome(entry["id"])
    reference = Reference(entry, long_context)
    ours = {wire: OurRun(entry, wire, long_context) for wire in wires}
    try:
        for turn, calls in enumerate(ground_truth):
            messages = entry["question"][turn]
            prompt = messages[-1]["content"] if messages else (
                DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
            )
            expected, reference_instances = reference.run_turn(calls)
            our_calls = edit(turn, list(calls)) if edit is not None else calls
            for wire, run in ours.items():
                found = outcome.mismatches.setdefault(wire, {})
                if "run" in found or "state" in found:
                    continue  # later turns of a diverged task say nothing new
                problems = await _turn_problems(
                    run, turn, prompt, our_calls, expected, reference_instances
                )
                for kind, detail in problems.items():
                    found.setdefault(kind, f"turn {turn}: {detail}"[:600])
        outcome.mismatches = {w: found for w, found in outcome.mismatches.items() if found}
    finally:
        reference.close()
    return outcome


async def _turn_problems(
    run: OurRun,
    turn: int,
    prompt: str,
    calls: list[str],
    expected: list[str],
    reference_instances: dict[str, Any],
) -> dict[str, str]:
    try:
        observed = await run.run_turn(turn, prompt, calls)
    except Exception as exc:  # a protocol violation, a limit, a bad script: all mismatches
        return {"run": f"{type(exc).__name__}: {exc}"}
    problems: dict[str, str] = {}
    state = state_checker(run.instances, reference_instances)
    if not state["valid"]:
        problems["state"] = str(state["details"]["differences"])
    ours = [o if isinstance(o, tuple) else observation_value(o) for o in observed]
    theirs = [observation_value(text) for text in expected]
    if ours != theirs:
        problems["outputs"] = f"ours {ours} != BFCL {theirs}"
    return problems
