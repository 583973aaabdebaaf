"""Durable runs on DBOS: a run whose process is killed resumes in a new process from its last
finished step, without repeating model requests or side-effecting tool calls.

Needs the ``dbos`` extra (``pip install 'toolcycle[dbos]'``); see docs/durable.md.
"""

from .agent import DurableAgent
from .steps import DurableModel, ToolInterrupted, durable_tool

__all__ = ["DurableAgent", "DurableModel", "ToolInterrupted", "durable_tool"]
