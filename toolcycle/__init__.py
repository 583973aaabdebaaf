"""toolcycle: LLM agents that call tools in a loop, correct on every path."""

from __future__ import annotations

from .context import CancelToken, RunContext
from .errors import (
    AgentError,
    Cancelled,
    ConfigurationError,
    InvalidResponse,
    MaxAttemptsExceeded,
    MaxIterationsExceeded,
    ModelError,
    RateLimited,
    RunTimeout,
    SubmitBeforeOutput,
    ToolcycleError,
    UsageLimitExceeded,
    ValidationFailed,
)
from .limits import Limits
from .messages import Message, TextPart, ThinkingPart, ToolCall, ToolResult, Usage
from .tools import Tool, ToolLibrary, ToolSpec, tool
from .trace import Step, ToolCallRecord, Trace

__version__ = "0.1.0"

__all__ = [
    "AgentError",
    "CancelToken",
    "Cancelled",
    "ConfigurationError",
    "InvalidResponse",
    "Limits",
    "MaxAttemptsExceeded",
    "MaxIterationsExceeded",
    "Message",
    "ModelError",
    "RateLimited",
    "RunContext",
    "RunTimeout",
    "Step",
    "SubmitBeforeOutput",
    "TextPart",
    "ThinkingPart",
    "Tool",
    "ToolCall",
    "ToolCallRecord",
    "ToolLibrary",
    "ToolResult",
    "ToolSpec",
    "ToolcycleError",
    "Trace",
    "Usage",
    "UsageLimitExceeded",
    "ValidationFailed",
    "__version__",
    "tool",
]
