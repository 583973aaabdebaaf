"""Tool implementations for ``examples/hello_world.gram``, found by name at bind time."""


def sayHello(personName: str = "world") -> str:  # the spec's tool name, so camelCase
    """Returns a friendly greeting message for the given name."""
    return f"Hello, {personName}! Nice to meet you."
