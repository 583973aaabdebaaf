"""A run given an earlier run's messages gets the playbook's advice for its own task.

The earlier run's system message holds that run's advice; kept as it was, the next task was
advised for the earlier one, while its trace said its own strategies were shown and the
playbook learned from runs they never reached."""

from __future__ import annotations

from collections.abc import Sequence

from toolcycle import Agent, Message
from toolcycle.models.base import ModelSettings
from toolcycle.models.scripted import ScriptedModel
from toolcycle.playbook import Playbook, Strategy


def weather(city: str) -> str:
    """Current weather in a city."""
    return "sunny"


def exchange_rate(currency: str) -> str:
    """Exchange rate of a currency to the euro."""
    return "0.9"


def _playbook() -> Playbook:
    pb = Playbook(":memory:", learn=False)
    pb.store.put([
        Strategy(id="weather-first", kind="advice", domain="helper", status="active",
                 advice="Call weather(city) first.", tools=["weather"],
                 applies_when=["weather", "forecast"]),
        Strategy(id="rate-first", kind="advice", domain="helper", status="active",
                 advice="Call exchange_rate(currency) first.", tools=["exchange_rate"],
                 applies_when=["exchange", "currency", "dollars"]),
    ])
    return pb


class Answers:
    """A scripted model that answers in turn and keeps the system message of each request."""

    def __init__(self, *answers: str) -> None:
        self.answers, self.systems = list(answers), list[str]()

    def __call__(self, messages: Sequence[Message], settings: ModelSettings) -> str:
        self.systems.append(messages[0].text if messages[0].role == "system" else "")
        return self.answers.pop(0)


def _agent(instructions: str, model: Answers) -> Agent[None, str]:
    return Agent(ScriptedModel(model), instructions, [weather, exchange_rate], name="helper",
                 playbook=_playbook())


def test_the_next_task_through_the_history_gets_its_own_advice() -> None:
    model = Answers("Sunny.", "0.9 euro.")
    agent = _agent("You help.", model)
    first = agent.run_sync("What is the weather forecast for Paris?")
    assert first.trace.strategies_shown == ["weather-first"]
    second = agent.run_sync("How many euro is one of these dollars, at the exchange rate?",
                            message_history=first.messages)
    system = model.systems[1]
    assert system.startswith("You help.\n\n")
    assert "exchange_rate(currency) first" in system
    assert "weather(city) first" not in system
    assert second.trace.strategies_shown == ["rate-first"]
    assert [m.role for m in second.messages].count("system") == 1


def test_an_agent_without_instructions_replaces_its_earlier_advice_too() -> None:
    model = Answers("Sunny.", "0.9 euro.")
    agent = _agent("", model)
    first = agent.run_sync("What is the weather forecast for Paris?")
    agent.run_sync("How many euro is one of these dollars, at the exchange rate?",
                   message_history=first.messages)
    system = model.systems[1]
    assert "exchange_rate(currency) first" in system and "weather" not in system


def test_the_callers_own_system_message_stands_and_no_advice_is_claimed() -> None:
    model = Answers("0.9 euro.")
    agent = _agent("You help.", model)
    history = [Message.system("You are a terse currency desk.")]
    result = agent.run_sync("How many euro is one of these dollars, at the exchange rate?",
                            message_history=history)
    assert model.systems == ["You are a terse currency desk."]
    assert result.trace.strategies_shown == []  # what the model saw, not what was chosen
