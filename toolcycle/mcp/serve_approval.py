"""The approval gate of ``toolcycle mcp serve``: a served tool never runs past the agent's word.

An MCP client calls a served tool directly, outside any run, so the loop's gate
(:mod:`toolcycle.run.approvals`) is not in the way; this module is. A call is decided as a run
would decide it: the agent's ``approval=`` policy first (``Approve`` runs, ``Deny`` refuses
with its reason); a deferral, or a tool with ``requires_approval`` on an agent without a
policy, asks *the MCP client's user* through MCP elicitation (``elicitation/create``, the
spec's way for a server to ask a person; from protocol 2026-07-28 an ``input_required``
result that the client answers by calling again). A client without the elicitation capability, one
that cannot reach its user (no back-channel), a declined or cancelled form, or a policy that
fails: the call is refused. Nothing that needs a yes runs without one.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..approval import ApprovalRequest, Approve, Deny, arguments_digest
from ..context import RunContext

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.types import CallToolRequestParams, ElicitResult, InputRequiredResult

    from ..agent import Agent
    from ..tools import Tool

#: What the client's user fills in: a yes or no, and optionally why not.
ANSWER_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Run this call?",
                    "description": "Yes runs the call; no refuses it."},
        "reason": {"type": "string", "title": "Reason (when refusing)"},
    },
    "required": ["approve"],
}


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a served call does not run (the text of its error result)."""

    reason: str


#: The key of toolcycle's question among a ``tools/call``'s input requests (2026-07-28).
QUESTION = "toolcycle.approval"
#: The first protocol version in which a server asks by answering ``input_required``.
_ASKS_BY_RESULT = "2026-07-28"


async def gate(agent: Agent[Any, Any], tool: Tool[Any], arguments: dict[str, Any],
               ctx: RunContext[Any], request_context: ServerRequestContext[Any, Any],
               params: CallToolRequestParams) -> Refusal | InputRequiredResult | None:
    """``None`` when the call may run, else why not, or (2026-07-28) the question to put to the
    client's user before the client calls again (see the module docstring)."""
    policy = agent.approval
    if policy is None and not tool.requires_approval:
        return None
    request = ApprovalRequest("mcp", tool.name, arguments, tool.requires_approval)
    if policy is not None:
        try:
            decision = policy(request, ctx)
            if inspect.isawaitable(decision):
                decision = await decision
        except Exception as exc:
            return Refusal(f"Not run: the approval policy failed ({type(exc).__name__}: "
                           f"{exc}).")
        if isinstance(decision, Approve):
            return None
        if isinstance(decision, Deny):
            return Refusal(f"Denied: {decision.reason}")
    return await _ask_the_user(tool, arguments, request_context, params)


async def _ask_the_user(tool: Tool[Any], arguments: dict[str, Any],
                        request_context: ServerRequestContext[Any, Any],
                        params: CallToolRequestParams) -> Refusal | InputRequiredResult | None:
    """Elicitation: over a back-channel (``elicitation/create``, protocols before 2026-07-28),
    or, from 2026-07-28, by answering ``input_required`` and reading the user's answer from
    the client's retry of the same call (``request_state`` names the call it answers)."""
    import mcp.types as types
    from mcp.shared.exceptions import MCPError

    session = request_context.session
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not session.check_client_capability(wanted):
        return Refusal(f"Refused: `{tool.name}` needs a person's approval, and this MCP client "
                       "cannot ask its user (no elicitation capability).")
    shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)[:2000]
    question = f"Allow the tool `{tool.name}` to run with these arguments?\n{shown}"
    if request_context.protocol_version >= _ASKS_BY_RESULT:
        state = arguments_digest([tool.name, arguments])
        given = (params.input_responses or {}).get(QUESTION)
        if given is None or params.request_state != state:
            return types.InputRequiredResult(input_requests={QUESTION: types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=question,
                                                     requested_schema=ANSWER_FORM))},
                request_state=state)
        if not isinstance(given, types.ElicitResult):
            return Refusal(f"Refused: the answer about `{tool.name}` is not an elicitation "
                           "result.")
        return _verdict(given)
    try:
        answer = await session.elicit_form(
            question, ANSWER_FORM, related_request_id=request_context.request_id)
    except (MCPError, ValueError, OSError) as exc:  # no back-channel, an error, a bad answer
        return Refusal(f"Refused: `{tool.name}` needs a person's approval, which could not be "
                       f"asked ({type(exc).__name__}: {exc}).")
    return _verdict(answer)


def _verdict(answer: ElicitResult) -> Refusal | None:
    """The user's answer: only an accepted form saying ``approve: true`` runs the call."""
    content = answer.content or {}
    if answer.action == "accept" and content.get("approve") is True:
        return None
    reason = content.get("reason") if answer.action == "accept" else None
    said = f": {reason}" if isinstance(reason, str) and reason.strip() else ""
    return Refusal(f"Denied by the person ({answer.action}){said}.")
