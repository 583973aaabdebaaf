"""The agent package (DESIGN.md §3): its checks, stream and typed task input moved into
``toolcycle.agent``; the old module paths still import, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize(("old", "new", "name"), [
    ("toolcycle.task_input", "toolcycle.agent.task_input", "TaskInput"),
    ("toolcycle.agent_stream", "toolcycle.agent.stream", "AgentStream"),
])
def test_an_old_path_still_imports_with_a_warning(old: str, new: str, name: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new):
        moved = importlib.import_module(old)
    assert getattr(moved, name) is getattr(importlib.import_module(new), name)


def test_the_agent_and_its_stream_import_from_the_package() -> None:
    from toolcycle import Agent, AgentStream
    from toolcycle.agent import Agent as PackageAgent
    from toolcycle.agent import AgentStream as PackageStream

    assert Agent is PackageAgent and AgentStream is PackageStream
