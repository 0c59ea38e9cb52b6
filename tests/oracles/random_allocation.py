"""Independent truths for random allocation (k of T rounds chosen uniformly at random).

Shares no code with :mod:`pld.allocation`. Add/remove neighbours: with the record,
the rounds of a uniform k-subset I run the mechanism's P, the others its Q;
without it every round runs Q.

* :func:`enumerated_delta`: a finite one-round pair (randomised response), every
  output sequence enumerated, in exact fractions (P and Q rational): the exact
  hockey stick of the k-subset mixture pair ``(E_I prod P_I Q_rest, Q^T)`` in both
  directions, and of the k-fold composition of 1-of-(T/k) pairs (the floor/ceil
  decomposition that dominates it).
* :func:`adaptive_protocol_delta`: a concrete adaptive protocol (round 2's
  randomizer is chosen by round 1's output), enumerated: a mechanism that the
  allocation pair must dominate.
* :func:`gaussian_delta`: the Gaussian mechanism (sensitivity 1, noise sigma),
  one participation among T <= 4, by numerical integration of the exact mixture.
  The innermost integral, over one coordinate, is the Black-Scholes formula:
  with ``X = e^{m + s Z}``, ``m = -1/(2 sigma^2)``, ``s = 1/sigma`` (the
  likelihood ratio under Q), ``E[(X/T - b)_+] = Phi(d1)/T - b Phi(d2)`` for
  ``b > 0``, ``d2 = (m + log(1/(T b)))/s``, ``d1 = d2 + s``; the
  remaining T - 1 coordinates by nested adaptive quadrature
  (``scipy.integrate.quad``, absolute tolerance 1e-13 per level).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
from scipy import integrate
from scipy.special import ndtr


def _hockey(first: dict, second: dict, alpha: float) -> float:
    return float(sum(max(first[y] - alpha * second.get(y, 0), 0) for y in first))


def _mixture(p: list[Fraction], q: list[Fraction], rounds: int, subsets: list[tuple]) -> dict:
    law: dict[tuple, Fraction] = defaultdict(Fraction)
    weight = Fraction(1, len(subsets))
    for y in itertools.product(range(len(p)), repeat=rounds):
        for chosen in subsets:
            mass = weight
            for i, value in enumerate(y):
                mass *= p[value] if i in chosen else q[value]
            law[y] += mass
    return law


def enumerated_delta(
    p: list[Fraction], q: list[Fraction], rounds: int, participations: int, eps: float
) -> tuple[float, float]:
    """Exact (remove, add) delta(eps) of the k-of-T allocation pair of the pair (p, q)."""
    subsets = list(itertools.combinations(range(rounds), participations))
    mixed = _mixture(p, q, rounds, subsets)
    plain = _mixture(p, q, rounds, [()])
    alpha = math.exp(eps)
    return _hockey(mixed, plain, alpha), _hockey(plain, mixed, alpha)


def blocks_delta(
    p: list[Fraction], q: list[Fraction], rounds: int, participations: int, eps: float
) -> tuple[float, float]:
    """Exact (remove, add) delta(eps) of the product of one-of-block pairs (floor/ceil blocks)."""
    size, extra = divmod(rounds, participations)
    sizes = [size + 1] * extra + [size] * (participations - extra)
    mixed: dict[tuple, Fraction] = {(): Fraction(1)}
    plain: dict[tuple, Fraction] = {(): Fraction(1)}
    for block in sizes:
        one = _mixture(p, q, block, [(i,) for i in range(block)])
        none = _mixture(p, q, block, [()])
        mixed = {a + b: x * y for a, x in mixed.items() for b, y in one.items()}
        plain = {a + b: x * y for a, x in plain.items() for b, y in none.items()}
    alpha = math.exp(eps)
    return _hockey(mixed, plain, alpha), _hockey(plain, mixed, alpha)


def randomized_response_pair(numerator: int, denominator: int) -> tuple[list, list]:
    """Randomised response with truth probability ``numerator / denominator`` (> 1/2)."""
    keep = Fraction(numerator, denominator)
    return [keep, 1 - keep], [1 - keep, keep]


def adaptive_protocol_delta(keep: Fraction, eps: float) -> tuple[float, float]:
    """Exact (remove, add) delta of an adaptive two-round protocol under 1-of-2 allocation.

    Round 1 reports the record's bit (1 if present, 0 if absent) by randomised
    response with truth probability ``keep``; round 2 does the same but
    reports the negated answer when round 1 output 1. Each round alone is that
    randomised response (a pair that dominates it), so the allocation pair of
    randomised response must dominate this protocol.
    """
    rr = {1: [1 - keep, keep], 0: [keep, 1 - keep]}  # P(output | bit)

    def law(present_round: int | None) -> dict:
        out: dict[tuple, Fraction] = defaultdict(Fraction)
        for y1, y2 in itertools.product((0, 1), repeat=2):
            first = rr[int(present_round == 0)][y1]
            bit = int(present_round == 1)
            second = rr[bit][y2 if y1 == 0 else 1 - y2]
            out[(y1, y2)] += first * second
        return out

    mixed: dict[tuple, Fraction] = defaultdict(Fraction)
    for present in (0, 1):
        for y, mass in law(present).items():
            mixed[y] += mass / 2
    plain = law(None)
    alpha = math.exp(eps)
    return _hockey(mixed, plain, alpha), _hockey(plain, mixed, alpha)


def _call(x_scale: float, b: float, mean: float, spread: float) -> float:
    """E[(x_scale X - b)_+] for X = e^{mean + spread Z} with E[X] = 1."""
    if b <= 0:
        return x_scale - b
    d2 = (mean + math.log(x_scale / b)) / spread
    return x_scale * float(ndtr(d2 + spread)) - b * float(ndtr(d2))


def _put(x_scale: float, b: float, mean: float, spread: float) -> float:
    """E[(b - x_scale X)_+]."""
    if b <= 0:
        return 0.0
    d2 = (mean + math.log(x_scale / b)) / spread
    return b * float(ndtr(-d2)) - x_scale * float(ndtr(-d2 - spread))


def gaussian_delta(sigma: float, rounds: int, eps: float) -> tuple[float, float]:
    """(remove, add) delta(eps) of one Gaussian participation among ``rounds`` <= 4."""
    if not 1 <= rounds <= 4:
        raise ValueError("rounds must be in [1, 4]")
    mean, spread = -1 / (2 * sigma**2), 1 / sigma
    alpha = math.exp(eps)
    density = 1 / math.sqrt(2 * math.pi)

    def nested(inner, depth: int, rest: float) -> float:
        if depth == 0:
            return inner(rest)

        def integrand(z: float) -> float:
            x = math.exp(mean + spread * z)
            return density * math.exp(-z * z / 2) * nested(inner, depth - 1, rest + x / rounds)

        value, _ = integrate.quad(integrand, -12, 12, epsabs=1e-13, epsrel=1e-11, limit=400)
        return value

    remove = nested(lambda rest: _call(1 / rounds, alpha - rest, mean, spread), rounds - 1, 0.0)
    add = nested(lambda rest: _put(alpha / rounds, 1 - alpha * rest, mean, spread), rounds - 1, 0.0)
    return remove, add


def gaussian_delta_grid(sigma: float, rounds: int, eps: np.ndarray) -> np.ndarray:
    """``max(remove, add)`` at each eps."""
    return np.array([max(gaussian_delta(sigma, rounds, float(e))) for e in eps])
