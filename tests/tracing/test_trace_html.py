"""The HTML page without a browser: escaping, self-containment, redaction, empty runs."""

from __future__ import annotations

import re

from toolcycle.tracing.html import render_comparison_html, render_html
from toolcycle.tracing.redaction import REDACTED, Redactor
from toolcycle.tracing.trace import Trace

from .sample_traces import failed_trace, weather_trace


def test_model_and_tool_text_is_escaped() -> None:
    trace = weather_trace()
    trace.steps[0].thought = "<script>alert('x')</script>"
    trace.steps[0].tool_calls[0].result = '<img src="https://evil.example/x.png">'
    page = render_html(trace)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert '<img src="https://evil.example' not in page


def test_page_references_nothing_outside_itself() -> None:
    for page in (render_html(weather_trace()),
                 render_comparison_html(weather_trace(), failed_trace())):
        urls = set(re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)""", page))
        assert urls == set()
        assert "default-src 'none'" in page  # the CSP forbids loading anything


def test_redactor_option_scrubs_a_trace_taken_from_a_result() -> None:
    page = render_html(weather_trace(), redactor=Redactor())
    assert "sk-proj-" not in page and REDACTED in page
    assert "sk-proj-" in render_html(weather_trace())  # only when asked: the input is data


def test_an_empty_running_trace_renders() -> None:
    page = render_html(Trace("r0", agent_name="new"))
    assert "No iterations were recorded." in page
    assert 'data-status="running"' in page
    assert "no end recorded" in page


def test_the_styles_from_the_package_file_are_inline_and_shipped() -> None:
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    css = (root / "toolcycle" / "tracing" / "viewer.css").read_text(encoding="utf-8")
    for page in (render_html(weather_trace()),
                 render_comparison_html(weather_trace(), failed_trace())):
        assert f"<style>{css}</style>" in page
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert "**/*.css" in data["tool"]["setuptools"]["package-data"]["toolcycle"]


def test_a_limit_is_shown_as_a_stop_not_a_failed_validation_in_every_view() -> None:
    """new-06: no validator ran when a limit stopped the attempt."""
    import io

    from rich.console import Console

    from toolcycle import Agent, AgentError, Limits
    from toolcycle.cli.trace import print_timeline
    from toolcycle.models.scripted import ScriptedModel, call

    def lookup(order_id: str) -> str:
        """Look up an order."""
        raise LookupError(f"order {order_id} not found")

    agent = Agent(ScriptedModel([call("lookup", {"order_id": "O-1"})] * 3), "x", [lookup],
                  limits=Limits(max_iterations=2, on_limit="error"))
    try:
        agent.run_sync("Where is order O-1?")
    except AgentError as error:
        assert error.result is not None
        trace = error.result.trace
    buffer = io.StringIO()
    print_timeline(trace, Console(file=buffer, width=200, no_color=True))
    views = {"render": trace.render(), "show": buffer.getvalue(), "html": render_html(trace)}
    for name, text in views.items():
        assert "failed validation" not in text, name
        assert "stopped (MAX_ITERATIONS)" in text, name
    assert 'class="validation stopped"' in views["html"]
