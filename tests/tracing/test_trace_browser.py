"""The HTML trace viewer in a real browser: Debian's Chromium, headless, driven by Playwright.

``make test`` installs the ``chromium`` package when /usr/bin/chromium is missing; we never
download a browser (no ``playwright install``). The test opens generated pages from ``file://``
with every network request blocked and counted, expands a failed tool call, checks that its
error and the chart are visible, and saves screenshots under ``test-artifacts/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, Route, sync_playwright

from toolcycle import Agent, tool
from toolcycle.models.scripted import ScriptedModel, call
from toolcycle.tracing.html import render_comparison_html, render_html
from toolcycle.tracing.redaction import Redactor
from toolcycle.tracing.store import TraceStore

from .sample_traces import failed_trace, weather_trace

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    assert CHROMIUM.exists(), "Debian's chromium is missing: `make test` installs it (apt-get)"
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data dir
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


class Visit:
    """Opens a page with the network forbidden, recording requests and console errors."""

    def __init__(self, context: BrowserContext, path: Path) -> None:
        self.network: list[str] = []
        self.errors: list[str] = []
        self.page: Page = context.new_page()
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.as_uri())

    def _route(self, route: Route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.network.append(route.request.url)
            route.abort()


def test_failed_tool_call_expands_and_chart_is_visible(browser: BrowserContext,
                                                       tmp_path: Path) -> None:
    trace = weather_trace()
    page_path = tmp_path / "run.html"
    page_path.write_text(render_html(trace, redactor=Redactor()), encoding="utf-8")
    visit = Visit(browser, page_path)
    page = visit.page

    failed = page.locator("details.call.error").first
    error_text = failed.locator("pre.error")
    assert failed.get_attribute("open") is None
    assert not error_text.is_visible()  # collapsed until clicked
    failed.locator("summary").click()
    assert error_text.is_visible()
    assert "days: 9 is greater than the maximum of 7" in error_text.inner_text()
    assert '"days": 9' in failed.locator("pre").first.inner_text()  # its arguments
    # the error is highlighted: red text on a tinted summary
    color = failed.locator("summary").evaluate("e => getComputedStyle(e).color")
    assert color == "rgb(207, 34, 46)"

    chart = page.locator("#chart svg")
    assert chart.is_visible()
    box = chart.bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 120
    assert page.locator("#chart g.bar").count() == len(trace.steps)
    assert page.locator("#chart .error-mark").count() == 1
    assert page.locator("#termination").inner_text().startswith("Termination: completed")
    assert "[REDACTED]" in page.locator(".panel pre").first.inner_text()

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace-viewer.png"), full_page=True)

    page.get_by_role("button", name="Expand all calls").click()  # the inline script runs
    assert page.locator("details.call[open]").count() == len(trace.tool_calls)
    page.get_by_role("button", name="Collapse all").click()
    assert page.locator("details.call[open]").count() == 0
    assert visit.network == []  # self-contained: no request left the page
    assert visit.errors == []  # no script or CSP errors


def test_comparison_page_and_a_page_from_a_real_recorded_run(browser: BrowserContext,
                                                             tmp_path: Path) -> None:
    @tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    store = TraceStore(tmp_path / "t.db")
    model = ScriptedModel([call("divide", {"a": 1, "b": 0}), call("divide", {"a": 1, "b": 4}),
                           "0.25"])
    agent = Agent(model, tools=[divide], name="calc", trace_store=store)
    with ThreadPoolExecutor(1) as pool:  # sync Playwright owns this thread's event loop
        result = pool.submit(agent.run_sync, "1/4?").result()
    recorded = store.get(result.run_id)
    assert recorded is not None

    real_path = tmp_path / "real.html"
    real_path.write_text(render_html(recorded), encoding="utf-8")
    visit = Visit(browser, real_path)
    page = visit.page
    failed = page.locator("details.call.error")
    assert failed.count() == 1
    failed.locator("summary").click()
    assert "division by zero" in failed.locator("pre.error").inner_text()
    assert page.locator("#chart g.bar").count() == 3
    assert visit.network == [] and visit.errors == []

    cmp_path = tmp_path / "compare.html"
    page_text = render_comparison_html(weather_trace(), failed_trace(), redactor=Redactor())
    cmp_path.write_text(page_text, encoding="utf-8")
    visit = Visit(browser, cmp_path)
    page = visit.page
    assert page.locator("#run-a #chart svg").is_visible()
    assert page.locator("#run-b #chart svg").is_visible()
    assert page.locator("#comparison").inner_text().count("\n") >= 9
    page.locator("#run-b details.call.error summary").first.click()
    assert page.locator("#run-b details.call.error pre.error").first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "trace-compare.png"), full_page=True)
    assert visit.network == [] and visit.errors == []
