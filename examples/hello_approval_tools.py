"""``examples/hello_world.gram``'s tool, needing a person's yes before each greeting.

With these tools a ``toolcycle batch`` run pauses on every input (docs/scaling.md, "Paused
inputs"); ``--resume --approve all`` greets them.
"""

from toolcycle import tool


@tool(requires_approval=True)
def sayHello(personName: str = "world") -> str:  # the spec's tool name, so camelCase
    """Returns a friendly greeting message for the given name."""
    return f"Hello, {personName}! Nice to meet you."
