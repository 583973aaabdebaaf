"""A triage agent handing off to two specialists, on the real local Qwen2.5-Coder-1.5B
(temperature 0): the model picks the specialist, which answers with its own instructions and
tools, in the same run.

Kept to a few questions: each is one handoff request plus the specialist's few. What is
asserted is the team's part (the right specialist, who answered, histories a provider would
accept); whether the 1.5B specialist then calls its tool is the model's part: measured
2026-12-05, billing called refund_order, support answered in prose without reset_password.
"""

from __future__ import annotations

import pytest

from toolcycle import Agent, Limits, ModelSettings, tool
from toolcycle.models.local.llama import DEFAULT_SEED
from toolcycle.testing import HistoryChecker

pytestmark = pytest.mark.real_model

MODEL = "local:qwen2.5-coder-1.5b"
DETERMINISTIC = ModelSettings(temperature=0.0, seed=DEFAULT_SEED, max_tokens=256)


@tool
def refund_order(order_id: str) -> str:
    """Refund a customer's order by its number."""
    return f"Order {order_id} refunded: 49.90 EUR back in 3 days."


@tool
def reset_password(username: str) -> str:
    """Send a password reset link to a user."""
    return f"Reset link sent to {username}'s e-mail."


def triage_team() -> Agent[None, str]:
    billing = Agent(MODEL, "You handle refunds and charges. Use refund_order, then tell the "
                    "customer what happened.", [refund_order], name="billing",
                    description="Refunds, charges, invoices.", model_settings=DETERMINISTIC,
                    limits=Limits(max_iterations=4))
    support = Agent(MODEL, "You handle account access. Use reset_password, then tell the "
                    "customer what happened.", [reset_password], name="support",
                    description="Logins, passwords, accounts.", model_settings=DETERMINISTIC,
                    limits=Limits(max_iterations=4))
    # Three iterations bound the whole run (the handoff goes on in it): the handoff and two
    # of the specialist's. With six, the 1.5B billing specialist called refund_order, an
    # unknown send_email, refund_order again, send_email again: 7 requests, 45 s alone
    # against 28 s (2026-12-07), with nothing more for this test to read.
    return Agent(MODEL, "You route each customer request to the right team: transfer billing "
                 "questions to billing and account or password questions to support.",
                 name="triage", handoffs=[billing, support], limits=Limits(max_iterations=3),
                 model_settings=ModelSettings(temperature=0.0, seed=DEFAULT_SEED,
                                              max_tokens=256, tool_choice="required"))


@pytest.mark.parametrize(("question", "specialist", "tool_name", "fact"), [
    ("I was charged for order 1042 but I cancelled it. Please refund order 1042.",
     "billing", "refund_order", "1042"),
    ("I forgot my password. My username is bob_smith, please reset it.",
     "support", "reset_password", "bob_smith"),
])
async def test_triage_hands_off_to_the_right_specialist(question: str, specialist: str,
                                                        tool_name: str, fact: str) -> None:
    result = await triage_team().run(question)
    trace = result.trace.render()
    assert result.trace.handoffs[0]["to"] == specialist, trace
    assert result.agent_name == specialist, trace
    assert result.tool_calls[0].name == f"transfer_to_{specialist}", trace
    HistoryChecker().check(result.messages)
    for record in result.tool_calls:  # the specialist's tool, where it was called, ran right
        if record.name == tool_name and record.error is None:
            assert fact in (record.result or ""), trace
