"""Model adapters and the model-string resolver.

``resolve_model("openai:gpt-4o-mini")`` picks the adapter by the prefix before the first
colon. Adapters are imported lazily so that an extra (``toolcycle[openai]``, ``[anthropic]``,
``[local]``) is needed only when it is used.
"""

from __future__ import annotations

import importlib

from .base import (
    Model,
    ModelResponse,
    ModelSettings,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolChoice,
    ToolDefinition,
)

#: prefix -> "module:factory"; each factory takes the text after the prefix.
PROVIDERS: dict[str, str] = {
    "openai": "toolcycle.models.openai:model_from_string",
    "openai-functions": "toolcycle.models.openai:functions_model_from_string",
    "openai-compatible": "toolcycle.models.openai:compatible_model_from_string",
    "openai-responses": "toolcycle.models.openai_responses:model_from_string",
    "anthropic": "toolcycle.models.anthropic:model_from_string",
    "google": "toolcycle.models.google:model_from_string",
    "local": "toolcycle.models.local.llama:model_from_string",
}


def resolve_model(model: Model | str) -> Model:
    """Turn a model string into an adapter; pass model objects through unchanged."""
    if isinstance(model, Model):
        return model
    prefix, sep, rest = model.partition(":")
    if not sep or prefix not in PROVIDERS:
        known = ", ".join(f"{p}:..." for p in PROVIDERS)
        raise ValueError(f"cannot resolve model {model!r}: expected one of {known}")
    module_name, _, factory_name = PROVIDERS[prefix].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        extra = prefix.split("-")[0]
        raise ImportError(
            f"model {model!r} needs the {extra!r} extra: pip install 'toolcycle[{extra}]' ({exc})"
        ) from exc
    resolved: Model = getattr(module, factory_name)(rest)
    return resolved


__all__ = [
    "PROVIDERS",
    "Model",
    "ModelResponse",
    "ModelSettings",
    "StreamItem",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolDefinition",
    "resolve_model",
]
