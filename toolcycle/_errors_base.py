"""The two roots of :mod:`toolcycle.errors`, in a module that imports nothing of toolcycle.

Modules that :mod:`toolcycle.errors` itself depends on (``approval``, through ``result``) raise
them too; importing them from here keeps the import graph free of cycles. Their public home
stays ``toolcycle.errors`` (``__module__`` says so, for reprs and pickling).
"""

from __future__ import annotations


class ToolcycleError(Exception):
    """Base of every exception raised by toolcycle."""

    __module__ = "toolcycle.errors"


class ConfigurationError(ToolcycleError, ValueError):
    """Invalid configuration, raised at construction with every problem listed."""

    __module__ = "toolcycle.errors"
    code = "CONFIGURATION"

    def __init__(self, problems: list[str], subject: str = "configuration") -> None:
        self.problems = list(problems)
        self.subject = subject
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid {subject} ({len(self.problems)} problem(s)):\n{lines}")
