"""Shuffled ε0-LDP randomisers: the "clones" dominating pair of Feldman, McMillan and Talwar.

The shuffle of n users who each run an ε0-LDP randomiser (any randomiser, even
chosen adaptively) is dominated by the pair of seed 004, eq 3.1-3.2,

    P = (A + Δ1, C - A + Δ2),    Q = (A + Δ2, C - A + Δ1),
    C ~ Bin(n - 1, 2p),  A | C ~ Bin(C, 1/2),
    Δ1 ~ Bern(e^ε0 p),   Δ2 ~ Bin(1 - Δ1, p / (1 - e^ε0 p)),

with p = 1/(e^ε0 + 1) by default (seed 004 Lemma 8 and Cor 9). Writing out Δ1, Δ2
(seed 004 §3.1) gives the mixtures, with q = e^ε0 p,

    P = q P0 + p P1 + w2 P2,   Q = p P0 + q P1 + w2 P2,   w2 = 1 - q - p = 1 - p/p_max,
    P0 = (A + 1, C - A),  P1 = (A, C - A + 1),  P2 = (A, C - A).

((1 - q) q~ = p and (1 - q)(1 - q~) = 1 - q - p with q~ = p/(1 - q).) With the
default p the third weight w2 is exactly 0: the code sets it to 0 instead of
computing p/(1 - e^ε0 p), which float64 can round to 1 + 2e-16.

Masses (derived here and checked by brute-force enumeration of C, A, Δ1, Δ2 in
tests/test_clones.py). With t = a + b, N = n - 1, ρ = 2p, the other users are
trinomial(N; p, p, 1 - 2p), so P0 = (a, b) has probability
``T(a - 1, b) = Bin(N, ρ)(t - 1) · Bin(t - 1, 1/2)(a - 1)``. This corrects
seed 004 Lemma A.4, whose extra factor 1/2^i and (1 - p)^(n-1-i) are wrong: the
right form is C(n-1, i) C(i, j) p^i (1 - 2p)^(n-1-i). Dividing by q:

    P(a, b) = q · M_t(a) · (a + r b + c_t),   Q(a, b) = q · M_t(a) · (r a + b + c_t),
    M_t(a) = C(t, a) (n-1)! / (t! (n-t)!) · p^(t-1) (1 - 2p)^(n-t),
    r = e^-ε0,   c_t = (n - t) · w2 r / (1 - 2p).

The ratio P0/P2 at (a, b) is (1 - 2p) a / ((n - a - b) p): seed 004 Lemma A.2
(and Cor A.3 after it) carry a spurious factor 2. The privacy loss

    s(a, b) = log((a + r b + c_t) / (r a + b + c_t)) = log1p((1 - r)(a - b) / (r a + b + c_t))

lies in [-ε0, ε0] (the numerator is at most e^ε0 times the denominator and vice
versa), so ``max_loss = eps0``; Q(a, b) = P(b, a), so the loss of Q/P under Q
has the law of the loss of P/Q under P and the pair is symmetric. For fixed t
the loss is strictly increasing in a, which the construction below uses.

Per row t, with X ~ Bin(t - 1, 1/2) and β = Bin(t - 1, 1/2) pmf,

    P(a, t - a) = q · Bin(N, ρ)(t - 1) · [β(a - 1) + r β(a) + γ_t (β(a - 1) + β(a))],
    Q(a, t - a) = q · Bin(N, ρ)(t - 1) · [r β(a - 1) + β(a) + γ_t (β(a - 1) + β(a))],

with γ_t = c_t / t, so the mass of a range of a is a pair of binomial interval
probabilities.

Constructions:

* ``truncation="exact"``: every lattice point (a, b), a + b <= n, in log space
  (gammaln); O(n²) atoms, for small n.
* ``"hoeffding"``: seed 004 Lemma 11 (§3.2 and App B). C is kept in its
  Hoeffding window for Bin(n - 1, 2p) (App B's Lemma 11 writes Bin(n - 1, p): a
  typo, §3.2 has 2p) and A | C in its Hoeffding window for Bin(C, 1/2), each
  with τ/4 per tail. The lemma sums only P0-shaped points (j + 1, i - j); P1
  and P2 shift the lattice point by one, so each row t keeps the hull of the
  windows of C = t - 1 and C = t, which keeps all three components.
* ``"quantile"`` (default): the same rule with exact binomial tail quantiles
  (scipy) in place of Hoeffding's bound: same guarantee, fewer points.

In both truncations the P- and Q-mass outside the kept region is computed
exactly from binomial tails (it is at most ``tail_mass``) and charged to the
upper bound at loss ε0 (seed 004 App B: δ(∞) = 1 - Π(1 - τ_i) after
composition). The kept points are never materialised: a numba kernel walks each
row, where the loss is monotone in a, and adds the P- and Q-mass of the points
whose loss lies in each grid cell [k h, (k+1) h) into one merged atom per cell
(docs/architecture.md, "Merged atoms"). Memory is O(row width + ε0/h). The
default grid follows the engine's rule for the loss's standard deviation
(:func:`pld.engine.choose_loss_grid_step`), measured on a probe pass.

Binomial probabilities for large n come from scipy.stats.binom's pmf/cdf/sf
(Boost), which agree with 30-digit values to ~1e-12 relative at n = 5e6;
``scipy.special.bdtr`` (Cephes) and ``binom.logpmf`` were off by ~5e-9 there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
from scipy import stats
from scipy.optimize import brentq
from scipy.special import gammaln

from pld import _validate
from pld.construction import from_pmfs
from pld.engine import (
    DEFAULT_LOSS_GRID_STEP,
    MAX_REFINEMENT,
    check_grid_points,
    choose_loss_grid_step,
    max_grid_points,
)
from pld.loss_distribution import PLD
from pld.mechanisms._spec import MechanismSpec, Option
from pld.recipes import refinable

#: Largest n accepted by ``truncation="exact"``: (n+1)(n+2)/2 atoms, 4.5e6 at n = 3000.
EXACT_MAX_N = 3000

#: Largest ε0 accepted (nats). Beyond it p = 1/(e^ε0 + 1) < 2e-22 and the shuffle
#: amplifies nothing measurable; the same limit as ``pld.randomized_response``.
MAX_EPS0 = 50.0

#: A p above 1/(e^ε0 + 1) by at most this relative amount is taken to be the
#: default: it absorbs the caller's own float rounding of the default value.
P_ROUNDING_TOLERANCE = 1e-12

#: Mass of C ~ Bin(n - 1, 2p) left out, per tail, by the grid-free delta of
#: :func:`clones_delta_bounds` (it widens the bracket by twice this).
_HOCKEY_STICK_TAIL = 1e-18

#: Relative accuracy of Boost's binomial pmf/cdf/sf as used here (measured
#: ~1e-12 against 30-digit sums at n = 5e6), with a 100x margin.
_BINOMIAL_RELATIVE_ERROR = 1e-10

#: Relative accuracy claimed for the merged masses handed to the engine: Boost's
#: pmf and cdf (<= 1.4e-12 measured at n = 5e6, 1e7) times the β recurrence,
#: renormalised per row (<= 2 ulp per step from the median: 2e-12 at 1e4 steps).
MERGED_MASS_RELATIVE_ERROR = 1e-11

TRUNCATIONS = ("quantile", "hoeffding", "exact")

#: Rows of a + b whose probability is below this are left out (and charged): their
#: points' masses, times r >= e^-50 and a binomial window pmf, would underflow.
_SMALLEST_ROW_MASS = 1e-250

#: Rows walked by the probe that measures the loss's standard deviation for the
#: default grid (a row stride of rows // PROBE_ROWS).
PROBE_ROWS = 512

#: The default grid is coarsened until [-ε0, ε0] spans at most this many cells
#: (two float64 arrays of this length are accumulated: 64 MiB).
DEFAULT_MAX_CELLS = 2**22

#: Lattice points the kernel walks per grid point of the work budget
#: (:func:`pld.engine.check_grid_points`): a point costs about 8 ns (3.8e8 points
#: in 2.8-3.5 s at n = 10^7 on the shared reference machine), a grid point of a
#: composition several times more (transforms, powering, queries). The default
#: budget thus allows about 5e8 points (~4 s; n ~ 1.3e7 at eps0 = 1).
LATTICE_POINTS_PER_GRID_POINT = 8

#: Lattice points walked per call of the numba kernel: calls of ~0.1 s, between
#: which Python sees Ctrl-C.
KERNEL_CHUNK_POINTS = 20_000_000

#: A row of the grid-free hockey stick costs about this many grid points of
#: work per eps (a few scipy binomial evaluations).
HOCKEY_STICK_ROW_COST = 8


@dataclass(frozen=True)
class _ClonesPair:
    """Parameters of a pair of the clones family (see the module docstring).

    ``P = w_a P0 + r w_a P1 + w2 P2`` and ``Q = r w_a P0 + w_a P1 + w2 P2`` where the
    other ``n - 1`` users are clones with probability ``rho`` (``rho/2`` of each
    kind); ``blanket = w2 r / (1 - rho)`` so that ``c_t = blanket * (n - t)``.
    """

    n: int
    eps0: float
    rho: float
    log_one_minus_rho: float
    weight_a: float
    r: float
    one_minus_r: float
    w2: float
    blanket: float


def _pair(n: object, eps0: object, p: object) -> _ClonesPair:
    """Validate (n, eps0, p) and return the pair of seed 004 eq 3.1-3.2."""
    n = _validate.integer_at_least("n", n, 1, _validate.MAX_USERS)
    eps0 = _validate.in_interval("eps0", eps0, 0.0, MAX_EPS0, low_open=True)
    p_max = 1.0 / (math.exp(eps0) + 1.0)
    if p is None:
        p = p_max
    else:
        p = _validate.finite_real("p", p)
        if not 0.0 < p <= p_max * (1.0 + P_ROUNDING_TOLERANCE):
            raise ValueError(
                f"p must lie in (0, 1/(e^eps0 + 1)] = (0, {p_max!r}] for eps0={eps0!r} (got {p!r})"
            )
        p = min(p, p_max)
    r = math.exp(-eps0)
    # 1 - 2p = tanh(ε0/2) + 2 (p_max - p), without cancellation for small ε0.
    one_minus_rho = math.tanh(eps0 / 2.0) + 2.0 * (p_max - p)
    w2 = 0.0 if p == p_max else (p_max - p) / p_max
    return _ClonesPair(
        n=n,
        eps0=eps0,
        rho=2.0 * p,
        log_one_minus_rho=math.log(one_minus_rho),
        weight_a=math.exp(eps0) * p,
        r=r,
        one_minus_r=-math.expm1(-eps0),
        w2=w2,
        blanket=w2 * r / one_minus_rho,
    )


def _feldman_2021_pair(n: int, eps0: float) -> _ClonesPair:
    """The earlier pair of Feldman, McMillan and Talwar (2021, Thm 3.1): C ~ Bin(n-1, e^-ε0),
    mixture weights e^ε0/(e^ε0+1) and 1/(e^ε0+1), no third component."""
    r = math.exp(-eps0)
    return _ClonesPair(
        n=n,
        eps0=eps0,
        rho=r,
        log_one_minus_rho=math.log1p(-r),
        weight_a=1.0 / (1.0 + r),
        r=r,
        one_minus_r=-math.expm1(-eps0),
        w2=0.0,
        blanket=0.0,
    )


def _analysed_pair(n: object, eps0: object, p: object, analysis: str) -> _ClonesPair:
    """The pair of seed 004 eq 3.1-3.2 (``"2022"``) or of Feldman et al. 2021 (``"2021"``)."""
    analysis = _validate.one_of("analysis", analysis, ("2022", "2021"))
    if analysis == "2022":
        return _pair(n, eps0, p)
    if p is not None:
        raise ValueError("p applies to analysis='2022' only")
    pair = _pair(n, eps0, None)
    return _feldman_2021_pair(pair.n, pair.eps0)


# -- exact lattice -----------------------------------------------------------------


def _lattice_log_pmfs(pair: _ClonesPair) -> tuple[np.ndarray, np.ndarray]:
    n = pair.n
    t = np.repeat(np.arange(n + 1), np.arange(1, n + 2))
    a = np.arange(t.size) - t * (t + 1) // 2
    b = t - a
    blanket = pair.blanket * (n - t)
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
        log_p = log_common + np.log(a + pair.r * b + blanket)
        log_q = log_common + np.log(pair.r * a + b + blanket)
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


def clones_pmfs(n: int, eps0: float, p: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-pmfs of the clones pair (seed 004 eq 3.1-3.2) on its whole lattice.

    The outcome (a, b), a + b = t <= n, is at index ``t (t + 1) / 2 + a`` (rows of
    increasing t, a increasing within a row); there are (n+1)(n+2)/2 outcomes.
    Masses follow the module docstring (seed 004 §3.1 and App A with Lemma A.2's
    factor 2 and Lemma A.4's 1/2^i removed), evaluated in log space.

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= ``EXACT_MAX_N``.
    eps0 : float
        Local privacy parameter in nats, in (0, 50].
    p : float, optional
        Clone probability parameter in (0, 1/(e^ε0 + 1)]; default 1/(e^ε0 + 1).

    Returns
    -------
    log_p, log_q : ndarray
        Natural logs of P and Q at each outcome (``-inf`` where the mass is 0).
    """
    pair = _pair(n, eps0, p)
    if pair.n > EXACT_MAX_N:
        raise ValueError(f"n must be an integer <= {EXACT_MAX_N} for the exact lattice (got {n!r})")
    return _lattice_log_pmfs(pair)


# -- truncation windows ------------------------------------------------------------


def _quantile_low(mass: float, trials: np.ndarray | int, prob: float) -> np.ndarray:
    """Smallest k with P(X <= k) >= mass for X ~ Bin(trials, prob), so P(X < k) < mass."""
    return np.asarray(stats.binom.ppf(mass, trials, prob), dtype=np.int64)


def _clone_quantiles(pair: _ClonesPair, mass: float) -> tuple[int, int]:
    """[c_lo, c_hi] with P(C < c_lo) < mass and P(C > c_hi) < mass, C ~ Bin(n - 1, 2p).

    The upper end is a lower quantile of n - 1 - C ~ Bin(n - 1, 1 - 2p):
    ``scipy.stats.binom.isf`` returns n - 1 for masses near 1e-18.
    """
    trials = pair.n - 1
    if trials == 0:
        return 0, 0
    low = int(_quantile_low(mass, trials, pair.rho))
    high = trials - int(_quantile_low(mass, trials, 1.0 - pair.rho))
    return low, max(low, high)


def _clone_window(pair: _ClonesPair, truncation: str, tail_mass: float) -> tuple[int, int]:
    """Range [c_lo, c_hi] of C ~ Bin(n - 1, 2p) kept, leaving at most tail_mass/4 per side."""
    trials = pair.n - 1
    if trials == 0:
        return 0, 0
    if truncation == "hoeffding":
        # Hoeffding: P(C <= (ρ - c) N) <= exp(-2 N c²) = τ/4 (seed 004 Lemma 11, 2p not p).
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
    """Rows t = first, ..., first + len(low) - 1 (t >= 1) kept with a in [low_t, t - low_t]."""

    first: int
    low: np.ndarray
    include_origin: bool

    @property
    def totals(self) -> np.ndarray:
        return self.first + np.arange(self.low.size, dtype=np.int64)


def _rows(pair: _ClonesPair, truncation: str, tail_mass: float) -> _Rows:
    """Kept rows and their a-windows: the hull of the windows of C = t - 1 and C = t."""
    c_lo, c_hi = _clone_window(pair, truncation, tail_mass)
    clones = np.arange(c_lo, c_hi + 1, dtype=np.int64)
    split_low = _split_window(clones, truncation, tail_mass)
    # P0, P1 with C = t - 1 land in row t; P2 with C = t lands in row t (only if w2 > 0).
    first = max(c_lo + 1, 1) if pair.w2 == 0.0 else max(c_lo, 1)
    last = c_hi + 1
    totals = np.arange(first, last + 1, dtype=np.int64)
    big = np.iinfo(np.int64).max
    from_previous = np.full(totals.size, big)
    inside = (totals - 1 >= c_lo) & (totals - 1 <= c_hi)
    from_previous[inside] = split_low[totals[inside] - 1 - c_lo]
    low = from_previous
    if pair.w2 > 0.0:
        from_same = np.full(totals.size, big)
        inside = totals <= c_hi
        from_same[inside] = split_low[totals[inside] - c_lo]
        low = np.minimum(low, from_same)
    # Hoeffding's window ignores the variance of C and can reach rows whose mass
    # underflows; the rows kept are those of mass >= _SMALLEST_ROW_MASS (the row
    # mass is unimodal in t, so they are contiguous; _outside_mass charges the rest).
    row_mass = _clone_pmf(pair, totals - 1) + _clone_pmf(pair, totals)
    heavy = np.flatnonzero(row_mass >= _SMALLEST_ROW_MASS)
    if heavy.size:
        first_heavy, last_heavy = int(heavy[0]), int(heavy[-1])
        totals, low = totals[first_heavy : last_heavy + 1], low[first_heavy : last_heavy + 1]
    first = int(totals[0])
    return _Rows(first, low, include_origin=pair.w2 > 0.0 and c_lo == 0 and first == 1)


def _clone_pmf(pair: _ClonesPair, counts: np.ndarray) -> np.ndarray:
    """P(C = counts) for C ~ Bin(n - 1, 2p) (0 outside [0, n - 1])."""
    if pair.n == 1:
        return (np.asarray(counts) == 0).astype(np.float64)
    return stats.binom.pmf(counts, pair.n - 1, pair.rho)


def _half_cdf(k: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """P(X <= k) for X ~ Bin(trials, 1/2), 0 for k < 0 and 1 for k >= trials."""
    k = np.asarray(k)
    trials = np.broadcast_to(trials, k.shape)
    result = np.where(k >= trials, 1.0, 0.0)
    inside = (k >= 0) & (k < trials)
    result[inside] = stats.binom.cdf(k[inside], trials[inside], 0.5)
    return result


def _outside_mass(pair: _ClonesPair, rows: _Rows) -> float:
    """Exact P-mass (equal to the Q-mass) of the lattice points outside the kept rows.

    Row t, a outside [lo, t - lo]: with X ~ Bin(t - 1, 1/2) the β(a - 1) and β(a)
    parts each leave P(X <= lo - 2) + P(X <= lo - 1) (Bin(t - 1, 1/2) is symmetric).
    Rows outside [first, last]: T = C + 1 with probability 1 - w2, T = C otherwise.
    """
    totals = rows.totals
    tails = _half_cdf(rows.low - 2, totals - 1) + _half_cdf(rows.low - 1, totals - 1)
    gamma = pair.blanket * (pair.n - totals) / totals
    row_mass = pair.weight_a * _clone_pmf(pair, totals - 1)
    inside_rows = float(np.sum(row_mass * tails * (1.0 + pair.r + 2.0 * gamma)))
    first, last = rows.first, rows.first + rows.low.size - 1
    outside_rows = (1.0 - pair.w2) * (_clone_cdf(pair, first - 2) + _clone_sf(pair, last - 1))
    if pair.w2 > 0.0:
        outside_rows += pair.w2 * _clone_sf(pair, last)
        if not rows.include_origin:
            outside_rows += pair.w2 * _clone_cdf(pair, first - 1)
    return inside_rows + outside_rows


def _clone_cdf(pair: _ClonesPair, k: int) -> float:
    """P(C <= k)."""
    if k < 0:
        return 0.0
    if k >= pair.n - 1:
        return 1.0
    return float(stats.binom.cdf(k, pair.n - 1, pair.rho))


def _clone_sf(pair: _ClonesPair, k: int) -> float:
    """P(C > k)."""
    if k >= pair.n - 1:
        return 0.0
    if k < 0:
        return 1.0
    return float(stats.binom.sf(k, pair.n - 1, pair.rho))


# -- merged atoms: the numba kernel ------------------------------------------------


@numba.njit(cache=True)
def _row_loss(a: int, t: int, r: float, one_minus_r: float, blanket_t: float) -> float:
    """s(a, t - a) = log((a + r b + c_t) / (r a + b + c_t)) (module docstring), t >= 1.

    As log1p((1 - r)(a - b) / (r a + b + c_t)) when that argument is small (small
    ε0 or a near b), as a difference of logs otherwise (large ε0, where 1 - r
    rounds to 1 and log1p(-1) would be -inf).
    """
    b = t - a
    denominator = r * a + b + blanket_t
    relative = one_minus_r * (a - b) / denominator
    if abs(relative) < 0.5:
        return math.log1p(relative)
    return math.log(a + r * b + blanket_t) - math.log(denominator)


@numba.njit(cache=True)
def _first_at_or_above(
    threshold: float, start: int, stop: int, t: int, r: float, one_minus_r: float, blanket_t: float
) -> int:
    """Smallest a in [start, stop] with s(a) >= threshold (stop if none; s increases in a).

    Solves s(a) = threshold in closed form, a* = (x(t + c) - (r t + c)) / ((1 - r)(1 + x))
    with x = e^threshold (divided through by x when threshold > 0), then corrects
    the rounding by evaluating s itself.
    """
    if threshold > 0.0:
        y = math.exp(-threshold)
        guess = ((t + blanket_t) - y * (r * t + blanket_t)) / (one_minus_r * (1.0 + y))
    else:
        x = math.exp(threshold)
        guess = (math.expm1(threshold) * (t + blanket_t) + one_minus_r * t) / (
            one_minus_r * (1.0 + x)
        )
    if guess != guess:
        guess = start
    a = int(min(max(math.ceil(min(max(guess, -1.0), stop + 1.0)), start), stop))
    while a > start and _row_loss(a - 1, t, r, one_minus_r, blanket_t) >= threshold:
        a -= 1
    while a < stop and _row_loss(a, t, r, one_minus_r, blanket_t) < threshold:
        a += 1
    return a


@numba.njit(cache=True)
def _at_or_above(a: int, t: int, r: float, blanket_t: float, edge: float) -> bool:
    """e^s(a, t - a) >= edge, as (a + r b + c_t) >= edge (r a + b + c_t)."""
    return a + r * (t - a) + blanket_t >= edge * (r * a + (t - a) + blanket_t)


@numba.njit(cache=True)
def _scatter_rows(
    totals: np.ndarray,
    lows: np.ndarray,
    row_weight: np.ndarray,
    row_window_mass: np.ndarray,
    n: int,
    r: float,
    one_minus_r: float,
    blanket: float,
    step: float,
    edges: np.ndarray,
    first_cell: int,
    cell_p: np.ndarray,
    cell_q: np.ndarray,
) -> int:
    """Add the P- and Q-mass of every kept lattice point to its loss cell; return the count.

    Row t (t >= 1) keeps a in [lo, t - lo]. With β the Bin(t - 1, 1/2) pmf, the
    point's masses are ``row_weight[t] * (β(a-1) + r β(a) + γ (β(a-1) + β(a)))``
    and ``row_weight[t] * (r β(a-1) + β(a) + γ (β(a-1) + β(a)))`` (module
    docstring). β is built by the ratio recurrence from the row's median outward
    and rescaled so that its sum over the window equals ``row_window_mass[t]``
    (exact, from binomial cdfs), which removes the drift of the recurrence.

    The point (a, b) lies in cell ``first_cell + j`` when ``edges[j] <= e^s <
    edges[j + 1]`` with ``edges[j] = exp((first_cell + j) step)`` and
    e^s = (a + r b + c_t) / (r a + b + c_t); the comparisons are made without
    division or logarithm. The loss increases with a, so each cell is one run of
    a; its end is the closed-form root a* = (x (t + c) - (r t + c)) / ((1 - r)(1 + x))
    of e^s = x, corrected by comparisons. Each run's β-sums are summed directly
    (not as differences of prefix sums, which would lose the relative accuracy
    of the small tail runs).
    """
    widest = 0
    for row in range(totals.shape[0]):
        widest = max(widest, totals[row] - 2 * lows[row] + 2)
    beta = np.empty(widest)
    last = cell_p.shape[0] - 1
    points = 0
    for row in range(totals.shape[0]):
        t = totals[row]
        lo = lows[row]
        hi = t - lo
        trials = t - 1
        # beta[k - base] = β(k) for k in [lo - 1, hi] (the a - 1 and a of every kept a),
        # built on the support [k0, k1] and zero outside it.
        base = lo - 1
        k0 = max(base, 0)
        k1 = min(hi, trials)
        beta[0] = 0.0
        beta[hi - base] = 0.0
        centre = min(max(trials // 2, k0), k1)
        value = 1.0
        beta[centre - base] = value
        total = value
        for k in range(centre, k1):
            value *= (trials - k) / (k + 1)
            beta[k + 1 - base] = value
            total += value
        value = 1.0
        for k in range(centre, k0, -1):
            value *= k / (trials - k + 1)
            beta[k - 1 - base] = value
            total += value
        weight = row_weight[row] * row_window_mass[row] / total
        gamma = blanket * (n - t) / t
        blanket_t = blanket * (n - t)
        # Cell of a = lo from its loss, then made consistent with the edge comparisons.
        numerator = lo + r * (t - lo) + blanket_t
        denominator = r * lo + (t - lo) + blanket_t
        j = min(max(math.floor(math.log(numerator / denominator) / step) - first_cell, 0), last)
        while j > 0 and numerator < edges[j] * denominator:
            j -= 1
        while j < last and numerator >= edges[j + 1] * denominator:
            j += 1
        a = lo
        while True:
            # The run of cell j ends before the first a' > a with e^s(a') >= edges[j + 1]:
            # the closed-form root of s = (first_cell + j + 1) step, corrected by comparisons.
            stop = hi + 1
            if j < last:
                edge = edges[j + 1]
                if edge > 1.0:
                    guess = ((t + blanket_t) - (r * t + blanket_t) / edge) / (
                        one_minus_r * (1.0 + 1.0 / edge)
                    )
                else:
                    guess = (edge * (t + blanket_t) - (r * t + blanket_t)) / (
                        one_minus_r * (1.0 + edge)
                    )
                stop = int(min(max(math.ceil(min(max(guess, a + 1.0), hi + 1.0)), a + 1), hi + 1))
                while stop > a + 1 and _at_or_above(stop - 1, t, r, blanket_t, edge):
                    stop -= 1
                while stop <= hi and not _at_or_above(stop, t, r, blanket_t, edge):
                    stop += 1
            unshifted = 0.0  # sum of β(a') over the run
            for k in range(a - base, stop - base):
                unshifted += beta[k]
            shifted = unshifted - beta[stop - 1 - base] + beta[a - 1 - base]  # sum of β(a' - 1)
            both = gamma * (shifted + unshifted)
            cell_p[j] += weight * (shifted + r * unshifted + both)
            cell_q[j] += weight * (r * shifted + unshifted + both)
            if stop > hi:
                break
            a = stop
            j += 1
            while j < last and _at_or_above(a, t, r, blanket_t, edges[j + 1]):
                j += 1
        points += hi - lo + 1
    return points


@numba.njit(cache=True)
def _row_thresholds(
    threshold: float, totals: np.ndarray, blanket_t: np.ndarray, r: float, one_minus_r: float
) -> np.ndarray:
    """For each row t, the smallest a in [0, t] with s(a, t - a) >= threshold (t + 1 if none)."""
    result = np.empty(totals.shape[0], dtype=np.int64)
    for row in range(totals.shape[0]):
        t = totals[row]
        result[row] = _first_at_or_above(threshold, 0, t + 1, t, r, one_minus_r, blanket_t[row])
    return result


# -- the merged construction -------------------------------------------------------


@dataclass(frozen=True)
class ClonesCells:
    """The clones pair with its kept lattice points merged per loss-grid cell.

    ``log_p[i]``, ``log_q[i]`` are the logs of the P- and Q-mass of the kept
    points whose privacy loss lies in ``[cells[i] * step, (cells[i] + 1) * step)``.
    ``truncated_mass`` is the P-mass (equal to the Q-mass) of the points left
    out, ``lattice_points`` the number of points kept (each counted once).
    """

    log_p: np.ndarray
    log_q: np.ndarray
    cells: np.ndarray
    step: float
    truncated_mass: float
    lattice_points: int


def _merged_loss_std(merged: ClonesCells) -> float:
    """Standard deviation (nats) under P of the merged atoms' privacy losses."""
    finite = np.isfinite(merged.log_q)
    weights = np.exp(merged.log_p[finite])
    loss = merged.log_p[finite] - merged.log_q[finite]
    mean = np.average(loss, weights=weights)
    return float(np.sqrt(np.average((loss - mean) ** 2, weights=weights)))


def _cells_on_default_grid(pair: _ClonesPair, truncation: str, tail_mass: float) -> ClonesCells:
    """Merged atoms on the engine's default grid for this pair's loss.

    The engine's rule (:func:`pld.engine.choose_loss_grid_step`) needs the loss's
    standard deviation, which needs the atoms. A probe pass uses a grid about 8
    times finer than the analytic estimate 2 (1 - r) / ((1 + r) sqrt(E[a + b]))
    (the loss is about 2 (1 - r)(a - b) / ((1 + r) t) near a = b, and a - b has
    variance about t given t); within-cell spread then changes the measured
    deviation by under 1 %. The probe walks about ``PROBE_ROWS`` evenly spaced
    rows of a + b only (the deviation is a smooth function of the row), and is
    reused as the result when it walked every row on the final grid.
    Both are coarsened by powers of two until [-ε0, ε0] spans at most
    ``DEFAULT_MAX_CELLS`` cells (a large ε0 with a tiny loss deviation).
    """
    coarsest = DEFAULT_LOSS_GRID_STEP
    while 2.0 * pair.eps0 / coarsest > DEFAULT_MAX_CELLS:
        coarsest *= 2.0
    expected_total = pair.rho * (pair.n - 1) + 1.0
    estimate = 2.0 * pair.one_minus_r / ((1.0 + pair.r) * math.sqrt(expected_total))
    probe_step = max(choose_loss_grid_step(8.0 * estimate), coarsest / 2**MAX_REFINEMENT)
    while 2.0 * pair.eps0 / probe_step > DEFAULT_MAX_CELLS:
        probe_step *= 2.0
    rows = _rows(pair, truncation, tail_mass)
    stride = max(1, rows.low.size // PROBE_ROWS)
    probe = _merged_cells(pair, rows, probe_step, row_stride=stride)
    step = choose_loss_grid_step(_merged_loss_std(probe))
    while 2.0 * pair.eps0 / step > DEFAULT_MAX_CELLS:
        step *= 2.0
    if step == probe_step and stride == 1:
        return probe
    return _merged_cells(pair, rows, step)


def _work_estimate(pair: _ClonesPair, truncation: str, tail_mass: float) -> tuple[float, float]:
    """Upper estimates of the rows and of the lattice points that the kernel walks.

    At most (rows) x (widest row), with both windows in closed form. For
    X ~ Bin(N, ρ) and L = log(4/τ), Hoeffding's window (``truncation="hoeffding"``)
    has half-width sqrt(N L / 2); the quantile windows lie inside it and inside
    Bernstein's, P(|X - Nρ| > t) <= τ/4 per side for
    t = sqrt(2 N ρ (1 - ρ) L) + 2 L / 3, so the smaller of the two is used.
    """
    log_tail = math.log(4.0 / tail_mass)
    trials = pair.n - 1.0

    def half_width(count: float, prob: float) -> float:
        hoeffding = math.sqrt(count * log_tail / 2.0)
        if truncation == "hoeffding":
            return hoeffding + 1.0
        bernstein = math.sqrt(2.0 * count * prob * (1.0 - prob) * log_tail) + 2.0 * log_tail / 3
        return min(bernstein, hoeffding) + 1.0

    spread = half_width(trials, pair.rho)
    rows = min(trials + 1.0, 2.0 * spread) + 2.0
    largest = min(trials, pair.rho * trials + spread) + 1.0
    widest = min(largest + 1.0, 2.0 * half_width(largest, 0.5)) + 2.0
    return rows, rows * widest


def _check_work(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> None:
    """Refuse, before any allocation, a construction beyond the work and memory budget.

    Each lattice point walked (:func:`_work_estimate`) costs
    ``1 / LATTICE_POINTS_PER_GRID_POINT`` grid point, plus the per-row arrays and
    the cells of [-ε0, ε0].
    """
    rows, lattice = _work_estimate(pair, truncation, tail_mass)
    cells = DEFAULT_MAX_CELLS if step is None else 2 * pair.eps0 / step
    check_grid_points(
        lattice / LATTICE_POINTS_PER_GRID_POINT + 8 * rows + cells,
        f"clones(n={pair.n}, eps0={pair.eps0:g}) (about {lattice:.3g} lattice points to walk "
        f"in {rows:.3g} rows)",
        "use a smaller n (the result for n users also bounds any larger n) or "
        "truncation='quantile'",
    )


def _cells(pair: _ClonesPair, truncation: str, tail_mass: float, step: float | None) -> ClonesCells:
    """The merged atoms of the truncated pair, after the work estimate."""
    _check_work(pair, truncation, tail_mass, step)
    if step is None:
        return _cells_on_default_grid(pair, truncation, tail_mass)
    return _merged_cells(pair, _rows(pair, truncation, tail_mass), step)


def _truncation(truncation: object) -> str:
    return _validate.one_of("truncation", truncation, TRUNCATIONS)


def _merged_cells(pair: _ClonesPair, rows: _Rows, step: float, row_stride: int = 1) -> ClonesCells:
    """Run the kernel on the kept rows (every ``row_stride``-th one, for a probe)."""
    eps0 = pair.eps0
    first_cell = math.floor(-eps0 / step) - 1
    n_cells = math.floor(eps0 / step) - first_cell + 2
    check_grid_points(
        n_cells,
        f"[-eps0, eps0] = [-{eps0:g}, {eps0:g}] on the grid of step {step:g} nats",
        f"increase loss_grid_step (to at least {2 * eps0 / max_grid_points():.3g})",
    )
    totals = np.ascontiguousarray(rows.totals[::row_stride])
    low = np.ascontiguousarray(rows.low[::row_stride])
    cell_p = np.zeros(n_cells)
    cell_q = np.zeros(n_cells)
    edges = np.exp((first_cell + np.arange(n_cells + 1)) * step)
    row_weight = pair.weight_a * _clone_pmf(pair, totals - 1)
    k0 = np.maximum(low - 1, 0)
    k1 = np.minimum(totals - low, totals - 1)
    window_mass = 1.0 - _half_cdf(k0 - 1, totals - 1) - _half_cdf(totals - 2 - k1, totals - 1)
    # The kernel runs on chunks of rows of about KERNEL_CHUNK_POINTS points each, so
    # that a KeyboardInterrupt is seen between calls.
    chunk = np.cumsum(totals - 2 * low + 1) // KERNEL_CHUNK_POINTS
    starts = np.flatnonzero(np.diff(chunk, prepend=-1)).tolist()
    points = 0
    for start, stop in zip(starts, [*starts[1:], totals.size], strict=True):
        points += _scatter_rows(
            totals[start:stop],
            low[start:stop],
            row_weight[start:stop],
            window_mass[start:stop],
            pair.n,
            pair.r,
            pair.one_minus_r,
            pair.blanket,
            step,
            edges,
            first_cell,
            cell_p,
            cell_q,
        )
    if rows.include_origin:
        # Row t = 0: only (0, 0), from P2 with C = 0; loss 0.
        origin = pair.w2 * math.exp((pair.n - 1) * pair.log_one_minus_rho)
        cell_p[-first_cell] += origin
        cell_q[-first_cell] += origin
        points += 1
    keep = np.flatnonzero(cell_p > 0)
    return ClonesCells(
        log_p=np.log(cell_p[keep]),
        log_q=np.log(cell_q[keep]),
        cells=keep + first_cell,
        step=step,
        truncated_mass=_outside_mass(pair, rows),
        lattice_points=int(points),
    )


def clones_cells(
    n: int,
    eps0: float,
    p: float | None = None,
    *,
    truncation: str = "quantile",
    tail_mass: float = 1e-12,
    loss_grid_step: float | None = None,
) -> ClonesCells:
    """The truncated clones pair merged per loss-grid cell, without building a PLD.

    This is what :func:`clones` hands to ``pld.from_pmfs``; see the module
    docstring for the construction (seed 004 §3.2 and Lemma 11).

    Parameters
    ----------
    n, eps0, p
        As in :func:`clones`.
    truncation : {"quantile", "hoeffding"}
        Window rule: exact binomial tail quantiles, or Hoeffding's bound (Lemma 11).
    tail_mass : float
        Bound τ on the P-mass left out, in (0, 1e-3].
    loss_grid_step : float, optional
        Cell width h in nats, in (0, 1]; default: the engine's rule
        (:func:`pld.engine.choose_loss_grid_step`) for this pair's loss.
    """
    pair = _pair(n, eps0, p)
    truncation = _truncation(truncation)
    if truncation == "exact":
        raise ValueError("truncation must be 'quantile' or 'hoeffding' for clones_cells")
    tail_mass = _validate.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    if loss_grid_step is not None:
        loss_grid_step = _validate.in_interval(
            "loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True
        )
    return _cells(pair, truncation, tail_mass, loss_grid_step)


@refinable
def clones(
    n: int,
    eps0: float,
    p: float | None = None,
    *,
    truncation: str = "quantile",
    tail_mass: float = 1e-12,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of shuffling n users' ε0-LDP reports: the PLD of the clones pair.

    The dominating pair of Feldman, McMillan and Talwar (seed 004 eq 3.1-3.2,
    Lemma 8, Cor 9) holds for any ε0-LDP randomisers, even adaptive ones; rounds
    with different (n, ε0) compose with ``pld.compose`` (seed 004 Cor 10 and the
    remark after it).

    Parameters
    ----------
    n : int
        Number of users, >= 1 (n = 1: no amplification, ε0-randomised response).
    eps0 : float
        Local privacy parameter of every user's randomiser, in nats, in (0, 50].
    p : float, optional
        Clone probability parameter in (0, 1/(e^ε0 + 1)]. Default 1/(e^ε0 + 1),
        valid for every ε0-LDP randomiser; a smaller p is for randomisers known
        to allow it and makes the third mixture component P2 (seed 004 §3.1)
        non-zero.
    truncation : {"quantile", "hoeffding", "exact"}
        "quantile" (default, fastest): keep the points inside exact binomial
        tail quantiles of C and A | C. "hoeffding": Hoeffding windows (seed 004
        Lemma 11). "exact": every lattice point, no truncation; O(n²) atoms,
        n <= ``EXACT_MAX_N``.
    tail_mass : float
        Bound τ on the P-mass the truncation leaves out, in (0, 1e-3]; the exact
        left-out mass (<= τ) is charged to the upper bound at loss ε0. Ignored by
        "exact".
    loss_grid_step : float, optional
        Grid spacing in nats, in (0, 1]; default: the engine's rule
        (:func:`pld.engine.choose_loss_grid_step`, a power-of-two refinement of
        ``pld.engine.DEFAULT_LOSS_GRID_STEP``) for this pair's loss.

    Returns
    -------
    PLD
        Symmetric one-round PLD with privacy loss in [-ε0, ε0].
    """
    pair = _pair(n, eps0, p)
    truncation = _truncation(truncation)
    if loss_grid_step is not None:
        loss_grid_step = _validate.in_interval(
            "loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True
        )
    if truncation == "exact":
        if pair.n > EXACT_MAX_N:
            raise ValueError(
                f"n must be an integer <= {EXACT_MAX_N} with truncation='exact' (got {n!r}); "
                "use truncation='quantile'"
            )
        log_p, log_q = _lattice_log_pmfs(pair)
        return from_pmfs(
            log_p,
            log_q,
            symmetric=True,
            _symmetric_by_construction=True,
            loss_grid_step=loss_grid_step,
            max_loss=pair.eps0,
            mass_relative_error=_lattice_mass_error(pair),
        )
    tail_mass = _validate.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    merged = _cells(pair, truncation, tail_mass, loss_grid_step)
    return from_pmfs(
        merged.log_p,
        merged.log_q,
        symmetric=True,
        _symmetric_by_construction=True,
        loss_grid_step=merged.step,
        truncated_mass_p=merged.truncated_mass,
        truncated_mass_q=merged.truncated_mass,
        max_loss=pair.eps0,
        mass_relative_error=MERGED_MASS_RELATIVE_ERROR,
    )


# -- grid-free one-round delta -----------------------------------------------------


def _hockey_stick(pair: _ClonesPair, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bracket on H_{e^eps}(P || Q) by exact row sums (the method of Feldman et al. 2021)."""
    trials = pair.n - 1
    c_lo, c_hi = _clone_quantiles(pair, _HOCKEY_STICK_TAIL)
    check_grid_points(
        (c_hi - c_lo + 2.0) * HOCKEY_STICK_ROW_COST * max(eps.size, 1),
        f"the grid-free delta of clones(n={pair.n}, eps0={pair.eps0:g}) at {eps.size} eps "
        f"values ({c_hi - c_lo + 2} rows each)",
        "use a smaller n or fewer eps values",
    )
    totals = np.arange(max(c_lo, 1), c_hi + 2, dtype=np.int64)
    row_weight = pair.weight_a * _clone_pmf(pair, totals - 1)
    blanket_t = pair.blanket * (pair.n - totals)
    gamma = blanket_t / totals
    # Mass of the rows left out: T = C + 1 w.p. 1 - w2, T = C w.p. w2 (row 0 is loss 0).
    outside = (1.0 - pair.w2) * (_clone_cdf(pair, c_lo - 2) + _clone_sf(pair, c_hi))
    origin = pair.w2 * math.exp(trials * pair.log_one_minus_rho)
    if pair.w2 > 0.0:
        outside += pair.w2 * (_clone_sf(pair, c_hi + 1) + _clone_cdf(pair, c_lo - 1))
    lower = np.empty(eps.size)
    upper = np.empty(eps.size)
    for index, value in enumerate(eps):
        start = _row_thresholds(value, totals, blanket_t, pair.r, pair.one_minus_r)
        # Row sums over a >= k = start of β(a) and of β(a - 1) are P(X >= k) and
        # P(X >= k) + β(k - 1), X ~ Bin(t - 1, 1/2). Then, per row and without the
        # cancellation of P - e^ε Q when P ≈ Q (small ε0),
        #   P - e^ε Q = w [(1 - e^ε)(1 + r + 2γ) P(X >= k) + (1 - e^(ε-ε0) + γ (1 - e^ε)) β(k-1)].
        # P(X >= k) = 1 - P(X <= k - 1) = P(X <= t - 1 - k): the second form above the median.
        upper_side = start > (totals - 1) // 2
        tail = np.empty(totals.size)
        up, down = totals[upper_side], totals[~upper_side]
        tail[upper_side] = _half_cdf(up - 1 - start[upper_side], up - 1)
        tail[~upper_side] = 1.0 - _half_cdf(start[~upper_side] - 1, down - 1)
        edge = np.where(
            (start >= 1) & (start <= totals), stats.binom.pmf(start - 1, totals - 1, 0.5), 0.0
        )
        tail_term = row_weight * -math.expm1(value) * (1.0 + pair.r + 2.0 * gamma) * tail
        edge_term = row_weight * (-math.expm1(value - pair.eps0) - gamma * math.expm1(value)) * edge
        total = float(np.sum(tail_term) + np.sum(edge_term))
        if c_lo == 0:
            total += origin * max(0.0, -math.expm1(value))
        slack = _BINOMIAL_RELATIVE_ERROR * float(np.sum(np.abs(tail_term) + np.abs(edge_term)))
        lower[index] = max(0.0, total - slack)
        upper[index] = min(1.0, total + slack + outside)
    return lower, upper


def clones_delta_bounds(
    n: int,
    eps0: float,
    eps: float | np.ndarray,
    p: float | None = None,
    *,
    analysis: str = "2022",
) -> tuple[np.ndarray, np.ndarray]:
    """Grid-free bracket on the one-round δ(ε) = H_{e^ε}(P || Q) of the clones pair.

    The method of Feldman, McMillan and Talwar (2021): for each row t = a + b the
    loss increases with a, so the points with loss above ε form a range
    a >= a_ε(t) whose P- and Q-mass are binomial tails (module docstring). Rows
    whose C-probability is below 1e-18 per tail are left out and their mass is
    added to the upper value; a relative 1e-10 of the summed terms covers the
    round-off of Boost's binomial tails and pmf.
    An independent check of :func:`clones` (no grid, no FFT), for one round only.

    Parameters
    ----------
    n, eps0, p
        As in :func:`clones`.
    eps : float or array_like
        Values of ε in nats.
    analysis : {"2022", "2021"}
        The pair of seed 004 eq 3.1-3.2 (the one :func:`clones` uses), or the
        earlier, weaker pair of Feldman et al. 2021 (C ~ Bin(n-1, e^-ε0)) for
        comparison with their published numbers.

    Returns
    -------
    lower, upper : ndarray
        Bounds on δ(ε) at each ε (the pair is symmetric, so this is also H(Q || P)).
    """
    pair = _analysed_pair(n, eps0, p, analysis)
    return _hockey_stick(pair, _validate.real_array("eps", eps))


def clones_epsilon_bounds(
    n: int, eps0: float, delta: float, p: float | None = None, *, analysis: str = "2022"
) -> tuple[float, float]:
    """Grid-free bracket on the one-round ε(δ) of the clones pair, from :func:`clones_delta_bounds`.

    Brent's method on each side of the δ(ε) bracket, then a nudge so that the
    upper ε has upper δ <= delta and the lower ε has lower δ > delta (or is 0).

    Parameters
    ----------
    n, eps0, p
        As in :func:`clones`.
    delta : float
        Target δ in (0, 1).
    analysis : {"2022", "2021"}
        As in :func:`clones_delta_bounds`.

    Returns
    -------
    lower, upper : float
        Bounds on min{ε >= 0 : δ(ε) <= delta}; ``upper`` is ``inf`` when even
        δ(ε0), which is at most the left-out mass, exceeds ``delta``.
    """
    pair = _analysed_pair(n, eps0, p, analysis)
    delta = _validate.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)

    def excess(eps: float, side: int) -> float:
        return float(_hockey_stick(pair, np.array([eps]))[side][0]) - delta

    def smallest(side: int) -> float:
        if excess(0.0, side) <= 0.0:
            return 0.0
        if excess(pair.eps0, side) > 0.0:
            return math.inf if side == 1 else pair.eps0
        root = float(brentq(excess, 0.0, pair.eps0, args=(side,), xtol=1e-14, rtol=1e-12))
        nudge = 1e-12 * max(1.0, root)
        if side == 1:
            while excess(root, side) > 0.0:
                root = min(root + nudge, pair.eps0)
        else:
            while root > 0.0 and excess(root, side) <= 0.0:
                root = max(root - nudge, 0.0)
        return root

    return smallest(0), smallest(1)


CLI_SPECS = (
    MechanismSpec(
        name="clones",
        help="shuffle of n users' eps0-LDP randomisers (clones pair, Feldman et al.)",
        options=(
            Option("--n", "n", int, "number of users (>= 1)"),
            Option("--eps0", "eps0", float, "local privacy parameter (nats, in (0, 50])"),
            Option(
                "--p",
                "p",
                float,
                "clone parameter in (0, 1/(e^eps0 + 1)] (default 1/(e^eps0 + 1))",
                required=False,
                default=None,
            ),
        ),
        build=clones,
    ),
)
