"""The HTML trace viewer against hostile traces, in the real headless Chromium (rel-04).

A trace is untrusted: a trace file or a shared ``traces.db`` can be crafted, and any field can
hold any value, markup where an int is expected. Each corpus item below goes into *every*
field of a trace at once (strings and numbers, nested ones too: usage, tool calls, attempts,
termination, error, metadata), both the one-run page and the comparison page are opened in
Chromium, and the test asserts that:

* nothing injected ran: no ``window.__pwned``, no dialog, no CSP violation reported (a
  violation would mean markup got through the escaping and only the CSP stopped it);
* nothing injected was parsed: the page's DOM has exactly the elements and attribute names of
  the same trace holding a harmless value instead (so no ``<a href=javascript:>``, no
  ``<base>``, no ``style=`` waiting for a click or a later change);
* the text is shown as written (escaped once, not twice) and the page's own script still works;
* the CSP has no ``'unsafe-inline'``; the page's only ``<script>`` holds no trace data.

One browser for the module, a page per visit, so the file runs in seconds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, Route, sync_playwright
from tracing.sample_traces import weather_trace
from tracing.test_trace_browser import CHROMIUM, CHROMIUM_ARGS

from toolcycle.cli import main as cli_main
from toolcycle.messages import Usage
from toolcycle.tracing import html as viewer
from toolcycle.tracing.html import render_comparison_html, render_html
from toolcycle.tracing.stand_in import StandIn, StepOutcome
from toolcycle.tracing.store import TraceStore
from toolcycle.tracing.trace import AttemptRecord, Step, ToolCallRecord, Trace

PWN = "window.__pwned=1"
MARKUP = {  # each sets window.__pwned or opens a dialog if it ever runs
    "script-tag": f"<script>{PWN}</script>",
    "img-onerror": f'<img src=x onerror="{PWN}">',
    "svg-onload": f"<svg onload={PWN}>",
    "details-ontoggle": "<details open ontoggle=alert(1)>",
    "attribute-breakout-double": f'"><img src=x onerror={PWN}>',
    "attribute-breakout-single": f"'><img src=x onerror={PWN}>",
    "attribute-injection": f'" autofocus onfocus="{PWN}" x="',
    "javascript-url": f'<a href="javascript:{PWN}">open</a>',
    "bare-javascript-url": "javascript:alert(1)",
    "iframe-srcdoc": '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    "script-breakout": f"</script><script>{PWN}</script>",
    "comment-breakout": f"--><img src=x onerror={PWN}><!--",
    "comment-open": f"<!--<script>{PWN}</script>",
    "style-breakout": f"</style><img src=x onerror={PWN}>",
    "title-breakout": f"</title><img src=x onerror={PWN}>",
    "pre-breakout": f"</pre></details><img src=x onerror={PWN}>",
    "svg-title-breakout": f"</title></svg><svg onload={PWN}>",
    "css-injection": "<style>*{display:none}</style><b style=display:none>hidden</b>",
    "base-href": '<base href="javascript:alert(1)//">',
    "meta-refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "mxss-math": f"<math><mtext><table><mglyph><style><img src=x onerror={PWN}>",
    "already-escaped": f"&lt;img src=x onerror={PWN}&gt;&#60;script&#62;",
    "rtl-override": f"\u202e<img src=x onerror={PWN}>\u202c",
    "fullwidth-and-zero-width": f"\uff1cscript\uff1e{PWN}\uff1c/script\uff1e<scr\u200bipt>",
    "nul-byte": f"\x00<script>{PWN}</script>",
    "line-separators": f"\u2028\u2029</script><script>{PWN}</script>",
    "lone-surrogate": f"\ud800<img src=x onerror={PWN}>",
}
NOT_NUMBERS = {  # what a crafted trace file can put where a number is expected
    "nan": float("nan"),
    "infinity": float("inf"),
    "minus-infinity": float("-inf"),
    "huge-float": 1e308,
    "huge-int": 10**400,
    "negative": -12,
    "bool": True,
    "null": None,
    "list": [f"<img src=x onerror={PWN}>", 1],
    "dict": {f"<script>{PWN}</script>": f"<svg onload={PWN}>"},
}
CORPUS: dict[str, Any] = {**MARKUP, **NOT_NUMBERS}


def hostile_trace(value: Any, *, run_id: Any = None) -> Trace:
    """A trace with ``value`` in every field, after a normal first step (so the chart compares).

    Built from the dataclasses, not ``from_dict``: the viewer must hold whatever path made it.
    """
    def usage() -> Usage:
        return Usage(**{f.name: value for f in fields(Usage)})

    args: dict[Any, Any] = {"arg": value}
    if isinstance(value, str):
        args[value] = "key"
    approval = {"decision": value, "by": value, "reason": value}
    calls = [
        ToolCallRecord(value, value, args, value, value, result=value, error=value,
                       duration_ms=value, kind=value, approval=approval, media=value,
                       error_type=value,
                       sampling=(Step(value, value, thought=value, model=value, usage=usage(),
                                      model_ms=value), value),
                       stand_in=StandIn(value, value, ok=value, alternative=value, steps=(
                           StepOutcome(value, args, value, value, value), value)),
                       run=Trace(run_id=value, agent_name=value, user_prompt=value,
                                 status=value, output=value)),
        ToolCallRecord(value, value, args, value, value, result=value, duration_ms=value,
                       kind=value, approval=value,
                       media=[{"media_type": value, "bytes": value, "sha256": value,
                               "name": value}, value]),
    ]
    key = value if isinstance(value, str) else "c"
    pauses: list[Any] = [
        {"attempt": value, "iteration": value, "paused_at": value, "resumed_at": value,
         "pending": [{"call_id": key, "tool_name": value, "arguments": args,
                      "requires_approval": value}, {"call_id": value, "tool_name": value},
                     value],
         "answers": {key: approval}},
        {"attempt": value, "iteration": value, "pending": value, "answers": value},
    ]
    hostile = Step(iteration=value, attempt=value, thought=value, thinking=value,
                   tool_calls=calls, usage=usage(), model_ms=value, tools_ms=value,
                   started_at=value, forced=value, finish_reason=value, repairs=[value],
                   model=value, tool_choice=value, asked_again=(value,))
    first = weather_trace().steps[0]
    return Trace(
        run_id=value if run_id is None else run_id, agent_name=value, model_name=value,
        user_prompt=value, started_at=value, ended_at=value, steps=[first, hostile],
        attempts=[AttemptRecord(attempt=value, success=value, errors=[value], validator=value,
                                code=value),
                  AttemptRecord(attempt=value, errors=value)],
        usage=usage(), status=value,
        termination={"reason": value, "action": value, "limit": value, "detail": value},
        output=value, error={"code": value, "message": value}, strategies_shown=[value],
        tools_offered=[value, value],
        metadata={"cost_usd": value, "note": value}, pauses=pauses,
        loop_guard={"nudge": value, "refuse": value, "stop": value},
        guardrails=[{"kind": value, "name": value, "reason": value, "info": value,
                     "call_id": value, "halted": value}, value],
        handoffs=[{"from": value, "to": value, "attempt": value, "iteration": value}, value],
        compactions=[{"attempt": value, "iteration": value, "step": value,
                      "stubbed_results": value, "summarised_messages": value,
                      "kept_from": value, "tokens_before": value, "tokens_after": value,
                      "tokens_saved": value, "budget": value}, value],
        mode_fallbacks=[{"attempt": value, "from": value, "to": value}, value],
    )


def hostile_pair(value: Any) -> tuple[Trace, Trace]:
    """Two hostile traces for the comparison page; B's termination, error and output are the
    value itself rather than the mappings the viewer expects."""
    b = hostile_trace(value, run_id=f"b-{value!r}")
    b.termination, b.error, b.output = value, value, {"answer": value}
    return hostile_trace(value), b


def harmless(value: Any) -> Any:
    """``value`` with every string replaced by "x": the same shape, nothing to inject."""
    if isinstance(value, str):
        return "x"
    if isinstance(value, list):
        return [harmless(v) for v in value]
    if isinstance(value, dict):
        return {harmless(k): harmless(v) for k, v in value.items()}
    return value


def pages(value: Any) -> dict[str, str]:
    return {"run": render_html(hostile_trace(value)),
            "compare": render_comparison_html(*hostile_pair(value))}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
        )
        # CDP-injected, so not subject to the page's CSP: records what the policy blocked
        context.add_init_script(
            "window.__violations=[];document.addEventListener('securitypolicyviolation',"
            "e=>window.__violations.push(e.violatedDirective+' '+e.blockedURI+' '+e.sample))"
        )
        yield context
        context.close()


class Visit:
    """A browser tab opening pages from ``file://``: dialogs, requests, errors, the DOM built."""

    SKELETON = ("() => [...document.querySelectorAll('*')].map(e => e.tagName + '[' +"
                " [...e.attributes].map(a => a.name).sort().join() + ']')")

    def __init__(self, context: BrowserContext) -> None:
        self.dialogs: list[str] = []
        self.network: list[str] = []
        self.errors: list[str] = []
        self.page: Page = context.new_page()
        self.page.on("dialog", self._dialog)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route("**/*", self._route)

    def open(self, path: Path, text: str) -> Page:
        path.write_text(text, encoding="utf-8")  # strict: the page must be valid UTF-8
        self.dialogs.clear(), self.network.clear(), self.errors.clear()
        self.page.goto(path.as_uri())
        self.page.evaluate("() => new Promise(r => setTimeout(r, 30))")  # late events fire
        return self.page

    def _route(self, route: Route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.network.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def skeleton(self) -> list[str]:
        result: list[str] = self.page.evaluate(self.SKELETON)
        return result

    def assert_nothing_ran(self) -> None:
        assert self.page.evaluate("() => window.__pwned") is None
        assert self.dialogs == []
        assert self.page.evaluate("() => window.__violations") == []
        assert self.network == [] and self.errors == []
        assert self.page.url.startswith("file://")  # no refresh, no navigation
        csp = self.page.locator('meta[http-equiv="Content-Security-Policy"]')
        assert csp.count() == 1
        policy = csp.get_attribute("content") or ""
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
        assert self.page.evaluate("() => [...document.scripts].map(s => s.text)") == [
            viewer._SCRIPT
        ]


@pytest.fixture
def visit(browser: BrowserContext) -> Iterator[Visit]:
    tab = Visit(browser)
    yield tab
    tab.page.close()


_skeletons: dict[tuple[str, str], list[str]] = {}


def expected_skeleton(visit: Visit, tmp_path: Path, value: Any, kind: str) -> list[str]:
    """The DOM of the same page holding harmless text (opened once per shape, then cached)."""
    key = (repr(harmless(value)), kind)
    if key not in _skeletons:
        visit.open(tmp_path / f"harmless-{kind}.html", pages(harmless(value))[kind])
        _skeletons[key] = visit.skeleton()
    return _skeletons[key]


@pytest.mark.parametrize("value", list(CORPUS.values()), ids=list(CORPUS))
def test_hostile_value_in_every_field_stays_text(visit: Visit, tmp_path: Path,
                                                 value: Any) -> None:
    for kind, text in pages(value).items():
        expected = expected_skeleton(visit, tmp_path, value, kind)
        page = visit.open(tmp_path / f"{kind}.html", text)
        visit.assert_nothing_ran()
        assert visit.skeleton() == expected
        if isinstance(value, str):  # shown as written: escaped once, not twice
            shown = value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
            assert page.locator(".thought").last.text_content() == shown
            assert page.locator("details.call.error pre.error").last.text_content() == shown
            # the steps a stand-in made for the call (their tool, arguments, status, text)
            assert shown in (page.locator("pre.stand-in").last.text_content() or "")
        page.locator("button[data-target]").first.dispatch_event("click")  # its script works
        assert page.locator("details.call[open]").count() == page.locator("details.call").count()


def test_every_field_of_a_trace_is_in_the_hostile_trace() -> None:
    """A field added to the trace later must join the corpus: none is left at its default."""
    trace, marker = hostile_trace("MARK"), "MARK"
    step, call, attempt = trace.steps[1], trace.steps[1].tool_calls[0], trace.attempts[0]
    for obj in (trace, step, call, attempt, trace.usage, step.usage):
        for f in fields(obj):
            held = getattr(obj, f.name)
            assert held == marker or marker in json.dumps(held, default=str), (type(obj), f.name)


def test_normal_page_renders_and_its_script_works(visit: Visit, tmp_path: Path) -> None:
    trace = weather_trace()
    page = visit.open(tmp_path / "run.html", render_html(trace))
    visit.assert_nothing_ran()
    assert page.locator("#chart svg").is_visible()
    assert page.locator("#chart g.bar").count() == len(trace.steps)
    legend = page.locator(".legend i.in").evaluate("e => getComputedStyle(e).backgroundColor")
    assert legend == "rgb(9, 105, 218)"  # the hashed stylesheet applies
    calls, failed = page.locator("details.call"), page.locator("details.call.error")
    page.get_by_role("button", name="Expand errors").click()
    assert page.locator("details.call[open]").count() == failed.count() == 1
    page.get_by_role("button", name="Expand all calls").click()
    assert page.locator("details.call[open]").count() == calls.count() == len(trace.tool_calls)
    page.get_by_role("button", name="Collapse all").click()
    assert page.locator("details.call[open]").count() == 0
    assert page.evaluate("() => window.__violations") == [] and visit.errors == []


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "without-csp"])
def test_the_csp_alone_stops_markup_that_escaped(visit: Visit, tmp_path: Path,
                                                 csp: bool) -> None:
    """The second wall, and the detector's control: raw markup slipped into a real page runs
    once the policy is removed, and is blocked (and reported) while it is there."""
    text = render_html(weather_trace()).replace(
        "<main>", f"<main><img src=x onerror={PWN}><script>{PWN}</script>"
        "<b style='color:red' id=styled>styled</b>", 1)
    if not csp:
        text = text.replace("http-equiv=\"Content-Security-Policy\"", "name=\"no-policy\"", 1)
    page = visit.open(tmp_path / "tampered.html", text)
    pwned = page.evaluate("() => window.__pwned")
    color = page.locator("#styled").evaluate("e => getComputedStyle(e).color")
    if csp:
        assert pwned is None and color != "rgb(255, 0, 0)"
        assert len(page.evaluate("() => window.__violations")) >= 3
    else:
        assert pwned == 1 and color == "rgb(255, 0, 0)"


def test_crafted_traces_db_through_the_cli(visit: Visit, tmp_path: Path) -> None:
    """The issue's path: a shared traces.db whose numbers are markup, `toolcycle trace html`."""
    payload = MARKUP["img-onerror"]
    db = tmp_path / "shared-traces.db"
    with TraceStore(db) as store:
        store.save(weather_trace("r1"))
    conn = sqlite3.connect(db)
    for (position, data) in conn.execute("SELECT position, data FROM steps").fetchall():
        step = json.loads(data)
        for key in ("iteration", "attempt", "model_ms", "tools_ms", "started_at"):
            step[key] = payload
        for call in step["tool_calls"]:
            call.update(iteration=payload, attempt=payload, duration_ms=payload)
        conn.execute("UPDATE steps SET data = ? WHERE position = ?", (json.dumps(step), position))
    (header,) = conn.execute("SELECT header FROM runs").fetchone()
    header = {**json.loads(header), "started_at": payload, "ended_at": payload}
    conn.execute("UPDATE runs SET header = ?", (json.dumps(header),))
    conn.commit()
    conn.close()
    out = tmp_path / "run.html"
    assert cli_main(["trace", "html", "r1", "--db", str(db), "-o", str(out)]) == 0
    page = visit.open(out, out.read_text(encoding="utf-8"))
    visit.assert_nothing_ran()
    assert page.locator("article.step b").first.text_content() == f"Iteration {payload}"
