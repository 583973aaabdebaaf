"""toolcycle: LLM agents that call tools in a loop, correct on every path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .agent import Agent, AgentStream
from .approval import Approval, ApprovalRequest, Approve, Defer, Deny
from .context import CancelToken, RunContext
from .conversation import Conversation
from .errors import (
    AgentError,
    ApprovalMismatch,
    Cancelled,
    ConfigurationError,
    ConversationBusy,
    ConversationConflict,
    GuardrailTripped,
    InputError,
    InvalidResponse,
    MaxAttemptsExceeded,
    MaxIterationsExceeded,
    ModelError,
    RateLimited,
    RepeatedCalls,
    RunTimeout,
    SnapshotConsumed,
    SnapshotError,
    SubmitBeforeOutput,
    ToolcycleError,
    ToolsUnavailable,
    UsageLimitExceeded,
    ValidationFailed,
)
from .events import CallbackError
from .guardrails import Trip, input_guardrail, output_guardrail, tool_guardrail
from .limits import Limits
from .messages import Message, TextPart, ThinkingPart, ToolCall, ToolResult, Usage
from .models.base import Model, ModelSettings
from .output import Output
from .pricing import Price
from .result import RunResult, Termination
from .status import RunStatus
from .tools import Tool, ToolLibrary, ToolPolicy, ToolSpec, tool
from .tracing.trace import Step, ToolCallRecord, Trace

if TYPE_CHECKING:
    from .models.fallback import FallbackModel
    from .models.retry import RetryPolicy
    from .spec.agent_spec import AgentSpec, SpecError
    from .tool_selection import ToolSelection

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Agent specs (gram, JSON Schema checks), the retry policy (only the SDK adapters use
    it) and FallbackModel load on first use, not with every import."""
    if name in ("AgentSpec", "SpecError"):
        from . import spec

        return getattr(spec, name)
    if name == "ToolSelection":  # imports the knowledge base's embedder: only when used
        from .tool_selection import ToolSelection

        return ToolSelection
    if name == "FallbackModel":
        from .models.fallback import FallbackModel

        return FallbackModel
    if name == "RetryPolicy":
        from .models.retry import RetryPolicy

        return RetryPolicy
    raise AttributeError(f"module 'toolcycle' has no attribute {name!r}")


__all__ = [
    "Agent",
    "AgentError",
    "AgentSpec",
    "AgentStream",
    "Approval",
    "ApprovalMismatch",
    "ApprovalRequest",
    "Approve",
    "CallbackError",
    "CancelToken",
    "Cancelled",
    "ConfigurationError",
    "Conversation",
    "ConversationBusy",
    "ConversationConflict",
    "Defer",
    "Deny",
    "FallbackModel",
    "GuardrailTripped",
    "InputError",
    "InvalidResponse",
    "Limits",
    "MaxAttemptsExceeded",
    "MaxIterationsExceeded",
    "Message",
    "Model",
    "ModelError",
    "ModelSettings",
    "Output",
    "Price",
    "RateLimited",
    "RepeatedCalls",
    "RetryPolicy",
    "RunContext",
    "RunResult",
    "RunStatus",
    "RunTimeout",
    "SnapshotConsumed",
    "SnapshotError",
    "SpecError",
    "Step",
    "SubmitBeforeOutput",
    "Termination",
    "TextPart",
    "ThinkingPart",
    "Tool",
    "ToolCall",
    "ToolCallRecord",
    "ToolLibrary",
    "ToolPolicy",
    "ToolResult",
    "ToolSelection",
    "ToolSpec",
    "ToolcycleError",
    "ToolsUnavailable",
    "Trace",
    "Trip",
    "Usage",
    "UsageLimitExceeded",
    "ValidationFailed",
    "__version__",
    "input_guardrail",
    "output_guardrail",
    "tool",
    "tool_guardrail",
]
