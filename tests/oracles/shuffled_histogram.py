"""Brute-force truth: the shuffled histogram view of any finite randomizer, in exact fractions.

n users; user i holds x_i and reports y_i ~ R[x_i, :] independently; the shuffler
releases the multiset of reports, i.e. their histogram h. The law of h is the
convolution of the users' one-hot categorical laws, built user by user
(:func:`tests.oracles.shuffle_views.view_law`). For the target at x0 (law P) or x1
(law Q) and any multiset of the other users' inputs,
delta(eps) = sum_h (P(h) - e^eps Q(h))_+ is summed exactly, e^eps replaced by the
exact rational value of its float64 (:func:`tests.oracles.shuffle_views.hockey_stick`).

Three further exact truths, each computed without the view's law:

* :func:`homogeneous_deltas`: with the other n - 1 users at one input z and
  ``pi = R(z)``, ``delta = E[(X_1 + ... + X_n)_+] / n`` with i.i.d.
  ``X = (R(x0)(Y) - e^eps R(x1)(Y)) / pi(Y)``, ``Y ~ pi`` (docs/clones-validity.md,
  eq. (H)), summed over the multinomial law of the n draws;
* :func:`clone_matrix`: both clones pairs are themselves shuffled histograms, of a
  3-output "randomizer" whose other users sit at one row (outputs 0, 1 and a
  null output 2), so their exact delta is :func:`target_deltas` of that matrix;
* :func:`admits_stronger_clones`: the class condition of the stronger pair,
  ``(e^eps0 + 1) R(x) >= R(x0) + R(x1)`` for every x, in fractions.

Shares no code with ``pld``; n <= 6 and a handful of inputs and outputs only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

from tests.oracles.shuffle_views import Matrix, exact_matrix, hockey_stick, view_law

__all__ = [
    "admits_stronger_clones",
    "clone_deltas",
    "clone_matrix",
    "exact_matrix",
    "homogeneous_deltas",
    "local_eps0",
    "local_ratio",
    "target_deltas",
    "worst_deltas",
]


def local_ratio(probs: Matrix) -> Fraction:
    """e^eps0 exactly: the largest ``R(x)(y) / R(x')(y)`` (outputs no input reaches skipped).

    Raises ValueError when an output has probability 0 under one input and not
    under another (the randomizer is not eps0-LDP for any finite eps0).
    """
    best = Fraction(1)
    for column in zip(*probs, strict=True):
        low, high = min(column), max(column)
        if high == 0:
            continue
        if low == 0:
            raise ValueError("the randomizer is not eps0-LDP for a finite eps0")
        best = max(best, high / low)
    return best


def local_eps0(probs: Matrix) -> float:
    """The randomizer's eps0 in nats, rounded up so that it is never below the true value."""
    return math.nextafter(math.log(local_ratio(probs)), math.inf)


def target_deltas(
    probs: Matrix, others: Sequence[int], x0: int, x1: int, eps: Sequence[float]
) -> list[Fraction]:
    """H_{e^eps}(P || Q) at each eps: the others at ``others``, the target at x0 (P) or x1 (Q)."""
    law_p = view_law(probs, (*others, x0))
    law_q = view_law(probs, (*others, x1))
    return [hockey_stick(law_p, law_q, e) for e in eps]


def worst_deltas(
    probs: Matrix,
    n: int,
    eps: Sequence[float],
    pairs: Sequence[tuple[int, int]] | None = None,
) -> list[Fraction]:
    """The shuffled protocol's tight delta(eps): max over every multiset of the other
    n - 1 users' inputs and every ordered pair of distinct target inputs (default all)."""
    inputs = range(len(probs))
    if pairs is None:
        pairs = list(itertools.permutations(inputs, 2))
    best = [Fraction(0)] * len(eps)
    for others in itertools.combinations_with_replacement(inputs, n - 1):
        laws = {x: view_law(probs, (*others, x)) for x in {v for pair in pairs for v in pair}}
        for x0, x1 in pairs:
            for i, e in enumerate(eps):
                best[i] = max(best[i], hockey_stick(laws[x0], laws[x1], e))
    return best


def homogeneous_deltas(
    probs: Matrix, n: int, z: int, x0: int, x1: int, eps: Sequence[float]
) -> list[Fraction]:
    """delta(eps) with the other n - 1 users at z, from E[(X_1 + ... + X_n)_+] / n.

    X = (R(x0)(Y) - e^eps R(x1)(Y)) / pi(Y), Y ~ pi = R(z); every count vector of
    the n i.i.d. draws is enumerated with its multinomial probability. Needs
    R(x0) and R(x1) to vanish wherever pi does.
    """
    pi = probs[z]
    support = [y for y, mass in enumerate(pi) if mass > 0]
    if any(probs[x][y] > 0 for x in (x0, x1) for y in range(len(pi)) if pi[y] == 0):
        raise ValueError("R(x0) and R(x1) must vanish wherever R(z) does")
    results = []
    for e in eps:
        alpha = Fraction(math.exp(e))
        values = [(probs[x0][y] - alpha * probs[x1][y]) / pi[y] for y in support]
        total = Fraction(0)
        for counts in _compositions(n, len(support)):
            sum_x = sum((c * v for c, v in zip(counts, values, strict=True)), Fraction(0))
            if sum_x > 0:
                total += _multinomial(counts, [pi[y] for y in support]) * sum_x
        results.append(total / n)
    return results


def clone_matrix(ratio: Fraction, variant: str) -> Matrix:
    """Rows (z, x0, x1) whose shuffled histogram, the others at z, is a clones pair.

    ``ratio`` is e^eps0 (a fraction). Outputs: 0 and 1 (clones of the two
    targets) and 2 (null). ``variant="stronger"``: others report 0 or 1 with
    probability p = 1/(e^eps0 + 1) each (C ~ Bin(n - 1, 2p), A | C ~ Bin(C, 1/2));
    the target at x0 reports 0 with probability e^eps0 p, else 1 (Feldman, McMillan
    and Talwar (2023), Thm 3.1; Koskela et al. (2023), eq. 3.1-3.2).
    ``"standard"``: others report 0 or 1 with probability e^-eps0 / 2 each; the
    target at x0 reports 0 with probability e^eps0 / (e^eps0 + 1), else 1
    (Feldman, McMillan and Talwar (2021), Thm 3.2).
    """
    if variant == "stronger":
        clone = 1 / (ratio + 1)
    elif variant == "standard":
        clone = 1 / (2 * ratio)
    else:
        raise ValueError(f"unknown variant {variant!r}")
    high = ratio / (ratio + 1)
    return [
        [clone, clone, 1 - 2 * clone],
        [high, 1 - high, Fraction(0)],
        [1 - high, high, Fraction(0)],
    ]


def clone_deltas(n: int, ratio: Fraction, variant: str, eps: Sequence[float]) -> list[Fraction]:
    """Exact max(H(P || Q), H(Q || P)) of the clones pair for n users at e^eps0 = ratio."""
    probs = clone_matrix(ratio, variant)
    forward = target_deltas(probs, [0] * (n - 1), 1, 2, eps)
    backward = target_deltas(probs, [0] * (n - 1), 2, 1, eps)
    return [max(f, b) for f, b in zip(forward, backward, strict=True)]


def admits_stronger_clones(probs: Matrix, x0: int, x1: int, ratio: Fraction) -> bool:
    """(ratio + 1) R(x)(y) >= R(x0)(y) + R(x1)(y) for every input x and output y."""
    return all(
        (ratio + 1) * row[y] >= probs[x0][y] + probs[x1][y]
        for row in probs
        for y in range(len(row))
    )


def _compositions(total: int, parts: int):
    """Every tuple of ``parts`` non-negative integers summing to ``total``."""
    for cuts in itertools.combinations(range(total + parts - 1), parts - 1):
        previous, counts = -1, []
        for cut in cuts:
            counts.append(cut - previous - 1)
            previous = cut
        counts.append(total + parts - 2 - previous)
        yield tuple(counts)


def _multinomial(counts: Sequence[int], probs: Sequence[Fraction]) -> Fraction:
    """Multinomial probability of ``counts`` under cell probabilities ``probs``."""
    value = Fraction(math.factorial(sum(counts)))
    for count, prob in zip(counts, probs, strict=True):
        value = value / math.factorial(count) * prob**count
    return value
