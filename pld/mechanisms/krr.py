"""Shuffled k-ary randomised response against the strong and the weak adversary.

Each of n users holds x_i in [k] and reports it truthfully with probability 1 - gamma
(blanket bit beta_i = 0) or a uniform value of [k] with probability gamma
(beta_i = 1); a shuffler releases the reports in random order, i.e. their histogram
(Balle, Bell, Gascón and Nissim 2019; seed 004, §4). The neighbouring datasets differ
in the last user, x_n = 1 under X and x_n = 2 under X'. The adversary knows
x_1..x_{n-1} and

* ``"strong"`` (seed 004, Def. 12): every blanket bit beta_1..beta_n;
* ``"weak"`` (seed 004, Def. 14): the blanket bits of the first n - 1 users only.

Removing the known truthful reports leaves, besides b = #blanket members among the
first n - 1 users, counts h1 and h2 of the values 1 and 2. Both views reduce to one
family of pairs on h1 in {0..s} (derived below, checked by brute force in
tests/test_krr.py against tests/oracles/krr_views.py):

    F(s, c):  P(h1) = Bin(s, 1/2)(h1) (h1 + c) / (s/2 + c),
              Q(h1) = Bin(s, 1/2)(h1) (s - h1 + c) / (s/2 + c),
              privacy loss log((h1 + c) / (s - h1 + c)).

The adversary also observes s = h1 + h2, whose law is the same under X and X', so
the view is a disjoint union ("component") of pairs F(s, c) with common weights:

* strong: with probability gamma the target itself answered randomly and the two
  views coincide (loss 0). Otherwise its report is 1 (X) or 2 (X'), the random
  reports of the others falling in {1, 2} number S ~ Bin(n - 1, 2 gamma / k), split
  evenly between 1 and 2 given S, so the component is F(S + 1, 0): P = 1 + Bin(S, 1/2),
  Q = Bin(S, 1/2) and the loss is log(N1 / N2) (Balle et al. 2019, Thm 3.1; seed 004,
  eq. 4.2). N1 and N2 come from one multinomial draw: eq. 4.3 / C.7, which makes them
  independent, is not the law of the view (read that way, P(N1/N2 >= e^eps) falls
  below the tight delta, see :func:`krr_tail_delta`).
* weak: the law of the view (b, h1, h2) under X is (seed 004, eq. C.2)

      Bin(n - 1, gamma)(b) · Mult(b + 1; 1/k, 1/k, 1 - 2/k)(h1, h2)
                           · [k h1 (1 - gamma) / (b + 1) + gamma]

  and under X' the same with h2 in the bracket (re-derived: the residual histogram is
  b uniform reports plus the target's, and Mult(b)(h - e_i) = Mult(b + 1)(h) k h_i / (b + 1)).
  Writing m = b + 1, a = k (1 - gamma) and c = gamma m / a, and splitting the
  trinomial as Bin(m, 2/k)(s) · Bin(s, 1/2)(h1), the component (b, s) is F(s, c)
  with weight Bin(n - 1, gamma)(b) [(1 - gamma) Bin(b, 2/k)(s - 1) + gamma Bin(m, 2/k)(s)].
  Its privacy loss is bounded by eps0 = log(((1 - gamma) k + gamma) / gamma).

Seed 004 (Thm 13, 16) writes delta(eps) = P(sum_i Z_i >= eps), a tail probability of
the loss. That is an upper bound on the tight hockey-stick value; :func:`krr` returns
the PLD whose delta is the hockey stick, and :func:`krr_tail_delta` the tail form,
for comparison only.

Large n. The components are truncated to binomial windows, the dropped mass being
charged to the upper bound, and each component's atoms are summed per loss-grid cell
before they reach :func:`pld.from_pmfs` (docs/architecture.md, "Merged atoms"). When
the atoms exceed the budget ``max_atoms`` the components are grouped into blocks, using
two facts about F: F(s + 1, lambda) is F(s, lambda) post-processed by adding a fair
coin to h1, and F(s, lambda') for lambda' < lambda is F(s, lambda) post-processed by
replacing the output, with probability 1 - lambda'/lambda, by a fresh Bin(s, 1/2) draw,
where lambda = (s/2) / (s/2 + c) (so P = lambda (1 + Bin(s - 1, 1/2)) +
(1 - lambda) Bin(s, 1/2)). Hence F(s1, c1) dominates F(s2, c2) whenever s1 <= s2
and c1/s1 <= c2/s2. A block is replaced by (min s, min c/s) for the upper bound and
by (max s, max c/s) for the lower bound; since the component is observed, the
hockey stick of the view is the weighted mean of the components' hockey sticks, and
the replacement dominates (resp. is dominated by) the true pair in every composition.

Float accuracy. Every run of binomial masses starts from scipy's ``binom.pmf`` at the
mode (accurate to ~1e-15; its ``logpmf``, like sums of ``lgamma``, loses 1e-9 at
n = 10^6) and proceeds by ratio recurrences; the resulting relative error of each
merged mass (anchors, three roundings per step, one per summed term) is passed to
:func:`pld.from_pmfs` as ``mass_relative_error`` (about 1e-11 at n = 10^6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
from scipy.special import gammaln, xlogy
from scipy.stats import binom

from pld import _validate
from pld.construction import from_bounds, from_pmfs
from pld.engine import (
    DEFAULT_LOSS_GRID_STEP,
    DEFAULT_TAIL_MASS,
    check_grid_points,
    choose_loss_grid_step,
)
from pld.engine.discretise import SNAP_RELATIVE
from pld.engine.loss_pmf import LossPmf
from pld.loss_distribution import PLD
from pld.mechanisms._spec import MechanismSpec, Option
from pld.recipes import refinable

ADVERSARIES = ("strong", "weak")

#: Default probability mass (same under P and Q) that truncation may drop; it is
#: charged to the upper bound at the largest loss.
KRR_TAIL_MASS = 1e-12

#: Default budget of atoms (outcomes h1 summed over the components) enumerated
#: by :func:`krr`, about 20 ns each on the reference machine; beyond it the
#: components are grouped into blocks (module docstring).
KRR_MAX_ATOMS = 30_000_000

#: Largest number of outcomes that :func:`krr_view_pmfs` enumerates.
MAX_EXACT_OUTCOMES = 5_000_000

#: Largest number of atoms that :func:`krr_tail_delta` enumerates (it never blocks).
MAX_TAIL_ATOMS = 200_000_000

_TAIL_MASS_RANGE = (1e-100, 1e-3)

_UNIT_ROUNDOFF = 2.0**-53

#: Relative error of scipy's ``binom.pmf`` at the mode, where every run of binomial
#: masses is anchored: measured at most 2.7e-15 against mpmath for n <= 10^7 and
#: p in [1e-3, 0.9] (its logpmf is off by up to 4e-8 there, so it is not used).
_ANCHOR_RELATIVE_ERROR = 1e-14


@dataclass(frozen=True)
class _Components:
    """A disjoint union of pairs F(size, offset) with common weights (linear).

    ``null_mass`` is the mass of views where P = Q (loss 0); ``dropped`` the mass
    left out by truncation (the same under P and Q); every weight is exact up to a
    relative ``weight_error``.
    """

    size: np.ndarray
    offset: np.ndarray
    weight: np.ndarray
    null_mass: float
    dropped: float
    weight_error: float


@dataclass(frozen=True)
class _Cells:
    """Merged atoms: P- and Q-mass per loss cell ``first_cell + j``, plus the infinite ones.

    Every mass is exact up to a relative ``mass_error``; ``dropped`` is the mass
    (same under P and Q) that truncation left out.
    """

    first_cell: int
    p: np.ndarray
    q: np.ndarray
    p_infinite: float
    q_infinite: float
    dropped: float
    mass_error: float


# -- validation ----------------------------------------------------------------


#: Largest n accepted: the work of the blocked weak-adversary rows and of the binomial
#: quantiles grows slowly with n but reaches about 9 s at 1e9 (72 s at 2^40) on the
#: 2-core machine, past the time a call may take without a knob.
MAX_USERS = 10**9


def _check(n: object, k: object, gamma: object, adversary: object) -> tuple[int, int, float, str]:
    n = _validate.integer_at_least("n", n, 1, MAX_USERS)
    k = _validate.integer_at_least("k", k, 2)
    gamma = _validate.in_interval("gamma", gamma, 0.0, 1.0, low_open=True)
    adversary = _validate.one_of("adversary", adversary, ADVERSARIES)
    return n, k, gamma, adversary


def _check_tail_mass(tail_mass: object) -> float:
    return _validate.in_interval("tail_mass", tail_mass, *_TAIL_MASS_RANGE)


def _check_step(loss_grid_step: object) -> float | None:
    if loss_grid_step is None:
        return None
    return _validate.in_interval("loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True)


def ldp_epsilon(k: int, gamma: float) -> float:
    """Local privacy parameter of k-RR: eps0 = log(((1 - gamma) k + gamma) / gamma), nats.

    Seed 004, caption of Fig. 4. It bounds the weak adversary's privacy loss.
    """
    k = _validate.integer_at_least("k", k, 2)
    gamma = _validate.in_interval("gamma", gamma, 0.0, 1.0, low_open=True)
    return math.log1p((1.0 - gamma) * k / gamma)


# -- exact pmfs (small n) ----------------------------------------------------------


def _log_trinomial(m: np.ndarray, x1: np.ndarray, x2: np.ndarray, prob: float) -> np.ndarray:
    """log Mult(m; prob, prob, 1 - 2 prob)(x1, x2); -inf outside the support."""
    valid = (x1 >= 0) & (x2 >= 0) & (x1 + x2 <= m)
    x1c, x2c = np.where(valid, x1, 0), np.where(valid, x2, 0)
    rest = m - x1c - x2c
    with np.errstate(divide="ignore"):
        value = (
            gammaln(m + 1.0)
            - gammaln(x1c + 1.0)
            - gammaln(x2c + 1.0)
            - gammaln(rest + 1.0)
            + xlogy(x1c + x2c, prob)
            + xlogy(rest, 1.0 - 2.0 * prob)
        )
    return np.where(valid, value, -np.inf)


def krr_view_pmfs(
    n: int, k: int, gamma: float, adversary: str = "strong"
) -> tuple[np.ndarray, np.ndarray]:
    """Exact pmf pair (log P, log Q) of a sufficient statistic of the adversary's view.

    No truncation; for small n (the number of outcomes grows like n^2 for the strong
    adversary and n^3 for the weak one, and is limited to ``MAX_EXACT_OUTCOMES``).
    The log-masses come from ``gammaln`` sums, accurate to about 1e-12 for n <= 300.

    Parameters
    ----------
    n : int
        Number of users, >= 1.
    k : int
        Domain size, >= 2.
    gamma : float
        Probability that a user answers uniformly at random, in (0, 1].
    adversary : {"strong", "weak"}
        The adversary of seed 004, Def. 12 or Def. 14.

    Returns
    -------
    log_p, log_q : ndarray
        Natural logs of the probabilities under X (x_n = 1) and X' (x_n = 2), in
        this order of outcomes:

        * strong: outcome 0 is "the target answered randomly" (probability gamma
          under both); then, for s = 1..n and h1 = 0..s, the target answered
          truthfully and the counts of 1 and 2 left after removing the known
          truthful reports are (h1, s - h1): log P = log(1 - gamma) +
          log Mult(n - 1; gamma/k, gamma/k)(h1 - 1, s - h1) (Balle et al. 2019,
          Thm 3.1; the two counts from one multinomial draw) and log Q the same at
          (h1, s - h1 - 1). The blanket size b is summed out: the likelihood ratio
          h1 / h2 does not depend on it.
        * weak: for b = 0..n-1, s = 0..b+1 and h1 = 0..s, the outcome (b, h1, s - h1),
          with the law of seed 004, eq. C.2 / C.3 (module docstring).

        Views merged into one outcome share one likelihood ratio, so the pair has
        the privacy-loss distribution of the full view.
    """
    n, k, gamma, adversary = _check(n, k, gamma, adversary)
    if adversary == "strong":
        count = 1 + (n * (n + 3)) // 2
    else:
        count = sum((m + 1) * (m + 2) // 2 for m in range(1, n + 1))
    if count > MAX_EXACT_OUTCOMES:
        raise ValueError(
            f"n = {n} gives {count} outcomes, more than the exact limit {MAX_EXACT_OUTCOMES}; "
            "use pld.krr, which truncates and merges them"
        )
    if adversary == "strong":
        size = np.repeat(np.arange(1, n + 1), np.arange(2, n + 2))
        h1 = np.concatenate([np.arange(s + 1) for s in range(1, n + 1)])
        h2 = size - h1
        with np.errstate(divide="ignore"):
            log_truthful = math.log1p(-gamma) if gamma < 1 else -math.inf
        log_p = log_truthful + _log_trinomial(n - 1, h1 - 1, h2, gamma / k)
        log_q = log_truthful + _log_trinomial(n - 1, h1, h2 - 1, gamma / k)
        log_gamma = math.log(gamma)
        return np.concatenate(([log_gamma], log_p)), np.concatenate(([log_gamma], log_q))
    blanket, h1, h2 = [], [], []
    for b in range(n):
        for s in range(b + 2):
            blanket.append(np.full(s + 1, b))
            h1.append(np.arange(s + 1))
            h2.append(s - np.arange(s + 1))
    b_arr, h1_arr, h2_arr = np.concatenate(blanket), np.concatenate(h1), np.concatenate(h2)
    m = b_arr + 1
    log_common = binom.logpmf(b_arr, n - 1, gamma) + _log_trinomial(m, h1_arr, h2_arr, 1.0 / k)
    spread = k * (1.0 - gamma) / m
    with np.errstate(divide="ignore"):
        log_p = log_common + np.log(spread * h1_arr + gamma)
        log_q = log_common + np.log(spread * h2_arr + gamma)
    return log_p, log_q


# -- binomial runs ----------------------------------------------------------------


def _binomial_window(
    trials: np.ndarray | int, prob: float, tail: float
) -> tuple[np.ndarray, np.ndarray]:
    """Integers (lo, hi) with P(X < lo) < tail and P(X > hi) < tail for X ~ Bin(trials, prob).

    Both ends use ``binom.ppf`` (``binom.isf`` returns ``trials`` below tail ~ 1e-16):
    hi = trials - ppf(tail) of Bin(trials, 1 - prob).
    """
    trials = np.asarray(trials)
    lo = np.clip(binom.ppf(tail, trials, prob), 0, trials)
    hi = np.clip(trials - binom.ppf(tail, trials, 1.0 - prob), lo, trials)
    return lo.astype(np.int64), hi.astype(np.int64)


def _anchors(
    trials: np.ndarray | int, prob: float, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The mode of Bin(trials, prob), clipped to [lo, hi], and the pmf there (scipy)."""
    anchor = np.clip(np.floor((np.asarray(trials) + 1) * prob), lo, hi).astype(np.int64)
    return anchor, binom.pmf(anchor, trials, prob)


@numba.njit(cache=True)
def _binomial_run(trials, prob, lo, hi, anchor, anchor_value, out):  # pragma: no cover
    """out[x - lo] = Bin(trials, prob)(x) for x = lo..hi, from its value at ``anchor``.

    Ratios Bin(x + 1) / Bin(x) = (trials - x) prob / ((x + 1) (1 - prob)) taken away
    from the anchor (the mode), so that nothing underflows before its turn; each
    step adds at most three roundings.
    """
    odds = prob / (1.0 - prob) if prob < 1.0 else np.inf
    value = anchor_value
    for x in range(anchor, hi + 1):
        out[x - lo] = value
        value = value * (trials - x) / (x + 1.0) * odds
    value = anchor_value
    for x in range(anchor - 1, lo - 1, -1):
        value = value * (x + 1.0) / ((trials - x) * odds)
        out[x - lo] = value


# -- components ----------------------------------------------------------------------


def _strong_components(n: int, k: int, gamma: float, tail_mass: float) -> _Components:
    """Components F(S + 1, 0), S ~ Bin(n - 1, 2 gamma / k), weight (1 - gamma); null gamma."""
    trials, prob = n - 1, 2.0 * gamma / k
    lo, hi = (int(v) for v in _binomial_window(trials, prob, tail_mass / 4))
    anchor, anchor_value = _anchors(trials, prob, lo, hi)
    weight = np.empty(hi - lo + 1)
    _binomial_run(trials, prob, lo, hi, int(anchor), float(anchor_value), weight)
    dropped = (1.0 - gamma) * float(binom.cdf(lo - 1, trials, prob) + binom.sf(hi, trials, prob))
    return _Components(
        np.arange(lo, hi + 1) + 1,
        np.zeros(weight.size),
        (1.0 - gamma) * weight,
        null_mass=gamma,
        dropped=dropped,
        weight_error=_ANCHOR_RELATIVE_ERROR + _UNIT_ROUNDOFF * (3 * (hi - lo) + 8),
    )


@numba.njit(cache=True)
def _weak_row(prob, gamma, b, row_weight, lo, hi, anchor, anchor_value, out):  # pragma: no cover
    """Weights w(b, s), s = lo..hi, of the weak view's components, into ``out[:hi - lo + 1]``.

    w(b, s) = Bin(n - 1, gamma)(b) Bin(m, prob)(s) (a s / 2 + gamma m) / m with
    m = b + 1, prob = 2 / k and a / 2 = (1 - gamma) / prob; ``row_weight`` is the
    first factor.
    """
    m = b + 1
    _binomial_run(m, prob, lo, hi, anchor, anchor_value, out)
    a_half = (1.0 - gamma) / prob
    for s in range(lo, hi + 1):
        out[s - lo] *= row_weight * ((a_half * s + gamma * m) / m)


@numba.njit(cache=True)
def _weak_pairs(
    prob, gamma, blankets, row_weight, lo, hi, anchor, anchor_value, total
):  # pragma: no cover - compiled
    """Every component (b, s) of the weak view: arrays (s, m = b + 1, weight)."""
    sizes = np.empty(total, dtype=np.int64)
    members = np.empty(total, dtype=np.int64)
    weights = np.empty(total)
    buffer = np.empty(int(np.max(hi - lo)) + 1)
    position = 0
    for row in range(blankets.shape[0]):
        _weak_row(
            prob,
            gamma,
            blankets[row],
            row_weight[row],
            lo[row],
            hi[row],
            anchor[row],
            anchor_value[row],
            buffer,
        )
        for s in range(lo[row], hi[row] + 1):
            sizes[position] = s
            members[position] = blankets[row] + 1
            weights[position] = buffer[s - lo[row]]
            position += 1
    return sizes, members, weights


@numba.njit(cache=True)
def _weak_blocks(
    prob,
    gamma,
    a,
    blankets,
    row_weight,
    lo,
    hi,
    anchor,
    anchor_value,
    s_min,
    strip_of,
    n_strips,
    bins_r,
):  # pragma: no cover - compiled
    """Group the weak view's components (b, s), s >= 1, into blocks.

    A block is a strip of sizes s (``strip_of[s - s_min]``) times one of ``bins_r``
    equal bins of log r, r = c / s = gamma (b + 1) / (a s), over the strip's own
    range of r. Returns per block: total weight, min and max s, min and max r and the
    number of components; and the total weight of the components with s = 0 (views
    with P = Q).
    """
    strip_start = np.empty(n_strips + 1, dtype=np.int64)
    strip_start[n_strips] = s_min + strip_of.shape[0]
    for index in range(strip_of.shape[0] - 1, -1, -1):
        strip_start[strip_of[index]] = s_min + index
    r_low = np.full(n_strips, np.inf)
    r_high = np.zeros(n_strips)
    for row in range(blankets.shape[0]):
        # r decreases in s: a strip's extremes in a row sit at its first and last s.
        first = max(lo[row], 1)
        if first > hi[row]:
            continue
        for strip in range(strip_of[first - s_min], strip_of[hi[row] - s_min] + 1):
            s_first = max(first, strip_start[strip])
            s_last = min(hi[row], strip_start[strip + 1] - 1)
            r_high[strip] = max(r_high[strip], gamma * (blankets[row] + 1.0) / (a * s_first))
            r_low[strip] = min(r_low[strip], gamma * (blankets[row] + 1.0) / (a * s_last))
    r_scale = np.zeros(n_strips)
    for strip in range(n_strips):
        if r_high[strip] > r_low[strip]:
            r_scale[strip] = bins_r / math.log(r_high[strip] / r_low[strip])
    n_bins = n_strips * bins_r
    weight = np.zeros(n_bins)
    count = np.zeros(n_bins, dtype=np.int64)
    s_least = np.full(n_bins, np.inf)
    s_most = np.zeros(n_bins)
    r_least = np.full(n_bins, np.inf)
    r_most = np.zeros(n_bins)
    null = 0.0
    buffer = np.empty(int(np.max(hi - lo)) + 1)
    for row in range(blankets.shape[0]):
        b = blankets[row]
        _weak_row(
            prob,
            gamma,
            b,
            row_weight[row],
            lo[row],
            hi[row],
            anchor[row],
            anchor_value[row],
            buffer,
        )
        for s in range(lo[row], hi[row] + 1):
            w = buffer[s - lo[row]]
            if s == 0:
                null += w
                continue
            if w == 0.0:
                continue
            strip = strip_of[s - s_min]
            r = gamma * (b + 1.0) / (a * s)
            j = min(int(math.log(r / r_low[strip]) * r_scale[strip]), bins_r - 1)
            cell = strip * bins_r + j
            weight[cell] += w
            count[cell] += 1
            s_least[cell] = min(s_least[cell], s)
            s_most[cell] = max(s_most[cell], s)
            r_least[cell] = min(r_least[cell], r)
            r_most[cell] = max(r_most[cell], r)
    return weight, s_least, s_most, r_least, r_most, count, null


@dataclass(frozen=True)
class _WeakRows:
    """Rows b of the weak view, each with its window [lo, hi] of s and binomial anchors."""

    blankets: np.ndarray
    row_weight: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    anchor: np.ndarray
    anchor_value: np.ndarray
    dropped: float
    weight_error: float


def _weak_rows(n: int, k: int, gamma: float, tail_mass: float) -> _WeakRows:
    """Rows b and their s windows for the weak view, and the mass outside them.

    Given b, s has the law (1 - gamma) (1 + Bin(b, 2/k)) + gamma Bin(b + 1, 2/k): both
    parts lie above Bin(b, 2/k) and below 1 + Bin(b, 2/k), which sets the window.
    """
    trials, prob = n - 1, 2.0 / k
    b_lo, b_hi = (int(v) for v in _binomial_window(trials, gamma, tail_mass / 8))
    blankets = np.arange(b_lo, b_hi + 1)
    b_anchor, b_anchor_value = _anchors(trials, gamma, b_lo, b_hi)
    row_weight = np.empty(blankets.size)
    _binomial_run(trials, gamma, b_lo, b_hi, int(b_anchor), float(b_anchor_value), row_weight)
    members = blankets + 1
    lo, hi = _binomial_window(blankets, prob, tail_mass / 8)
    hi = np.minimum(hi + 1, members)
    anchor, anchor_value = _anchors(members, prob, lo, hi)
    row_dropped = (1.0 - gamma) * (
        binom.cdf(lo - 2, blankets, prob) + binom.sf(hi - 1, blankets, prob)
    ) + gamma * (binom.cdf(lo - 1, members, prob) + binom.sf(hi, members, prob))
    dropped = float(
        binom.cdf(b_lo - 1, trials, gamma)
        + binom.sf(b_hi, trials, gamma)
        + np.dot(binom.pmf(blankets, trials, gamma), row_dropped)
    )
    steps = (b_hi - b_lo) + int(np.max(hi - lo))
    weight_error = 2 * _ANCHOR_RELATIVE_ERROR + _UNIT_ROUNDOFF * (3 * steps + 16)
    return _WeakRows(blankets, row_weight, lo, hi, anchor, anchor_value, dropped, weight_error)


def _window_low(size: np.ndarray, tail_mass: float) -> np.ndarray:
    """First h1 of the window [low, size - low] kept in each component F(size, c).

    P(Bin(size - 1, 1/2) < low) < tail_mass / 4, so that the window drops at most
    tail_mass / 2 of P and of Q (see :func:`_merge`).
    """
    distinct, index = np.unique(size, return_inverse=True)
    low, _ = _binomial_window(distinct - 1, 0.5, tail_mass / 4)
    return np.minimum(low, distinct // 2)[index]


def _rows_per_size(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Number of rows whose window [lo, hi] contains s, for s = 0..max(hi)."""
    counts = np.zeros(int(hi.max()) + 2)
    np.add.at(counts, lo, 1.0)
    np.add.at(counts, hi + 1, -1.0)
    return np.cumsum(counts)[:-1]


def _weak_strips(
    rows: _WeakRows, rows_per_size: np.ndarray, gamma: float, a: float, blocks: int
) -> tuple[int, np.ndarray, int, int]:
    """Strips of sizes s and the number of r-bins per strip for about ``blocks`` blocks.

    The upper representative of a block loses about half the block's relative width
    in s plus (1 - lambda) times its relative width in r (F's privacy loss scales
    like lambda / sqrt(s)); the split between strips and r-bins balances the two,
    with one strip per size when that is affordable.
    """
    s_min = int(max(rows.lo.min(), 1))
    s_max = int(rows.hi.max())
    distinct = s_max - s_min + 1
    cumulative = np.cumsum(rows_per_size[s_min:])
    median = s_min + int(np.searchsorted(cumulative, cumulative[-1] / 2))
    members = rows.blankets[(rows.lo <= median) & (rows.hi >= median)] + 1.0
    span_r = max(math.log(members.max() / members.min()), 1e-12)
    ratio_r = gamma * float(np.median(members)) / (a * median)
    span_s = max(math.log(s_max / s_min), 1e-12)
    complement = 2 * ratio_r / (1 + 2 * ratio_r)
    strips = round(math.sqrt(blocks * span_s / (2 * complement * span_r)))
    strips = int(min(max(strips, 1), distinct, blocks))
    sizes = np.arange(s_min, s_max + 1)
    if strips == distinct:
        strip_of = sizes - s_min
    else:
        edges = np.unique(np.round(np.geomspace(s_min, s_max + 1, strips + 1)).astype(np.int64))
        strip_of = np.searchsorted(edges, sizes, side="right") - 1
    n_strips = int(strip_of.max()) + 1
    return s_min, strip_of.astype(np.int64), n_strips, max(blocks // n_strips, 1)


def _weak_components(
    n: int, k: int, gamma: float, tail_mass: float, max_atoms: int
) -> tuple[_Components, _Components | None]:
    """Components F(s, gamma m / a) of the weak view; blocked if their atoms are too many.

    Returns (upper, lower): ``lower`` is None when the components are exact.
    """
    prob, a = 2.0 / k, k * (1.0 - gamma)
    rows = _weak_rows(n, k, gamma, tail_mass)
    pairs = int(np.sum(rows.hi - rows.lo + 1))
    rows_per_size = _rows_per_size(rows.lo, rows.hi)
    sizes = np.arange(max(int(rows.lo.min()), 1), int(rows.hi.max()) + 1)
    widths = sizes - 2 * _window_low(sizes, tail_mass) + 1
    atoms = float(np.dot(rows_per_size[sizes], widths))
    common = (rows.blankets, rows.row_weight, rows.lo, rows.hi, rows.anchor, rows.anchor_value)
    if atoms <= max_atoms:
        sizes, members, weights = _weak_pairs(prob, gamma, *common, pairs)
        null = sizes == 0
        keep = ~null & (weights > 0)
        exact = _Components(
            sizes[keep],
            gamma * members[keep] / a,
            weights[keep],
            null_mass=float(weights[null].sum()),
            dropped=rows.dropped,
            weight_error=rows.weight_error,
        )
        return exact, None
    blocks = max(int(max_atoms / (atoms / pairs)), 1)
    s_min, strip_of, n_strips, bins_r = _weak_strips(rows, rows_per_size, gamma, a, blocks)
    weight, s_least, s_most, r_least, r_most, count, null = _weak_blocks(
        prob, gamma, a, *common, s_min, strip_of, n_strips, bins_r
    )
    used = weight > 0
    weight_error = rows.weight_error + _UNIT_ROUNDOFF * int(count.max())
    upper = _Components(
        s_least[used].astype(np.int64),
        s_least[used] * r_least[used],
        weight[used],
        null_mass=float(null),
        dropped=rows.dropped,
        weight_error=weight_error,
    )
    lower = _Components(
        s_most[used].astype(np.int64),
        s_most[used] * r_most[used],
        weight[used],
        null_mass=float(null),
        dropped=rows.dropped,
        weight_error=weight_error,
    )
    return upper, lower


def _block_strong(components: _Components, blocks: int) -> tuple[_Components, _Components]:
    """Group consecutive sizes into ``blocks`` blocks: (min s, max s) representatives."""
    size = components.size
    edges = np.unique(np.linspace(0, size.size, blocks + 1).astype(np.int64))
    starts = edges[:-1]
    weight = np.add.reduceat(components.weight, starts)
    error = components.weight_error + _UNIT_ROUNDOFF * int(np.max(np.diff(edges)))
    zeros = np.zeros(starts.size)
    return tuple(
        _Components(representative, zeros, weight, components.null_mass, components.dropped, error)
        for representative in (size[starts], size[edges[1:] - 1])
    )


def _components(
    n: int, k: int, gamma: float, adversary: str, tail_mass: float, max_atoms: int
) -> tuple[_Components, _Components | None]:
    """The view's components, exact or (beyond ``max_atoms`` atoms) blocked: (upper, lower)."""
    if adversary == "weak":
        return _weak_components(n, k, gamma, tail_mass, max_atoms)
    exact = _strong_components(n, k, gamma, tail_mass)
    widths = exact.size - 2 * _window_low(exact.size, tail_mass) + 1
    atoms = float(widths.sum())
    if atoms <= max_atoms:
        return exact, None
    return _block_strong(exact, max(int(max_atoms / (atoms / widths.size)), 1))


# -- atoms -> grid cells ----------------------------------------------------------


@numba.njit(cache=True)
def _cell_of(loss, step, snap):  # pragma: no cover - compiled
    """Grid cell [j h, (j + 1) h) of a loss, with the engine's snapping to grid points."""
    nearest = round(loss / step)
    if abs(loss - nearest * step) <= snap * max(abs(loss), step):
        return int(nearest)
    cell = math.floor(loss / step)
    if loss < cell * step:
        cell -= 1
    elif loss >= (cell + 1) * step:
        cell += 1
    return int(cell)


@numba.njit(cache=True)
def _finite_range(size, offset, low):  # pragma: no cover - compiled
    """Smallest and largest finite loss over the components' windows [low, size - low]."""
    smallest, largest = np.inf, -np.inf
    for i in range(size.shape[0]):
        s, c, lo = size[i], offset[i], low[i]
        first = lo if lo + c > 0 else lo + 1
        last = s - first
        if first > last:
            continue
        smallest = min(smallest, math.log((first + c) / (s - first + c)))
        largest = max(largest, math.log((last + c) / (s - last + c)))
    return smallest, largest


@numba.njit(cache=True)
def _cell_masses(
    size, offset, centre, centre_scale, low, step, snap, first_cell, n_cells
):  # pragma: no cover - compiled
    """P- and Q-mass per loss cell of the components' atoms h1 in [low, size - low].

    Atom h1 of component i, (s, c) = (size_i, offset_i), has P-mass
    w_i Bin(s, 1/2)(h1) (h1 + c) / (s/2 + c) and Q-mass w_i Bin(s, 1/2)(h1)
    (s - h1 + c) / (s/2 + c); ``centre_scale_i`` is w_i Bin(s, 1/2)(centre_i) /
    (s/2 + c), from which the binomial masses run outwards. Returns (P per cell,
    Q per cell, P-mass at +inf, Q-mass at -inf, most atoms summed into one cell).
    """
    p_cells = np.zeros(n_cells)
    q_cells = np.zeros(n_cells)
    terms = np.zeros(n_cells, dtype=np.int64)
    p_infinite = 0.0
    q_infinite = 0.0
    for i in range(size.shape[0]):
        s, c, lo = size[i], offset[i], low[i]
        for direction in (1, -1):
            value = centre_scale[i]
            h1 = centre[i]
            if direction == -1:
                h1 -= 1
                value *= (h1 + 1.0) / (s - h1)
            while lo <= h1 <= s - lo:
                p = value * (h1 + c)
                q = value * (s - h1 + c)
                if q == 0.0:
                    p_infinite += p
                elif p == 0.0:
                    q_infinite += q
                else:
                    cell = _cell_of(math.log((h1 + c) / (s - h1 + c)), step, snap) - first_cell
                    p_cells[cell] += p
                    q_cells[cell] += q
                    terms[cell] += 1
                if direction == 1:
                    value *= (s - h1) / (h1 + 1.0)
                else:
                    value *= h1 / (s - h1 + 1.0)
                h1 += direction
    return p_cells, q_cells, p_infinite, q_infinite, int(terms.max())


def _merge(components: _Components, step: float, tail_mass: float) -> _Cells:
    """Truncate each component to a window of h1 and sum its atoms per loss cell.

    The window [lo, s - lo] of F(s, c) is chosen with P(Bin(s - 1, 1/2) < lo) <
    tail_mass / 4; the P-mass it drops, lambda [F_{s-1}(lo - 2) + F_{s-1}(lo - 1)] +
    2 (1 - lambda) F_s(lo - 1) with F_t the Bin(t, 1/2) CDF, equals the Q-mass by
    symmetry and is at most tail_mass / 2.

    Relative error of a cell's mass: the weight's, the anchor's, three roundings per
    step of the run from the centre and one per term of the cell's sum (or of the
    sums at +-inf, at most one term per component).
    """
    size, offset, weight = components.size, components.offset, components.weight
    low = _window_low(size, tail_mass)
    share = (size / 2) / (size / 2 + offset)
    window_dropped = share * (
        binom.cdf(low - 2, size - 1, 0.5) + binom.cdf(low - 1, size - 1, 0.5)
    ) + 2 * (1 - share) * binom.cdf(low - 1, size, 0.5)
    dropped = components.dropped + float(np.dot(weight, window_dropped))
    centre = np.minimum(np.maximum(size // 2, low), size - low)
    centre_scale = weight * binom.pmf(centre, size, 0.5) / (size / 2 + offset)
    smallest, largest = _finite_range(size, offset, low)
    low_cell = min(smallest / step - 1, 0.0) if math.isfinite(smallest) else 0.0
    high_cell = max(largest / step + 1, 0.0) if math.isfinite(largest) else 0.0
    check_grid_points(
        high_cell - low_cell + 2,
        f"shuffled k-RR losses in [{smallest:.3g}, {largest:.3g}] nats on the grid of step "
        f"{step:g} nats",
        "increase loss_grid_step",
    )
    first = min(math.floor(smallest / step) - 1, 0) if math.isfinite(smallest) else 0
    last = max(math.floor(largest / step) + 1, 0) if math.isfinite(largest) else 0
    p, q, p_inf, q_inf, terms = _cell_masses(
        size, offset, centre, centre_scale, low, step, SNAP_RELATIVE, first, last - first + 1
    )
    p[-first] += components.null_mass
    q[-first] += components.null_mass
    steps = int(np.max(size // 2 - low + 1))
    summed = max(terms, size.size)
    mass_error = (
        components.weight_error
        + _ANCHOR_RELATIVE_ERROR
        + _UNIT_ROUNDOFF * (3 * steps + summed + 16)
    )
    return _Cells(first, p, q, p_inf, q_inf, dropped, mass_error)


def _loss_std(cells: _Cells) -> float:
    """Standard deviation (nats) of the merged cells' loss under P; inf with mass at +inf."""
    if cells.p_infinite > 0:
        return math.inf
    finite = (cells.p > 0) & (cells.q > 0)
    if not finite.any():
        return 0.0
    loss = np.log(cells.p[finite] / cells.q[finite])
    mean = np.average(loss, weights=cells.p[finite])
    return float(np.sqrt(np.average((loss - mean) ** 2, weights=cells.p[finite])))


def _merge_on_default_grid(
    components: _Components, loss_grid_step: float | None, tail_mass: float
) -> tuple[_Cells, float]:
    """Merge on ``loss_grid_step``, or on the engine's default for the loss's spread.

    The default is ``pld.engine.choose_loss_grid_step`` of the loss's standard
    deviation, measured on the cells of the coarsest default grid.
    """
    if loss_grid_step is not None:
        return _merge(components, loss_grid_step, tail_mass), loss_grid_step
    coarse = _merge(components, DEFAULT_LOSS_GRID_STEP, tail_mass)
    step = choose_loss_grid_step(_loss_std(coarse))
    if step == DEFAULT_LOSS_GRID_STEP:
        return coarse, step
    return _merge(components, step, tail_mass), step


def _pld_from_cells(cells: _Cells, step: float, max_loss: float | None) -> PLD:
    used = (cells.p > 0) | (cells.q > 0)
    p = np.concatenate((cells.p[used], [cells.p_infinite, 0.0]))
    q = np.concatenate((cells.q[used], [0.0, cells.q_infinite]))
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p), np.log(q)
    return from_pmfs(
        log_p,
        log_q,
        symmetric=True,
        _symmetric_by_construction=True,
        loss_grid_step=step,
        truncated_mass_p=cells.dropped,
        truncated_mass_q=cells.dropped,
        max_loss=max_loss,
        mass_relative_error=min(cells.mass_error, 1e-3),
    )


# -- public API ----------------------------------------------------------------------


@refinable
def krr(
    n: int,
    k: int,
    gamma: float,
    adversary: str = "strong",
    *,
    tail_mass: float = KRR_TAIL_MASS,
    loss_grid_step: float | None = None,
    max_atoms: int = KRR_MAX_ATOMS,
) -> PLD:
    """One round of shuffled k-ary randomised response, as a PLD (seed 004, §4).

    The pair is symmetric (swapping the values 1 and 2 exchanges P and Q), so one
    direction is computed. delta(eps) is the tight hockey-stick divergence of the
    adversary's view (not the tail form of seed 004, Thm 13 / 16; see
    :func:`krr_tail_delta`).

    Parameters
    ----------
    n : int
        Number of users, >= 1 (the target included).
    k : int
        Domain size, >= 2.
    gamma : float
        Probability that a user answers uniformly at random, in (0, 1].
    adversary : {"strong", "weak"}
        ``"strong"`` knows every user's blanket bit (seed 004, Def. 12; Balle et al.
        2019, Thm 3.1); ``"weak"`` those of the other n - 1 users only (Def. 14).
    tail_mass : float
        Probability mass, in [1e-100, 1e-3], that truncation may drop; the mass
        actually dropped is computed exactly and charged to the upper bound (at
        +inf for the strong adversary, at eps0 for the weak one).
    loss_grid_step : float, optional
        Grid spacing in nats, in (0, 1]. Default: ``pld.engine.choose_loss_grid_step``
        of the one-round loss's standard deviation (``DEFAULT_LOSS_GRID_STEP`` when
        the loss can be infinite, as for the strong adversary at small n); PLDs
        composed together need the same step.
    max_atoms : int
        Work budget, >= 1: the number of atoms (values of h1, summed over the
        components, i.e. the observed counts S for the strong adversary and (b, s)
        for the weak one) enumerated. Beyond it the components are grouped into
        blocks that dominate (upper bound) and are dominated by (lower bound) the
        true pair, so the result stays a rigorous bracket, somewhat wider (module
        docstring). The default keeps the strong adversary exact up to n = 10^6
        and the weak one up to n = 5000 (k = 4, gamma = 0.25).

    Returns
    -------
    PLD
        One round of the mechanism; compose with ``self_compose``.
    """
    n, k, gamma, adversary = _check(n, k, gamma, adversary)
    tail_mass = _check_tail_mass(tail_mass)
    max_atoms = _validate.integer_at_least("max_atoms", max_atoms, 1)
    loss_grid_step = _check_step(loss_grid_step)
    if gamma == 1.0:
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        return from_pmfs(
            [0.0], [0.0], symmetric=True, _symmetric_by_construction=True, loss_grid_step=step
        )
    max_loss = ldp_epsilon(k, gamma) if adversary == "weak" else None
    upper, lower = _components(n, k, gamma, adversary, tail_mass, max_atoms)
    cells, step = _merge_on_default_grid(upper, loss_grid_step, tail_mass)
    upper_pld = _pld_from_cells(cells, step, max_loss)
    if lower is None:
        return upper_pld
    lower_pld = _pld_from_cells(_merge(lower, step, tail_mass), step, max_loss)
    return from_bounds(upper=upper_pld, lower=lower_pld)


# -- the paper's tail form (comparison only) ------------------------------------------


@numba.njit(cache=True)
def _independent_cells(pmf, first_count, step, snap, first_cell, n_cells):  # pragma: no cover
    """P-mass per loss cell of log((M1 + 1) / M2) for independent M1, M2 with pmf ``pmf``.

    ``pmf[i]`` is the probability of the count ``first_count + i``. Returns the
    cells, the mass at +inf (M2 = 0) and the most terms summed into one cell.
    """
    cells = np.zeros(n_cells)
    terms = np.zeros(n_cells, dtype=np.int64)
    infinite = 0.0
    for i in range(pmf.shape[0]):
        for j in range(pmf.shape[0]):
            mass = pmf[i] * pmf[j]
            count_2 = first_count + j
            if count_2 == 0:
                infinite += mass
                continue
            cell = _cell_of(math.log((first_count + i + 1.0) / count_2), step, snap) - first_cell
            cells[cell] += mass
            terms[cell] += 1
    return cells, infinite, int(terms.max())


def _independent_loss_cells(n: int, k: int, gamma: float, step: float, tail_mass: float) -> _Cells:
    """Seed 004, eq. 4.3 read literally: N1 = 1 + M1, N2 = M2, M1, M2 iid Bin(n - 1, gamma/k).

    Only the P-masses (``p``, ``p_infinite``) are meaningful.
    """
    trials, prob = n - 1, gamma / k
    lo, hi = (int(v) for v in _binomial_window(trials, prob, tail_mass / 4))
    anchor, anchor_value = _anchors(trials, prob, lo, hi)
    pmf = np.empty(hi - lo + 1)
    _binomial_run(trials, prob, lo, hi, int(anchor), float(anchor_value), pmf)
    outside = float(binom.cdf(lo - 1, trials, prob) + binom.sf(hi, trials, prob))
    dropped = -math.expm1(2 * math.log1p(-outside))
    smallest = math.log((lo + 1.0) / max(hi, 1))
    largest = math.log((hi + 1.0) / max(lo, 1))
    first = math.floor(smallest / step) - 1
    n_cells = math.floor(largest / step) + 2 - first
    cells, infinite, terms = _independent_cells(pmf, lo, step, SNAP_RELATIVE, first, n_cells)
    mass_error = 2 * _ANCHOR_RELATIVE_ERROR + _UNIT_ROUNDOFF * (6 * (hi - lo) + terms + 16)
    return _Cells(first, cells, np.zeros(0), infinite, 0.0, dropped, mass_error)


def krr_tail_delta(
    n: int,
    k: int,
    gamma: float,
    adversary: str,
    eps: float | np.ndarray,
    rounds: int = 1,
    *,
    counts: str = "joint",
    tail_mass: float = KRR_TAIL_MASS,
    loss_grid_step: float | None = None,
) -> np.ndarray:
    """The paper's tail form P(Z_1 + ... + Z_T >= eps), for comparison only.

    Seed 004, Thm 13 (strong) and Thm 16 (weak) state delta(eps) = P(sum_i Z_i >= eps)
    with Z_i iid copies of the privacy loss under P. With the true law of the view
    (``counts="joint"``) this is an upper bound on the tight delta that :func:`krr`
    computes, looser by a factor of about 4 to 1000 in the settings tested. With
    ``counts="independent"`` (strong adversary only) Z = log(N1 / N2) with N1 - 1
    and N2 independent Bin(n - 1, gamma / k), as eq. 4.3 / C.7 read literally (no
    blanket bit of the target either): that is not even an upper bound on the tight
    delta (tests/test_krr.py shows it below the truth). Do not report either as a
    privacy guarantee.

    Parameters
    ----------
    n, k, gamma, adversary
        As in :func:`krr`.
    eps : float or array_like
        Thresholds, in nats.
    rounds : int
        Number of compositions T >= 1.
    counts : {"joint", "independent"}
        Law of the counts (see above).
    tail_mass : float
        Truncated mass, in [1e-100, 1e-3], charged to the tail (+inf).
    loss_grid_step : float, optional
        Grid spacing in nats (default as in :func:`krr`); each loss is rounded up to
        the grid, which can only raise the tail.

    Returns
    -------
    ndarray
        An upper bound on P(sum_i Z_i >= eps), one value per eps (exact up to the
        grid rounding, the truncation and the float round-off).
    """
    from pld.engine.compose import compose as compose_pmfs

    n, k, gamma, adversary = _check(n, k, gamma, adversary)
    eps = _validate.real_array("eps", eps)
    rounds = _validate.integer_at_least("rounds", rounds, 1)
    tail_mass = _check_tail_mass(tail_mass)
    loss_grid_step = _check_step(loss_grid_step)
    if counts not in ("joint", "independent"):
        raise ValueError(f"counts must be 'joint' or 'independent' (got {counts!r})")
    if counts == "independent" and adversary != "strong":
        raise ValueError("counts='independent' (seed 004, eq. 4.3) exists for adversary='strong'")
    if counts == "independent":
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        cells = _independent_loss_cells(n, k, gamma, step, tail_mass)
    elif gamma == 1.0:
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        cells = _Cells(0, np.ones(1), np.ones(1), 0.0, 0.0, 0.0, 0.0)
    else:
        exact, blocked = _components(n, k, gamma, adversary, tail_mass, MAX_TAIL_ATOMS)
        if blocked is not None:
            raise ValueError(
                f"n = {n} is too large for the exact tail comparison "
                f"(more than {MAX_TAIL_ATOMS} atoms)"
            )
        cells, step = _merge_on_default_grid(exact, loss_grid_step, tail_mass)
    # P-law of the loss rounded up to the grid: cell j goes to (j + 1) h.
    one_round = LossPmf(
        step,
        cells.first_cell + 1,
        cells.p,
        cells.p_infinite + cells.dropped,
        "upper",
        mass_error=cells.mass_error,
    )
    composed = compose_pmfs([(one_round, rounds)], DEFAULT_TAIL_MASS) if rounds > 1 else one_round
    at_or_above = np.concatenate((np.cumsum(composed.masses[::-1])[::-1], [0.0]))
    index = np.searchsorted(composed.losses, eps - SNAP_RELATIVE * np.maximum(np.abs(eps), step))
    tail = (
        at_or_above[index] * (1.0 + composed.mass_error)
        + composed.infinity_mass
        + composed.error_l1
    )
    return np.clip(tail, 0.0, 1.0)


CLI_SPECS = (
    MechanismSpec(
        name="krr",
        help="shuffled k-ary randomised response (Balle et al. 2019) against the strong or "
        "the weak adversary",
        options=(
            Option("--n", "n", int, "number of users (>= 1)"),
            Option("--k", "k", int, "domain size (>= 2)"),
            Option(
                "--gamma", "gamma", float, "probability of a uniformly random answer, in (0, 1]"
            ),
            Option(
                "--adversary",
                "adversary",
                str,
                "strong: knows every blanket bit (seed 004 Def. 12); "
                "weak: all but the target's (Def. 14)",
                required=False,
                default="strong",
                choices=ADVERSARIES,
            ),
        ),
        build=krr,
    ),
)
