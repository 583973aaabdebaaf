"""Models for the CLI process tests, named on the command line as
``python:tests.cli.cli_models:...`` (the command runs from the repository root)."""

from __future__ import annotations

from toolcycle.models.scripted import ScriptedModel, call


def greet_then_wait() -> ScriptedModel:
    """Greets Ada (a call that finishes), then says goodbye (a call that waits until the test
    interrupts the command), then would answer."""
    return ScriptedModel([call("sayHello", {"personName": "Ada"}),
                          call("sayGoodbye", {"personName": "Ada"}), "done"])


def greet_with_a_secret() -> ScriptedModel:
    """Greets someone whose name is a secret-looking value, then answers."""
    return ScriptedModel([call("sayHello", {"personName": "sk-ant-abcdefghijklmnop0123456789"}),
                          "greeted"])
