"""The count mixture behind shuffled check-in: per-count subsampled bases, mixed by Bin(n, p).

The protocol and its public API are in :mod:`pld.shuffling.checkin.mechanism`; this module
derives and builds the dominating pair of one round from a per-count base.

Replace-one adjacency (the target's data changes, ``n`` fixed)
--------------------------------------------------------------
The check-in coins do not depend on the data, so ``K ~ Bin(n, p)`` on both
datasets, and given ``K = k`` the reporters are a uniform ``k``-subset of the
``n`` users: the target is among them with probability ``k/n``. The outputs
for different ``k`` are disjoint (the multiset's size differs), so for every
``alpha``

    H_alpha(M(D) || M(D')) = sum_k Bin(n, p)(k) H_alpha(M_k(D) || M_k(D')),       (1)

where ``M_k`` is "sample ``k`` of the ``n`` users without replacement and
shuffle their reports": a fixed-size subsampled shuffler. Koskela et al. (2023), Lemma 7
(:mod:`pld.subsampling.subsampled_shuffler`, eq. 2.3) bounds its profile ``h_k`` from a
pair that dominates the shuffle of ``k`` reports under replacement: the clones
pair ``pld.clones(k, eps0)`` for any eps0-LDP randomizer (the standard pair of Feldman,
McMillan and Talwar (2021), Thm 3.2; docs/clones-validity.md), or
a Gaussian pair for distributed check-in (below). ``h_0 = (1 - alpha)_+``.

The sum (1) of valid profiles is a valid profile; its connect-the-dots pair
(Doroshenko et al. 2022, Algorithm 1; :mod:`pld.distribution.profile`) dominates
the round, in both orders of the neighbours.

Add/remove adjacency (``D' = D`` plus the target; ``n`` users in ``D``)
----------------------------------------------------------------------
Now the count has law ``pi' = Bin(n + 1, p)`` under ``D'`` and ``pi = Bin(n, p)``
under ``D``, and given ``k`` the target is a reporter under ``D'`` with
probability ``gamma_k = k/(n + 1)``. With ``U_k`` the shuffle of a uniform
``k``-subset of the ``n`` others and ``T_k`` that of the target plus a uniform
``(k - 1)``-subset (derived here and checked by brute force in
tests/shuffling/test_checkin.py):

    M(D') = sum_k pi'(k) [gamma_k T_k + (1 - gamma_k) U_k],   M(D) = sum_k pi(k) U_k.

Drawing a ``(k-1)``-subset S and one more user j of the others writes
``(T_k, U_k)`` as a mixture of replace-neighbours ``(M(S + t), M(S + j))`` of
size ``k``; by joint convexity and Blackwell's theorem, if ``(P_k, Q_k)``
dominates the shuffle of ``k`` reports under replacement,

    H_alpha(M(D') || M(D)) <= sum_k pi'(k) A_k(alpha r_k),                         (2)
    H_alpha(M(D) || M(D')) <= sum_k pi(k)  B_k(alpha / r_k),                        (3)
    r_k = pi(k) / pi'(k) = (n + 1 - k) / ((1 - p)(n + 1)),

with ``A_k(beta) = H_beta(gamma_k P_k + (1 - gamma_k) Q_k || Q_k)`` and
``B_k(beta) = H_beta(Q_k || gamma_k P_k + (1 - gamma_k) Q_k)``, the two terms of
Koskela et al. (2023), eq. 2.3 (:func:`~pld.subsampling.subsampled_shuffler.lemma7_terms`; for a
symmetric base B is eq. 2.3's second term). The count itself leaks through ``r_k``. The
terms ``k = 0`` are exact, ``(pi'(0) - alpha pi(0))_+`` and ``(pi(0) - alpha
pi'(0))_+``, and ``k = n + 1`` (only under ``D'``) contributes ``p^(n+1)`` to
(2). The dominating profile is ``max((2), (3))``: the replace pair with ``n + 1``
users does not dominate it (its count has the same law on both sides).

Counts in blocks
----------------
Only counts in the binomial bulk (``tail_mass`` per side, by scipy's quantiles)
are evaluated; the probability of the others is charged at ``h = 1``. Bulk counts
are grouped into blocks ``[k_a, k_b]`` (below): the base's profile decreases with ``k``
(more shuffled reports: adding one more independent report is a
post-processing) and eqs. (5)-(6) of :mod:`pld.subsampling.mixture` increase with
the rate and with the base's profile, so every ``h_k`` of the block is at most
the terms of base ``k_a`` and at least those of base ``k_b`` (or ``k_b + 1``).
For a fixed base, the terms are convex in the count: under replacement
``H_alpha(g P + (1-g) Q || Q)`` and ``H_alpha(P || g Q + (1-g) P)`` are suprema of
functions affine in the rate ``g = k/n``; under add/remove the term of eq. (2) is
a supremum of functions affine in ``(k/(n+1), alpha r_k)``, both affine in k,
and that of eq. (3) one of functions affine in the odds ``u = k/(n+1-k)`` (its
coefficients are ``alpha (1-p)`` and ``alpha (1-p) u``). So over a block the
weighted sum is at most the chord between the block's end counts at its mean
count (mean odds for eq. 3; upper side, base ``k_a``) and at least the value at
the mean (Jensen; lower side, base ``k_b``): the rate and the count's own leakage
cost only second order.
The base costs first order: a relative width ``w`` moves a one-round delta by
about ``w log(1/delta)`` relatively. A block grows while its relative width
``k_b/k_a - 1`` times its largest count probability relative to the mode stays
below ``count_tolerance``, where counts below the mode count as the mode (fewer
reports amplify less: however rare, they carry the profile's tail at large eps).
So blocks up to the mode have relative width ``<= count_tolerance`` and blocks in
the upper tail of the binomial are wider. The work is
O(sqrt(mean count) / count_tolerance) bases at most, independent of ``n`` beyond
the bulk; single-count blocks are exact. On a loss grid finer than the default
the tolerance is scaled by the ratio of the steps (``_finer_blocks``), so that the
refinement of a query narrows the blocking's width along with the grid's.

The bracket
-----------
Upper: the connect-the-dots pair of the upper profile (bases' upper atoms plus
Lemma 7's float budget, block bounds, tails charged, binomial weights raised by
their relative error ``1e-10``) on an eps grid aligned with the loss grid: a
rigorous upper bound. Lower: the same construction on the same grid from the
bases' lower atoms, the swapped block bounds and lowered weights; it contains the
connect-the-dots pair of the true mixture profile (1)-(3) on that grid, so the
bracket shows the bases' discretisation, the blocking and the loss grid.

"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pld import validation
from pld.distribution import (
    PLD,
    from_bounds,
    from_symmetric_pair,
    pair_from_hull,
    profile_hull,
)
from pld.engine import choose_loss_grid_step
from pld.numerics import binomial
from pld.progress import track
from pld.shuffling.checkin.exact import ExactCounts
from pld.subsampling import (
    MAX_NUM_POINTS,
    base_curves,
    chi_square,
    kink_reach,
    lemma7_terms,
)

#: Relative error allowed for scipy's binomial pmf/cdf/sf (Boost; ~1e-12 measured,
#: pld.shuffling.clones.mechanism): weights are raised (upper) or lowered (lower) by it.
BINOMIAL_RELATIVE_ERROR = 1e-10

#: Default block knob: relative width times relative probability (module docstring).
DEFAULT_COUNT_TOLERANCE = 3e-3

#: Default probability of the counts left out on each side of the bulk (charged at
#: h = 1, i.e. at infinite loss: after T rounds they add at most ``2 T tail_mass`` to
#: every delta).
COUNT_TAIL_MASS = 1e-20

#: Points of the first, coarse eps grid (aligned with the loss grid) on which the
#: upper profile is evaluated to find where it needs the full loss grid.
COARSE_POINTS = 4096

#: Intervals of the coarse grid on which the upper profile may differ from its chord
#: by more than this (absolute, in delta) are refined to the loss grid.
GRID_DELTA_RESOLUTION = 1e-18

#: On a loss grid finer than the default, ``count_tolerance`` shrinks in proportion
#: to the step (the blocks' width is first order), but the blocks may grow to at most
#: this many times their number at ``count_tolerance``, or to ``MIN_BLOCK_CAP``.
BLOCK_GROWTH = 16
MIN_BLOCK_CAP = 512

ADJACENCIES = ("replace", "add-remove")

BaseBuilder = Callable[[int, float | None], PLD]


@dataclass(frozen=True)
class _Block:
    """Counts ``low..high`` (>= 1) and their probability under pi and pi'.

    ``mean`` and ``mean_add``: mean count under pi and pi' within the block; ``odds``:
    mean of ``k / (n + 1 - k)`` under pi.
    """

    low: int
    high: int
    weight: float
    weight_add: float
    mean: float
    mean_add: float
    odds: float


def bulk_counts(n: int, p: float, tail_mass: float = COUNT_TAIL_MASS) -> tuple[int, int]:
    """Counts holding all but ``tail_mass`` per side of Bin(n, p) and of Bin(n + 1, p)."""
    # The tail beyond is charged by its exact sf, so any cut-off is valid.
    low, high = binomial.window(tail_mass, np.array([n, n + 1]), p)
    return int(low.min()), min(int(high.max()), n)


def _blocks(
    n: int, p: float, low: int, high: int, tolerance: float, singles: int = 0
) -> list[_Block]:
    """Greedy blocks of counts in ``[max(low, 1), high]`` (module docstring).

    Counts ``<= singles`` are blocks of their own.
    """
    start = max(low, 1)
    if start > high:
        return []
    counts = np.arange(start, high + 1)
    pmf = binomial.pmf(counts, n, p)
    pmf_add = binomial.pmf(counts, n + 1, p)
    # Relative heaviness of each count: 1 up to the mode, tiny in the upper tail. Counts
    # below the mode keep full weight: fewer reports amplify less, so however rare,
    # they carry the profile's tail (large eps, small delta).
    heavier = np.maximum(pmf, pmf_add)
    mode = int(np.argmax(heavier))
    heavier = heavier / heavier[mode]
    heavier[:mode] = 1.0
    blocks = []
    first = 0
    while first < counts.size:
        last = first
        peak = heavier[first]
        while last + 1 < counts.size and counts[first] > singles:
            grown = max(peak, heavier[last + 1])
            if grown * (counts[last + 1] / counts[first] - 1) > tolerance:
                break
            peak = grown
            last += 1
        span = slice(first, last + 1)
        weight, weight_add = float(pmf[span].sum()), float(pmf_add[span].sum())
        mean = float(np.dot(counts[span], pmf[span]) / weight) if weight > 0 else counts[first]
        mean_add = (
            float(np.dot(counts[span], pmf_add[span]) / weight_add)
            if weight_add > 0
            else counts[first]
        )
        odds = counts[span] / (n + 1 - counts[span])
        odds = float(np.dot(odds, pmf[span]) / weight) if weight > 0 else odds[0]
        blocks.append(
            _Block(int(counts[first]), int(counts[last]), weight, weight_add, mean, mean_add, odds)
        )
        first = last + 1
    return blocks


def _charged_tails(n: int, p: float, low: int, high: int) -> tuple[float, float]:
    """Probability of the counts outside the bulk, from above: under pi and under pi'.

    Counts ``[1, low - 1]`` and ``[high + 1, n]`` (``k = 0`` and, under pi',
    ``k = n + 1`` are added exactly elsewhere); each difference of binomial tails
    gets its float cancellation (4 ulps of the larger term) added back.
    """
    charged = []
    for trials in (n, n + 1):
        total = 0.0
        if low >= 2:
            cdf = float(binomial.cdf(low - 1, trials, p))
            total += max(cdf - float(binomial.pmf(0, trials, p)), 0.0) + 4e-16 * cdf
        if high < n:
            sf = float(binomial.sf(high, trials, p))
            last = float(binomial.pmf(trials, trials, p)) if trials == n + 1 else 0.0
            total += max(sf - last, 0.0) + 4e-16 * sf
        charged.append(total)
    return charged[0], charged[1]


def _log_ratio(n: int, p: float, k: np.ndarray | int) -> np.ndarray:
    """``log r_k = log(pi(k) / pi'(k)) = log((n + 1 - k) / ((1 - p)(n + 1)))``."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(n + 1 - k) - math.log1p(-p) - math.log(n + 1)


def _aligned(reach: float, step: float, multiple: int) -> np.ndarray:
    """Multiples of ``multiple * step`` covering ``[-reach, reach]``: loss-grid points."""
    half = max(1, math.ceil(reach / (multiple * step)))
    return np.arange(-half, half + 1) * multiple * step


def _refined(coarse: np.ndarray, values: np.ndarray, step: float, multiple: int) -> np.ndarray:
    """The coarse grid with every loss-grid point inserted where the profile bends.

    The profile is convex in ``alpha = e^eps``. On a coarse interval
    ``[alpha_i, alpha_{i+1}]`` it lies between its chord and the two lines
    through the neighbouring chords, so the chord is within
    ``(s_{i+1} - s_{i-1}) (alpha_{i+1} - alpha_i) / 4`` of it (``s`` the chord
    slopes). Where that exceeds ``GRID_DELTA_RESOLUTION`` every multiple of
    ``step`` is inserted (or of a larger multiple of it, so that the grid keeps at
    most ``MAX_NUM_POINTS``); elsewhere the connect-the-dots curve is within that
    resolution of its value on the full loss grid.
    """
    alpha = np.exp(coarse.astype(np.longdouble))
    widths = np.diff(alpha)
    slopes = np.diff(values) / widths
    left = np.concatenate((slopes[:1], slopes[:-1]))
    right = np.concatenate((slopes[1:], slopes[-1:]))
    bend = np.abs(right - left) * widths / 4
    moving = np.flatnonzero(bend > GRID_DELTA_RESOLUTION)
    if multiple == 1 or moving.size == 0:
        return coarse
    fine = max(1, math.ceil(moving.size * multiple / (MAX_NUM_POINTS - coarse.size)))
    fine = min(multiple, fine)
    offsets = np.arange(fine, multiple, fine) * step
    inserted = (coarse[moving][:, None] + offsets[None, :]).ravel()
    return np.union1d(coarse, inserted)


class _Bases:
    """Base PLDs by count, built once each.

    A base is built on its default loss grid, and counts up to twice that one's
    reuse its grid step (a base's default step shrinks with its loss's spread,
    about as ``1/sqrt(k)``, so by at most one halving): this skips the probe
    pass that finds the default grid.
    """

    def __init__(self, build: BaseBuilder, cap: int | None = None) -> None:
        self._build = build
        self._cap = cap
        self._cache: dict[int, PLD] = {}
        self._reference: tuple[int, float] | None = None

    def __call__(self, k: int) -> PLD:
        if self._cap is not None:
            k = min(k, self._cap)
        if k not in self._cache:
            reference = self._reference
            if reference is not None and reference[0] <= k <= 2 * reference[0]:
                self._cache[k] = self._build(k, reference[1])
            else:
                self._cache[k] = self._build(k, None)
                self._reference = (k, self._cache[k].loss_grid_step)
        return self._cache[k]

    def lower_count(self, block: _Block) -> int:
        """A count whose base is at most every base of the block (module docstring).

        ``high + 1`` for a block of several counts (usually the next block's first
        count, whose base is then shared), the count itself for a single one.
        """
        return block.high if block.low == block.high else block.high + 1


def _chord(at_low: np.ndarray, at_high: np.ndarray, share: float) -> np.ndarray:
    """``(1 - share) at_low + share at_high``: a convex function's chord at ``share``."""
    share = np.longdouble(min(max(share, 0.0), 1.0))
    return (1 - share) * at_low + share * at_high


def _replace_terms(bases: _Bases, block: _Block, n: int, grid: np.ndarray, side: str) -> np.ndarray:
    """Replace, per unit weight: ``max(A, B)`` of the block (module docstring)."""
    if side == "lower":
        base = bases(bases.lower_count(block))
        return np.maximum(*lemma7_terms(base, min(block.mean / n, 1.0), grid, "lower"))
    base = bases(block.low)
    at_low = np.maximum(*lemma7_terms(base, block.low / n, grid, "upper"))
    if block.high == block.low:
        return at_low
    at_high = np.maximum(*lemma7_terms(base, block.high / n, grid, "upper"))
    return _chord(at_low, at_high, (block.mean - block.low) / (block.high - block.low))


def _add_remove_terms(
    n: int,
    p: float,
    bases: _Bases,
    block: _Block,
    grid: np.ndarray,
    side: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Add/remove, per unit weight: the terms of eq. (2) (pi') and eq. (3) (pi)."""
    size = n + 1

    def terms(base: PLD, count: float, bound: str) -> tuple[np.ndarray, np.ndarray]:
        log_r = float(_log_ratio(n, p, count))
        a, _ = lemma7_terms(base, count / size, grid + log_r, bound)
        _, b = lemma7_terms(base, count / size, grid - log_r, bound)
        return a, b

    if side == "lower":
        base = bases(bases.lower_count(block))
        a, _ = terms(base, block.mean_add, "lower")
        # Eq. (3) is convex in the odds u = k / (n + 1 - k): Jensen at the mean odds.
        _, b = terms(base, block.odds * size / (1 + block.odds), "lower")
        return a, b
    base = bases(block.low)
    a_low, b_low = terms(base, block.low, "upper")
    if block.high == block.low:
        return a_low, b_low
    a_high, b_high = terms(base, block.high, "upper")
    odds_low, odds_high = block.low / (size - block.low), block.high / (size - block.high)
    return (
        _chord(a_low, a_high, (block.mean_add - block.low) / (block.high - block.low)),
        _chord(b_low, b_high, (block.odds - odds_low) / (odds_high - odds_low)),
    )


def _profiles(
    n: int,
    p: float,
    adjacency: str,
    blocks: list[_Block],
    bases: _Bases,
    grid: np.ndarray,
    charged: tuple[float, float],
    exact: ExactCounts | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower profile values at the grid, eqs. (1)-(3).

    ``charged``: probability (pi, pi') of the counts outside the bulk, at ``h = 1``.
    Counts enumerated by ``exact`` enter through its sums (E3)-(E4).
    """
    enumerated = [b for b in blocks if exact is not None and exact.covers(b.low, b.high)]
    others = [b for b in blocks if b not in enumerated]
    alpha = np.exp(grid.astype(np.longdouble))
    up_factor = np.longdouble(1 + BINOMIAL_RELATIVE_ERROR)
    low_factor = np.longdouble(1 - BINOMIAL_RELATIVE_ERROR)
    if adjacency == "replace":
        zero = np.longdouble(binomial.pmf(0, n, p)) * np.maximum(1 - alpha, 0)
        upper = (zero + np.longdouble(charged[0])) * up_factor
        lower = zero * low_factor
        if enumerated:
            weights = {block.low: block.weight for block in enumerated}
            up, low = exact.replace(n, weights, grid)
            upper = upper + np.longdouble(up) * up_factor
            lower = lower + np.longdouble(low) * low_factor
        for block in others:
            weight = np.longdouble(block.weight)
            upper = upper + weight * up_factor * _replace_terms(bases, block, n, grid, "upper")
            lower = lower + weight * low_factor * _replace_terms(bases, block, n, grid, "lower")
        return upper, lower
    pi0 = np.longdouble(binomial.pmf(0, n, p))
    pi0_add = np.longdouble(binomial.pmf(0, n + 1, p))
    # k = 0 exactly; k = n + 1 exists only under D' (r = 0, A = 1).
    last = np.longdouble(binomial.pmf(n + 1, n + 1, p))
    zero_f = np.maximum(pi0_add - alpha * pi0, 0) + last
    zero_r = np.maximum(pi0 - alpha * pi0_add, 0)
    forward = (zero_f + np.longdouble(charged[1])) * up_factor
    reverse = (zero_r + np.longdouble(charged[0])) * up_factor
    forward_low, reverse_low = zero_f * low_factor, zero_r * low_factor
    if enumerated:
        counts = [block.low for block in enumerated]
        log_r = dict(zip(counts, _log_ratio(n, p, np.array(counts)).tolist(), strict=True))
        (a_up, a_low), (b_up, b_low) = exact.add_remove(
            n,
            {block.low: block.weight_add for block in enumerated},
            {block.low: block.weight for block in enumerated},
            log_r,
            grid,
        )
        forward = forward + np.longdouble(a_up) * up_factor
        reverse = reverse + np.longdouble(b_up) * up_factor
        forward_low = forward_low + np.longdouble(a_low) * low_factor
        reverse_low = reverse_low + np.longdouble(b_low) * low_factor
    for block in track(others, desc="check-in profiles"):
        weight, weight_add = np.longdouble(block.weight), np.longdouble(block.weight_add)
        a, b = _add_remove_terms(n, p, bases, block, grid, "upper")
        forward = forward + weight_add * up_factor * a
        reverse = reverse + weight * up_factor * b
        a, b = _add_remove_terms(n, p, bases, block, grid, "lower")
        forward_low = forward_low + weight_add * low_factor * a
        reverse_low = reverse_low + weight * low_factor * b
    return np.maximum(forward, reverse), np.maximum(forward_low, reverse_low)


def _reach_and_variance(
    blocks: list[_Block], bases: _Bases, size: int, exact: ExactCounts | None
) -> tuple[float, float]:
    """Largest kink of the blocks' profiles (nats) and the estimated one-round loss variance.

    The variance ``sum_k w_k (k / size)^2 chi2_k`` (under add/remove the caller adds
    the count's own) sets the default grid.
    """
    reach = 0.0
    variance = 0.0
    for block in track(blocks, desc="check-in bases"):
        rate = block.high / size
        if exact is not None and exact.covers(block.low, block.high):
            reach = max(reach, exact.reach(rate))
            variance += block.weight * rate**2 * exact.chi_square(block.low)
            continue
        first = bases(block.low)
        reach = max(reach, kink_reach(base_curves(first, "upper"), rate))
        variance += block.weight * rate**2 * chi_square(first)
    return reach, variance


def _finer_blocks(
    n: int, p: float, bulk: tuple[int, int], tolerance: float, singles: int, default: int
) -> list[_Block]:
    """Blocks at ``tolerance``, or at the smallest multiple ``2^j`` of it giving at most
    ``BLOCK_GROWTH`` times ``default`` blocks (or ``MIN_BLOCK_CAP``), so that a finer
    loss grid narrows the blocking's first-order width too, at bounded cost."""
    cap = max(BLOCK_GROWTH * default, MIN_BLOCK_CAP)
    while True:
        blocks = _blocks(n, p, *bulk, tolerance, singles)
        if len(blocks) <= cap or tolerance >= 1.0:
            return blocks
        tolerance = min(1.0, 2 * tolerance)


def checkin_from_bases(
    n: int,
    p: float,
    base: BaseBuilder,
    *,
    adjacency: str = "replace",
    loss_grid_step: float | None = None,
    tail_mass: float = COUNT_TAIL_MASS,
    count_tolerance: float = DEFAULT_COUNT_TOLERANCE,
    exact: ExactCounts | None = None,
    max_base_count: int | None = None,
) -> PLD:
    """One round of check-in from a per-count base: ``base(k)`` dominates the shuffle of k reports.

    The engine of :func:`checkin` and :func:`distributed_checkin` (module docstring).

    Parameters
    ----------
    n : int
        Number of users (>= 1); under add/remove, the users of the smaller dataset.
    p : float
        Check-in probability in (0, 1].
    base : callable
        ``base(k, loss_grid_step)`` for ``k >= 1`` returns one round (a
        ``pld.PLD``, on the given loss grid step or its default one if ``None``)
        of a pair that dominates the k-report mechanism under replacement, and
        whose profile does not increase with ``k``.
    adjacency : {"replace", "add-remove"}
        Neighbouring datasets: one user's data replaced, or one user added/removed.
    loss_grid_step : float, optional
        Loss grid spacing (nats) of the result, in (0, 1]; default
        :func:`pld.engine.choose_loss_grid_step` of an estimate
        ``sqrt(sum_k w_k (k/n)^2 chi2_k)`` of the loss's standard deviation.
    tail_mass : float
        Probability of the counts left out on each side, in (0, 1e-3]; charged to delta.
    count_tolerance : float
        Largest relative width ``k_b/k_a - 1`` of a count block, times its largest
        count probability relative to the mode's, in [0, 1]; 0 evaluates every
        count of the bulk (module docstring). On a ``loss_grid_step`` finer than the
        default it is scaled by their ratio (the blocks' width is first order in the
        bracket, independent of the grid, so refinement narrows it too), within
        ``BLOCK_GROWTH`` times the default number of blocks.
    exact : ExactCounts, optional
        Counts ``1..exact.limit`` use its exact terms (E1)-(E2) of
        :mod:`pld.shuffling.checkin.exact` instead of Lemma 7 on ``base``.
    max_base_count : int, optional
        Counts above it use the base of ``max_base_count`` reports: still a valid
        bound (the base's profile does not increase with the count, and eqs. 5-6
        increase with it), looser; for counts whose own base would be too costly.

    Returns
    -------
    PLD
        One round, ``symmetric=True``; rigorous upper side, bracket as in the module docstring.
    """
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    p = validation.in_interval("p", p, 0.0, 1.0, low_open=True)
    if adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be 'replace' or 'add-remove' (got {adjacency!r})")
    tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    count_tolerance = validation.in_interval("count_tolerance", count_tolerance, 0.0, 1.0)
    if loss_grid_step is not None:
        validation.in_interval("loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True)
    if adjacency == "add-remove" and p == 1.0:
        raise ValueError(
            "p must lie in (0, 1) with adjacency='add-remove' (at p = 1 the count reveals "
            "the target's presence)"
        )
    bulk = bulk_counts(n, p, tail_mass)
    singles = exact.limit if exact is not None else 0
    blocks = _blocks(n, p, *bulk, count_tolerance, singles)
    charged = _charged_tails(n, p, *bulk)
    if max_base_count is not None:
        max_base_count = validation.integer_at_least("max_base_count", max_base_count, 1)
    bases = _Bases(base, max_base_count)
    size = n if adjacency == "replace" else n + 1
    reach, variance = _reach_and_variance(blocks, bases, size, exact)
    if adjacency == "add-remove":
        # The count's own loss log(1 / r_K): variance ~ Var(K) / (n + 1 - K)^2.
        variance += p / (n * (1 - p))
    default_step = choose_loss_grid_step(math.sqrt(variance))
    step = default_step if loss_grid_step is None else loss_grid_step
    if step < default_step and count_tolerance > 0:
        blocks = _finer_blocks(
            n, p, bulk, count_tolerance * step / default_step, singles, len(blocks)
        )
        reach = _reach_and_variance(blocks, bases, size, exact)[0]
    if adjacency == "add-remove":
        log_r = _log_ratio(n, p, np.array([1, max((b.high for b in blocks), default=1)]))
        reach += float(np.max(np.abs(log_r)))
    reach = max(reach, step)
    multiple = max(1, math.ceil(2 * reach / (COARSE_POINTS * step)))
    coarse = _aligned(reach, step, multiple)
    grid = coarse
    if multiple > 1:
        coarse_values, _ = _profiles(n, p, adjacency, blocks, bases, coarse, charged, exact)
        grid = _refined(coarse, coarse_values, step, multiple)
    upper_values, lower_values = _profiles(n, p, adjacency, blocks, bases, grid, charged, exact)
    upper_values = np.clip(upper_values, 0, 1)
    lower_values = np.clip(lower_values, 0, 1)
    upper = pair_from_hull(grid, *profile_hull(grid, upper_values), "upper")
    lower = pair_from_hull(grid, *profile_hull(grid, lower_values), "lower")
    upper_pld = from_symmetric_pair(*upper.log_pmfs(), loss_grid_step=step)
    lower_pld = from_symmetric_pair(*lower.log_pmfs(), loss_grid_step=step)
    return from_bounds(upper=upper_pld, lower=lower_pld)
