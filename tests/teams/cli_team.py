"""A team for the command line (``--tools tests.teams.cli_team``, ``--model
python:tests.teams.cli_team:boss_model``): a janitor, called as a tool by the spec's agent,
whose ``delete`` needs a person's yes. Both models answer from the history, so a process that
resumes the paused team goes on where the first one stopped."""

from __future__ import annotations

from typing import Any

from toolcycle import Agent, tool
from toolcycle.models.scripted import ScriptedModel, call


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def _janitor(messages: Any, settings: Any) -> Any:
    if messages[-1].role == "tool":
        return messages[-1].results[0].content
    return call("delete", {"path": "/tmp/a"})


janitor = Agent(ScriptedModel(_janitor), tools=[delete], name="janitor")
janitor_tool = janitor.as_tool(description="Cleans up")


def boss_model() -> ScriptedModel:
    """Asks the janitor, then repeats its answer."""

    def answer(messages: Any, settings: Any) -> Any:
        if messages[-1].role == "tool":
            return f"janitor says: {messages[-1].results[0].content}"
        return call("janitor", {"input": "clean /tmp/a"})

    return ScriptedModel(answer)
