"""The statistics of an eval: intervals, pass@k / pass^k, and paired tests, in plain Python.

Which interval, and why:

- **Proportions** (a pass rate over runs) get the **Wilson score interval**. The textbook
  "p ± 1.96·sqrt(p(1-p)/n)" (Wald) collapses to a zero-width interval at 0/n and n/n, which
  is exactly where small evals live (3 of 3 runs passed), and its coverage falls far below
  95 % for small n. Wilson stays inside [0, 1] and keeps its coverage near nominal
  (tests/evals/test_stats.py simulates a coin of known bias to check it).
- **Means** (a score, iterations, tokens, latency) get the **Student t interval**. Evals have
  few repeats (3 to 10); a bootstrap from 3 values resamples at most 10 distinct means and
  gives intervals that are too narrow, while t widens them honestly for small n. With one
  value there is no spread to measure, so the interval is the value itself, flagged by n=1.

Paired tests (two experiments over the same cases):

- **Pass / fail**: the exact two-sided **sign test** on the cases that changed (McNemar's
  exact test on the discordant pairs): it needs no normal approximation, so it is right for
  the handful of changed cases a small eval has.
- **Numbers**: the **Wilcoxon signed-rank test**, exact below 26 non-zero differences and by
  its normal approximation above; it assumes no distribution for the differences, which
  token counts and latencies never follow.

No scipy: the Student t quantile comes from the regularized incomplete beta function
(continued fraction), which is all the t distribution needs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist, fmean, stdev

CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean (or proportion) with its interval: ``low <= mean <= high`` at ``confidence``.

    ``method``: ``"wilson"`` (a proportion), ``"t"`` (a mean) or ``"none"`` (too few values
    for an interval: ``low == high == mean``).
    """

    mean: float
    low: float
    high: float
    n: int
    method: str
    confidence: float = CONFIDENCE

    def to_dict(self) -> dict[str, float | int | str]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n,
                "method": self.method, "confidence": self.confidence}

    def __str__(self) -> str:
        if self.method == "none":
            return f"{self.mean:.3g}"
        return f"{self.mean:.3g} [{self.low:.3g}, {self.high:.3g}]"


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: int, n: int, confidence: float = CONFIDENCE) -> Estimate:
    """The Wilson score interval of ``successes`` out of ``n`` (empty: 0 with [0, 1])."""
    if n <= 0:
        return Estimate(0.0, 0.0, 1.0, 0, "wilson", confidence)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    z = _z(confidence)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends, not 1e-17
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Estimate(p, low, high, n, "wilson", confidence)


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Estimate:
    """The mean of ``values`` with its Student t interval (one value: no interval)."""
    n = len(values)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "none", confidence)
    mean = fmean(values)
    if n == 1:
        return Estimate(mean, mean, mean, 1, "none", confidence)
    half = t_quantile(0.5 + confidence / 2, n - 1) * stdev(values) / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n, "t", confidence)


def average(values: Sequence[float]) -> float:
    """The plain mean, NaN for no values (a figure that does not exist, written as null)."""
    return fmean(values) if values else math.nan


def pass_at_k(n: int, correct: int, k: int) -> float:
    """The chance that at least one of ``k`` runs passes, estimated without bias from ``n``
    runs of which ``correct`` passed: ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021)."""
    _check_k(n, correct, k)
    if n - correct < k:
        return 1.0
    return 1.0 - math.comb(n - correct, k) / math.comb(n, k)


def pass_hat_k(n: int, correct: int, k: int) -> float:
    """pass^k: the chance that all ``k`` runs pass, ``C(c, k) / C(n, k)`` (Yao et al. 2024,
    τ-bench): how reliably the agent passes, where pass@k says whether it can at all."""
    _check_k(n, correct, k)
    return math.comb(correct, k) / math.comb(n, k)


def _check_k(n: int, correct: int, k: int) -> None:
    if not 0 <= correct <= n:
        raise ValueError(f"correct must be between 0 and n={n}, got {correct}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of runs n={n}, got {k}")


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact p-value that ``better`` vs ``worse`` changed cases (ties dropped) came
    from a coin that favours neither side (McNemar's exact test on discordant pairs)."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(better, worse) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def wilcoxon(differences: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test that the paired differences are
    centred on zero (zeros dropped; ties get average ranks)."""
    nonzero = [d for d in differences if d != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    order = sorted(range(n), key=lambda i: abs(nonzero[i]))
    doubled = [0] * n  # ranks times two, so that average ranks of ties stay integers
    start = 0
    while start < n:
        end = start
        while end + 1 < n and abs(nonzero[order[end + 1]]) == abs(nonzero[order[start]]):
            end += 1
        for position in range(start, end + 1):
            doubled[order[position]] = start + end + 2
        start = end + 1
    plus = sum(r for r, d in zip(doubled, nonzero, strict=True) if d > 0)
    total = sum(doubled)
    if n <= 25:
        return _exact_signed_rank(doubled, min(plus, total - plus))
    mean = total / 2
    sd = math.sqrt(sum(r * r for r in doubled) / 4)
    z = (abs(plus - mean) - 0.5) / sd if sd else 0.0
    return min(1.0, 2 * (1 - NormalDist().cdf(max(z, 0.0))))


def _exact_signed_rank(doubled: list[int], statistic: int) -> float:
    """P(W <= statistic) * 2 over all 2^n sign assignments, counted by dynamic programming."""
    counts = {0: 1}
    for rank in doubled:
        step: dict[int, int] = dict(counts)
        for value, count in counts.items():
            step[value + rank] = step.get(value + rank, 0) + count
        counts = step
    tail = sum(c for value, c in counts.items() if value <= statistic)
    return min(1.0, 2 * tail / (1 << len(doubled)))


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on its CDF)."""
    if not 0 < p < 1 or df < 1:
        raise ValueError(f"need 0 < p < 1 and df >= 1, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        if _t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, x)
    return 1 - tail if t >= 0 else tail


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1.0 - _incomplete_beta(b, a, 1 - x)
    return front * _beta_fraction(a, b, x) / a


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Lentz's evaluation of the incomplete beta continued fraction."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result
