"""Shared pieces of the structured-output tests: a small output type, a helper tool and a
callback recorder that keeps every event in order."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from toolcycle import Message, tool
from toolcycle.events import HOOKS, Event
from toolcycle.models.base import ModelSettings

OUTPUT_TOOL = "final_result"


class Report(BaseModel):
    """A short report about a company."""

    company: str
    revenue: int = Field(description="yearly revenue in euros")
    risks: list[str] = Field(default_factory=list)


GOOD = {"company": "Acme", "revenue": 1200, "risks": ["currency"]}
BETTER = {"company": "Acme", "revenue": 1500, "risks": ["currency", "supply"]}
NEGATIVE = {"company": "Acme", "revenue": -5, "risks": []}
NO_REVENUE = {"company": "Acme"}  # a schema error: the required field is missing

LOOKUPS: list[str] = []


@tool
def lookup(company: str) -> str:
    """Look up what is known about a company.

    Args:
        company: The company's name.
    """
    LOOKUPS.append(company)
    return f"{company}: revenue 1200 EUR"


class Recorder:
    """A callbacks object that records (hook, event) for every hook, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Event]] = []
        for hook in HOOKS:
            setattr(self, hook, self._make(hook))

    def _make(self, hook: str) -> Any:
        def record(event: Event) -> None:
            self.events.append((hook, event))

        return record

    def hooks(self, *keep: str) -> list[str]:
        return [h for h, _ in self.events if not keep or h in keep]

    def of(self, hook: str) -> list[Any]:
        return [e for h, e in self.events if h == hook]


def last_tool_message(messages: list[Message]) -> Message:
    return next(m for m in reversed(messages) if m.role == "tool")


def tool_choices(settings_list: list[ModelSettings]) -> list[str]:
    return [s.tool_choice for s in settings_list]
