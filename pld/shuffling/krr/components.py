"""The shuffled k-RR view as a disjoint union of pairs F(s, c), exact or grouped into blocks.

The family F(s, c), the components of the strong and weak adversaries' views and
the blocking that keeps a rigorous bracket beyond the atom budget are derived in
the docstring of :mod:`pld.shuffling.krr.mechanism` (Koskela et al. 2023, §4 and App. C). Binomial
masses run by ratio recurrences from scipy's ``binom.pmf`` at the mode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from pld.numerics import UNIT_ROUNDOFF
from pld.numerics import binomial as binom

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


# -- binomial runs ----------------------------------------------------------------


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
    lo, hi = (int(v) for v in binom.window(tail_mass / 4, trials, prob))
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
        weight_error=_ANCHOR_RELATIVE_ERROR + UNIT_ROUNDOFF * (3 * (hi - lo) + 8),
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
    b_lo, b_hi = (int(v) for v in binom.window(tail_mass / 8, trials, gamma))
    blankets = np.arange(b_lo, b_hi + 1)
    b_anchor, b_anchor_value = _anchors(trials, gamma, b_lo, b_hi)
    row_weight = np.empty(blankets.size)
    _binomial_run(trials, gamma, b_lo, b_hi, int(b_anchor), float(b_anchor_value), row_weight)
    members = blankets + 1
    lo, hi = binom.window(tail_mass / 8, blankets, prob)
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
    weight_error = 2 * _ANCHOR_RELATIVE_ERROR + UNIT_ROUNDOFF * (3 * steps + 16)
    return _WeakRows(blankets, row_weight, lo, hi, anchor, anchor_value, dropped, weight_error)


def _window_low(size: np.ndarray, tail_mass: float) -> np.ndarray:
    """First h1 of the window [low, size - low] kept in each component F(size, c).

    P(Bin(size - 1, 1/2) < low) < tail_mass / 4, so that the window drops at most
    tail_mass / 2 of P and of Q (see :func:`pld.shuffling.krr.cells._merge`).
    """
    distinct, index = np.unique(size, return_inverse=True)
    low, _ = binom.window(tail_mass / 4, distinct - 1, 0.5)
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
    weight_error = rows.weight_error + UNIT_ROUNDOFF * int(count.max())
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
    error = components.weight_error + UNIT_ROUNDOFF * int(np.max(np.diff(edges)))
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
