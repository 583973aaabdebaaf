"""Shared fixture: the multi-database example (examples/multi_db/agent.py) as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "multi_db"


@pytest.fixture(scope="session")
def multi_db() -> ModuleType:
    """The example agent module (``build``, ``build_agent``, ``QUESTION``), loaded from its
    file the way ``python examples/multi_db/agent.py`` would load it."""
    sys.path.insert(0, str(EXAMPLE))
    try:
        spec = importlib.util.spec_from_file_location("multi_db_agent", EXAMPLE / "agent.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLE))
