"""An async approval policy is awaited like every other await of the run (r2-10): the cancel
token and the run's timeout end the run while the policy is still deciding, the policy is
cancelled, nothing it was asked about runs, and every call id is answered once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from toolcycle import Agent, Approve, Cancelled, CancelToken, Limits, RunContext, tool
from toolcycle.approval import ApprovalRequest
from toolcycle.testing import ScriptedModel, call

#: A bound on a test that would otherwise hang on the defect (not a timing assertion).
HANG_GUARD_S = 60.0


class Undecided:
    """A policy that never answers (a person who never replies), noting its cancellation."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.cancelled = False

    async def __call__(self, request: ApprovalRequest, ctx: RunContext[Any]) -> Approve:
        self.asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return Approve()


def _agent(policy: Undecided, paid: list[int], **options: Any) -> Agent:
    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay."""
        paid.append(amount)
        return f"paid {amount}"

    model = ScriptedModel([[call("pay", {"amount": 1}), call("pay", {"amount": 2})],
                           "done", "done"])
    return Agent(model, tools=[pay], approval=policy, **options)


def test_a_cancel_token_ends_the_run_while_the_policy_decides() -> None:
    policy, paid, token = Undecided(), [], CancelToken()

    async def scenario() -> Cancelled:
        run = asyncio.ensure_future(_agent(policy, paid).run("go", cancel_token=token))
        await policy.asked.wait()
        token.cancel("the person left")
        with pytest.raises(Cancelled) as info:
            await asyncio.wait_for(run, HANG_GUARD_S)
        return info.value

    error = asyncio.run(scenario())
    assert policy.cancelled and paid == []
    assert error.result is not None
    answered = [r.call_id for m in error.result.messages for r in m.results]
    assert sorted(answered) == ["call_1", "call_2"]


def test_the_run_timeout_ends_the_run_while_the_policy_decides() -> None:
    policy, paid = Undecided(), []

    async def scenario() -> Any:
        return await asyncio.wait_for(
            _agent(policy, paid, limits=Limits(timeout=0.2)).run("go"), HANG_GUARD_S)

    result = asyncio.run(scenario())
    assert policy.cancelled and paid == []
    assert result.termination.reason == "timeout"
    answered = [r.call_id for m in result.messages for r in m.results]
    assert sorted(answered) == ["call_1", "call_2"]
