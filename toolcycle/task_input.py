"""Moved to :mod:`toolcycle.agent.task_input` (the agent package holds the agent's stream and
its typed task input); kept so that old imports go on working, with a ``DeprecationWarning``."""

import warnings

from .agent.task_input import (
    Instructions,
    TaskInput,
    check_callable_instructions,
    start_run,
    template_fields,
)

__all__ = ["Instructions", "TaskInput", "check_callable_instructions", "start_run",
           "template_fields"]

warnings.warn("toolcycle.task_input moved to toolcycle.agent.task_input", DeprecationWarning,
              stacklevel=2)
