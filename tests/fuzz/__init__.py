"""The run engine's invariant fuzzer: seeded random runs checked against the loop's promises.

``python -m tests.fuzz.engine --runs N [--seed S] [--workers K]`` runs N scenarios and prints
what they exercised and every violation with its seed; ``tests/fuzz/test_engine_fuzz.py`` runs
a fixed seed range in the test suite. A scenario is a pure function of its seed, so any
violation is reproduced with ``python -m tests.fuzz.engine --seed S --runs 1 --show``.
"""
