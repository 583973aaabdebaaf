"""The figures of bench/learning.py: paired comparison of the two arms, with 95 % intervals.

Every test task runs once per repeat in each arm with the same seed, so runs pair up by
``(task, repeat)``. Figures:

- per arm: success (Wilson 95 % interval), mean iterations over all runs and over the pairs
  where both arms succeeded (a failed run that gives up early must not look "fast"), tokens
  per task; means with t-based 95 % intervals over runs;
- paired: the mean change per pair (playbook - baseline) with its 95 % interval, relative to
  the baseline mean;
- the share of test tasks made worse: fewer successes over the repeats, or as many with more
  mean iterations;
- all of it per kind of task.

The seed spec's criteria come from the learning phase and the test runs: SC-003 (a strategy
captured within 3 successful completions of its kind), SC-005 (success on tasks whose primary
tool fails), and whether learned strategies prefer faster and more reliable tools.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from toolcycle.evals import stats

Rows = list[dict[str, Any]]


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its t-based 95 % interval (0 for fewer than 2 values):
    :func:`toolcycle.evals.stats.mean_interval`, the interval users' eval reports give."""
    if not values:
        return math.nan, math.nan
    estimate = stats.mean_interval(values)
    return estimate.mean, estimate.high - estimate.mean


def wilson(successes: int, n: int) -> tuple[float, float, float]:
    """A proportion and its Wilson 95 % interval (:func:`toolcycle.evals.stats.wilson`)."""
    if n == 0:
        return math.nan, math.nan, math.nan
    estimate = stats.wilson(successes, n)
    return estimate.mean, estimate.low, estimate.high


def pairs(baseline: list[Rows], playbook: list[Rows]) -> list[tuple[dict[str, Any], ...]]:
    """(baseline row, playbook row) per task and repeat."""
    out = []
    for b_rows, p_rows in zip(baseline, playbook, strict=False):
        by_task = {r["task"]: r for r in p_rows}
        out += [(b, by_task[b["task"]]) for b in b_rows if b["task"] in by_task]
    return out


def _fmt(mean: float, half: float, digits: int = 2) -> str:
    return "n/a" if math.isnan(mean) else f"{mean:.{digits}f} ± {half:.{digits}f}"


def _rel(delta: float, base: float) -> str:
    return "n/a" if not base or math.isnan(delta) else f"{100 * delta / base:+.0f} %"


def arm_figures(rows: Rows, both_ok: Rows) -> dict[str, Any]:
    ok = sum(bool(r["success"]) for r in rows)
    return {
        "n": len(rows), "success": wilson(ok, len(rows)),
        "iterations": mean_ci([r["iterations"] for r in rows]),
        "iterations_both_ok": mean_ci([r["iterations"] for r in both_ok]),
        "tokens": mean_ci([r["tokens"] for r in rows]),
        "tokens_both_ok": mean_ci([r["tokens"] for r in both_ok]),
    }


def success_sign_test(paired: list[tuple[dict[str, Any], ...]]) -> float:
    """The exact sign test (``toolcycle.evals``' paired test) over the tasks whose number of
    successes changed between the arms: is the change in success more than noise?"""
    by_task: dict[str, list[int]] = {}
    for b, p in paired:
        change = by_task.setdefault(b["task"], [0])
        change[0] += int(bool(p["success"])) - int(bool(b["success"]))
    up = sum(1 for (c,) in by_task.values() if c > 0)
    down = sum(1 for (c,) in by_task.values() if c < 0)
    return stats.sign_test(up, down)


def tasks_made_worse(paired: list[tuple[dict[str, Any], ...]]) -> tuple[int, int, int]:
    """(worse, better, tasks): per task over the repeats, fewer successes, or as many with
    more mean iterations (better: the reverse)."""
    by_task: dict[str, list[tuple[dict[str, Any], ...]]] = {}
    for pair in paired:
        by_task.setdefault(pair[0]["task"], []).append(pair)
    worse = better = 0
    for task_pairs in by_task.values():
        b_ok = sum(bool(b["success"]) for b, _ in task_pairs)
        p_ok = sum(bool(p["success"]) for _, p in task_pairs)
        b_it = statistics.fmean(b["iterations"] for b, _ in task_pairs)
        p_it = statistics.fmean(p["iterations"] for _, p in task_pairs)
        if p_ok < b_ok or (p_ok == b_ok and p_it > b_it):
            worse += 1
        elif p_ok > b_ok or p_it < b_it:
            better += 1
    return worse, better, len(by_task)


def compare(paired: list[tuple[dict[str, Any], ...]]) -> dict[str, Any]:
    """Both arms' figures and the paired changes for a set of pairs."""
    both = [(b, p) for b, p in paired if b["success"] and p["success"]]
    base = arm_figures([b for b, _ in paired], [b for b, _ in both])
    play = arm_figures([p for _, p in paired], [p for _, p in both])
    diff = {
        key: mean_ci([float(p[key]) - float(b[key]) for b, p in subset])
        for key, subset in (("iterations", paired), ("tokens", paired))
    }
    diff["iterations_both_ok"] = mean_ci([p["iterations"] - b["iterations"] for b, p in both])
    diff["tokens_both_ok"] = mean_ci([float(p["tokens"]) - float(b["tokens"]) for b, p in both])
    diff["success"] = mean_ci([float(p["success"]) - float(b["success"]) for b, p in paired])
    worse, better, tasks = tasks_made_worse(paired)
    return {"baseline": base, "playbook": play, "diff": diff, "pairs": len(paired),
            "both_ok_pairs": len(both), "tasks_worse": worse, "tasks_better": better,
            "tasks": tasks, "success_p": success_sign_test(paired)}


def render(result: dict[str, Any]) -> str:
    """The tables bench/learning.py prints (markdown)."""
    lines = ["| arm | success [95 % CI] | iterations, all runs | iterations, both arms ok | "
             "tokens / task |", "|---|---|---|---|---|"]
    for label, key in (("no playbook", "baseline"), ("learned playbook", "playbook")):
        a = result[key]
        p, lo, hi = a["success"]
        lines.append(f"| {label} | {100 * p:.0f} % [{100 * lo:.0f}, {100 * hi:.0f}] | "
                     f"{_fmt(*a['iterations'])} | {_fmt(*a['iterations_both_ok'])} | "
                     f"{_fmt(*a['tokens'], digits=0)} |")
    d, b = result["diff"], result["baseline"]
    lines += ["", f"paired over {result['pairs']} (task, repeat) pairs, "
              f"{result['both_ok_pairs']} with both arms ok; playbook - baseline:",
              f"- iterations, all runs: {_fmt(*d['iterations'])} "
              f"({_rel(d['iterations'][0], b['iterations'][0])}; target <= -30 %)",
              f"- iterations, both ok: {_fmt(*d['iterations_both_ok'])} "
              f"({_rel(d['iterations_both_ok'][0], b['iterations_both_ok'][0])}; "
              "target <= -30 %)",
              f"- success: {100 * d['success'][0]:+.0f} ± {100 * d['success'][1]:.0f} points "
              "(target >= +10 where the baseline is below 90 %; sign test over tasks "
              f"p={result.get('success_p', math.nan):.3g})",
              f"- tokens / task: {_fmt(*d['tokens'], digits=0)} "
              f"({_rel(d['tokens'][0], b['tokens'][0])}; target <= +10 %)",
              f"- tokens / task, both ok: {_fmt(*d['tokens_both_ok'], digits=0)} "
              f"({_rel(d['tokens_both_ok'][0], b['tokens_both_ok'][0])}; a run that gives "
              "up early spends less)",
              f"- test tasks made worse: {result['tasks_worse']}/{result['tasks']} "
              f"(better: {result['tasks_better']})"]
    kinds = result.get("kinds", {})
    if kinds:
        lines += ["", "| kind | pairs | success b → p | iterations b → p (all) | "
                  "iterations b → p (both ok) | tokens b → p | tasks worse |",
                  "|---|---|---|---|---|---|---|"]
        for kind, k in sorted(kinds.items()):
            kb, kp = k["baseline"], k["playbook"]
            lines.append(
                f"| {kind} | {k['pairs']} | {100 * kb['success'][0]:.0f} → "
                f"{100 * kp['success'][0]:.0f} % | {_fmt(*kb['iterations'])} → "
                f"{_fmt(*kp['iterations'])} | {_fmt(*kb['iterations_both_ok'])} → "
                f"{_fmt(*kp['iterations_both_ok'])} | {kb['tokens'][0]:.0f} → "
                f"{kp['tokens'][0]:.0f} | {k['tasks_worse']}/{k['tasks']} |")
    return "\n".join(lines)


def analyse_runs(baseline: list[Rows], playbook: list[Rows]) -> dict[str, Any]:
    """Everything above, overall and per kind."""
    paired = pairs(baseline, playbook)
    result = compare(paired)
    kinds = sorted({b["kind"] for b, _ in paired})
    result["kinds"] = {k: compare([pr for pr in paired if pr[0]["kind"] == k]) for k in kinds}
    return result


def iteration_floor(paired: list[tuple[dict[str, Any], ...]], extra: Rows | None = None,
                    fewest: dict[str, int] | None = None) -> dict[str, Any]:
    """How far any playbook could cut iterations on these tasks: the shortest run per kind.

    The floor of a kind is the fewest iterations its tasks allow (``fewest``: the tool calls
    they need, then the answer, as the suite declares them) or a shorter successful run seen
    here (either arm, and the learning runs in ``extra``: a model may guess what a tool would
    have told it). Over the pairs both arms solved a playbook cannot go below it, so
    ``1 - floor / baseline`` bounds the cut it can show there; when that bound is under a
    target, the suite and the baseline, not the method, decide the verdict. Without
    ``fewest`` the floor is only the shortest success seen, which may lie above the true one.
    """
    floor: dict[str, int] = dict(fewest or {})
    for r in [r for pair in paired for r in pair] + list(extra or []):
        if r["success"]:
            floor[r["kind"]] = min(floor.get(r["kind"], r["iterations"]), r["iterations"])
    both = [b for b, p in paired if b["success"] and p["success"] and b["kind"] in floor]
    base = statistics.fmean(b["iterations"] for b in both) if both else math.nan
    best = statistics.fmean(floor[b["kind"]] for b in both) if both else math.nan
    # Over all runs: every playbook run solving its task at its kind's floor. Only a run that
    # ends sooner, which a failed run can (a guess, giving up), would go lower than this.
    every = [b for b, _ in paired if b["kind"] in floor]
    all_base = statistics.fmean(b["iterations"] for b in every) if every else math.nan
    all_best = statistics.fmean(floor[b["kind"]] for b in every) if every else math.nan
    # Tokens likewise: every playbook run as cheap as its kind's cheapest success seen. When
    # that is above the baseline by more than a token target allows, the target and solving
    # the tasks the baseline gave up on cannot both be met.
    cheapest: dict[str, int] = {}
    for r in [r for pair in paired for r in pair] + list(extra or []):
        if r["success"] and "tokens" in r:
            cheapest[r["kind"]] = min(cheapest.get(r["kind"], r["tokens"]), r["tokens"])
    spent = [b for b, _ in paired if b["kind"] in cheapest and "tokens" in b]
    tokens_base = statistics.fmean(b["tokens"] for b in spent) if spent else math.nan
    tokens_best = statistics.fmean(cheapest[b["kind"]] for b in spent) if spent else math.nan
    return {"per_kind": dict(sorted(floor.items())), "declared": bool(fewest),
            "both_ok_baseline": base, "both_ok_floor": best,
            "most_cut_both_ok": 1 - best / base if both else math.nan,
            "all_baseline": all_base, "all_floor": all_best,
            "most_cut_all": 1 - all_best / all_base if every else math.nan,
            "tokens_per_kind": dict(sorted(cheapest.items())),
            "tokens_all_baseline": tokens_base, "tokens_all_floor": tokens_best,
            "least_tokens_change_all": tokens_best / tokens_base - 1 if spent else math.nan}


def render_floor(floor: dict[str, Any]) -> str:
    """One line for :func:`iteration_floor`."""
    kinds = ", ".join(f"{k} {v}" for k, v in floor["per_kind"].items())
    source = ("fewest iterations each kind allows, or a shorter success seen" if floor["declared"]
              else "shortest successful run seen per kind (the suite declares no minimum: "
              "possibly above the true floor)")
    return (f"- {source}: {kinds}; over the pairs both arms solved that floor is "
            f"{floor['both_ok_floor']:.2f} iterations against the baseline's "
            f"{floor['both_ok_baseline']:.2f}: no playbook can cut more than "
            f"{100 * floor['most_cut_both_ok']:.0f} % there; over all runs, every playbook run "
            f"solved at that floor would take {floor['all_floor']:.2f} against the baseline's "
            f"{floor['all_baseline']:.2f} ({-100 * floor['most_cut_all']:+.0f} %): a bigger cut "
            "there can only come from runs that end sooner than a solution allows"
            + ("" if "tokens_all_floor" not in floor or math.isnan(floor["tokens_all_floor"])
               else f"; and at its kind's cheapest success seen each run would spend "
               f"{floor['tokens_all_floor']:.0f} tokens against the baseline's "
               f"{floor['tokens_all_baseline']:.0f} "
               f"({100 * floor['least_tokens_change_all']:+.0f} %)"))


def sc003(learn_rows: Rows, strategy_log: list[list[dict[str, Any]]]) -> list[str]:
    """For each strategy: after how many successful completions of its kind it was captured.

    ``strategy_log[i]`` is the active strategies after learning run ``i``; a strategy's kind
    is the kind of the run that promoted it.
    """
    lines = []
    done: dict[str, int] = {}
    first_seen: set[str] = set()
    captured: dict[str, int] = {}
    for row, active in zip(learn_rows, strategy_log, strict=False):
        if row["success"]:
            done[row["kind"]] = done.get(row["kind"], 0) + 1
        for s in active:
            if s["id"] in first_seen:
                continue
            first_seen.add(s["id"])
            n = done.get(row["kind"], 0)
            lines.append(f"- {s['kind']} {s['tools']} captured after {n} successful "
                         f"completion(s) of kind {row['kind']} ({'met' if n <= 3 else 'missed'})")
            if s["kind"] == "sequence":
                captured.setdefault(row["kind"], n)
    for kind in sorted({r["kind"] for r in learn_rows} - set(captured)):
        lines.append(f"- kind {kind}: no sequence strategy captured "
                     f"({done.get(kind, 0)} successful completions)")
    return lines


def sc005(runs: list[Rows], kind: str) -> tuple[int, int, int]:
    """(right answers, runs whose tool results held the answer, runs) over the runs of
    ``kind``, whose primary tool fails on every call. A right answer means the run found the
    alternative (or was told it); a result holding the answer means it found it, however the
    model then wrote it ("3:45 PM" for "15:45"). Rows written before ``found`` was kept count
    their right answers there."""
    rows = [r for rows in runs for r in rows if r["kind"] == kind]
    found = sum(bool(r.get("found", r["success"])) for r in rows)
    return sum(bool(r["success"]) for r in rows), found, len(rows)


def tool_preference(strategies: list[dict[str, Any]], stats: dict[str, Any]) -> list[str]:
    """Per learned sequence strategy: its tools' miss rate and p50 against the skipped ones'."""
    lines = []
    for s in strategies:
        if s["kind"] != "sequence" or s.get("status") != "active":
            continue
        advice = s["advice"]
        skipped = advice.split("Do not use ", 1)[1].split(" for this kind")[0].split(", ") \
            if "Do not use " in advice else []

        def show(tools: list[str]) -> str:
            return ", ".join(
                f"{t} (miss {100 * stats[t].miss_rate:.0f} %, "
                + (f"p50 {stats[t].p50_ms:.0f} ms)" if stats[t].timed else "only in routines)")
                for t in tools if t in stats) or "none"

        rec = [stats[t] for t in s["tools"] if t in stats]
        alt = [stats[t] for t in skipped if t in stats]
        better = (not alt or max(r.miss_rate for r in rec) <= min(a.miss_rate for a in alt)) \
            if rec else False
        lines.append(f"- recommends {show(s['tools'])}; skips {show(skipped)}: "
                     f"{'more reliable' if better else 'NOT more reliable'}")
    return lines


def strategy_kinds(learn_rows: Rows, strategy_log: list[list[dict[str, Any]]]
                   ) -> dict[str, str]:
    """Strategy id -> the kind of the learning run after which it first was active (as
    :func:`sc003` reads it)."""
    kinds: dict[str, str] = {}
    for row, active in zip(learn_rows, strategy_log, strict=False):
        for s in active:
            kinds.setdefault(s["id"], row["kind"])
    return kinds


def tool_preference_by_kind(learn_rows: Rows, strategy_log: list[list[dict[str, Any]]]
                            ) -> list[str]:
    """Per learned sequence strategy: its tools' misses against the other tools the train runs
    of its kind called (``call_outcomes``: a routine's steps count as calls, untimed).

    Why beside :func:`tool_preference`: a tool's miss rate over every run mixes kinds. On
    `hotel`, the stay sequence's ``guest_ledger`` (25 % misses) was judged "NOT more reliable"
    than ``housekeeping_log`` (14 %), which answers housekeeping questions and not where a
    guest stays. Faster is judged on the timed calls' median.
    """
    kinds = strategy_kinds(learn_rows, strategy_log)
    final = strategy_log[-1] if strategy_log else []
    lines = []
    for s in final:
        if s["kind"] != "sequence" or s["id"] not in kinds:
            continue
        kind = kinds[s["id"]]
        calls: dict[str, list[tuple[bool, float]]] = {}
        for row in learn_rows:
            if row["kind"] == kind:
                for tool, status, ms in row.get("call_outcomes", []):
                    calls.setdefault(tool, []).append((status == "ok", ms))
        if not calls:
            lines.append(f"- kind {kind}: recommends {', '.join(s['tools'])}; no call outcomes "
                         "recorded (a run saved before they were)")
            continue

        miss = {t: 1 - sum(ok for ok, _ in rows) / len(rows) for t, rows in calls.items()}
        shown = {t: f"{t} (miss {100 * miss[t]:.0f} % of {len(rows)}, " + (
            f"p50 {statistics.median(timed):.0f} ms)"
            if (timed := [ms for _, ms in rows if ms >= 0]) else "untimed)")
            for t, rows in calls.items()}
        rec = [t for t in s["tools"] if t in calls]
        others = sorted(t for t in calls if t not in s["tools"])
        better = bool(rec) and (not others or max(miss[t] for t in rec)
                                <= min(miss[t] for t in others))
        lines.append(f"- kind {kind}: recommends {', '.join(shown[t] for t in rec) or 'none'};"
                     f" its runs also called {', '.join(shown[t] for t in others) or 'nothing'}"
                     f": {'more reliable' if better else 'NOT more reliable'}")
    return lines


def strategy_log_from_db(path: str, runs: int) -> list[list[dict[str, Any]]]:
    """The strategies that existed after each learning run, rebuilt from a playbook file.

    For a saved run without a ``strategy_log``: runs are observed one after another, each
    marked in ``observed_runs`` before its strategies are written, so a strategy created
    before the next run's mark came from this run or an earlier one.
    """
    import json
    import sqlite3

    conn = sqlite3.connect(path)
    marks = [at for (at,) in conn.execute("SELECT at FROM observed_runs ORDER BY at")][:runs]
    strategies = [json.loads(data) for (data,) in conn.execute("SELECT data FROM strategies")]
    conn.close()
    log = []
    for i in range(len(marks)):
        end = marks[i + 1] if i + 1 < len(marks) else math.inf
        log.append([{"id": s["id"], "kind": s["kind"], "tools": s["tools"]}
                    for s in strategies if s["created_at"] < end])
    return log
