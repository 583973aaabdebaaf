"""A tool and a model for ``toolcycle run`` in tests/security/test_terminal.py.

Named on the command line (``--tools tests/security/terminal_fixtures.py``,
``--model python:tests.security.terminal_fixtures:hostile_model``), so they read the hostile
payload of the current test from the environment instead of taking it as an argument (written
with ``unicode_escape``: an environment variable cannot hold a NUL byte).
"""

from __future__ import annotations

import codecs
import os

from toolcycle.models.scripted import ScriptedModel, call

ENV = "TOOLCYCLE_TEST_HOSTILE_PAYLOAD"


def payload() -> str:
    """The current test's hostile text."""
    return codecs.decode(os.environ[ENV], "unicode_escape")


def fetch_page(url: str) -> str:
    """Fetch a web page (its text is the hostile payload)."""
    return f"page {url}: {payload()}"


def hostile_model() -> ScriptedModel:
    """Calls fetch_page with the payload as its argument, then answers with the payload."""
    text = payload()
    return ScriptedModel([call("fetch_page", {"url": text}), f"answer {text}"])
