"""Brute-force oracle: shuffled random check-ins of binary randomised response, tiny n.

Each of ``n`` users draws a uniform ``k``-subset of the ``T`` rounds and sends, in
each of them, a fresh randomised-response report of its bit (truth with
probability ``keep``); round t releases the multiset (sorted tuple) of its
reports. Every choice and report is enumerated in exact fractions. Replace-one
neighbours: the first user's bit is 0 or 1, the others' bits are fixed. Shares
no code with :mod:`pld.shuffling.checkin`.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction


def _user_outcomes(bit: int, rounds: int, participations: int, keep: Fraction):
    """(per-round report tuples, probability) for one user."""
    subsets = list(itertools.combinations(range(rounds), participations))
    for subset in subsets:
        for reports in itertools.product((0, 1), repeat=participations):
            mass = Fraction(1, len(subsets))
            for report in reports:
                mass *= keep if report == bit else 1 - keep
            yield dict(zip(subset, reports, strict=True)), mass


def view_law(bits: tuple[int, ...], rounds: int, participations: int, keep: Fraction) -> dict:
    """Exact law of the T released multisets."""
    law: dict[tuple, Fraction] = {(): Fraction(1)}
    states: dict[tuple, Fraction] = {tuple(() for _ in range(rounds)): Fraction(1)}
    for bit in bits:
        new: dict[tuple, Fraction] = defaultdict(Fraction)
        outcomes = list(_user_outcomes(bit, rounds, participations, keep))
        for state, mass in states.items():
            for sent, weight in outcomes:
                rounds_out = tuple(
                    tuple(sorted(state[t] + ((sent[t],) if t in sent else ())))
                    for t in range(rounds)
                )
                new[rounds_out] += mass * weight
        states = new
    law = states
    return law


def delta(n: int, rounds: int, participations: int, keep: Fraction, eps: float) -> float:
    """Largest delta(eps) over both orders and every fixed data of the other users."""
    alpha = math.exp(eps)
    worst = 0.0
    for others in itertools.product((0, 1), repeat=n - 1):
        first = view_law((0, *others), rounds, participations, keep)
        second = view_law((1, *others), rounds, participations, keep)
        for a, b in ((first, second), (second, first)):
            worst = max(worst, float(sum(max(m - alpha * b.get(y, 0), 0) for y, m in a.items())))
    return worst
