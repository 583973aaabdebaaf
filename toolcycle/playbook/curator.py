"""The curator: merges insights into the playbook as small, deterministic delta operations.

ACE's point (arXiv 2510.04618) is that a playbook rewritten wholesale by a model collapses or
bloats; itemised bullets changed by deltas do neither. The operations here are:

``add``      a pattern seen in ``promote_after`` (3) successful runs of different tasks
             becomes a strategy (failure patterns: seen in 3 runs of different tasks); a
             tool chain whose data flow two of them showed (each step fed a value taken
             out of the previous result, by one rule across tasks) needs only those two,
             and one of them may be a failed run that made the chain the same way; a
             sequence two runs found the answer by (a success's answer chain or a probe's
             finding, :func:`~toolcycle.playbook.probe.answers_agree`) needs those two; a
             failed run of the same kind of task that answered after only the start of a
             tool sequence counts as one of those runs, once two succeeded with it;
             one-off LLM advice is added directly;
``update``   counts of a strategy move: its pattern was seen again, or a run was shown it;
             a pitfall learned without its repair takes one from a later run that shows
             it (a retry that worked, or a run that followed the pitfall and got past it);
``merge``    two near-duplicate strategies of a domain fold into the better one;
``retire``   a strategy that keeps failing the runs that followed it (runs that ignored it,
             or to which it did not fit, do not count), one not confirmed for
             ``stale_after_s``, or the weakest beyond ``max_per_domain``, stops being injected.

Each call of :meth:`Curator.apply` runs in one store transaction, so several processes may
curate the same playbook without losing updates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..words import keywords, roots
from .applicability import applicability, by_root, confirmed, confirmed_by, word_support
from .checks import check_curator
from .flow import flow_shown
from .no_call import NO_CALL
from .outcome import RunOutcome, use_verdict
from .pitfall_repair import best_repaired, repair_from_use, same_failure, take_repair
from .probe import answers_agree
from .store import PlaybookStore
from .strategy import PROBED, Insight, Strategy, strategy_id

DeltaOp = Literal["candidate", "add", "update", "merge", "retire"]


@dataclass(slots=True, frozen=True)
class Delta:
    """One change the curator made, for logs, tests and ``toolcycle playbook learn``."""

    op: DeltaOp
    strategy_id: str
    detail: str = ""


@dataclass(slots=True)
class Curator:
    """Deterministic merging rules; every threshold is a field so tests and users can tune it."""

    promote_after: int = 3
    #: A tool chain whose data flow two successful runs showed is promoted after those two
    #: (:func:`~toolcycle.playbook.flow.flow_shown`); False: it waits for ``promote_after``
    #: like any pattern.
    promote_on_flow: bool = True
    #: A sequence two runs of different tasks found the answer by (a success's answer chain,
    #: or a probe's finding: the call whose result held the expected answer) is promoted
    #: after those two (:func:`~toolcycle.playbook.probe.answers_agree`); False: it waits
    #: for ``promote_after`` like any pattern.
    promote_on_answers: bool = True
    max_per_domain: int = 100
    #: Patterns waiting for evidence, per domain: beyond it the longest-unconfirmed go.
    max_candidates_per_domain: int = 1000
    retire_min_uses: int = 4
    retire_below_success: float = 0.34
    stale_after_s: float = 30 * 24 * 3600.0
    merge_similarity: float = 0.8

    def __post_init__(self) -> None:
        check_curator(self)  # every bad threshold at once (.checks)

    def apply(
        self, store: PlaybookStore, insights: Sequence[Insight], outcome: RunOutcome | None = None
    ) -> list[Delta]:
        """Merge one run's insights (and the verdict on the strategies it was shown)."""
        deltas: list[Delta] = []
        with store.transaction():
            touched: dict[str, Strategy] = {}
            pitfalls: dict[str, list[Strategy]] = {}  # per domain, read once per run
            if outcome is not None:
                deltas += self._record_uses(store, outcome, touched)
                if not outcome.success:
                    deltas += self._count_short(store, outcome, touched)
            for insight in insights:
                deltas += self._absorb(store, insight, touched, pitfalls)
            domains = {s.domain for s in touched.values()}
            deltas += self._merge(store, touched)
            store.put(touched.values())
            for domain in sorted(domains):
                deltas += self.retire(store, domain)
        return deltas

    # -- counts ----------------------------------------------------------------------------

    def _record_uses(self, store: PlaybookStore, outcome: RunOutcome,
                     touched: dict[str, Strategy]) -> list[Delta]:
        deltas = []
        for sid in dict.fromkeys(outcome.shown):
            strategy = touched.get(sid) or store.get(sid)
            if strategy is None:
                continue
            verdict = use_verdict(strategy, outcome)
            strategy.record_use(outcome.run_id, outcome.success, outcome.iterations,
                                outcome.tool_latency_ms, verdict)
            touched[sid] = strategy
            deltas.append(Delta("update", sid, f"{verdict} in run {outcome.run_id}"))
            if verdict == "helpful" and (repair := repair_from_use(strategy, outcome)):
                deltas.append(Delta("update", sid, f"repair from run {outcome.run_id}: {repair}"))
        return deltas

    def _absorb(
        self, store: PlaybookStore, insight: Insight, touched: dict[str, Strategy],
        pitfalls: dict[str, list[Strategy]],
    ) -> list[Delta]:
        if insight.kind == "sequence" and not insight.success:
            return self._count_flow(store, insight, touched)
        sid = strategy_id(insight.kind, insight.domain, insight.tools, insight.detail)
        existing = touched.get(sid) or store.get(sid)
        if existing is not None and existing.status == "retired":
            if insight.kind == "advice":
                return []  # a model re-proposes its advice at will: that is no new evidence
            existing = None  # relearned like a new pattern (see _promote)
        if insight.detail == NO_CALL and insight.success:
            # a right answer without a call counts against the lesson while it is a candidate
            # (_ready); once learned, runs begin with a call, and one lucky answer does not
            # undo what several wrong ones showed
            return [] if existing is not None else self._count_candidate(
                store, sid, insight, touched)
        if existing is None and insight.kind == "pitfall":
            if insight.domain not in pitfalls:
                pitfalls[insight.domain] = [s for s in store.strategies(insight.domain)
                                            if s.kind == "pitfall" and s.detail]
            existing = same_failure(pitfalls[insight.domain], insight, touched)
        if existing is not None:
            took = take_repair(existing, insight)
            _confirm(existing, insight)
            touched[existing.id] = existing
            return [Delta("update", existing.id, f"seen again in run {insight.run_id}"
                          + (", with its repair" if took else ""))]
        if insight.kind == "advice":
            touched[sid] = _new_strategy(sid, insight, [insight], insight)
            return [Delta("add", sid, "advice from the LLM reflector")]
        return self._count_candidate(store, sid, insight, touched)

    def _count_candidate(
        self, store: PlaybookStore, sid: str, insight: Insight, touched: dict[str, Strategy]
    ) -> list[Delta]:
        key = insight.pattern_key
        found = store.get_candidate(key)
        data: dict[str, Any] = found or {
            "key": key, "domain": insight.domain, "created_at": time.time(), "insights": [],
        }
        runs = {i["run_id"] for i in data["insights"]}
        tasks = {_task_of(i) for i in data["insights"]}
        if insight.run_id in runs or _task_of(insight.to_dict()) in tasks:
            # evidence must come from different tasks: the same task run twice would make
            # its entity names ("Acme", "Ann Lee") look like what the pattern applies to
            return []
        data["insights"].append(insight.to_dict())
        data["updated_at"] = time.time()
        if not self._ready(data):
            store.put_candidate(key, insight.domain, data)
            if found is None:  # a new pattern: the domain's candidates may now be too many
                store.prune_candidates(insight.domain, self.max_candidates_per_domain)
            return [Delta("candidate", sid, f"{len(data['insights'])}/{self.promote_after} runs")]
        return self._promote(store, data, insight, touched)

    def _count_short(self, store: PlaybookStore, outcome: RunOutcome,
                     touched: dict[str, Strategy]) -> list[Delta]:
        """A failed run that answered after only the start of a candidate sequence's tools
        (none of them, or the first few), every call fine, on a task the sequence would be
        shown for once promoted (a word of its applicability in the prompt), is evidence the
        sequence is needed: the model stopped where the sequence goes on.

        Why: a small model often stops at the first result that looks like an answer (the
        booking reference a lookup returned, where the question asked for the seat a detail
        call gives), so a kind of task may have too few runs of the whole chain to promote
        it; the runs that stopped short show that the chain is needed there.
        """
        if not outcome.answered or outcome.calls is None or not outcome.task or any(
                status != "ok" for _, status in outcome.calls):
            return []
        calls = [name for name, _ in outcome.calls]
        deltas: list[Delta] = []
        for data in store.candidates(outcome.domain):
            first = data["insights"][0]
            tools = first["tools"]
            if first["kind"] != "sequence" or len(calls) >= len(tools) or (
                    tools[:len(calls)] != calls):
                continue
            evidence = [Insight.from_dict(d) for d in data["insights"]]
            if not roots(applicability(evidence)) & roots(outcome.keywords):
                continue  # promoted now, the sequence would not be shown to that task
            short = data.setdefault("short", [])
            if outcome.task in {_task_of(i) for i in data["insights"]} | {
                    s["task"] for s in short}:
                continue
            short.append({"run_id": outcome.run_id, "task": outcome.task,
                          "keywords": list(outcome.keywords)})
            data["updated_at"] = time.time()
            if self._ready(data):
                deltas += self._promote(store, data, evidence[-1], touched)
            else:
                store.put_candidate(data["key"], outcome.domain, data)
                deltas.append(Delta("candidate", strategy_id(
                    "sequence", outcome.domain, tools, first.get("detail", "")),
                    f"run {outcome.run_id} stopped short of it"))
        return deltas

    def _count_flow(self, store: PlaybookStore, insight: Insight,
                    touched: dict[str, Strategy]) -> list[Delta]:
        """A failed run whose calls made a candidate sequence's chain, each step fed from the
        previous result (:func:`~toolcycle.playbook.flow.data_flow`), on a task of the
        same kind (a word the successes share is in it) and not one of theirs, shows the
        chain's data flow again: with one success beside it, that is the second run
        :func:`~toolcycle.playbook.flow.flow_shown` asks for. It is never a success of its
        own: a failed run alone starts no candidate, counts for no strategy and lends it no
        advice; it lends the pattern its words and its head (what its first call took from
        the task)."""
        data = store.get_candidate(insight.pattern_key)
        if not insight.feeds or data is None or not data["insights"] or (
                data["insights"][0].get("kind") != "sequence"):
            return []
        flows = data.setdefault("flows", [])
        if insight.task in {_task_of(i) for i in [*data["insights"], *flows]}:
            return []
        evidence = [Insight.from_dict(d) for d in data["insights"]]
        if not roots(applicability(evidence)) & roots(insight.keywords):
            return []
        flows.append(insight.to_dict())
        data["updated_at"] = time.time()
        if self._ready(data):
            return self._promote(store, data, evidence[-1], touched)
        store.put_candidate(data["key"], insight.domain, data)
        return [Delta("candidate", strategy_id("sequence", insight.domain, insight.tools, ""),
                      f"run {insight.run_id} showed its data flow")]

    def _ready(self, data: dict[str, Any]) -> bool:
        """Whether a candidate has its runs: ``promote_after`` of them, where a run stopped
        short (:meth:`_count_short`) fills one place at most, and only while the words the
        successes share are in its prompt: two successes worded apart share no word, so the
        sequence they made would apply to nothing, and its confirmations never widen it."""
        if data["insights"] and data["insights"][0].get("detail") == NO_CALL:
            return _no_call_shown(data["insights"], self.promote_after)
        found = len(data["insights"])
        if found >= self.promote_after or (self.promote_on_flow and flow_shown(data)) or (
                self.promote_on_answers and answers_agree(data)):
            return True
        if found < 1 or found + 1 < self.promote_after:
            return False
        words = roots(applicability([Insight.from_dict(d) for d in data["insights"]]))
        return any(words & roots(s.get("keywords", ())) for s in data.get("short", []))

    def _promote(self, store: PlaybookStore, data: dict[str, Any], insight: Insight,
                 touched: dict[str, Strategy]) -> list[Delta]:
        """Make a candidate a strategy (``insight``: its newest evidence)."""
        evidence = [Insight.from_dict(d) for d in data["insights"]]
        where: Sequence[Insight] = evidence
        if insight.detail == NO_CALL:  # the wrong answers are its support; no task words
            evidence, where = [i for i in evidence if not i.success], []
        elif insight.kind == "pitfall":
            insight = best_repaired(evidence)
            # the repair applies where it was seen: a pitfall is pooled over every task that
            # hit the error, and a repair one kind of task found ("X fails ... Call Y
            # instead") would otherwise take the words of every other kind that hit the same
            # error, and be shown to tasks Y cannot answer
            if insight.repair is not None:
                where = [i for i in evidence if i.detail == insight.detail]
        flows = [Insight.from_dict(d) for d in data.get("flows", [])]
        if flows:  # the words its kind of task shares, over the failed runs' tasks too
            where = [*where, *flows]
        sid = strategy_id(insight.kind, insight.domain, insight.tools, insight.detail)
        touched[sid] = _new_strategy(sid, insight, evidence, _shown_of(insight, evidence), where)
        for flow in flows:
            touched[sid].add_run(flow.feeds, flow.head)
        earlier = store.get(sid)
        if earlier is not None and earlier.status == "retired":
            # Relearned: a retired lesson's pattern seen again is counted as a candidate, and
            # comes back only by the bar any new lesson meets (promote_after runs of different
            # tasks), with fresh counts. Why: retirement judges the runs it was shown to; the
            # tools, the model or the tasks change, and a lesson retired once (by runs it did
            # not fit, or before a repair made it right) was otherwise never learned again.
            fresh = touched[sid]
            fresh.note = f"relearned; was retired ({earlier.note})"[:200]
            runs, fresh.provenance = fresh.provenance, []
            fresh.add_provenance(*earlier.provenance, *runs)  # the newest kept last
        store.delete_candidate(data["key"])
        short = len(data.get("short", []))
        return [Delta("add", sid, f"promoted after {len(evidence)} runs"
                      + (f" and {short} that stopped short of it" if short else "")
                      + (f" and {len(flows)} that showed its data flow" if flows else ""))]

    # -- merge and retire ------------------------------------------------------------------

    def _merge(self, store: PlaybookStore, touched: dict[str, Strategy]) -> list[Delta]:
        """Fold each touched strategy into an existing near-duplicate of its domain, if any."""
        deltas = []
        for sid in list(touched):
            fresh = touched[sid]
            if fresh.status != "active":
                continue
            for other in store.strategies(fresh.domain):
                if other.id == sid or touched.get(other.id, other).status != "active":
                    continue
                other = touched.get(other.id, other)
                if not self.near_duplicates(fresh, other):
                    continue
                keep, drop = (fresh, other) if fresh.score() >= other.score() else (other, fresh)
                _fold(keep, drop)
                touched[keep.id], touched[drop.id] = keep, drop
                deltas.append(Delta("merge", drop.id, f"merged into {keep.id}"))
                break
        return deltas

    def near_duplicates(self, a: Strategy, b: Strategy) -> bool:
        """Same kind and the same tools with the same words, or nearly the same advice.

        Sequence and pitfall advice is written from one template, so two of them share most
        of their words whatever tools they name ("Call helix(name), then answer. Do not use
        atlas ..." and "Call nimbus(name), then answer. Do not use atlas, helix ..."): for
        them only the same tools can make the same pattern. Merging those two made one
        strategy that sent phone-extension questions to the wrong system.
        """
        if a.kind != b.kind:
            return False
        if a.kind != "advice" and a.tools != b.tools:
            return False
        advice = _jaccard(set(keywords(a.advice)), set(keywords(b.advice)))
        if a.tools == b.tools and a.tools:
            return advice >= self.merge_similarity / 2
        return advice >= self.merge_similarity

    def retire(self, store: PlaybookStore, domain: str, now: float | None = None) -> list[Delta]:
        """Retire harmful, stale and (beyond the size bound) the weakest strategies."""
        now = time.time() if now is None else now
        deltas: list[Delta] = []
        active = store.strategies(domain)
        keep: list[Strategy] = []
        changed: list[Strategy] = []
        for s in active:
            reason = ""
            failing = (s.success_rate or 0.0) < self.retire_below_success
            if s.uses >= self.retire_min_uses and failing:
                reason = f"harmful: {s.helpful}/{s.uses} runs succeeded"
            elif now - s.updated_at > self.stale_after_s and s.detail != NO_CALL:
                # (not the no-call lesson: while it holds, runs begin with a call, so the
                # answers that would confirm it can no longer happen)
                reason = f"stale: not confirmed for {(now - s.updated_at) / 86400:.0f} days"
            if reason:
                s.status, s.note = "retired", reason
                changed.append(s)
                deltas.append(Delta("retire", s.id, reason))
            else:
                keep.append(s)
        keep.sort(key=lambda s: (s.score(), s.updated_at), reverse=True)
        for s in keep[self.max_per_domain:]:
            s.status, s.note = "retired", f"evicted: playbook bound {self.max_per_domain}"
            changed.append(s)
            deltas.append(Delta("retire", s.id, s.note))
        store.put(changed)
        return deltas


def _no_call_shown(evidence: list[dict[str, Any]], wrong_needed: int) -> bool:
    """Whether answers without a tool call were wrong often enough to make runs begin with
    one: ``wrong_needed`` wrong ones (of different tasks), and under a fifth of all such
    answers right (a model that answers some tasks well from memory keeps doing so)."""
    wrong = sum(1 for i in evidence if not i.get("success"))
    return wrong >= wrong_needed and 5 * (len(evidence) - wrong) < len(evidence)


def _task_of(insight: dict[str, Any]) -> str | tuple[str, ...]:
    """An insight's task identity: its prompt's fingerprint (keywords for older insights)."""
    return insight.get("task") or tuple(sorted(insight["keywords"]))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _shown_of(insight: Insight, evidence: Sequence[Insight]) -> Insight:
    """The insight whose advice a promoted strategy shows: a pitfall's own (its error class
    and repair, the same in all evidence); for a sequence, the run that wasted most, whose
    advice names every tool worth skipping."""
    if insight.kind == "pitfall":
        return insight
    return max(evidence, key=lambda i: (len(i.advice), i.run_id))


def _new_strategy(sid: str, insight: Insight, evidence: Sequence[Insight], shown: Insight,
                  where: Sequence[Insight] | None = None) -> Strategy:
    """A promoted strategy, with ``shown``'s advice and the typed values written with it;
    its applicability comes from the tasks of ``where`` (default: all the evidence)."""
    now = time.time()
    words = applicability(evidence if where is None else where)
    strategy = Strategy(id=sid, domain=insight.domain, advice=shown.advice, kind=insight.kind,
                        section=" ".join(words[:3]), tools=list(insight.tools),
                        applies_when=words, support=len(evidence), created_at=now,
                        updated_at=now, detail=insight.detail, about_tool=insight.about_tool,
                        timed_out=insight.timed_out, error_class=insight.error_class,
                        repair=insight.repair, first_args=list(shown.first_args),
                        skips=list(shown.skips))
    if insight.kind == "sequence":
        strategy.word_support = word_support(evidence if where is None else where)
    strategy.add_provenance(*(i.run_id for i in evidence))
    strategy.probed = sum(i.run_id.endswith(PROBED) for i in evidence)
    for i in evidence:
        strategy.add_run(i.feeds, i.head)
    return strategy


def _confirm(strategy: Strategy, insight: Insight) -> None:
    """The pattern of an existing strategy was seen again: more support, fresher words."""
    strategy.support += 1
    strategy.probed += insight.run_id.endswith(PROBED)
    strategy.add_provenance(insight.run_id)
    strategy.add_run(insight.feeds, insight.head)
    if strategy.kind == "sequence":
        strategy.applies_when, strategy.word_support = confirmed_by(
            strategy.applies_when, strategy.word_support, insight,
            read=[str(f.get("text", "")) for run in strategy.feeds for f in run])
    else:
        strategy.applies_when = confirmed(strategy.applies_when, insight)
    strategy.updated_at = time.time()


def _fold(keep: Strategy, drop: Strategy) -> None:
    keep.helpful += drop.helpful
    keep.harmful += drop.harmful
    keep.sum_iterations += drop.sum_iterations
    keep.sum_tool_latency_ms += drop.sum_tool_latency_ms
    keep.support += drop.support
    keep.probed += drop.probed
    keep.add_provenance(*drop.provenance)
    for feeds in drop.feeds:
        keep.add_feeds(feeds)
    keep.add_head(None, drop.heads)
    keep.applies_when = by_root([*keep.applies_when, *drop.applies_when])[:12]
    keep.word_support = word_support([], keep.word_support, more=drop.word_support)
    keep.updated_at = time.time()
    drop.status, drop.note = "retired", f"merged into {keep.id}"
    drop.updated_at = keep.updated_at
