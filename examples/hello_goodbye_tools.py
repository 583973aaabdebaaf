"""Tool implementations for ``examples/hello_goodbye.gram``, found by name at bind time."""


def sayHello(personName: str = "world") -> str:
    """Returns a friendly greeting message for the given name."""
    return f"Hello, {personName}! Nice to meet you."


def sayGoodbye(personName: str, tone: str = "warm") -> str:
    """Returns a farewell for the given name, warm or formal."""
    if tone == "formal":
        return f"Goodbye, {personName}. It was a pleasure."
    return f"Bye, {personName}! Take care and come back soon."
