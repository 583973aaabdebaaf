"""The model the served agent runs with in tests/mcp/test_serve.py (``--model
python:tests.mcp.serve_model:model``): it greets through the tool, then answers."""

from toolcycle.testing import ScriptedModel, call


def model() -> ScriptedModel:
    def reply(messages: list, settings: object) -> object:  # type: ignore[type-arg]
        last = messages[-1]
        if last.role == "tool":
            return f"Done: {last.parts[0].content}"
        return call("sayHello", {"personName": "Ada"})

    return ScriptedModel(reply)
