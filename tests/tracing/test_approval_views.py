"""Approvals, denials and pauses in the trace views: ``Trace.render``, ``toolcycle trace show``
and the HTML viewer (checked in Chromium under its strict CSP), with hostile text escaped."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext

from toolcycle import Agent, ApprovalRequest, Approve, Deny, RunContext, tool
from toolcycle.cli import main
from toolcycle.testing import ScriptedModel, call
from toolcycle.tracing.html import render_html
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import Trace

from .test_trace_browser import ARTIFACTS, Visit, browser

__all__ = ["browser"]

HOSTILE = "<script>alert(1)</script>\x1b[31m"


def resumed_trace(store: TraceStore | None = None) -> Trace:
    """A run with a call denied by the policy, then a pause a person answered."""

    @tool(requires_approval=True)
    def wipe(disk: str) -> str:
        """Wipe a disk.

        Args:
            disk: Which.
        """
        return f"wiped {disk}"

    def policy(request: ApprovalRequest, ctx: RunContext[Any]) -> Any:
        from toolcycle import Defer

        return Deny(f"no {HOSTILE}") if request.arguments["disk"] == "sda" else (
            Defer() if request.arguments["disk"] == "sdb" else Approve())

    model = ScriptedModel([[call("wipe", {"disk": "sda"}), call("wipe", {"disk": "sdb"})],
                           "finished"])
    agent = Agent(model, tools=[wipe], approval=policy, trace_store=store or False)
    paused = agent.run_sync("wipe the disks")
    final = agent.resume_sync(paused.snapshot or {},
                              {paused.pending_approvals[0].call_id: f"why {HOSTILE}"})
    return final.trace


def test_render_lists_decisions_and_pauses() -> None:
    text = resumed_trace().render()
    assert "approval: denied by policy: no <script>" in text
    assert "approval: denied by person: why <script>" in text
    assert "-- paused at iteration 1 for approval of wipe [call_2] (resumed)" in text
    assert "\x1b" not in text  # terminal controls shown as escapes


def test_trace_show_prints_the_pause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "traces.db"
    with TraceStore(db) as store:
        trace = resumed_trace(store)
    assert main(["trace", "show", trace.run_id, "--db", str(db), "--no-color",
                 "--width", "200"]) == 0
    out = capsys.readouterr().out
    assert "⏸ paused at iteration 1 for approval · resumed after" in out
    assert "wipe [call_2] denied: why <script>alert(1)</script>\\x1b[31m" in out
    assert "⚑ denied by policy" in out and "⚑ denied by person" in out
    assert "\x1b" not in out


def test_html_viewer_shows_approvals_and_pauses(browser: BrowserContext,
                                                tmp_path: Path) -> None:
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        trace = pool.submit(resumed_trace).result()
    page_html = render_html(trace)
    assert "<script>alert" not in page_html  # escaped, never markup
    path = tmp_path / "approval.html"
    path.write_text(page_html, encoding="utf-8")
    visit = Visit(browser, path)
    page = visit.page
    pause = page.locator("div.pause")
    assert pause.is_visible()
    assert "Paused for approval" in pause.inner_text() and "resumed after" in pause.inner_text()
    assert "why <script>alert(1)</script>" in pause.locator(".reason").inner_text()
    badges = page.locator("details.call .badge.approval")
    assert [badges.nth(i).inner_text() for i in range(badges.count())] == [
        "denied by policy", "denied by person"]
    colour = badges.first.evaluate("e => getComputedStyle(e).color")
    assert colour == "rgb(154, 103, 0)"  # the stylesheet applied under the CSP
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trace-viewer-approval.png"), full_page=True)
    assert visit.network == [] and visit.errors == []
