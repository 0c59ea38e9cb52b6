"""Brute-force oracle: shuffled populations of finite randomizers, in exact fractions.

A population is a list of groups ``(matrix, count)``; every user of a group runs
that group's randomizer (a row-stochastic matrix; all groups share the inputs and
the outputs) and sends ``messages`` independent reports of its input. The
shuffler releases the multiset of all reports. Two neighbouring datasets differ in
one user (the target, in a chosen group): its input is x under P and x' under Q,
every other user holds the same input under both.

:func:`worst_delta` enumerates every neighbouring pair: the target's group, the
ordered pair (x, x'), and for every group the multiset of its other users'
inputs (the order of users within a group does not matter). The law of the
multiset is built report by report (exact fractions), and
``delta(eps) = sum_v (P(v) - e^eps Q(v))_+`` uses the exact rational value of the
float ``e^eps``. Only for tiny populations (a few users, a few outputs). This
module shares no code with ``pld``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from fractions import Fraction

Matrix = list[list[Fraction]]
Law = dict[tuple[int, ...], Fraction]


def exact_matrix(rows: Sequence[Sequence[float | Fraction]]) -> Matrix:
    """The matrix in fractions (floats converted exactly), rows renormalised to sum 1."""
    exact = [[Fraction(v) for v in row] for row in rows]
    return [[v / sum(row) for v in row] for row in exact]


def krr_matrix(k: int, eps0: float) -> Matrix:
    """k-ary randomised response with local epsilon eps0 (exact fractions of the floats)."""
    gamma = k / (math.expm1(eps0) + k)
    return exact_matrix([[gamma / k + (1 - gamma) * (x == y) for y in range(k)] for x in range(k)])


def add_report(law: Law, row: Sequence[Fraction]) -> Law:
    """The law of the multiset after one more independent report with law ``row``."""
    out: Law = defaultdict(Fraction)
    for view, mass in law.items():
        for y, p in enumerate(row):
            if p:
                out[tuple(sorted((*view, y)))] += mass * p
    return dict(out)


def multiset_law(rows: Sequence[Sequence[Fraction]]) -> Law:
    """Law of the multiset of independent reports, one per row."""
    law: Law = {(): Fraction(1)}
    for row in rows:
        law = add_report(law, row)
    return law


def hockey_stick(p: Law, q: Law, eps: float) -> Fraction:
    """``sum_v (P(v) - e^eps Q(v))_+`` with e^eps the exact value of the float."""
    alpha = Fraction(math.exp(eps))
    total = Fraction(0)
    for view, mass in p.items():
        gap = mass - alpha * q.get(view, Fraction(0))
        if gap > 0:
            total += gap
    return total


def _others(population: Sequence[tuple[Matrix, int]], target_group: int):
    """Every assignment of inputs to the other users: per group, a multiset of inputs."""
    choices = []
    for index, (probs, count) in enumerate(population):
        others = count - (index == target_group)
        choices.append(list(itertools.combinations_with_replacement(range(len(probs)), others)))
    return itertools.product(*choices)


def worst_delta(
    population: Sequence[tuple[Matrix, int]],
    eps: float,
    messages: int = 1,
    allowed: Callable[[int, int], bool] | None = None,
) -> tuple[Fraction, tuple]:
    """Largest delta(eps) over all neighbouring pairs, and where it is attained.

    ``allowed(x, x')``: which pairs of the target's inputs are neighbours (default all).
    Returns ``(delta, (target_group, x, x', others))``; ``others`` holds one tuple of
    inputs per group.
    """
    best, where = Fraction(-1), ()
    for target, (probs, count) in enumerate(population):
        if count < 1:
            continue
        for assignment in _others(population, target):
            rows = [
                population[g][0][v] for g, inputs in enumerate(assignment) for v in inputs
            ] * messages
            base = multiset_law(rows)
            laws = {v: base for v in range(len(probs))}
            for v in laws:
                law = base
                for _ in range(messages):
                    law = add_report(law, probs[v])
                laws[v] = law
            for x, y in itertools.permutations(range(len(probs)), 2):
                if allowed is not None and not allowed(x, y):
                    continue
                value = hockey_stick(laws[x], laws[y], eps)
                if value > best:
                    best, where = value, (target, x, y, assignment)
    return best, where


def local_composition_delta(probs: Matrix, messages: int, eps: float) -> Fraction:
    """Largest hockey stick of ``messages`` independent reports of one user (n = 1)."""
    best = Fraction(0)
    for x, y in itertools.permutations(range(len(probs)), 2):
        p = multiset_law([probs[x]] * messages)
        q = multiset_law([probs[y]] * messages)
        best = max(best, hockey_stick(p, q, eps))
    return best
