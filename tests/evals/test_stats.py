"""The intervals and tests are right: checked against known distributions and exact values.

A coin of known bias: over many simulated samples, the share of 95 % Wilson intervals that
contain the true bias is near 95 %; likewise the t interval for a normal mean. Seeded, so the
figures are the same on every run.
"""

from __future__ import annotations

import math
import random
from itertools import product

import pytest

from toolcycle.evals.stats import (
    mean_interval,
    pass_at_k,
    pass_hat_k,
    sign_test,
    t_quantile,
    wilcoxon,
    wilson,
)

SIMULATIONS = 4000


@pytest.mark.parametrize(("bias", "n"), [(0.5, 20), (0.3, 50), (0.8, 30), (0.9, 100)])
def test_wilson_covers_a_coin_of_known_bias_about_95_percent_of_the_time(
        bias: float, n: int) -> None:
    rng = random.Random(20261205)
    covered = 0
    for _ in range(SIMULATIONS):
        heads = sum(rng.random() < bias for _ in range(n))
        interval = wilson(heads, n)
        covered += interval.low <= bias <= interval.high
    coverage = covered / SIMULATIONS
    # Wilson's coverage oscillates around the nominal level with n and p (a discrete
    # distribution); within ±2.5 points is what it guarantees in practice at these sizes,
    # where the Wald interval drops to ~88 % at p=0.9, n=100... and 0 % at 0/n.
    assert 0.925 <= coverage <= 0.975, coverage


def test_the_wald_interval_would_fail_the_same_check() -> None:
    """The check has teeth: the textbook interval under-covers a biased coin with small n."""
    rng = random.Random(7)
    bias, n, covered = 0.9, 20, 0
    for _ in range(SIMULATIONS):
        p = sum(rng.random() < bias for _ in range(n)) / n
        half = 1.96 * math.sqrt(p * (1 - p) / n)
        covered += p - half <= bias <= p + half
    assert covered / SIMULATIONS < 0.9


@pytest.mark.parametrize("n", [3, 5, 10])
def test_t_interval_covers_a_normal_mean_95_percent_of_the_time(n: int) -> None:
    rng = random.Random(n)
    covered = 0
    for _ in range(SIMULATIONS):
        sample = [rng.gauss(10.0, 3.0) for _ in range(n)]
        interval = mean_interval(sample)
        covered += interval.low <= 10.0 <= interval.high
    assert 0.935 <= covered / SIMULATIONS <= 0.965


def test_t_quantiles_match_the_published_table() -> None:
    table = {1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 10: 2.228, 30: 2.042, 120: 1.980}
    for df, value in table.items():
        assert t_quantile(0.975, df) == pytest.approx(value, abs=1e-3)
    assert t_quantile(0.025, 4) == pytest.approx(-2.776, abs=1e-3)


def test_wilson_edges() -> None:
    assert wilson(0, 0).n == 0
    none = wilson(0, 10)
    assert none.low == 0.0 and 0.25 < none.high < 0.35  # not the Wald's [0, 0]
    full = wilson(10, 10)
    assert full.high == 1.0 and 0.65 < full.low < 0.75
    with pytest.raises(ValueError):
        wilson(11, 10)


def test_pass_at_k_and_pass_hat_k_match_brute_force_over_subsets() -> None:
    """Unbiased: the mean over every k-subset of the n runs, computed by enumeration."""
    for n, correct in product(range(1, 7), range(7)):
        if correct > n:
            continue
        runs = [True] * correct + [False] * (n - correct)
        for k in range(1, n + 1):
            subsets = _subsets(list(range(n)), k)
            any_pass = sum(any(runs[i] for i in s) for s in subsets) / len(subsets)
            all_pass = sum(all(runs[i] for i in s) for s in subsets) / len(subsets)
            assert pass_at_k(n, correct, k) == pytest.approx(any_pass)
            assert pass_hat_k(n, correct, k) == pytest.approx(all_pass)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def _subsets(items: list[int], k: int) -> list[tuple[int, ...]]:
    from itertools import combinations

    return list(combinations(items, k))


def test_sign_test_exact_values() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(8, 1) == pytest.approx(20 / 512)  # 2 * (1 + 9) / 2^9
    assert sign_test(5, 5) == 1.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)


def test_wilcoxon_exact_and_normal() -> None:
    assert wilcoxon([0, 0]) == 1.0
    # n=6, all positive: the one most extreme of 64 sign patterns on each side
    assert wilcoxon([1, 2, 3, 4, 5, 6]) == pytest.approx(2 / 64)
    # symmetric differences: no evidence at all
    assert wilcoxon([1, -1, 2, -2, 3, -3]) == 1.0
    large = [i * (1 if i % 4 else -1) for i in range(1, 41)]
    assert 0.0 < wilcoxon(large) < 0.05
    assert wilcoxon([-d for d in large]) == pytest.approx(wilcoxon(large))


def test_wilcoxon_rejects_a_shift_about_as_often_as_it_should() -> None:
    """Under no difference, p < 0.05 in about 5 % of samples (exact test: at most 5 %)."""
    rng = random.Random(3)
    rejections = sum(wilcoxon([rng.gauss(0, 1) for _ in range(12)]) < 0.05
                     for _ in range(2000))
    assert 0.02 <= rejections / 2000 <= 0.06
