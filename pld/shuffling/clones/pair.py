"""The clones pairs (Feldman, McMillan and Talwar 2021, 2023): parameters, exact lattice,
windows.

The masses, the privacy loss s(a, b) and the truncation rules are derived in the
docstring of :mod:`pld.shuffling.clones.mechanism`. This module holds what both of its
constructions share: the validated pair, its exact log-pmfs on the whole lattice,
the binomial windows of the kept rows with the exact mass left outside them, and
the loss within a row (monotone in a) with its closed-form threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from pld import validation
from pld.numerics import MAX_EPS0, UNIT_ROUNDOFF, binomial

#: Largest n accepted by ``truncation="exact"``: (n+1)(n+2)/2 atoms, 4.5e6 at n = 3000.
EXACT_MAX_N = 3000

#: The named pairs (docs/clones-validity.md): per-side clone probability e^-ε0 / 2
#: (Feldman, McMillan and Talwar 2021, Thm 3.2; every ε0-LDP randomizer) and
#: 1/(e^ε0 + 1) (Feldman, McMillan and Talwar 2023, Thm 3.1; randomizers of its class).
VARIANTS = ("standard", "stronger")

#: A p above 1/(e^ε0 + 1) by at most this relative amount is taken to be
#: 1/(e^ε0 + 1): it absorbs the caller's own float rounding of that value.
P_ROUNDING_TOLERANCE = 1e-12

#: Without an explicit p, a smaller ε0 is computed as this one (an ε0-LDP randomiser
#: is ε0'-LDP for every ε0' >= ε0, so that pair dominates): below it 1 - 2p
#: (tanh(ε0/2) or 1 - e^-ε0) underflows and its logarithm with it.
_SMALLEST_DEFAULT_EPS0 = 1e-300

#: Rows of a + b whose probability is below this are left out (and charged): their
#: points' masses, times r >= e^-50 and a binomial window pmf, would underflow.
_SMALLEST_ROW_MASS = 1e-250


@dataclass(frozen=True)
class _ClonesPair:
    """Parameters of a pair of the clones family (:mod:`pld.shuffling.clones.mechanism`).

    ``P = w_a P0 + r w_a P1`` and ``Q = r w_a P0 + w_a P1`` with ``w_a = 1/(1 + r)``,
    ``r = e^-ε0``, where the other ``n - 1`` users are clones with probability ``rho``
    (``rho/2`` of each kind).
    """

    n: int
    eps0: float
    rho: float
    log_one_minus_rho: float
    weight_a: float
    r: float
    one_minus_r: float


def _pair(n: object, eps0: object, p: object = None, variant: object = None) -> _ClonesPair:
    """Validate (n, eps0, p, variant) and return the pair (docs/clones-validity.md, eq. (1)).

    ``p`` is the per-side clone probability, in (0, 1/(e^ε0 + 1)]; without it
    ``variant`` ("standard", the default, or "stronger") sets it. Not both.
    """
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    eps0 = validation.in_interval("eps0", eps0, 0.0, MAX_EPS0, low_open=True)
    if p is not None and variant is not None:
        raise ValueError("give p or variant, not both (variant names a value of p)")
    if p is None:
        variant = validation.one_of("variant", "standard" if variant is None else variant, VARIANTS)
        eps0 = max(eps0, _SMALLEST_DEFAULT_EPS0)
    r = math.exp(-eps0)
    p_max = 1.0 / (math.exp(eps0) + 1.0)
    if p is None and variant == "standard":
        p, one_minus_rho = r / 2.0, -math.expm1(-eps0)
    else:
        if p is None:
            p = p_max
        else:
            p = validation.finite_real("p", p)
            if not 0.0 < p <= p_max * (1.0 + P_ROUNDING_TOLERANCE):
                raise ValueError(
                    f"p must lie in (0, 1/(e^eps0 + 1)] = (0, {p_max!r}] for eps0={eps0!r} "
                    f"(got {p!r})"
                )
            p = min(p, p_max)
        # 1 - 2p = tanh(ε0/2) + 2 (p_max - p), without cancellation for small ε0.
        one_minus_rho = math.tanh(eps0 / 2.0) + 2.0 * (p_max - p)
    return _ClonesPair(
        n=n,
        eps0=eps0,
        rho=2.0 * p,
        log_one_minus_rho=math.log(one_minus_rho),
        weight_a=1.0 / (1.0 + r),
        r=r,
        one_minus_r=-math.expm1(-eps0),
    )


# -- exact lattice -----------------------------------------------------------------


def _lattice_log_pmfs(pair: _ClonesPair) -> tuple[np.ndarray, np.ndarray]:
    n = pair.n
    t = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
    a = np.arange(t.size) - t * (t + 1) // 2
    b = t - a
    log_common = (
        math.log(pair.weight_a)
        + gammaln(n)
        - gammaln(a + 1.0)
        - gammaln(b + 1.0)
        - gammaln(n - t + 1.0)
        + (t - 1) * math.log(pair.rho / 2.0)
        + (n - t) * pair.log_one_minus_rho
    )
    with np.errstate(divide="ignore"):
        log_p = log_common + np.log(a + pair.r * b)
        log_q = log_common + np.log(pair.r * a + b)
    return np.minimum(log_p, 0.0), np.minimum(log_q, 0.0)


def _lattice_mass_error(pair: _ClonesPair) -> float:
    """Relative error bound of the lattice masses: 4 ulp of each log term's magnitude.

    log P is a sum of gammaln values up to gammaln(n) and of t log p, (n - t)
    log(1 - 2p) terms; each is computed to about one ulp of its magnitude.
    """
    n = pair.n
    magnitude = 4.0 * float(gammaln(n + 1.0)) + n * (
        abs(math.log(pair.rho / 2.0)) + abs(pair.log_one_minus_rho)
    )
    return 4.0 * math.ulp(1.0) * (magnitude + 10.0)


# -- truncation windows ------------------------------------------------------------


def _quantile_low(mass: float, trials: np.ndarray | int, prob: float) -> np.ndarray:
    """Smallest k with P(X <= k) >= mass for X ~ Bin(trials, prob), so P(X < k) < mass."""
    return np.asarray(binomial.ppf(mass, trials, prob), dtype=np.int64)


def _clone_quantiles(pair: _ClonesPair, mass: float) -> tuple[int, int]:
    """[c_lo, c_hi] with P(C < c_lo) < mass and P(C > c_hi) < mass, C ~ Bin(n - 1, 2p).

    The upper end is a lower quantile of n - 1 - C ~ Bin(n - 1, 1 - 2p):
    ``scipy.stats.binom.isf`` returns n - 1 for masses near 1e-18.
    """
    trials = pair.n - 1
    if trials == 0:
        return 0, 0
    low, high = binomial.window(mass, trials, pair.rho)
    return int(low), int(high)


def _clone_window(pair: _ClonesPair, truncation: str, tail_mass: float) -> tuple[int, int]:
    """Range [c_lo, c_hi] of C ~ Bin(n - 1, 2p) kept, leaving at most tail_mass/4 per side."""
    trials = pair.n - 1
    if trials == 0:
        return 0, 0
    if truncation == "hoeffding":
        # Hoeffding: P(C <= (ρ - c) N) <= exp(-2 N c²) = τ/4 (Koskela et al. 2023, Lemma 11, 2p not
        # p).
        half_width = math.sqrt(math.log(4.0 / tail_mass) / (2.0 * trials)) * trials
        low = max(0, math.ceil(pair.rho * trials - half_width))
        high = min(trials, math.floor(pair.rho * trials + half_width))
        return low, high
    return _clone_quantiles(pair, tail_mass / 4.0)


def _split_window(clones: np.ndarray, truncation: str, tail_mass: float) -> np.ndarray:
    """Lowest A kept given C = c, for A | C ~ Bin(c, 1/2): P(A < low) <= tail_mass/4.

    The kept range is [low, c - low], symmetric because Bin(c, 1/2) is.
    """
    if truncation == "hoeffding":
        safe = np.maximum(clones, 1)
        half_width = np.sqrt(math.log(4.0 / tail_mass) * safe / 2.0)
        low = np.ceil(clones / 2.0 - half_width).astype(np.int64)
    else:
        low = _quantile_low(tail_mass / 4.0, clones, 0.5)
    return np.clip(low, 0, clones // 2)


@dataclass(frozen=True)
class _Rows:
    """Rows t = first, ..., first + len(low) - 1 (t >= 1) kept with a in [low_t, t - low_t].

    Row t holds the points of C = t - 1 (the target's report adds one to a or b).

    Per row, ``clone_pmf`` is P(C = t - 1) and ``below`` is P(X <= low_t - 2) for
    X ~ Bin(t - 1, 1/2): the binomial values that the scatter (window mass) and
    :func:`_outside_mass` share.
    """

    first: int
    low: np.ndarray
    clone_pmf: np.ndarray
    below: np.ndarray

    @property
    def totals(self) -> np.ndarray:
        return self.first + np.arange(self.low.size, dtype=np.int64)


def _rows(pair: _ClonesPair, truncation: str, tail_mass: float) -> _Rows:
    """Kept rows and their a-windows: those of C = t - 1, widened by the target's report."""
    c_lo, c_hi = _clone_window(pair, truncation, tail_mass)
    clones = np.arange(c_lo, c_hi + 1, dtype=np.int64)
    split_low = _split_window(clones, truncation, tail_mass)
    # P0, P1 with C = t - 1 land in row t.
    first, last = c_lo + 1, c_hi + 1
    totals = np.arange(first, last + 1, dtype=np.int64)
    low = split_low[totals - 1 - c_lo]
    # Hoeffding's window ignores the variance of C and can reach rows whose mass
    # underflows; the rows kept are those of mass >= _SMALLEST_ROW_MASS (the row
    # mass is unimodal in t, so they are contiguous; _outside_mass charges the rest).
    clone_pmf = _clone_pmf(pair, totals - 1)  # P(C = t - 1) per row
    heavy = np.flatnonzero(clone_pmf >= _SMALLEST_ROW_MASS)
    if heavy.size:
        kept = slice(int(heavy[0]), int(heavy[-1]) + 1)
        totals, low, clone_pmf = totals[kept], low[kept], clone_pmf[kept]
    first = int(totals[0])
    return _Rows(
        first,
        low,
        clone_pmf=clone_pmf,
        below=_half_cdf(low - 2, totals - 1),
    )


def _clone_pmf(pair: _ClonesPair, counts: np.ndarray) -> np.ndarray:
    """P(C = counts) for C ~ Bin(n - 1, 2p) (0 outside [0, n - 1])."""
    if pair.n == 1:
        return (np.asarray(counts) == 0).astype(np.float64)
    return binomial.pmf(counts, pair.n - 1, pair.rho)


def _half_cdf(k: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """P(X <= k) for X ~ Bin(trials, 1/2), 0 for k < 0 and 1 for k >= trials."""
    k = np.asarray(k)
    trials = np.broadcast_to(trials, k.shape)
    result = np.where(k >= trials, 1.0, 0.0)
    inside = (k >= 0) & (k < trials)
    result[inside] = binomial.cdf(k[inside], trials[inside], 0.5)
    return result


def _outside_mass(pair: _ClonesPair, rows: _Rows) -> float:
    """Exact P-mass (equal to the Q-mass) of the lattice points outside the kept rows.

    Row t, a outside [lo, t - lo]: with X ~ Bin(t - 1, 1/2) the β(a - 1) and β(a)
    parts each leave P(X <= lo - 2) + P(X <= lo - 1) (Bin(t - 1, 1/2) is symmetric).
    Rows outside [first, last]: T = C + 1.
    """
    totals = rows.totals
    tails = rows.below + _half_cdf(rows.low - 1, totals - 1)
    row_mass = pair.weight_a * rows.clone_pmf
    inside_rows = float(np.sum(row_mass * tails * (1.0 + pair.r)))
    return inside_rows + _outside_rows(pair, rows)


def _outside_rows(pair: _ClonesPair, rows: _Rows) -> float:
    """Exact P-mass (equal to the Q-mass) of the rows outside [first, last] (T = C + 1)."""
    first, last = rows.first, rows.first + rows.low.size - 1
    return _clone_cdf(pair, first - 2) + _clone_sf(pair, last - 1)


def _clone_cdf(pair: _ClonesPair, k: int) -> float:
    """P(C <= k)."""
    if k < 0:
        return 0.0
    if k >= pair.n - 1:
        return 1.0
    return float(binomial.cdf(k, pair.n - 1, pair.rho))


def _clone_sf(pair: _ClonesPair, k: int) -> float:
    """P(C > k)."""
    if k >= pair.n - 1:
        return 0.0
    if k < 0:
        return 1.0
    return float(binomial.sf(k, pair.n - 1, pair.rho))


def _row_weights(pair: _ClonesPair, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row weights ``e^ε0/(e^ε0 + 1) P(C = t - 1)`` and bounds on their relative errors.

    By Loader's pmf (:mod:`pld.numerics.binomial_pmf`), whose error does not grow
    with n (Boost's reaches 2e-11 at n = 5.4e8): 64 u (1 + |log P|) and 4 u for the
    exponential and the product.
    """
    from pld.numerics.binomial_pmf import LOG_PMF_ERROR, log_pmfs

    if pair.n == 1:
        log_weight = np.where(totals == 1, 0.0, -np.inf)  # C = 0 surely
    else:
        log_weight = log_pmfs(
            (totals - 1).astype(np.float64),
            np.full(totals.size, float(pair.n - 1)),
            np.full(totals.size, pair.rho),
        )
    error = LOG_PMF_ERROR * (1.0 + np.abs(np.where(np.isfinite(log_weight), log_weight, 0.0)))
    return pair.weight_a * np.exp(log_weight), error + 4.0 * UNIT_ROUNDOFF
