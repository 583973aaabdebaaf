"""The ``sequence`` lesson type: the chain of calls that held a successful run's answer, as
advice ("Call find_booking(name), then booking_detail(ref), then answer.") and, with
routines, as one tool (:mod:`.routine`).

The chain is the evidence of the trace (:mod:`.evidence`), not the order the model tried
things in; the advice shows argument names and, where the model had to shape a value itself,
its format, never the task's own words (:func:`~.evidence.shaped_values`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .applicability import sequence_words
from .evidence import CallEvidence, shaped_values
from .flow import chain_feeds, data_flow
from .head_start import run_head
from .lesson import RunEvidence
from .strategy import SKIP, Insight, Strategy, UseVerdict


def sequence_advice(
    sequence: list[str], arg_names: dict[str, list[str]], skipped: list[str],
    formats: dict[str, dict[str, str]] | None = None, picks: dict[str, str] | None = None,
) -> str:
    """Plain advice a small model can follow: the calls in order, with their argument names;
    ``picks``: tool -> the field its result's row was picked by, a word of the task's."""
    formats = formats or {}

    def arg(name: str, tool: str) -> str:
        example = formats.get(tool, {}).get(name)
        return f'{name} like "{example}"' if example else name

    steps = [f"{t}({', '.join(arg(a, t) for a in arg_names.get(t, []))})" for t in sequence]
    text = "Call " + ", then ".join(steps) + ", then answer"
    if len(sequence) > 1:
        rows = [f"the {t} row whose {by} the task names" for t, by in (picks or {}).items()]
        text += " (feed each result into the next call" + (
            f"; pick {' and '.join(rows)}" if rows else "") + ")"
    text += "."
    if skipped:
        text += f"{SKIP}{', '.join(skipped)} for this kind of task."
    return text


class Sequences:
    """The ``sequence`` lesson: a successful run's answering chain (its advice names the
    tools called outside the chain, so the curator can say what to skip); a failed run's
    data flow of a chain is evidence for one a success taught (the curator counts it only
    beside such a run)."""

    def propose(self, run: RunEvidence) -> list[Insight]:
        analysis, trace = run.analysis, run.trace
        if run.success and analysis.sequence:
            skipped = sorted({c.call.name for c in analysis.calls} - set(analysis.sequence))
            feeds = chain_feeds(analysis.chain, run.prompt)
            picks = {analysis.chain[i].call.name: str(f["pick"][1])
                     for i, f in enumerate(feeds) if f.get("pick")}
            advice = sequence_advice(analysis.sequence, analysis.arg_names, skipped,
                                     shaped_values(trace, analysis.calls, analysis.chain), picks)
            return [_chain_lesson(run, analysis.chain, list(analysis.sequence), advice, feeds)]
        if not run.success and (flow := data_flow(trace, analysis.calls)) is not None:
            return [_chain_lesson(run, flow[0], [c.call.name for c in flow[0]], "", flow[1])]
        return []

    def judge(self, strategy: Strategy, calls: Sequence[tuple[str, str]],
              success: bool) -> UseVerdict | None:
        return None  # followed: its tools called in order (outcome.use_verdict)

    def owns(self, strategy: Strategy) -> bool:
        return strategy.kind == "sequence"


def _chain_lesson(run: RunEvidence, chain: list[CallEvidence], tools: list[str], advice: str,
                  feeds: list[dict[str, Any]]) -> Insight:
    lesson = run.insight("sequence", advice, tools, "")
    trace = run.trace
    lesson.feeds, lesson.head = feeds, run_head(chain, run.prompt)
    lesson.tool_words = sequence_words(
        run.analysis.keywords, lesson.tools, run.descriptions,
        chain[-1].call.result if chain else None, str(trace.output or ""), run.prompt,
        [(c.call.result or "", str(f["value"]), c.call.args or {})
         for c, f in zip(chain, lesson.feeds, strict=False)])
    return lesson
