"""The checks :class:`toolcycle.agent.Agent` runs on its arguments at construction.

Each returns the problems it found as sentences (empty when the value is fine), so that the
agent raises one :class:`~toolcycle.errors.ConfigurationError` listing every problem at once,
not the first. Kept apart from the agent so that its module reads as what an agent does;
so is what follows from the checked values (the tools built, the settings every request
carries).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import ConfigurationError
from ..events import Callbacks, CallbacksArg
from ..limits import Limits
from ..models import resolve_model
from ..models.base import Model, ModelSettings, ToolDefinition
from ..output import SUBMIT_TOOL_NAME, Output
from ..run.plan import PLAYBOOK_METHODS
from ..run.team import HandoffTool, MemberTool
from ..tools import Tool, Toolset, as_tool
from ..tracing.recorder import TraceSink
from .handoffs import AgentHandoff
from .team import AgentMember


def is_tool_list(tools: object) -> bool:
    return isinstance(tools, Iterable) and not isinstance(tools, str | bytes | Mapping)


def check_tools(tools: object) -> list[str]:
    """``tools=`` must be a list (or another iterable) of tools and functions: one function
    given bare used to fail with "'function' object is not iterable"."""
    if is_tool_list(tools):
        return []
    return [f"tools must be a list of tools or functions, got {type(tools).__name__}"
            + (" (wrap it in a list: tools=[...])" if callable(tools) else "")]


def build_tools(tools: object, problems: list[str]) -> tuple[dict[str, Tool[Any]],
                                                                list[Toolset]]:
    """``tools=`` built: the tools by name and the toolsets (expanded per run, since their
    tools are known only once connected); every problem is added to ``problems``."""
    built_tools: dict[str, Tool[Any]] = {}
    toolsets: list[Toolset] = []
    problems.extend(check_tools(tools))
    for item in tools if is_tool_list(tools) else ():  # type: ignore[attr-defined]
        # a Tool or a function is not a Toolset: skip the runtime Protocol check (it walks
        # the protocol's members, ~8 us per tool, a sixth of building a 50-tool agent)
        if (not isinstance(item, Tool) and not inspect.isfunction(item)
                and isinstance(item, Toolset)):
            toolsets.append(item)
            continue
        try:
            built = as_tool(item)
        except ConfigurationError as exc:
            problems.extend(exc.problems)
            continue
        except Exception as exc:
            problems.append(f"tool {item!r}: {exc}")
            continue
        if built.name in built_tools:
            problems.append(f"two tools are named {built.name!r}")
        built_tools[built.name] = built
    return built_tools, toolsets


def check_options(instructions: object, name: object, description: object,
                  parallel_tools: object, approval: object, snapshot_key: object) -> list[str]:
    """The agent's plain options: strings, a flag, the approval policy, the snapshot key."""
    problems = [f"{label} must be a string, got {type(text).__name__}"
                for label, text in (("instructions", "" if callable(instructions) else
                                     instructions), ("name", name), ("description", description))
                if not isinstance(text, str)]
    if not isinstance(parallel_tools, bool):
        problems.append("parallel_tools must be True or False")
    if approval is not None and not callable(approval):
        problems.append("approval must be a function (request, ctx) -> Approve() | "
                        f"Deny(reason) | Defer(), got {type(approval).__name__}")
    if snapshot_key is not None and not (isinstance(snapshot_key, bytes | str)
                                         and len(snapshot_key) >= 16):
        problems.append("snapshot_key must be bytes or a string of at least 16 characters")
    return problems


def model_of(label: str, given: object, problems: list[str]) -> Model | None:
    """``given`` (a Model or a model string) resolved, or ``None`` with the problem noted."""
    if not isinstance(given, Model | str):
        problems.append(f"{label} must be a Model or a model string such as "
                        f"'openai:gpt-4o-mini', got {type(given).__name__}")
        return None
    try:
        return resolve_model(given)
    except (ValueError, ImportError) as exc:
        problems.append(f"{label}: {exc}")
        return None


def output_clashes(output: Output[Any], tools: Mapping[str, Tool[Any]]) -> list[str]:
    """Tools named like the output tool or ``submit``, which the output reserves."""
    return [f"tool {reserved!r} clashes with the "
            f"{'submit tool' if reserved == SUBMIT_TOOL_NAME else 'output tool'}"
            for reserved in (d.name for d in output.tool_definitions) if reserved in tools]


def agent_settings(given: ModelSettings | None, output: Output[Any],
                   definitions: tuple[ToolDefinition, ...]) -> ModelSettings:
    """The settings every request of the agent carries: its tools, and what structured output
    and reflection need of ``tool_choice`` and ``on_repeat``."""
    settings = given or ModelSettings()
    on_repeat, tool_choice = settings.on_repeat, settings.tool_choice
    if output.submit_tool is not None and on_repeat == "none":
        # Reflection: a text-protocol model that repeats its preview is asked to submit.
        on_repeat = SUBMIT_TOOL_NAME
    elif output.tool is not None and on_repeat == "none":
        # Structured: a text answer cannot end the attempt, so a repeat is asked for the
        # output instead (withdrawing the tools would only invite a text answer).
        on_repeat = output.tool.name
    if output.tool is not None and tool_choice == "auto":
        # Structured: only a tool call can end the attempt, so none is optional. "auto"
        # would let a grammar-constrained or native function-calling model answer in
        # text, which is then rejected as INVALID_RESPONSE (measured: Qwen2.5-Coder-1.5B
        # answered the README quickstart in prose three attempts running).
        tool_choice = "required"
    return replace(settings, tools=definitions, on_repeat=on_repeat, tool_choice=tool_choice)


def check_limits(limits: object, where: str = "limits") -> list[str]:
    """``limits=`` is ``None`` or a :class:`Limits` (a dict is not: ``Limits(**d)`` is). The
    run-level ``limits=`` of ``run``/``run_sync``/``stream`` needs the same check."""
    if limits is None or isinstance(limits, Limits):
        return []
    hint = f" (write {where}=Limits(**...))" if isinstance(limits, dict) else ""
    return [f"{where} must be a Limits object, got {type(limits).__name__}{hint}"]


def check_model_settings(settings: object) -> list[str]:
    if settings is None or isinstance(settings, ModelSettings):
        return []
    return [f"model_settings must be a ModelSettings object, got {type(settings).__name__}"]


def check_trace_store(value: object) -> list[str]:
    """A sink needs the :class:`TraceSink` methods: a wrong value used to pass construction and
    fail at the first run ("'int' object has no attribute 'start'")."""
    if value is None or isinstance(value, str | bool | os.PathLike):
        return []
    missing = missing_methods(value, ("start", "record_step", "finish"))
    if not missing:
        return []
    return [f"trace_store must be a trace sink (start, record_step, finish), a SQLite path, "
            f"True/False or None; {type(value).__name__} lacks {', '.join(missing)}"]


def check_playbook(value: object) -> list[str]:
    """Whether ``value`` implements :class:`~toolcycle.run.plan.PlaybookHook` whole: checked
    once here, so that no run asks a playbook for a method it may lack."""
    missing = [] if value is None else missing_methods(value, PLAYBOOK_METHODS)
    if not missing:
        return []
    return [f"playbook must be a Playbook ({', '.join(PLAYBOOK_METHODS)}) or None; "
            f"{type(value).__name__} lacks {', '.join(missing)}"]


def check_tool_selection(value: object) -> list[str]:
    if value is None or not missing_methods(value, ("select",)):
        return []
    return [f"tool_selection must be a ToolSelection (select(task, tools, keep)) or None, "
            f"got {type(value).__name__}"]


def missing_methods(value: object, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if not callable(getattr(value, n, None))]


def run_options(callbacks: CallbacksArg, limits: object) -> Callbacks:
    """The run's own callbacks, once its options are checked (every problem at once)."""
    extra, problems = Callbacks.collect(callbacks)
    problems = [f"callbacks: {p}" for p in problems] + check_limits(limits)
    if problems:
        raise ConfigurationError(problems, subject="run")
    return extra


def trace_sink(value: TraceSink | str | os.PathLike[str] | bool | None) -> TraceSink | None:
    """``trace_store=`` accepts any sink, a SQLite path, ``True``/``False``, or ``None`` (then
    ``$TOOLCYCLE_TRACE_DB`` decides). SQLite is imported only when a store is used."""
    if value is None and not os.environ.get("TOOLCYCLE_TRACE_DB"):
        return None
    if value is not None and not isinstance(value, str | bool | os.PathLike):
        return value
    from ..tracing.store import resolve_trace_store

    return resolve_trace_store(value)


def check_snapshot_ledger(value: object) -> list[str]:
    """``snapshot_ledger=``: ``None`` (the shared default), a ``SnapshotLedger`` or a store
    location; the stores load only when one is given."""
    if value is None:
        return []
    from ..stores import SnapshotLedger, location_problems

    if isinstance(value, SnapshotLedger):
        return []
    return [f"snapshot_ledger: {p}" for p in location_problems(value)]


def check_cost_limit(limits: Limits | None, model: Model, compaction: Model | None,
                     tools: Iterable[Tool[Any]]) -> list[str]:
    """``Limits(max_cost=...)`` needs a known price for every model the run may use: the
    agent's, its summariser's, and those of every agent it calls (``as_tool``) or hands off
    to, theirs included. Why at construction: a budget over a model of unknown price cannot
    be kept, and finding out at the first reply wastes a request (the run would then stop
    there, ``"max_cost"``, saying so)."""
    if limits is None or limits.max_cost is None:
        return []
    unknown = team_unpriced(model, compaction, tools)
    if not unknown:
        return []
    return [f"limits.max_cost needs every model's price, and these have none: "
            f"{', '.join(unknown)} (give one: OpenAIModel(..., price=Price(...)), "
            "model.price = Price(...), or toolcycle.pricing.PRICES[name] = Price(...))"]


def team_unpriced(model: Model, compaction: Model | None, tools: Iterable[Tool[Any]]
                  ) -> list[str]:
    """The names of the team's models whose price is unknown (see :func:`check_cost_limit`),
    each once; an agent met twice (a cycle of handoffs) is walked once."""
    found: list[str] = []
    seen: set[int] = set()
    pending: list[tuple[Model, Model | None, Iterable[Tool[Any]]]] = [(model, compaction, tools)]
    while pending:
        own, summariser, offered = pending.pop()
        for each in (own, summariser):
            if each is not None:
                found.extend(name for name in each.unpriced() if name not in found)
        for tool in offered:
            if isinstance(tool, MemberTool) and isinstance(tool.member, AgentMember):
                agent = tool.member.agent
            elif isinstance(tool, HandoffTool) and isinstance(tool.target, AgentHandoff):
                agent = tool.target.agent
            else:
                continue
            if id(agent) not in seen:
                seen.add(id(agent))
                core, _ = agent._own_core()
                pending.append((agent.model, core.compaction_model, core.tools.values()))
    return found
