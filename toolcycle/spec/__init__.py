"""Agent specs: an agent as data, in JSON or gram, bound to a tool library at load time.

- :mod:`.agent_spec` holds :class:`AgentSpec` and its JSON form;
- :mod:`.gram_format` reads and writes the same information as gram, over the parser wrapper in
  :mod:`.gram_syntax`; :mod:`.signatures` turns tool signatures into JSON Schema and back;
- :mod:`.binding` binds a spec's tool names to implementations (late binding);
- :mod:`.formats` imports and exports other tool formats (OpenAI, Anthropic, MCP, BFCL).
"""

from .agent_spec import AgentSpec, SpecError, model_string

__all__ = ["AgentSpec", "SpecError", "model_string"]
