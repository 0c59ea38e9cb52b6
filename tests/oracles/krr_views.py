"""Brute-force oracle: the exact law of each adversary's view of shuffled k-RR.

Every outcome of every user is enumerated: user i reports the truth x_i with
probability 1 - gamma (blanket bit beta_i = 0) or a uniform value of [k] with
probability gamma (beta_i = 1, each value with probability gamma / k). The shuffler
reveals the multiset of reports, i.e. the histogram of the n reports. The two
neighbouring datasets differ in the last user: x_n = 0 under X and x_n = 1 under X'
(values are 0-based here; the paper's 1 and 2). The first n - 1 values are known to
the adversary and fixed.

* strong adversary (Koskela et al. 2023, Def. 12): sees every blanket bit beta_1..beta_n and
  the histogram;
* weak adversary (Koskela et al. 2023, Def. 14): sees beta_1..beta_{n-1} and the histogram.

Probabilities are exact fractions; delta(eps) is the hockey-stick divergence
sum_v max(P(v) - e^eps Q(v), 0) over the views, in both directions. This module
shares no code with ``pld.shuffling.krr.mechanism``; it is the truth the library is tested
against, for tiny n only (the enumeration has (k + 1)^n terms).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction

ViewLaw = dict[tuple, Fraction]


def _user_outcomes(value: int, k: int, gamma: Fraction) -> list[tuple[int, int, Fraction]]:
    """(blanket bit, report, probability) of one user whose true value is ``value``."""
    outcomes = [(0, value, 1 - gamma)]
    outcomes += [(1, report, gamma / k) for report in range(k)]
    return outcomes


def default_others(n: int, k: int) -> tuple[int, ...]:
    """A mixed dataset for the first n - 1 users: x_i = i mod k."""
    return tuple(i % k for i in range(n - 1))


def view_laws(
    n: int,
    k: int,
    gamma: Fraction | float,
    adversary: str,
    others: Sequence[int] | None = None,
) -> tuple[ViewLaw, ViewLaw]:
    """Exact laws (P under X, Q under X') of the adversary's whole view.

    A view is ``(blanket bits seen, histogram of the n reports)``.
    """
    gamma = Fraction(gamma)
    others = default_others(n, k) if others is None else tuple(others)
    if len(others) != n - 1:
        raise ValueError("others must hold the values of the first n - 1 users")
    laws = []
    for target in (0, 1):
        law: ViewLaw = defaultdict(Fraction)
        per_user = [_user_outcomes(x, k, gamma) for x in (*others, target)]
        for combination in itertools.product(*per_user):
            bits = tuple(bit for bit, _, _ in combination)
            histogram = [0] * k
            probability = Fraction(1)
            for _, report, p in combination:
                histogram[report] += 1
                probability *= p
            seen = bits if adversary == "strong" else bits[:-1]
            law[(seen, tuple(histogram))] += probability
        laws.append(dict(law))
    return laws[0], laws[1]


def statistic_law(
    n: int,
    k: int,
    gamma: Fraction | float,
    adversary: str,
    others: Sequence[int] | None = None,
) -> tuple[ViewLaw, ViewLaw]:
    """Exact laws (P under X, Q under X') of the counts the adversary reduces its view to.

    After removing the truthful reports of the first n - 1 users (which both
    adversaries know), ``h1`` and ``h2`` are the counts of the values 0 and 1 left in
    the histogram and ``b`` the number of blanket members among the first n - 1 users.

    * weak: the statistic is ``(b, h1, h2)``;
    * strong: ``("random",)`` when the target answered randomly, else ``(h1, h2)``.
    """
    gamma = Fraction(gamma)
    others = default_others(n, k) if others is None else tuple(others)
    laws = []
    for target in (0, 1):
        law: ViewLaw = defaultdict(Fraction)
        per_user = [_user_outcomes(x, k, gamma) for x in (*others, target)]
        for combination in itertools.product(*per_user):
            residual = [0] * k
            probability = Fraction(1)
            for _, report, p in combination:
                residual[report] += 1
                probability *= p
            for (bit, _, _), x in zip(combination[:-1], others, strict=True):
                if bit == 0:
                    residual[x] -= 1
            if adversary == "weak":
                blanket = sum(bit for bit, _, _ in combination[:-1])
                law[(blanket, residual[0], residual[1])] += probability
            elif combination[-1][0] == 1:
                law[("random",)] += probability
            else:
                law[(residual[0], residual[1])] += probability
        laws.append(dict(law))
    return laws[0], laws[1]


def hockey_stick(p_law: ViewLaw, q_law: ViewLaw, eps: float) -> float:
    """sum_v max(P(v) - e^eps Q(v), 0), exact masses, float result."""
    scale = math.exp(eps)
    total = 0.0
    for view, p in p_law.items():
        excess = float(p) - scale * float(q_law.get(view, Fraction(0)))
        if excess > 0:
            total += excess
    return total


def delta(
    n: int,
    k: int,
    gamma: Fraction | float,
    adversary: str,
    eps: Sequence[float],
    others: Sequence[int] | None = None,
) -> list[float]:
    """Tight delta(eps) of the adversary's view: the larger of the two directions."""
    p_law, q_law = view_laws(n, k, gamma, adversary, others)
    return [max(hockey_stick(p_law, q_law, e), hockey_stick(q_law, p_law, e)) for e in eps]
