"""Self-contained HTML pages for a trace, and for two traces side by side.

A developer whose agent misbehaved wants to *look*: which iteration went wrong, what the model
thought, which tool failed, where the tokens went. One static file answers that and can be
attached to a bug report: no network, no CDN, no build step. Styles (kept in ``viewer.css``
beside this module, package data) and the small script are written inline into each page; the
chart is inline SVG drawn here, so the page works from ``file://`` and offline.
Tool calls are native ``<details>`` elements, so they expand without any script at all.

A trace is untrusted input (a trace file or a shared ``traces.db`` can be crafted, and any
field can hold any JSON value: markup where an int is expected). So every recorded value goes
through ``values.esc`` (escaped, whatever its type) and numbers are computed with ``values.num``
(a finite float, else 0). The Content-Security-Policy allows exactly the page's own style and
script by their sha256 (no ``'unsafe-inline'``): were something to slip past the escaping, an
injected handler or ``<script>`` still would not run. No trace data is ever written inside the
``<script>`` element (the toolbar's script reads only ``data-*`` attributes this module
writes), so there is no JSON-in-script context to break out of.
"""

from __future__ import annotations

from base64 import b64encode
from functools import cache
from hashlib import sha256
from importlib.resources import files

from .html_approval import pause_block
from .html_calls import call_block
from .html_status import status_badge, termination_panel
from .redaction import Redactor
from .trace import Step, Trace, offered_text
from .values import (
    amount,
    as_dict,
    esc,
    format_ms,
    format_time,
    media_lines,
    money,
    nice_max,
    num,
    recorded_cost,
    short,
    tally,
    to_json,
)

__all__ = ["format_ms", "format_time", "render_chart", "render_comparison_html", "render_html"]


@cache
def _css() -> str:
    """The page styles, read once from the package."""
    return files(__package__).joinpath("viewer.css").read_text(encoding="utf-8")


_SCRIPT = """
document.addEventListener("DOMContentLoaded",()=>{
document.querySelectorAll("button[data-target]").forEach(b=>b.addEventListener("click",()=>{
document.querySelectorAll(b.dataset.target).forEach(d=>{d.open=b.dataset.open==="1"});}));});
"""


def _hash(text: str) -> str:
    """A CSP source for one inline element: sha256 of its exact text, as the browser hashes it."""
    return f"'sha256-{b64encode(sha256(text.encode()).digest()).decode()}'"


@cache
def _csp() -> str:
    """Nothing may load; only this page's own ``<style>`` and ``<script>`` may apply or run."""
    return (
        f"default-src 'none'; style-src {_hash(_css())}; script-src {_hash(_SCRIPT)}; "
        "base-uri 'none'; form-action 'none'"
    )


def render_html(trace: Trace, *, title: str | None = None, redactor: Redactor | None = None) -> str:
    """One page for one run: summary, chart, timeline of attempts/iterations, output or error.

    Traces read from a :class:`~toolcycle.tracing.store.TraceStore` are already redacted; pass a
    ``redactor`` for a trace taken straight from ``result.trace``.
    """
    if redactor is not None:
        trace = Trace.from_dict(redactor.data(trace.to_dict()))
    heading = title or f"{trace.agent_name} · run {trace.run_id}"
    body = [
        _header(trace, heading),
        _summary_cards(trace),
        termination_panel(trace),
        _prompt_panel(trace),
        "<h2>Tokens and latency per iteration</h2>",
        render_chart(trace),
        "<h2>Timeline</h2>",
        _toolbar(),
        _timeline(trace),
        _outcome_panel(trace),
    ]
    return _page(heading, "\n".join(body))


def render_comparison_html(
    a: Trace, b: Trace, *, title: str | None = None, redactor: Redactor | None = None
) -> str:
    """Two runs side by side (the A/B case: same task, two agent specs or models)."""
    if redactor is not None:
        a = Trace.from_dict(redactor.data(a.to_dict()))
        b = Trace.from_dict(redactor.data(b.to_dict()))
    heading = title or f"Compare {a.run_id} (A) with {b.run_id} (B)"
    same_prompt = a.user_prompt == b.user_prompt
    columns = []
    scale = _chart_scale([a, b])
    for label, trace in (("A", a), ("B", b)):
        columns.append(
            f'<section id="run-{label.lower()}"><h2>{label}: {esc(trace.agent_name)} '
            f'{status_badge(trace.status)}</h2><div class="sub">{esc(trace.run_id)} · '
            f"{esc(trace.model_name or 'model unknown')}</div>"
            f"{'' if same_prompt else _prompt_panel(trace)}{termination_panel(trace)}"
            f"{render_chart(trace, compact=True, scale=scale)}"
            f"{_timeline(trace)}{_outcome_panel(trace)}</section>"
        )
    body = [
        f"<h1>{esc(heading)}</h1>",
        _prompt_panel(a) if same_prompt else "",
        "<h2>Side by side</h2>",
        _comparison_table(a, b),
        _toolbar(),
        f'<div class="columns">{"".join(columns)}</div>',
    ]
    return _page(heading, "\n".join(body))


# -- page parts -------------------------------------------------------------------------------


def _page(title: str, body: str) -> str:
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">'
        f"<title>{esc(title)}</title><style>{_css()}</style><script>{_SCRIPT}</script>"
        f"</head><body><main>\n{body}\n<footer>Generated by toolcycle · "
        "self-contained page, no network access.</footer></main></body></html>\n"
    )
    # a lone surrogate (valid in JSON text, not in UTF-8) would make the page unwritable
    return page.encode("utf-8", "replace").decode("utf-8")


def _header(trace: Trace, heading: str) -> str:
    started = format_time(trace.started_at)
    duration = format_ms(_duration_ms(trace)) if trace.ended_at is not None else "no end recorded"
    return (
        f"<h1>{esc(heading)} {status_badge(trace.status)}</h1>"
        f'<div class="sub">model {esc(trace.model_name or "unknown")} · started {esc(started)}'
        f" · {esc(duration)}</div>"
    )


def _summary_cards(trace: Trace) -> str:
    u = trace.usage
    errors = sum(1 for c in trace.tool_calls if c.error is not None)
    attempts = max((num(s.attempt) for s in trace.steps), default=len(trace.attempts) or 1)
    cards = [
        ("iterations", str(trace.iterations)),
        ("attempts", tally(attempts)),
        ("tool calls", str(len(trace.tool_calls))),
        ("tool errors", str(errors)),
        ("input tokens", tally(u.input_tokens)),
        ("output tokens", tally(u.output_tokens)),
        ("cache read / write", f"{tally(u.cache_read_tokens)} / {tally(u.cache_write_tokens)}"),
        ("cost", _cost(trace)),
    ]
    items = "".join(
        f'<div class="card{" err" if k == "tool errors" and errors else ""}"><b>{esc(v)}</b>'
        f"<span>{k}</span></div>"
        for k, v in cards
    )
    return f'<div class="cards" id="summary">{items}</div>'


def _prompt_panel(trace: Trace) -> str:
    offered = "" if trace.tools_offered is None else (
        f'<div class="panel"><b>Tools offered (tool selection)</b>'
        f'<pre>{esc(offered_text(trace.tools_offered))}</pre></div>')
    offered = _media_panel(trace) + offered
    if not trace.user_prompt:
        return offered
    return (f'<div class="panel"><b>User prompt</b><pre>{esc(trace.user_prompt)}</pre></div>'
            + offered)


def _media_panel(trace: Trace) -> str:
    """The images, documents and audio the run was given (docs/media.md)."""
    lines = media_lines(trace.metadata.get("media") if isinstance(trace.metadata, dict)
                        else None)
    if not lines:
        return ""
    return f'<div class="panel"><b>Media given</b><pre>{esc(chr(10).join(lines))}</pre></div>'


def _toolbar() -> str:
    """Buttons the page's script wires up by their ``data-*`` (no inline handlers to allow)."""
    buttons = (("1", "details.call", "Expand all calls"), ("0", "details.call", "Collapse all"),
               ("1", "details.call.error", "Expand errors"))
    return '<div class="toolbar">' + "".join(
        f'<button type="button" data-open="{o}" data-target="{t}">{label}</button>'
        for o, t, label in buttons
    ) + "</div>"


def _timeline(trace: Trace, depth: int = 0) -> str:
    """The steps of a run; ``depth``: how deep it is nested under calls (html_calls)."""
    out: list[str] = ['<div class="timeline">']
    current_attempt: object = None
    for step in trace.steps:
        if step.attempt != current_attempt:
            if current_attempt is not None:
                out.append(_validation_block(trace, current_attempt))
            current_attempt = step.attempt
            out.append(f'<div class="attempt">Attempt {esc(step.attempt)}</div>')
        out.append(_step_block(step, trace.model_name, depth))
        if trace.pauses:
            out.extend(pause_block(p) for p in trace.pauses
                       if p.get("attempt") == step.attempt and p.get("iteration") == step.iteration)
    if current_attempt is not None:
        out.append(_validation_block(trace, current_attempt))
    if not trace.steps:
        out.append('<div class="panel">No iterations were recorded.</div>')
    out.append("</div>")
    return "".join(out)


def _step_block(step: Step, trace_model: str | None = None, depth: int = 0) -> str:
    errors = sum(1 for c in step.tool_calls if c.error is not None)
    classes = "step" + (" has-error" if errors else "") + (" forced" if step.forced else "")
    badges = []
    if step.forced:
        badges.append('<span class="badge warn">forced final answer</span>')
    if step.choice_shown:
        badges.append(f'<span class="badge">tool_choice {esc(step.choice_shown)}</span>')
    if errors:
        badges.append(f'<span class="badge error">{errors} tool error{"s" * (errors > 1)}</span>')
    if step.finish_reason:
        badges.append(f'<span class="badge">{esc(step.finish_reason)}</span>')
    if step.model and step.model != trace_model:  # a FallbackModel's answering model
        badges.append(f'<span class="badge">answered by {esc(step.model)}</span>')
    meta = (
        f"model {format_ms(step.model_ms)} · tools {format_ms(step.tools_ms)} · tokens in "
        f"{tally(step.usage.input_tokens)} / out {tally(step.usage.output_tokens)} · cost "
        f"{money(recorded_cost(step.usage.cost, None))}"
    )
    parts = [
        f'<article class="{classes}" id="step-{esc(step.attempt)}-{esc(step.iteration)}"><header>'
        f"<b>Iteration {esc(step.iteration)}</b>{''.join(badges)}"
        f'<span class="meta">{esc(meta)}</span></header>'
    ]
    if step.thinking:
        thinking = str(step.thinking)
        parts.append(
            f'<details class="thinking"><summary>thinking ({len(thinking):,} chars)'
            f"</summary><pre>{esc(thinking)}</pre></details>"
        )
    parts += [f'<details class="thinking"><summary>asked again after this reply</summary>'
              f"<pre>{esc(earlier)}</pre></details>" for earlier in step.asked_again]
    if step.thought:
        parts.append(f'<div class="thought">{esc(step.thought)}</div>')
    parts.extend(call_block(call, _timeline, depth) for call in step.tool_calls)
    parts.append("</article>")
    return "".join(parts)


def _validation_block(trace: Trace, attempt: object) -> str:
    blocks = []
    for record in trace.attempts:
        if record.attempt == attempt and record.errors:
            errors = record.errors if isinstance(record.errors, list) else [record.errors]
            items = "".join(f"<li>{esc(e)}</li>" for e in errors)
            # A limit or a model error is no validation failure: shown as a stop, in red.
            kind = "validation" if record.validation_failed else "validation stopped"
            blocks.append(
                f'<div class="{kind}"><b>Attempt {esc(attempt)} {esc(record.outcome)}</b>'
                f"<ul>{items}</ul></div>"
            )
    return "".join(blocks)


def _outcome_panel(trace: Trace) -> str:
    parts = []
    if trace.error:
        error = as_dict(trace.error, "message")
        code, message = esc(error.get("code", "error")), esc(error.get("message", error))
        parts.append(
            f'<div class="panel error" id="run-error"><b>Run failed: {code}</b>'
            f"<pre>{message}</pre></div>"
        )
    if trace.output is not None:
        text = trace.output if isinstance(trace.output, str) else to_json(trace.output)
        parts.append(f'<div class="panel" id="output"><b>Output</b><pre>{esc(text)}</pre></div>')
    return "".join(parts)


def _comparison_table(a: Trace, b: Trace) -> str:
    def errors(t: Trace) -> int:
        return sum(1 for c in t.tool_calls if c.error is not None)

    rows: list[tuple[str, float, float, bool]] = [
        ("iterations", len(a.steps), len(b.steps), True),
        ("tool calls", len(a.tool_calls), len(b.tool_calls), True),
        ("tool errors", errors(a), errors(b), True),
        ("input tokens", num(a.usage.input_tokens), num(b.usage.input_tokens), True),
        ("output tokens", num(a.usage.output_tokens), num(b.usage.output_tokens), True),
        ("duration (ms)", _duration_ms(a), _duration_ms(b), True),
    ]
    html = [
        '<table class="cmp" id="comparison"><tr><th></th><th>A</th><th>B</th><th>B − A</th></tr>',
        f"<tr><td>status</td><td>{status_badge(a.status)}</td><td>{status_badge(b.status)}"
        "</td><td></td></tr>",
        f"<tr><td>termination</td><td>{esc(_reason(a))}</td><td>{esc(_reason(b))}</td>"
        "<td></td></tr>",
        f"<tr><td>model</td><td>{esc(a.model_name)}</td><td>{esc(b.model_name)}</td>"
        "<td></td></tr>",
    ]
    for name, x, y, lower_is_better in rows:
        delta = y - x
        cls = "" if delta == 0 else ("better" if (delta < 0) == lower_is_better else "worse")
        html.append(
            f'<tr><td>{name}</td><td class="num">{x:,.0f}</td><td class="num">{y:,.0f}</td>'
            f'<td class="num {cls}">{delta:+,.0f}</td></tr>'
        )
    html.append(
        f'<tr><td>cost</td><td class="num">{_cost(a)}</td><td class="num">{_cost(b)}</td>'
        "<td></td></tr></table>"
    )
    return "".join(html)


# -- chart ------------------------------------------------------------------------------------


def render_chart(
    trace: Trace, *, compact: bool = False, scale: tuple[float, float] | None = None
) -> str:
    """Inline SVG: stacked input/output token bars and a latency line, one slot per iteration.

    Iterations with a failed tool call get a red marker; a dashed line separates attempts.
    ``scale`` (max tokens, max ms) lets two charts share axes so a comparison is honest.
    """
    steps = trace.steps
    width, height = (560, 200) if compact else (1100, 260)
    left, right, top, bottom = 64, 64, 16, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    legend = (
        '<div class="legend"><span><i class="in"></i>input tokens</span>'
        '<span><i class="out"></i>output tokens</span>'
        '<span><i class="lat"></i>latency (model + tools, ms)</span></div>'
    )
    if not steps:
        return f'<div class="chart" id="chart">{legend}<div class="sub">no iterations</div></div>'
    max_tokens, max_ms = scale or _chart_scale([trace])
    slot = plot_w / len(steps)
    bar_w = max(min(slot * 0.6, 48.0), 2.0)
    svg = [
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="tokens and latency per '
        f'iteration" xmlns="http://www.w3.org/2000/svg" font-size="11" fill="#656d76">'
    ]
    for i in range(5):  # grid and both axes' labels
        frac = i / 4
        y = top + plot_h * (1 - frac)
        svg.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaeef2"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{short(max_tokens * frac)}'
            f'</text><text x="{left + plot_w + 6}" y="{y + 4:.1f}">{short(max_ms * frac)}</text>'
        )
    svg.append(
        f'<text x="12" y="{top + plot_h / 2:.0f}" transform="rotate(-90 12 {top + plot_h / 2:.0f})"'
        f' text-anchor="middle">tokens</text><text x="{width - 10}" y="{top + plot_h / 2:.0f}" '
        f'transform="rotate(90 {width - 10} {top + plot_h / 2:.0f})" text-anchor="middle">ms</text>'
    )
    points = []
    for index, step in enumerate(steps):
        cx = left + slot * (index + 0.5)
        tokens_in, tokens_out = amount(step.usage.input_tokens), amount(step.usage.output_tokens)
        h_in, h_out = plot_h * tokens_in / max_tokens, plot_h * tokens_out / max_tokens
        base = top + plot_h
        tip = (
            f"attempt {step.attempt}, iteration {step.iteration}: in "
            f"{tally(step.usage.input_tokens)} / out {tally(step.usage.output_tokens)} tokens,"
            f" model {format_ms(step.model_ms)}, tools {format_ms(step.tools_ms)}"
        )
        svg.append(
            f'<g class="bar"><title>{esc(tip)}</title>'
            f'<rect x="{cx - bar_w / 2:.1f}" y="{base - h_in:.1f}" width="{bar_w:.1f}" '
            f'height="{h_in:.1f}" fill="#0969da"/><rect x="{cx - bar_w / 2:.1f}" '
            f'y="{base - h_in - h_out:.1f}" width="{bar_w:.1f}" height="{h_out:.1f}" '
            'fill="#fb8500"/></g>'
        )
        if any(c.error is not None for c in step.tool_calls):
            svg.append(
                f'<path class="error-mark" d="M{cx - 5:.1f},{top + 2} h10 l-5,8 z" fill="#cf222e">'
                f"<title>tool error in {esc(tip.split(':')[0])}</title></path>"
            )
        if index and step.attempt != steps[index - 1].attempt:
            x = left + slot * index
            svg.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#9a6700"'
                f' stroke-dasharray="4 3"/><text x="{x:.1f}" y="{top - 4}" fill="#9a6700"'
                ' text-anchor="middle">'
                f"attempt {esc(step.attempt)}</text>"
            )
        if len(steps) <= 40 or index % max(len(steps) // 20, 1) == 0:
            svg.append(
                f'<text x="{cx:.1f}" y="{height - 16}" text-anchor="middle">{esc(step.iteration)}'
                "</text>"
            )
        y_ms = top + plot_h * (1 - (amount(step.model_ms) + amount(step.tools_ms)) / max_ms)
        points.append((cx, y_ms, tip))
    svg.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 2}" text-anchor="middle">'
        "iteration</text>"
    )
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
    svg.append(f'<polyline points="{path}" fill="none" stroke="#8250df" stroke-width="2"/>')
    svg.extend(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#8250df"><title>{esc(t)}</title>'
        "</circle>"
        for x, y, t in points
    )
    svg.append("</svg>")
    return f'<div class="chart" id="chart">{legend}{"".join(svg)}</div>'


def _chart_scale(traces: list[Trace]) -> tuple[float, float]:
    steps = [s for t in traces for s in t.steps]
    tokens = max((amount(s.usage.input_tokens) + amount(s.usage.output_tokens) for s in steps),
                 default=0.0)
    latency = max((amount(s.model_ms) + amount(s.tools_ms) for s in steps), default=0.0)
    return nice_max(tokens), nice_max(latency)


# -- formatting helpers -----------------------------------------------------------------------


def _reason(trace: Trace) -> object:
    return as_dict(trace.termination or {}, "reason").get("reason", "not recorded")


def _duration_ms(trace: Trace) -> float:
    """``Trace.duration_ms`` that survives non-numeric timestamps."""
    start = num(trace.started_at)
    end = start if trace.ended_at is None else num(trace.ended_at)
    return (end - start) * 1000.0


def _cost(trace: Trace) -> str:
    return money(recorded_cost(trace.usage.cost, trace.metadata))
