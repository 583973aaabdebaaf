"""Where an OpenAI-API model is served and how it is reached, for both adapters.

The Chat Completions adapters (:mod:`.openai`) and the Responses adapter
(:mod:`.openai_responses`) read the same model strings (``"<model>"`` or
``"<model>@<base url>"``), take their key the same way, and talk through the same per-loop SDK
client; an ``openai-compatible:`` string also carries toolcycle's own options in its URL's
query (:class:`CompatibleTarget`). Kept apart from the adapters so that reading a string, which
needs no wire format, is one place for both.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Literal

from .local.control import ControlText
from .sdk_client import LoopBoundClient

#: ``"<model>@<base url>"`` as used by the ``openai-compatible:`` model strings.
_AT_URL = re.compile(r"^(?P<model>.+?)@(?P<url>https?://.+)$")

#: How an ``openai-compatible:`` model calls tools: the API's own, or a text protocol.
ToolsOption = Literal["native", "text", "json", "react"]
TOOL_PROTOCOLS: tuple[ToolsOption, ...] = ("native", "text", "json", "react")
#: The query parameters of a compatible URL that are toolcycle's, not the server's.
_WRAPPER_OPTIONS = frozenset({"tools", "constrained", "control_tokens"})


def openai_client(
    client: Any | None, api_key: str | None, base_url: str | None, timeout: float
) -> LoopBoundClient:
    """The caller's ``client``, or an ``AsyncOpenAI`` per event loop (see sdk_client.py) with
    the SDK's own retries off: :mod:`toolcycle.models.retry` retries instead."""
    if client is not None:
        return LoopBoundClient(None, client)
    import openai

    def factory() -> Any:
        return openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(),  # see sdk_client.py: no __del__
        )

    return LoopBoundClient(factory)


def split_url(text: str) -> tuple[str, str | None]:
    """``"<model>@<base url>"`` as ``(model, url)``; ``(text, None)`` without a URL."""
    match = _AT_URL.match(text)
    if match is None:
        return text, None
    return match["model"], match["url"]


def key_for(url: str | None) -> str | None:
    """The key from the environment; a placeholder for a custom server that needs none.

    Without a URL the SDK's own "missing credentials" error is the clearest answer.
    """
    key = os.environ.get("OPENAI_API_KEY")
    return key if key or url is None else "not-needed"


@dataclass(frozen=True, slots=True)
class CompatibleTarget:
    """An ``openai-compatible:`` model string, read (see
    :func:`~.openai.compatible_model_from_string` for what each option does)."""

    name: str
    #: The base URL without toolcycle's own query options (the server's own stay).
    url: str
    tools: ToolsOption
    #: ``constrained=`` as written (read by :func:`~.text.constrained.constrained_option`).
    constrained: str | None
    #: ``control_tokens=``: the pack or GGUF file whose control tokens are kept out.
    control_tokens: str | None

    @classmethod
    def parse(cls, text: str) -> CompatibleTarget:
        """Read ``"<model>@<url>[?tools=...&constrained=...&control_tokens=...]"``."""
        name, url = split_url(text)
        if url is None:
            raise ValueError(
                f"openai-compatible model string needs a base URL: "
                f"'<model>@http://host:port/v1', got {text!r}"
            )
        url, options = _wrapper_options(url)
        written = options.get("tools", "native")
        tools = next((known for known in TOOL_PROTOCOLS if known == written), None)
        if tools is None:
            raise ValueError(f"unknown tools={written!r} in {text!r}: use one of "
                             f"{', '.join(TOOL_PROTOCOLS)}")
        return cls(name, url, tools, options.get("constrained"), options.get("control_tokens"))

    def control_text(self) -> ControlText | None:
        """The control tokens of the served model's pack or GGUF file, when the string names
        one."""
        if self.control_tokens is None:
            return None
        from .local.llama import resolve_weights

        return ControlText.of_gguf(resolve_weights(self.control_tokens)[0])


def _wrapper_options(url: str) -> tuple[str, dict[str, str]]:
    """The URL without toolcycle's own query options (``tools``, ``constrained``,
    ``control_tokens``), and them."""
    parts = urllib.parse.urlsplit(url)
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    options = {k: v for k, v in pairs if k in _WRAPPER_OPTIONS}
    kept = urllib.parse.urlencode([(k, v) for k, v in pairs if k not in _WRAPPER_OPTIONS])
    return urllib.parse.urlunsplit(parts._replace(query=kept)), options
