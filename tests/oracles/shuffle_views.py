"""Brute-force oracle: the shuffled protocol of any finite randomizer, in exact fractions.

n users hold values x_1..x_n; user i reports y_i ~ R(x_i) independently; the
shuffler releases the multiset {y_1..y_n}, i.e. the histogram of the reports. Its
law is the convolution of the users' one-hot laws, built user by user (each
histogram's mass spread over its K successors). For two datasets differing in the
last user, delta(eps) = sum_v (P(v) - e^eps Q(v))_+, with e^eps replaced by the
exact rational value of its float64.

The blanket divergence is evaluated from its definition as well: every
(B_i, Y_i), B_i in {0, 1}, Y_i ~ omega, enumerated. This module shares no code
with ``pld``; it is for n <= 6 only.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from fractions import Fraction

Matrix = list[list[Fraction]]


def exact_matrix(rows: Sequence[Sequence[float | Fraction]]) -> Matrix:
    """The matrix in fractions (floats converted exactly), rows renormalised to sum 1."""
    exact = [[Fraction(v) for v in row] for row in rows]
    return [[v / sum(row) for v in row] for row in exact]


def view_law(probs: Matrix, values: Sequence[int]) -> dict[tuple[int, ...], Fraction]:
    """Law of the histogram of the reports (a tuple of K counts) for the dataset ``values``."""
    outputs = len(probs[0])
    law: dict[tuple[int, ...], Fraction] = {(0,) * outputs: Fraction(1)}
    for value in values:
        row = probs[value]
        grown: dict[tuple[int, ...], Fraction] = defaultdict(Fraction)
        for histogram, mass in law.items():
            for report in range(outputs):
                if row[report]:
                    key = (*histogram[:report], histogram[report] + 1, *histogram[report + 1 :])
                    grown[key] += mass * row[report]
        law = grown
    return dict(law)


def hockey_stick(p: dict, q: dict, eps: float) -> Fraction:
    """sum_v (P(v) - e^eps Q(v))_+ with e^eps the exact value of the float."""
    alpha = Fraction(math.exp(eps))
    total = Fraction(0)
    for view in set(p) | set(q):
        gap = p.get(view, Fraction(0)) - alpha * q.get(view, Fraction(0))
        if gap > 0:
            total += gap
    return total


def worst_pair_delta(probs: Matrix, n: int, eps: float) -> tuple[Fraction, tuple]:
    """Largest delta(eps) over all neighbouring dataset pairs (others as multisets)."""
    inputs = range(len(probs))
    best, where = Fraction(-1), ()
    for others in itertools.combinations_with_replacement(inputs, n - 1):
        for x, y in itertools.permutations(inputs, 2):
            value = hockey_stick(view_law(probs, (*others, x)), view_law(probs, (*others, y)), eps)
            if value > best:
                best, where = value, (others, x, y)
    return best, where


def blanket_divergence(probs: Matrix, n: int, x: int, y: int, eps: float) -> Fraction:
    """(1/(n gamma)) E[(sum_i B_i Z_i)_+] from its definition, every (B_i, Y_i) enumerated."""
    outputs = range(len(probs[0]))
    low = [min(row[o] for row in probs) for o in outputs]
    gamma = sum(low)
    omega = [v / gamma for v in low]
    alpha = Fraction(math.exp(eps))
    z = {}
    for o in outputs:
        if omega[o] > 0:
            z[o] = (probs[x][o] - alpha * probs[y][o]) / omega[o]
    choices = [(None, 1 - gamma)] + [(o, gamma * omega[o]) for o in z]
    total = Fraction(0)
    for draw in itertools.product(choices, repeat=n):
        mass = Fraction(1)
        value = Fraction(0)
        for o, weight in draw:
            mass *= weight
            if o is not None:
                value += z[o]
        if value > 0:
            total += mass * value
    return total / (n * gamma)
