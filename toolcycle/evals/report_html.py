"""The experiment report as one self-contained HTML page, safe to open whatever the runs said.

The same rules as the trace viewer (:mod:`toolcycle.tracing.html`): every value that came from
a run, a dataset or a log (case names, outputs, reasons, errors) is untrusted and goes through
``esc``; nothing is fetched (no CDN, no fonts, no images); and the Content-Security-Policy
allows only this page's own ``<style>`` by its sha256 and no script at all (the page needs
none: each case's runs are native ``<details>`` elements). So even a value that slipped past
the escaping could neither run nor load anything.
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Sequence
from decimal import Decimal
from hashlib import sha256

from ..tracing.values import esc, money
from .figures import CaseReport, Headline, run_passes
from .records import RunRecord
from .stats import Estimate

_CSS = """
body{margin:0;font:14px/1.45 system-ui,sans-serif;color:#1f2328;background:#f6f8fa}
main{max-width:1180px;margin:0 auto;padding:20px}h1{font-size:20px}h2{font-size:16px}
table{border-collapse:collapse;background:#fff;width:100%;margin:8px 0}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4}.ok{color:#1a7f37}.bad{color:#cf222e}.muted{color:#656d76}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12px ui-monospace,monospace}
details{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:4px 0;padding:4px 8px}
"""


def _csp() -> str:
    digest = b64encode(sha256(_CSS.encode()).digest()).decode()
    return (f"default-src 'none'; style-src 'sha256-{digest}'; script-src 'none'; "
            "img-src 'none'; base-uri 'none'; form-action 'none'")


def render_report_html(report: Headline, cases: Sequence[CaseReport],
                       records: Sequence[RunRecord], kinds: Sequence[Headline] = ()) -> str:
    """The whole page: summary, per kind of case, the per-case table, then every run with
    its scores. ``kinds``: one headline per kind (its ``name`` is the kind)."""
    k = report.k
    head = ["case", "kind", "runs", "pass", *report.evaluators, f"pass@{k}", f"pass^{k}",
            "iterations", "tokens", "cost $", "latency s"]
    rows = "".join(_case_row(case, report.evaluators) for case in cases)
    summary = (f"<p>{report.runs} runs · pass {_rate(report.passed)} · success "
               f"{_rate(report.success)} · pass@{k} {report.pass_at_k:.2f} · pass^{k} "
               f"{report.pass_hat_k:.2f} · cost "
               + money(None if report.cost_usd is None else Decimal(repr(report.cost_usd)))
               + " in all</p><p class=muted>Intervals: 95 %, Wilson score for "
               "pass rates, Student t for means.</p>")
    runs = "".join(_case_runs(case.case, [r for r in records if r.case == case.case])
                   for case in cases)
    by_kind = "" if not kinds else (
        "<h2>By kind of case</h2><table><tr><th>kind</th><th>runs</th><th>pass</th>"
        "<th>success</th><th>pass@k</th><th>pass^k</th></tr>"
        + "".join(f"<tr><td>{esc(kind.name or '-')}</td><td>{kind.runs}</td>"
                  f"<td>{_rate(kind.passed)}</td><td>{_rate(kind.success)}</td>"
                  f"<td>{kind.pass_at_k:.2f}</td><td>{kind.pass_hat_k:.2f}</td></tr>"
                  for kind in kinds) + "</table>")
    body = (f"<h1>{esc(report.name)}</h1>{summary}{by_kind}<h2>Cases</h2><table><tr>"
            + "".join(f"<th>{esc(h)}</th>" for h in head) + f"</tr>{rows}</table>"
            f"<h2>Runs</h2>{runs}")
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            f'<meta http-equiv="Content-Security-Policy" content="{_csp()}">'
            f"<title>{esc(report.name)}</title><style>{_CSS}</style></head>"
            f"<body><main>{body}</main></body></html>")


def _rate(estimate: Estimate) -> str:
    if estimate.n == 0:
        return "–"
    return esc(f"{estimate.mean:.0%} [{estimate.low:.0%}, {estimate.high:.0%}]")


def _mean(estimate: Estimate | None, digits: int) -> str:
    if estimate is None or estimate.n == 0:
        return "?"
    if estimate.method == "none":
        return esc(f"{estimate.mean:.{digits}f}")
    return esc(f"{estimate.mean:.{digits}f} [{estimate.low:.{digits}f}, "
               f"{estimate.high:.{digits}f}]")


def _case_row(case: CaseReport, evaluators: tuple[str, ...]) -> str:
    cells = [esc(case.case), esc(case.kind), str(case.runs), _rate(case.passed),
             *(_rate(case.evaluators[name].passed) for name in evaluators),
             f"{case.pass_at_k:.2f}", f"{case.pass_hat_k:.2f}", _mean(case.iterations, 1),
             _mean(case.tokens, 0), _mean(case.cost_usd, 6), _mean(case.latency_s, 2)]
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def _case_runs(case: str, records: list[RunRecord]) -> str:
    items = "".join(_run(record) for record in records)
    return f"<details><summary>{esc(case)} ({len(records)} runs)</summary>{items}</details>"


def _run(record: RunRecord) -> str:
    verdict = "ok" if run_passes(record) else "bad"
    scores = "".join(
        f"<tr><td>{esc(s.evaluator)}</td><td class={'ok' if s.passed else 'bad'}>"
        f"{'pass' if s.passed else 'fail'} ({s.value:.2f})</td><td><pre>{esc(s.reason)}</pre>"
        "</td></tr>" for s in record.scores)
    error = f"<p class=bad><pre>{esc(record.error)}</pre></p>" if record.error else ""
    return (f"<p class={verdict}>repeat {record.repeat}: {esc(record.status)} · "
            f"{record.iterations} iterations · {record.tokens} tokens · "
            f"{record.latency_s:.2f} s · run <code>{esc(record.run_id or '-')}</code> · tools "
            f"{esc(' > '.join(record.tools) or '-')}</p><pre>{esc(record.output)}</pre>{error}"
            f"<table>{scores}</table>")
