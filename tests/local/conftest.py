"""Set OpenMP's passive wait before any test module imports llama.cpp (see models/local.py)."""

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "passive")


@pytest.fixture(scope="session")
def vocabulary() -> Iterator[Any]:
    """The 0.5B pack's tokenizer and chat template, without its weights (``vocab_only``)."""
    from llama_cpp import Llama

    from toolcycle.models.local.packs import pack_path

    llama = Llama(model_path=str(pack_path("qwen2.5-coder-0.5b")), vocab_only=True,
                  verbose=False)
    yield llama
    llama.close()
