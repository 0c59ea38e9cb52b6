"""Clones pairs with per-user clone probabilities and several target reports: a grid-free profile.

The pair of docs/shuffle-groups.md (Theorem 4) and docs/multi-message.md (Theorem 5):
``C = sum_h Bin(trials_h, rho_h)`` clones among the other users' reports (a
Poisson-binomial count; ``rho = 2p`` per report), ``A | C ~ Bin(C, 1/2)``, and ``m``
target reports each a ``Q0`` draw with probability ``q = e^eps_t / (e^eps_t + 1)``
under P (``1 - q`` under Q):

    P = (A + K, C - A + m - K),   Q = (A + m - K', C - A + K'),   K, K' ~ Bin(m, q).

With one group and m = 1 this is the standard pair of Feldman, McMillan and Talwar
(2021, Thm 3.2) for ``rho = e^-eps0`` and the stronger pair (Feldman, McMillan and
Talwar 2023, Thm 3.1; ``pld.clones(..., variant="stronger")``) for
``rho = 2/(e^eps0 + 1)``, each valid where docs/clones-validity.md proves it.

Row c (C = c) holds the points ``a + b = c + m``; there
``P_c(a) = sum_k Bin(k; m, q) beta_c(a - k)``, ``Q_c`` with ``1 - q``, ``beta_c`` the
Bin(c, 1/2) pmf, and the privacy loss rises with a (monotone likelihood ratio,
docs/multi-message.md), so ``h_c(eps) = sum_a (P_c(a) - e^eps Q_c(a))_+`` is a sum of
binomial tails from the first a whose loss exceeds eps. ``h_c`` does not increase with
c (one more clone is a post-processing: add a Bernoulli(1/2) to a or b), so rows are
taken in bins: a bin's mass times ``h`` at its first row bounds it from above, at its
last row from below. The float threshold is exact unless the loss at a - 1 or a is
within ``LOSS_DOUBT`` of eps; such a point's term, at most ``P (e^LOSS_DOUBT - 1)``,
is charged to the upper side.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.distribution import PLD
from pld.numerics import MAX_EPS0, binomial
from pld.shuffling.clones.pair import VARIANTS

#: Mass of each component binomial of C left out per tail (charged to the upper side).
COUNT_TAIL = 1e-30

#: Relative accuracy of Boost's binomial pmf and tails as used here (measured ~1e-12),
#: with a 100x margin (as :mod:`pld.shuffling.clones.mechanism`).
BINOMIAL_RELATIVE_ERROR = 1e-10

#: A float log-loss within this of eps may have the wrong sign (it is computed to ~1e-13).
LOSS_DOUBT = 1e-9

#: Rows of C evaluated per profile: bins of ``ceil(window / ROW_BINS)`` rows.
ROW_BINS = 512


class CloneCount:
    """``C = sum_h Bin(trials_h, rho_h)``: its pmf on a window and the mass left outside it.

    Parameters
    ----------
    components : list of (trials, rho)
        Independent binomial counts (``trials >= 0``, ``rho`` in [0, 1]).
    """

    def __init__(self, components: list[tuple[int, float]]):
        pmf, low, dropped = np.array([1.0]), 0, 0.0
        used = [(int(t), float(r)) for t, r in components if t > 0 and r > 0.0]
        for trials, rho in used:
            lo, hi = (int(v) for v in binomial.window(COUNT_TAIL, trials, rho))
            part = binomial.pmf(np.arange(lo, hi + 1), trials, rho)
            dropped += float(binomial.cdf(lo - 1, trials, rho)) + float(
                binomial.sf(hi, trials, rho)
            )
            pmf = np.convolve(pmf, part)
            low += lo
        #: Smallest count of the window.
        self.low = low
        #: ``P(C = low + j)`` (each within ``relative_error``), j = 0..size - 1.
        self.pmf = np.maximum(pmf, 0.0)
        #: Relative error of each kept mass: Boost's, and the convolution's sums.
        self.relative_error = BINOMIAL_RELATIVE_ERROR * (1 + len(used))
        #: Mass outside the window (at most).
        self.dropped = min(1.0, dropped)

    @property
    def mean(self) -> float:
        return float(np.dot(self.pmf, self.low + np.arange(self.pmf.size)))


def _weights(m: int, q: float) -> np.ndarray:
    return np.array([math.comb(m, k) * q**k * (1 - q) ** (m - k) for k in range(m + 1)])


def _log_loss(c: np.ndarray, a: np.ndarray, m: int, q: float) -> np.ndarray:
    """``log P_c(a) / Q_c(a)`` per row c, at ``a`` in [0, c + m].

    The beta terms relative to ``beta_c(j0)``, ``j0 = max(a - m, 0)``:
    ``tau_{j+1} = tau_j (c - j) / (j + 1)`` (zero past c); at most m + 1 of them.
    """
    w_p = _weights(m, q)
    j0 = np.maximum(a - m, 0)
    p_sum, q_sum, tau = np.zeros(a.shape), np.zeros(a.shape), np.ones(a.shape)
    for step in range(m + 1):
        j = j0 + step
        k = a - j  # the target's count in this beta term
        valid = (k >= 0) & (k <= m) & (j <= c)
        index = np.clip(k, 0, m)
        p_sum += np.where(valid, w_p[index] * tau, 0.0)
        q_sum += np.where(valid, w_p[m - index] * tau, 0.0)
        tau = tau * np.maximum(c - j, 0) / (j + 1)
    with np.errstate(divide="ignore"):
        return np.log(p_sum) - np.log(q_sum)


def _thresholds(c: np.ndarray, eps: float, m: int, q: float) -> np.ndarray:
    """Per row, the smallest a in [0, c + m + 1] whose float loss exceeds eps.

    Started at the large-c solution of ``m log((1 - q + q s)/(q + (1 - q) s)) = eps``
    with ``s = a / (c - a)``, then moved one step at a time (the loss is monotone).
    """
    rate = math.exp(eps / m)
    numerator, denominator = q * rate - (1 - q), q - (1 - q) * rate
    top = c + m
    if denominator <= 0:
        a = top + 1
    else:
        s = max(numerator / denominator, 0.0)
        a = np.floor(s * (c + 1) / (1 + s) + m / 2).astype(np.int64)
    a = np.clip(a, 0, top + 1)
    while True:
        down = (a > 0) & (_log_loss(c, np.maximum(a - 1, 0), m, q) > eps)
        up = (a <= top) & ~(_log_loss(c, np.minimum(a, top), m, q) > eps)
        if not (np.any(down) or np.any(up)):
            return a
        a = a - down + up


def row_bounds(c: np.ndarray, eps: float, m: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) on ``h_c(eps) = sum_a (P_c(a) - e^eps Q_c(a))_+`` for each row c."""
    a = _thresholds(c, eps, m, q)
    top = c + m
    doubtful = [
        (a > 0) & (np.abs(_log_loss(c, np.maximum(a - 1, 0), m, q) - eps) < LOSS_DOUBT),
        (a <= top) & (np.abs(_log_loss(c, np.minimum(a, top), m, q) - eps) < LOSS_DOUBT),
    ]
    alpha = math.exp(eps)
    w_p = _weights(m, q)
    total, size, edge = np.zeros(c.shape), np.zeros(c.shape), np.zeros(c.shape)
    for k in range(m + 1):
        coefficient = w_p[k] - alpha * w_p[m - k]
        # sum over a' >= a of beta_c(a' - k) = P(X >= a - k), X ~ Bin(c, 1/2).
        term = coefficient * binomial.sf(a - k - 1, c, 0.5)
        total += term
        size += np.abs(term)
        for shift, doubt in zip((1, 0), doubtful, strict=True):
            edge += np.where(doubt, w_p[k] * binomial.pmf(a - shift - k, c, 0.5), 0.0)
    slack = BINOMIAL_RELATIVE_ERROR * size
    edge *= math.expm1(LOSS_DOUBT)
    return np.maximum(total - slack, 0.0), np.minimum(total + slack + edge, 1.0)


def clones_profile(
    count: CloneCount, messages: int, eps_t: float, eps: np.ndarray, rows: int = ROW_BINS
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) on the one-round delta(eps) of the pair (module docstring).

    Parameters
    ----------
    count : CloneCount
        The clones among the other users' reports.
    messages : int
        The target's reports m, >= 1.
    eps_t : float
        The target's local epsilon (its two inputs' max-divergence or more), nats.
    eps : ndarray
        Values of eps >= 0, nats.
    rows : int
        Bins of rows evaluated.
    """
    q = math.exp(eps_t) / (math.exp(eps_t) + 1.0) if eps_t < 700 else 1.0
    size = count.pmf.size
    stride = max(1, math.ceil(size / rows))
    starts = np.arange(0, size, stride)
    ends = np.minimum(starts + stride - 1, size - 1)
    masses = np.add.reduceat(count.pmf, starts)
    first, last = count.low + starts, count.low + ends
    lower, upper = np.zeros(eps.size), np.zeros(eps.size)
    for i, value in enumerate(eps):
        lo, up = row_bounds(first, float(value), messages, q)
        if stride > 1:
            lo = row_bounds(last, float(value), messages, q)[0]
        lower[i] = float(np.dot(masses, lo)) * (1 - count.relative_error)
        upper[i] = float(np.dot(masses, up)) * (1 + count.relative_error) + count.dropped
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _clone_probability(eps0: float, variant: str) -> float:
    """Per-side clone probability of a user under the named pair at local epsilon eps0."""
    if variant == "stronger":
        return 1.0 / (math.exp(eps0) + 1.0)
    return math.exp(-eps0) / 2.0


#: Most groups :func:`clones_population` accepts.
MAX_GROUPS = 64


def clones_population(
    groups: object, variant: str | None = None, loss_grid_step: float | None = None
) -> PLD:
    """The clones pair of groups ``[(eps0, count), ...]`` of mutually LDP users (§4.3).

    A target in group g: ``C ~ sum_h Bin(n_h - [h = g], 2 p_hg)`` and
    ``Delta ~ Bernoulli(e^eps_g / (e^eps_g + 1))`` (docs/shuffle-groups.md, Theorem 4),
    with ``p_hg = e^-max(eps_h, eps_g) / 2`` ("standard", the default: Feldman,
    McMillan and Talwar (2021), Thm 3.2, per user) or ``1/(e^max(eps_h, eps_g) + 1)``
    ("stronger": only for populations in the class of docs/clones-validity.md,
    Theorem A, across groups); the bound is the largest over g.
    """
    from pld.shuffling.grid import profile_pld

    variant = validation.one_of("variant", "standard" if variant is None else variant, VARIANTS)
    if not isinstance(groups, list | tuple) or len(groups) == 0:
        raise ValueError("groups must be a non-empty list of (eps0, count) pairs")
    if len(groups) > MAX_GROUPS:
        raise ValueError(f"groups must hold at most {MAX_GROUPS} groups (got {len(groups)})")
    levels, counts = [], []
    for index, entry in enumerate(groups):
        if not isinstance(entry, list | tuple) or len(entry) != 2:
            raise ValueError(f"groups[{index}] must be an (eps0, count) pair (got {entry!r})")
        levels.append(
            validation.in_interval(f"groups[{index}] eps0", entry[0], 0.0, MAX_EPS0, low_open=True)
        )
        counts.append(validation.integer_at_least(f"groups[{index}] count", entry[1], 1))
    validation.integer_at_least("the number of users", sum(counts), 1, validation.MAX_USERS)
    targets = []
    for g, eps_g in enumerate(levels):
        components = [
            (counts[h] - (h == g), 2.0 * _clone_probability(max(levels[h], eps_g), variant))
            for h in range(len(counts))
        ]
        targets.append((CloneCount(components), eps_g))

    def profiles(eps: np.ndarray, lower_side: bool = True, fineness: float = 1.0):
        bounds = [clones_profile(count, 1, eps_g, eps) for count, eps_g in targets]
        lower = np.max([b[0] for b in bounds], axis=0)
        upper = np.max([b[1] for b in bounds], axis=0)
        return [(lower, upper)], True

    return profile_pld(profiles, lambda eps: profiles(eps)[0][0][1], max(levels), loss_grid_step)
