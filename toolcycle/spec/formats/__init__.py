"""Foreign tool definitions: import and export tool specs in other ecosystems' formats.

Providers restrict tool names (OpenAI and Anthropic: ``[a-zA-Z0-9_-]{1,64}``; MCP recommends
``[A-Za-z0-9_.-]{1,128}``) while tool sets from elsewhere (BFCL's ``math.factorial``, MCP
servers) use other characters. :mod:`toolcycle.spec.formats.names` maps such names to safe ones and
back, so a call the model makes under the safe name reaches the tool under its own name.
"""

from .anthropic import export_anthropic_tools, import_anthropic_tools
from .mcp import export_mcp_tools, import_mcp_tools
from .names import ANTHROPIC_NAMES, MCP_NAMES, OPENAI_NAMES, NameMap, NamePolicy, safe_name
from .openai import export_openai_tools, import_openai_tools

__all__ = [
    "ANTHROPIC_NAMES",
    "MCP_NAMES",
    "OPENAI_NAMES",
    "NameMap",
    "NamePolicy",
    "export_anthropic_tools",
    "export_mcp_tools",
    "export_openai_tools",
    "import_anthropic_tools",
    "import_mcp_tools",
    "import_openai_tools",
    "safe_name",
]
