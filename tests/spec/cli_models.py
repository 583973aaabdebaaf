"""Models for the CLI tests, named on the command line as ``python:tests.spec.cli_models:...``."""

from __future__ import annotations

from typing import Any

from toolcycle.models.scripted import ScriptedModel, call


def hello_model() -> ScriptedModel:
    """Calls sayHello for Ada, then answers with the tool's greeting."""

    def answer(messages: Any, settings: Any) -> str:
        return str(messages[-1].results[0].content)

    return ScriptedModel([call("sayHello", {"personName": "Ada"}), answer])


def looping_model() -> ScriptedModel:
    """Never stops calling the tool (to hit the iteration limit)."""
    return ScriptedModel(lambda messages, settings: call("sayHello", {"personName": "Bo"}))


def settings_model() -> ScriptedModel:
    """Answers with the temperature and seed it was asked with."""
    return ScriptedModel(lambda messages, settings:
                         f"temperature={settings.temperature} seed={settings.seed}")


def time_model() -> ScriptedModel:
    """Greets with the spec's tool and asks the MCP time server of tests/mcp/time_tools.py,
    then answers with both observations."""

    def answer(messages: Any, settings: Any) -> str:
        return " | ".join(str(r.content) for r in messages[-1].results)

    return ScriptedModel([[call("sayHello", {"personName": "Ada"}),
                           call("get_current_time", {"timezone": "UTC"})], answer])


def tools_model() -> ScriptedModel:
    """Answers with the names of the tools it was offered."""
    return ScriptedModel(lambda messages, settings:
                         "tools: " + ",".join(t.name for t in settings.tools))
