"""Self-contained HTML pages for a trace, and for two traces side by side.

A developer whose agent misbehaved wants to *look*: which iteration went wrong, what the model
thought, which tool failed, where the tokens went. One static file answers that and can be
attached to a bug report: no network, no CDN, no build step. Styles and the small script live
inline; the chart is inline SVG drawn here, so the page works from ``file://`` and offline.
Tool calls are native ``<details>`` elements, so they expand without any script at all.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from typing import Any

from .redaction import Redactor
from .trace import Step, ToolCallRecord, Trace

_CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#f6f8fa;--card:#fff;--err:#cf222e;
--errbg:#ffebe9;--ok:#1a7f37;--okbg:#dafbe1;--warn:#9a6700;--warnbg:#fff8c5;--in:#0969da;
--out:#fb8500;--lat:#8250df}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
main{max-width:1180px;margin:0 auto;padding:20px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.sub{color:var(--muted);font-size:13px}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;
border:1px solid var(--line);background:var(--card);color:var(--muted);white-space:nowrap}
.badge.success{color:var(--ok);background:var(--okbg);border-color:#aceebb}
.badge.failure,.badge.crashed,.badge.error{color:var(--err);background:var(--errbg);
border-color:#ffcecb}
.badge.cancelled,.badge.running,.badge.warn{color:var(--warn);background:var(--warnbg);
border-color:#f5e0a0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(125px,1fr));gap:8px;margin:12px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 12px}
.card b{display:block;font-size:18px}.card.err b{color:var(--err)}
.card span{color:var(--muted);font-size:12px}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px;
margin:8px 0}
.panel.error{border-color:var(--err);background:var(--errbg)}
pre{margin:4px 0;padding:8px;background:var(--bg);border-radius:6px;white-space:pre-wrap;
word-break:break-word;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
max-height:360px;overflow:auto}
.attempt{margin:16px 0 4px;font-weight:600;color:var(--muted);text-transform:uppercase;
font-size:12px;letter-spacing:.04em}
.step{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--in);
border-radius:8px;padding:10px 14px;margin:8px 0}
.step.has-error{border-left-color:var(--err)}.step.forced{border-left-color:var(--warn)}
.step header{display:flex;gap:8px;align-items:center;flex-wrap:wrap}
.step header .meta{color:var(--muted);font-size:12px;margin-left:auto}
.thought{margin:6px 0;white-space:pre-wrap}
.thinking summary,.call summary{cursor:pointer}
.thinking{color:var(--muted);margin:6px 0}
.call{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:var(--card)}
.call>summary{padding:6px 10px;display:flex;gap:8px;align-items:center;list-style:none}
.call>summary::-webkit-details-marker{display:none}
.call>summary::before{content:"▸";color:var(--muted)}.call[open]>summary::before{content:"▾"}
.call .body{padding:0 10px 8px}
.call.error{border-color:var(--err)}.call.error>summary{background:var(--errbg);color:var(--err)}
.call .name{font-family:ui-monospace,monospace;font-weight:600}
.call .id,.call .dur{color:var(--muted);font-size:12px}.call .dur{margin-left:auto}
.label{font-size:12px;color:var(--muted);margin-top:6px}.label.err{color:var(--err);font-weight:600}
.validation{border:1px solid #f5e0a0;background:var(--warnbg);border-radius:8px;padding:8px 12px;
margin:8px 0;color:var(--warn)}
.chart{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px;
overflow-x:auto}
.chart svg{width:100%;min-width:520px;height:auto;display:block}
.legend{display:flex;gap:16px;font-size:12px;color:var(--muted);padding:0 8px 4px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px}
.toolbar{display:flex;gap:8px;margin:8px 0}
button{font:inherit;font-size:12px;padding:3px 10px;border:1px solid var(--line);border-radius:6px;
background:var(--card);cursor:pointer}
table.cmp{border-collapse:collapse;width:100%;background:var(--card)}
table.cmp td,table.cmp th{border:1px solid var(--line);padding:5px 10px;text-align:left}
table.cmp td.num{text-align:right;font-variant-numeric:tabular-nums}
.better{color:var(--ok)}.worse{color:var(--err)}
.columns{display:grid;grid-template-columns:1fr 1fr;gap:16px;align-items:start}
.columns>section{min-width:0}
footer{color:var(--muted);font-size:12px;margin:24px 0}
"""

_SCRIPT = """
function setAll(open,sel){document.querySelectorAll(sel).forEach(d=>{d.open=open});}
"""


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
        _termination_panel(trace),
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
            f'<section id="run-{label.lower()}"><h2>{label}: {escape(trace.agent_name)} '
            f'{_status_badge(trace.status)}</h2><div class="sub">{escape(trace.run_id)} · '
            f"{escape(trace.model_name or 'model unknown')}</div>"
            f"{'' if same_prompt else _prompt_panel(trace)}{_termination_panel(trace)}"
            f"{render_chart(trace, compact=True, scale=scale)}"
            f"{_timeline(trace)}{_outcome_panel(trace)}</section>"
        )
    body = [
        f"<h1>{escape(heading)}</h1>",
        _prompt_panel(a) if same_prompt else "",
        "<h2>Side by side</h2>",
        _comparison_table(a, b),
        _toolbar(),
        f'<div class="columns">{"".join(columns)}</div>',
    ]
    return _page(heading, "\n".join(body))


# -- page parts -------------------------------------------------------------------------------


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title)}</title><style>{_CSS}</style><script>{_SCRIPT}</script>"
        f"</head><body><main>\n{body}\n<footer>Generated by toolcycle · "
        "self-contained page, no network access.</footer></main></body></html>\n"
    )


def _header(trace: Trace, heading: str) -> str:
    started = format_time(trace.started_at)
    duration = format_ms(trace.duration_ms) if trace.ended_at is not None else "no end recorded"
    return (
        f"<h1>{escape(heading)} {_status_badge(trace.status)}</h1>"
        f'<div class="sub">model {escape(trace.model_name or "unknown")} · started {started}'
        f" · {duration}</div>"
    )


def _summary_cards(trace: Trace) -> str:
    u = trace.usage
    errors = sum(1 for c in trace.tool_calls if c.error is not None)
    attempts = max((s.attempt for s in trace.steps), default=len(trace.attempts) or 1)
    cards = [
        ("iterations", str(len(trace.steps))),
        ("attempts", str(attempts)),
        ("tool calls", str(len(trace.tool_calls))),
        ("tool errors", str(errors)),
        ("input tokens", f"{u.input_tokens:,}"),
        ("output tokens", f"{u.output_tokens:,}"),
        ("cache read / write", f"{u.cache_read_tokens:,} / {u.cache_write_tokens:,}"),
        ("cost", _cost(trace)),
    ]
    items = "".join(
        f'<div class="card{" err" if k == "tool errors" and errors else ""}"><b>{escape(v)}</b>'
        f"<span>{k}</span></div>"
        for k, v in cards
    )
    return f'<div class="cards" id="summary">{items}</div>'


def _termination_panel(trace: Trace) -> str:
    term = trace.termination
    if not term:
        note = _UNFINISHED.get(trace.status, "not recorded")
        cls = "panel error" if trace.status == "crashed" else "panel"
        return f'<div class="{cls}" id="termination"><b>Termination:</b> {note}</div>'
    parts = [f"<b>Termination:</b> {escape(str(term.get('reason')))}"]
    if term.get("action"):
        parts.append(f"action {escape(str(term['action']))}")
    if term.get("limit"):
        parts.append(f"limit {escape(str(term['limit']))}")
    detail = f"<div class=\"sub\">{escape(str(term['detail']))}</div>" if term.get("detail") else ""
    cls = "panel error" if trace.status in ("failure", "crashed") else "panel"
    return f'<div class="{cls}" id="termination">{" · ".join(parts)}{detail}</div>'


_UNFINISHED = {
    "crashed": "none: the process that ran it ended without finishing the run; what follows "
    "is everything recorded up to then",
    "running": "none yet: the run is in progress (or its process died on another host)",
}


def _prompt_panel(trace: Trace) -> str:
    if not trace.user_prompt:
        return ""
    return f'<div class="panel"><b>User prompt</b><pre>{escape(trace.user_prompt)}</pre></div>'


def _toolbar() -> str:
    return (
        '<div class="toolbar"><button onclick="setAll(true,\'details.call\')">Expand all calls'
        '</button><button onclick="setAll(false,\'details.call\')">Collapse all</button>'
        "<button onclick=\"setAll(true,'details.call.error')\">Expand errors</button></div>"
    )


def _timeline(trace: Trace) -> str:
    out: list[str] = ['<div class="timeline">']
    current_attempt: int | None = None
    for step in trace.steps:
        if step.attempt != current_attempt:
            if current_attempt is not None:
                out.append(_validation_block(trace, current_attempt))
            current_attempt = step.attempt
            out.append(f'<div class="attempt">Attempt {step.attempt}</div>')
        out.append(_step_block(step))
    if current_attempt is not None:
        out.append(_validation_block(trace, current_attempt))
    if not trace.steps:
        out.append('<div class="panel">No iterations were recorded.</div>')
    out.append("</div>")
    return "".join(out)


def _step_block(step: Step) -> str:
    errors = sum(1 for c in step.tool_calls if c.error is not None)
    classes = "step" + (" has-error" if errors else "") + (" forced" if step.forced else "")
    badges = []
    if step.forced:
        badges.append('<span class="badge warn">forced final answer</span>')
    if errors:
        badges.append(f'<span class="badge error">{errors} tool error{"s" * (errors > 1)}</span>')
    if step.finish_reason:
        badges.append(f'<span class="badge">{escape(step.finish_reason)}</span>')
    meta = (
        f"model {format_ms(step.model_ms)} · tools {format_ms(step.tools_ms)} · tokens in "
        f"{step.usage.input_tokens:,} / out {step.usage.output_tokens:,}"
    )
    parts = [
        f'<article class="{classes}" id="step-{step.attempt}-{step.iteration}"><header>'
        f"<b>Iteration {step.iteration}</b>{''.join(badges)}<span class=\"meta\">{meta}</span>"
        "</header>"
    ]
    if step.thinking:
        parts.append(
            f'<details class="thinking"><summary>thinking ({len(step.thinking):,} chars)'
            f"</summary><pre>{escape(step.thinking)}</pre></details>"
        )
    if step.thought:
        parts.append(f'<div class="thought">{escape(step.thought)}</div>')
    parts.extend(_call_block(call) for call in step.tool_calls)
    parts.append("</article>")
    return "".join(parts)


def _call_block(call: ToolCallRecord) -> str:
    failed = call.error is not None
    args = json.dumps(call.args, indent=2, ensure_ascii=False) if call.args is not None else "?"
    kind = f' <span class="badge">{escape(call.kind)}</span>' if call.kind != "tool" else ""
    status = '<span class="badge error">error</span>' if failed else ""
    if failed:
        observation = (
            f'<div class="label err">Error</div><pre class="error">{escape(call.error or "")}</pre>'
        )
    else:
        observation = f'<div class="label">Observation</div><pre>{escape(call.result or "")}</pre>'
    return (
        f'<details class="call{" error" if failed else ""}" data-call-id="{escape(call.call_id)}">'
        f'<summary><span class="name">{escape(call.name)}</span>{kind}{status}'
        f'<span class="id">{escape(call.call_id)}</span>'
        f'<span class="dur">{format_ms(call.duration_ms)}</span></summary>'
        '<div class="body"><div class="label">Arguments</div>'
        f"<pre>{escape(args)}</pre>{observation}</div></details>"
    )


def _validation_block(trace: Trace, attempt: int) -> str:
    blocks = []
    for record in trace.attempts:
        if record.attempt == attempt and record.errors:
            source = escape(record.validator or record.code or "validation")
            items = "".join(f"<li>{escape(e)}</li>" for e in record.errors)
            blocks.append(
                f'<div class="validation"><b>Attempt {attempt} failed validation</b> '
                f"({source})<ul>{items}</ul></div>"
            )
    return "".join(blocks)


def _outcome_panel(trace: Trace) -> str:
    parts = []
    if trace.error:
        code = escape(str(trace.error.get("code", "error")))
        message = escape(str(trace.error.get("message", trace.error)))
        parts.append(
            f'<div class="panel error" id="run-error"><b>Run failed: {code}</b>'
            f"<pre>{message}</pre></div>"
        )
    if trace.output is not None:
        text = trace.output if isinstance(trace.output, str) else json.dumps(
            trace.output, indent=2, ensure_ascii=False, default=str
        )
        parts.append(f'<div class="panel" id="output"><b>Output</b><pre>{escape(text)}</pre></div>')
    return "".join(parts)


def _comparison_table(a: Trace, b: Trace) -> str:
    def errors(t: Trace) -> int:
        return sum(1 for c in t.tool_calls if c.error is not None)

    rows: list[tuple[str, float, float, bool]] = [
        ("iterations", len(a.steps), len(b.steps), True),
        ("tool calls", len(a.tool_calls), len(b.tool_calls), True),
        ("tool errors", errors(a), errors(b), True),
        ("input tokens", a.usage.input_tokens, b.usage.input_tokens, True),
        ("output tokens", a.usage.output_tokens, b.usage.output_tokens, True),
        ("duration (ms)", round(a.duration_ms), round(b.duration_ms), True),
    ]
    html = [
        '<table class="cmp" id="comparison"><tr><th></th><th>A</th><th>B</th><th>B − A</th></tr>',
        f"<tr><td>status</td><td>{_status_badge(a.status)}</td><td>{_status_badge(b.status)}"
        "</td><td></td></tr>",
        f"<tr><td>termination</td><td>{escape(_reason(a))}</td><td>{escape(_reason(b))}</td>"
        "<td></td></tr>",
        f"<tr><td>model</td><td>{escape(a.model_name)}</td><td>{escape(b.model_name)}</td>"
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
        '<div class="legend"><span><i style="background:var(--in)"></i>input tokens</span>'
        '<span><i style="background:var(--out)"></i>output tokens</span>'
        '<span><i style="background:var(--lat)"></i>latency (model + tools, ms)</span></div>'
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
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_short(max_tokens * frac)}'
            f'</text><text x="{left + plot_w + 6}" y="{y + 4:.1f}">{_short(max_ms * frac)}</text>'
        )
    svg.append(
        f'<text x="12" y="{top + plot_h / 2:.0f}" transform="rotate(-90 12 {top + plot_h / 2:.0f})"'
        f' text-anchor="middle">tokens</text><text x="{width - 10}" y="{top + plot_h / 2:.0f}" '
        f'transform="rotate(90 {width - 10} {top + plot_h / 2:.0f})" text-anchor="middle">ms</text>'
    )
    points = []
    for index, step in enumerate(steps):
        cx = left + slot * (index + 0.5)
        h_in = plot_h * step.usage.input_tokens / max_tokens
        h_out = plot_h * step.usage.output_tokens / max_tokens
        base = top + plot_h
        tip = (
            f"attempt {step.attempt}, iteration {step.iteration}: in {step.usage.input_tokens:,}"
            f" / out {step.usage.output_tokens:,} tokens, model {format_ms(step.model_ms)}, "
            f"tools {format_ms(step.tools_ms)}"
        )
        svg.append(
            f'<g class="bar"><title>{escape(tip)}</title>'
            f'<rect x="{cx - bar_w / 2:.1f}" y="{base - h_in:.1f}" width="{bar_w:.1f}" '
            f'height="{h_in:.1f}" fill="#0969da"/><rect x="{cx - bar_w / 2:.1f}" '
            f'y="{base - h_in - h_out:.1f}" width="{bar_w:.1f}" height="{h_out:.1f}" '
            'fill="#fb8500"/></g>'
        )
        if any(c.error is not None for c in step.tool_calls):
            svg.append(
                f'<path class="error-mark" d="M{cx - 5:.1f},{top + 2} h10 l-5,8 z" fill="#cf222e">'
                f"<title>tool error in {escape(tip.split(':')[0])}</title></path>"
            )
        if index and step.attempt != steps[index - 1].attempt:
            x = left + slot * index
            svg.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" stroke="#9a6700"'
                f' stroke-dasharray="4 3"/><text x="{x:.1f}" y="{top - 4}" fill="#9a6700"'
                ' text-anchor="middle">'
                f"attempt {step.attempt}</text>"
            )
        if len(steps) <= 40 or index % max(len(steps) // 20, 1) == 0:
            svg.append(
                f'<text x="{cx:.1f}" y="{height - 16}" text-anchor="middle">{step.iteration}</text>'
            )
        y_ms = top + plot_h * (1 - (step.model_ms + step.tools_ms) / max_ms)
        points.append((cx, y_ms, tip))
    svg.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 2}" text-anchor="middle">'
        "iteration</text>"
    )
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
    svg.append(f'<polyline points="{path}" fill="none" stroke="#8250df" stroke-width="2"/>')
    svg.extend(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#8250df"><title>{escape(t)}</title>'
        "</circle>"
        for x, y, t in points
    )
    svg.append("</svg>")
    return f'<div class="chart" id="chart">{legend}{"".join(svg)}</div>'


def _chart_scale(traces: list[Trace]) -> tuple[float, float]:
    steps = [s for t in traces for s in t.steps]
    tokens = max((s.usage.input_tokens + s.usage.output_tokens for s in steps), default=0)
    latency = max((s.model_ms + s.tools_ms for s in steps), default=0.0)
    return _nice_max(tokens), _nice_max(latency)


# -- formatting helpers -----------------------------------------------------------------------


def _status_badge(status: str) -> str:
    safe = escape(status)
    return f'<span class="badge {safe}" data-status="{safe}">{safe}</span>'


def _reason(trace: Trace) -> str:
    term = trace.termination or {}
    return str(term.get("reason", "not recorded"))


def _cost(trace: Trace) -> str:
    cost: Any = trace.metadata.get("cost_usd")
    return f"${cost:,.4f}" if isinstance(cost, int | float) else "unknown"


def format_time(epoch: float) -> str:
    """Epoch seconds as a UTC timestamp (pages and the CLI show the same text)."""
    if not epoch:
        return "unknown"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def format_ms(value: float) -> str:
    """A duration in milliseconds, switching to seconds from one second on."""
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.1f} ms"


def _short(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _nice_max(value: float) -> float:
    """Round an axis maximum up to 1, 2, 2.5 or 5 times a power of ten (never zero)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1)
    for factor in (1, 2, 2.5, 5, 10):
        if value <= factor * magnitude:
            return float(factor * magnitude)
    return float(10 * magnitude)
