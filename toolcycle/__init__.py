"""toolcycle: LLM agents that call tools in a loop, correct on every path."""

from __future__ import annotations

from .agent import Agent, AgentStream
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
from .events import CallbackError
from .limits import Limits
from .messages import Message, TextPart, ThinkingPart, ToolCall, ToolResult, Usage
from .models.base import Model, ModelSettings
from .models.retry import RetryPolicy
from .output import Output
from .result import RunResult, Termination
from .spec import AgentSpec, SpecError
from .tools import Tool, ToolLibrary, ToolSpec, tool
from .trace import Step, ToolCallRecord, Trace

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentError",
    "AgentSpec",
    "AgentStream",
    "CallbackError",
    "CancelToken",
    "Cancelled",
    "ConfigurationError",
    "InvalidResponse",
    "Limits",
    "MaxAttemptsExceeded",
    "MaxIterationsExceeded",
    "Message",
    "Model",
    "ModelError",
    "ModelSettings",
    "Output",
    "RateLimited",
    "RetryPolicy",
    "RunContext",
    "RunResult",
    "RunTimeout",
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
