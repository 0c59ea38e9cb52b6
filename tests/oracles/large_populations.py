"""Independent truths at n >= 10^8: lattice sums with Boost's binomial tails, boxed by Chernoff.

Two quantities that ``pld`` computes at populations of 10^8 - 10^9 by other routes
(a recurrence along rows with its own binomial pmf; a characteristic function with
smoothed kernels), evaluated here directly, row by row, with ``scipy.stats.binom``
(Boost's incomplete beta functions) and an explicit error estimate. This module
shares no code with ``pld``.

* :func:`clones_delta`: the hockey stick H_{e^eps}(P || Q) of a clones pair of
  Feldman, McMillan and Talwar (docs/clones-validity.md, eq. (1)) for any per-side clone
  probability p (default e^-eps0 / 2, the standard pair that ``pld.clones`` uses by
  default; 1/(e^eps0 + 1) the stronger pair): rows t = a + b, the points with loss
  >= eps are a >= k_t (the loss increases with a), found here in exact rational
  arithmetic from the float parameters; each row's sum is two binomial tails
  (Koskela et al. 2023, App A).
* :func:`two_value_blanket`: (1/n) E[(A z1 + B z2)_+] for (A, B, rest) multinomial
  (n; m1, m2, 1 - m1 - m2), z1 > 0 > z2: the blanket divergence (Balle et al. 2019)
  of binary randomized response. Given A = a, B ~ Bin(n - a, m2 / (1 - m1)) and
  E[(c - B)_+] = c P(B <= K) - N' p' P(B' <= K - 1), K = floor(c), B' ~ Bin(N' - 1, p').

Rows whose probability lies beyond a Chernoff (binomial quantile) box of 1e-20 per
side are left out and their mass is returned in the error term. Boost's binomial
cdf/sf/pmf are taken to be accurate to a relative 1e-9 at these sizes (measured
against mpmath: better than 3e-11 at n = 5.4e8), and every row's terms are charged
that much of their magnitudes (cancellation included).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.stats import binom

#: Relative accuracy assumed of each Boost binomial value.
BOOST_ERROR = 1e-9

#: Mass left out per side of each binomial box.
BOX = 1e-20


def _box(trials: int, prob: float) -> tuple[int, int]:
    lo = int(binom.ppf(BOX, trials, prob))
    hi = trials - int(binom.ppf(BOX, trials, 1.0 - prob))  # isf is unreliable near 1e-20
    return max(lo - 1, 0), min(hi + 1, trials)


def clones_delta(n: int, eps0: float, eps: float, p: float | None = None) -> tuple[float, float]:
    """(value, error bound) of the one-round delta(eps) of the clones pair (module docstring).

    With r = e^-eps0, rho = 2p, C ~ Bin(n-1, rho), row t carries
    Bin(n-1, rho)(t-1) / (1 + r) times, at the point (a, t - a), with beta = Bin(t - 1, 1/2),
    P: beta(a-1) + r beta(a),   Q: r beta(a-1) + beta(a).
    """
    r = math.exp(-eps0)
    if p is None:
        p = r / 2.0
    rho = 2.0 * p
    trials = n - 1
    c_lo, c_hi = _box(trials, rho)
    clones = np.arange(max(c_lo, 0), c_hi + 1)
    t = clones + 1
    weight = binom.pmf(clones, trials, rho) / (1.0 + r)
    # Threshold: a (1 + x)(1 - r) >= t (x - r), x = e^eps, solved in exact fractions of
    # the floats (a is an integer, so the ceiling).
    x, rf = Fraction(math.exp(eps)), Fraction(r)
    denominator = (1 + x) * (1 - rf)
    k = np.array([math.ceil(int(tt) * (x - rf) / denominator) for tt in t])
    k = np.clip(k, 0, t + 1)
    m = t - 1
    # Row sums over a >= k: sum beta(a) = P(X >= k), sum beta(a - 1) = P(X >= k - 1).
    tail = binom.sf(k - 1, m, 0.5)
    edge = binom.pmf(k - 1, m, 0.5)
    # P - e^eps Q over a >= k, with tail_before = tail + beta(k - 1), regrouped so that
    # nothing cancels at eps = 0: (1 - x)(1 + r) T + (1 - x r) beta.
    x_float = math.exp(eps)
    first = (1.0 - x_float) * (1.0 + r) * tail
    second = (1.0 - x_float * r) * edge
    value = float(math.fsum(weight * (first + second)))
    size = float(np.sum(weight * (np.abs(first) + np.abs(second))))
    outside = 2 * BOX * (1 + x_float)
    return value, BOOST_ERROR * 4 * size + outside


def two_value_blanket(n: int, m1: float, z1: float, m2: float, z2: float) -> tuple[float, float]:
    """(value, error bound) of (1/n) E[(A z1 + B z2)_+] (module docstring), z1 > 0 > z2."""
    if not (z1 > 0 > z2):
        raise ValueError("z1 > 0 > z2 expected")
    a_lo, a_hi = _box(n, m1)
    a = np.arange(a_lo, a_hi + 1)
    weight = binom.pmf(a, n, m1)
    trials = n - a
    prob = m2 / (1.0 - m1)
    c = a * (z1 / -z2)
    k = np.floor(c)
    first = c * binom.cdf(k, trials, prob)
    second = np.where(
        trials > 0, trials * prob * binom.cdf(k - 1, np.maximum(trials - 1, 0), prob), 0.0
    )
    inner = first - second
    value = float(math.fsum(weight * inner * -z2)) / n
    error = BOOST_ERROR * 4 * float(np.sum(weight * (first + second) * -z2)) / n
    # Left-out a: (a z1 + B z2)_+ <= n z1 per view.
    error += 2 * BOX * z1
    return value, error
