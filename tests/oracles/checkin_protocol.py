"""Brute-force oracle for shuffled check-in: exact laws of the released multiset.

The protocol (Liew et al. 2022, Algorithm 1): every user independently checks in with
probability ``p``; a checked-in user with value ``x`` sends one k-RR report (the
truth with probability ``1 - gamma``, else a uniform value of ``[k]``); the
shuffler releases the multiset of reports, i.e. their histogram (whose total is
the number of check-ins). The law of the histogram is built exactly, in
fractions, one user at a time. Neighbouring datasets:

* replace: the target (last user) holds 0 under X and 1 under X';
* add/remove: X holds only the others, X' the others plus the target (value 0).

A second truth is the clones pair of Koskela et al. (2023), eq. 3.1 for ``K`` users, enumerated
exactly over ``(C, A, Delta1, Delta2)``, and the mixtures of Lemma 7 (Koskela et al. (2023)
eq. 2.3) built from it as measures, not through eqs. (5)-(6) of
``pld.subsampling.subsampled_shuffler``. This module shares no code with ``pld``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction
from math import comb

Law = dict[tuple, Fraction]


def _report_law(value: int, k: int, gamma: Fraction) -> list[Fraction]:
    """k-RR: probability of each report for a user whose value is ``value``."""
    return [(1 - gamma) * (v == value) + gamma / k for v in range(k)]


def histogram_law(values: Sequence[int], k: int, gamma: Fraction, p: Fraction) -> Law:
    """Exact law of the released histogram when the users hold ``values``."""
    law: Law = {tuple([0] * k): Fraction(1)}
    for value in values:
        reports = _report_law(value, k, gamma)
        new: Law = defaultdict(Fraction)
        for histogram, mass in law.items():
            new[histogram] += mass * (1 - p)
            for v, r in enumerate(reports):
                bumped = list(histogram)
                bumped[v] += 1
                new[tuple(bumped)] += mass * p * r
        law = dict(new)
    return law


def hockey_stick(p_law: Law, q_law: Law, alpha: Fraction) -> Fraction:
    """``H_alpha(P || Q) = sum_v (P(v) - alpha Q(v))_+`` exactly."""
    total = Fraction(0)
    for view, mass in p_law.items():
        excess = mass - alpha * q_law.get(view, Fraction(0))
        if excess > 0:
            total += excess
    return total


def protocol_laws(
    others: Sequence[int], k: int, gamma: Fraction, p: Fraction, adjacency: str
) -> tuple[Law, Law]:
    """Laws of the release under the two neighbouring datasets."""
    if adjacency == "replace":
        return (
            histogram_law([*others, 0], k, gamma, p),
            histogram_law([*others, 1], k, gamma, p),
        )
    return histogram_law(others, k, gamma, p), histogram_law([*others, 0], k, gamma, p)


def protocol_delta(
    others: Sequence[int],
    k: int,
    gamma: Fraction,
    p: Fraction,
    adjacency: str,
    alpha: Fraction,
    rounds: int = 1,
) -> Fraction:
    """Exact delta at ``alpha = e^eps`` of the protocol for this pair, max of both orders."""
    p_single, q_single = protocol_laws(others, k, gamma, p, adjacency)
    p_law, q_law = p_single, q_single
    for _ in range(rounds - 1):
        p_law = _product(p_law, p_single)
        q_law = _product(q_law, q_single)
    return max(hockey_stick(p_law, q_law, alpha), hockey_stick(q_law, p_law, alpha))


def _product(first: Law, second: Law) -> Law:
    return {a + b: x * y for a, x in first.items() for b, y in second.items()}


def clones_pair(users: int, exp_eps0: Fraction) -> tuple[Law, Law]:
    """The clones pair of Koskela et al. (2023), eq. 3.1 for ``users`` reports, exactly.

    ``C ~ Bin(users - 1, 2 p0)``, ``A | C ~ Bin(C, 1/2)``, ``Delta1 ~ Bern(e^eps0 p0)``,
    ``Delta2 ~ Bern(p0 / (1 - e^eps0 p0))`` if ``Delta1 = 0``; ``p0 = 1/(e^eps0 + 1)``.
    """
    p0 = 1 / (exp_eps0 + 1)
    q = exp_eps0 * p0
    second = p0 / (1 - q)
    p_law: Law = defaultdict(Fraction)
    q_law: Law = defaultdict(Fraction)
    trials = users - 1
    for c in range(trials + 1):
        c_mass = comb(trials, c) * (2 * p0) ** c * (1 - 2 * p0) ** (trials - c)
        for a in range(c + 1):
            a_mass = c_mass * Fraction(comb(c, a), 2**c)
            for d1, d1_mass in ((1, q), (0, 1 - q)):
                options = ((0, Fraction(1)),) if d1 else ((1, second), (0, 1 - second))
                for d2, d2_mass in options:
                    mass = a_mass * d1_mass * d2_mass
                    if mass:
                        p_law[(a + d1, c - a + d2)] += mass
                        q_law[(a + d2, c - a + d1)] += mass
    return dict(p_law), dict(q_law)


def _mix(first: Law, second: Law, weight: Fraction) -> Law:
    keys = set(first) | set(second)
    zero = Fraction(0)
    return {v: weight * first.get(v, zero) + (1 - weight) * second.get(v, zero) for v in keys}


def lemma7_terms(
    pair: tuple[Law, Law], rate: Fraction, alpha: Fraction
) -> tuple[Fraction, Fraction]:
    """``H_alpha(g P + (1-g) Q || Q)`` and ``H_alpha(Q || g P + (1-g) Q)``, as measures.

    For the (symmetric) clones pair the second is Koskela et al. (2023), eq. 2.3's B term.
    """
    p_law, q_law = pair
    mixed = _mix(p_law, q_law, rate)
    return hockey_stick(mixed, q_law, alpha), hockey_stick(q_law, mixed, alpha)


def binomial(n: int, p: Fraction, k: int) -> Fraction:
    """Exact Bin(n, p) probability of k (0 outside [0, n])."""
    if k < 0 or k > n:
        return Fraction(0)
    return comb(n, k) * p**k * (1 - p) ** (n - k)


def mixture_profile(
    n: int, p: Fraction, exp_eps0: Fraction, alpha: Fraction, adjacency: str
) -> Fraction:
    """The count-mixture bound (eqs. 1-3 of ``pld.shuffling.checkin.mixture``), exactly.

    Replace: ``sum_k Bin(n, p)(k) max(A_k, B_k)(alpha)`` with rate ``k/n``.
    Add/remove: ``max(sum_k pi'(k) A_k(alpha r_k), sum_k pi(k) B_k(alpha / r_k))``,
    rate ``k/(n+1)``, ``r_k = pi(k)/pi'(k)``; counts 0 and n + 1 as point masses.
    """
    if adjacency == "replace":
        total = binomial(n, p, 0) * max(1 - alpha, Fraction(0))
        for count in range(1, n + 1):
            a, b = lemma7_terms(clones_pair(count, exp_eps0), Fraction(count, n), alpha)
            total += binomial(n, p, count) * max(a, b)
        return total
    forward = max(binomial(n + 1, p, 0) - alpha * binomial(n, p, 0), Fraction(0))
    reverse = max(binomial(n, p, 0) - alpha * binomial(n + 1, p, 0), Fraction(0))
    forward += binomial(n + 1, p, n + 1)
    for count in range(1, n + 1):
        pi, pi_add = binomial(n, p, count), binomial(n + 1, p, count)
        pair = clones_pair(count, exp_eps0)
        a, _ = lemma7_terms(pair, Fraction(count, n + 1), alpha * pi / pi_add)
        _, b = lemma7_terms(pair, Fraction(count, n + 1), alpha * pi_add / pi)
        forward += pi_add * a
        reverse += pi * b
    return max(forward, reverse)
