"""Brute-force truth: the exact output law of the shuffled k-ary randomised response.

Each of n users holds a value x in {0, ..., k-1} and reports x with probability
1 - γ + γ/k and each other value with probability γ/k (k-RR; it is ε0-LDP with
ε0 = log(((1 - γ) k + γ) / γ)). After shuffling, the adversary sees the reports
as a multiset, i.e. their histogram; the histogram's law is the convolution of
the n users' one-hot multinoulli laws, enumerated here outcome by outcome.

The tight δ(ε) of the shuffled mechanism is the largest hockey-stick divergence
H_{e^ε}(M(X) || M(X')) over neighbouring datasets X, X' (one user's value
replaced), in both orders. Shuffling makes the law depend on X only through its
value counts, so datasets are enumerated as count vectors. Plain floats: n <= 6
and k <= 3 give at most 28 histograms, and every mass is a sum of products of
at most 6 factors (relative error below 1e-14).
"""

from __future__ import annotations

import itertools
import math


def krr_eps0(k: int, gamma: float) -> float:
    """Local privacy parameter ε0 (nats) of k-RR with blanket probability γ in (0, 1]."""
    return math.log(((1.0 - gamma) * k + gamma) / gamma)


def histogram_law(counts: tuple[int, ...], gamma: float) -> dict[tuple[int, ...], float]:
    """Law of the histogram of shuffled k-RR reports for data with value counts ``counts``."""
    k = len(counts)
    keep = 1.0 - gamma + gamma / k
    switch = gamma / k
    law = {(0,) * k: 1.0}
    for value, count in enumerate(counts):
        for _ in range(count):
            updated: dict[tuple[int, ...], float] = {}
            for histogram, mass in law.items():
                for report in range(k):
                    moved = list(histogram)
                    moved[report] += 1
                    key = tuple(moved)
                    factor = keep if report == value else switch
                    updated[key] = updated.get(key, 0.0) + mass * factor
            law = updated
    return law


def hockey_stick(
    law_p: dict[tuple[int, ...], float], law_q: dict[tuple[int, ...], float], eps: float
) -> float:
    """H_{e^eps}(P || Q) = sum over outcomes of (P - e^eps Q)_+."""
    factor = math.exp(eps)
    return sum(max(0.0, mass - factor * law_q.get(key, 0.0)) for key, mass in law_p.items())


def count_vectors(n: int, k: int) -> list[tuple[int, ...]]:
    """All value-count vectors of n users over k values."""
    return [counts for counts in itertools.product(range(n + 1), repeat=k) if sum(counts) == n]


def worst_case_delta(n: int, k: int, gamma: float, eps: float) -> float:
    """Tight δ(ε) of shuffled k-RR: max over neighbouring datasets, both orders."""
    worst = 0.0
    laws = {counts: histogram_law(counts, gamma) for counts in count_vectors(n, k)}
    for counts, law in laws.items():
        for source, target in itertools.permutations(range(k), 2):
            if counts[source] == 0:
                continue
            neighbour = list(counts)
            neighbour[source] -= 1
            neighbour[target] += 1
            worst = max(worst, hockey_stick(law, laws[tuple(neighbour)], eps))
    return worst
