"""The checks :class:`toolcycle.agent.Agent` runs on its arguments at construction.

Each returns the problems it found as sentences (empty when the value is fine), so that the
agent raises one :class:`~toolcycle.errors.ConfigurationError` listing every problem at once,
not the first. Kept apart from the agent so that its module reads as what an agent does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from .limits import Limits
from .models.base import ModelSettings


def is_tool_list(tools: object) -> bool:
    return isinstance(tools, Iterable) and not isinstance(tools, str | bytes | Mapping)


def check_tools(tools: object) -> list[str]:
    """``tools=`` must be a list (or another iterable) of tools and functions: one function
    given bare used to fail with "'function' object is not iterable"."""
    if is_tool_list(tools):
        return []
    return [f"tools must be a list of tools or functions, got {type(tools).__name__}"
            + (" (wrap it in a list: tools=[...])" if callable(tools) else "")]


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
    missing = [] if value is None else missing_methods(value, ("instructions_for", "observe"))
    if not missing:
        return []
    return [f"playbook must be a Playbook (instructions_for, observe) or None; "
            f"{type(value).__name__} lacks {', '.join(missing)}"]


def check_tool_selection(value: object) -> list[str]:
    if value is None or not missing_methods(value, ("select",)):
        return []
    return [f"tool_selection must be a ToolSelection (select(task, tools, keep)) or None, "
            f"got {type(value).__name__}"]


def missing_methods(value: object, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if not callable(getattr(value, n, None))]
