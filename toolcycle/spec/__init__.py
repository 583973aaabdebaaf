"""Agent specs: an agent as data, in JSON or gram, bound to a tool library at load time.

- :mod:`.agent_spec` holds :class:`AgentSpec` and its JSON form;
- :mod:`.gram_format` reads and writes the same information as gram (``AgentSpec.from_gram``,
  ``load``/``dump`` of ``.gram`` files: it registers itself in ``agent_spec.FORMATS``, imported
  here so that the data module needs no import of the format module), over the parser wrapper in
  :mod:`.gram_syntax`; :mod:`.signatures` turns tool signatures into JSON Schema and back;
- :mod:`.binding` binds a spec's tool names to implementations (late binding);
- :mod:`.formats` imports and exports other tool formats (OpenAI, Anthropic, MCP, BFCL).
"""

from .._public_api import moved_name
from . import gram_format as gram_format  # registers .gram in agent_spec.FORMATS
from .agent_spec import AgentSpec, SpecError, model_string


def __getattr__(name: str) -> object:
    """The old module ``toolcycle/spec.py``'s helpers (``as_library``, ``Locator``...), now in
    :mod:`.agent_spec`: still found here, with a DeprecationWarning."""
    return moved_name(__name__, name)


__all__ = ["AgentSpec", "SpecError", "model_string"]
