"""Chernoff tail bounds that choose the window of a composition.

For a sum ``S`` of independent privacy losses, Markov's inequality applied to
``exp(t S)`` gives, for every measure (not only probability measures) and every
``t > 0``,

    mass(S >= a) <= exp(sum_i c_i log M_i(t) - t a),   M_i(t) = sum_j m_ij exp(t g_ij),

and the mirror image for ``t < 0`` and the lower tail (Koskela et al. 2021 use
the same bound for the Fourier accountant). Every ``t`` gives a valid bound, so
the search only decides how tight the window is. It tries exponents on a
lattice of rates ``|t| h = 2^(k/32)`` (``h`` the grid step, ``|t| h <= 64``),
always with the exact MGF over all atoms (:func:`pld.engine.mgf.log_mgf`,
raised by its rounding bound). The window end ``(sum_i c_i log M_i(t) - log
target) / t`` is quasi-convex in ``t`` (its sublevel sets are those of a convex
function), and its minimiser lies above ``(-log target) / (reach to the support's
end)`` (there ``t K'(t) - K(t)``, which grows with ``t``, is still below ``-log
target``). One scan of lattice points a quarter of an octave apart from that
bound to the Gaussian guess (moved on while the best is at an edge), then every
lattice point between the best one's neighbours, find the best lattice exponent
in two vectorised MGF calls per factor (their cost hardly depends on the number
of exponents). Each pmf's values are kept (``memos``): the same
self-composition again costs nothing, another count only the lattice points not
yet evaluated.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np

from pld.engine.linalg import dot
from pld.numerics import UNIT_ROUNDOFF

#: Lattice points per octave of the rate ``|t| h``.
_PER_OCTAVE = 32
#: Largest |t| * step at which the MGF is evaluated: beyond it an end moves by
#: less than -log(target) / 64 grid points more (0.54 at the default 1e-15).
_LARGEST_RATE = 64.0
_TOP = math.floor(_PER_OCTAVE * math.log2(_LARGEST_RATE))
#: The scan's spacing (a quarter of an octave), how many points it moves on by
#: while its best point is at an edge (at most ``_SCAN_EDGES`` times), and its
#: largest number of points per side (beyond it the spacing doubles and the gaps
#: are halved before the last zoom): on the numpy path of the log-MGF a call
#: costs about the same at any number of exponents, on the compiled path (pmfs
#: of more than ``COMPILED_MGF_ATOMS`` points) each exponent costs ~0.3 ns per
#: atom, a call ~0.1 ms more.
_SCAN_STEP = 8
_SCAN_MOVE = 8
_SCAN_EDGES = 8
_SCAN_POINTS = 40
_SCAN_POINTS_COMPILED = 16


@dataclass(frozen=True)
class Window:
    """Grid indices ``[low, high]`` kept after composing, and the mass bounds outside;
    ``t_up`` and ``t_down`` are the Chernoff exponents that gave the ends (a hint for
    the window of a nearly identical composition)."""

    low: int
    high: int
    mass_above: float
    mass_below: float
    t_up: float = math.nan
    t_down: float = math.nan


#: Per pmf: log-MGF values and their rounding bounds by lattice point ``(side, k)``,
#: its positive mass, mean index and variance (grid units) by ``"moments"``
#: and the windows of its self-compositions by ``("window", count, tail, hint,
#: near)``.
Memo = MutableMapping


def _rates(keys: Sequence[tuple[int, int]]) -> np.ndarray:
    """The exponents ``t h`` of the lattice points ``(side, k)``."""
    return np.array([side * 2.0 ** (k / _PER_OCTAVE) for side, k in keys], dtype=np.float64)


def _moments(masses: np.ndarray, memo: Memo) -> tuple[float, float, float]:
    """Total positive mass, mean grid index (from the first point) and variance (grid
    units squared) of the pmf's positive masses (memoised)."""
    if "moments" not in memo:
        weights = np.maximum(masses, 0.0)
        index = np.arange(masses.shape[0], dtype=np.float64)
        total = float(weights.sum())
        first = dot(weights, index)
        second = dot(weights * index, index)
        mean = first / total if total > 0.0 else 0.0
        variance = max(second / total - mean * mean, 0.0) if total > 0.0 else 0.0
        memo["moments"] = (total, mean, variance)
    return memo["moments"]


def _evaluate(
    pmfs: Sequence[tuple[int, np.ndarray]],
    memos: Sequence[Memo],
    step: float,
    keys: Sequence[tuple[int, int]],
    layouts: Sequence[dict] | None = None,
    stacks: dict | None = None,
) -> None:
    """Store each factor's ``log M_i`` and its rounding bound at the lattice points
    ``keys`` its memo lacks, by vectorised :func:`~pld.engine.mgf.log_mgf`
    calls (which err by at most :func:`~pld.engine.mgf.log_mgf_rounding` plus
    a unit of the value): one for all factors that lack the same points
    (:func:`~pld.engine.mgf.log_mgf_many`), else one per factor. ``layouts``
    (one dict per factor, for one search) keeps the kernels' layouts of the atoms
    between calls, ``stacks`` those of all factors together."""
    from pld.engine.mgf import log_mgf, log_mgf_many, log_mgf_rounding

    if layouts is None:
        layouts = [{} for _ in pmfs]
    missing = [[key for key in keys if key not in memo] for memo in memos]
    todo = [i for i, lacking in enumerate(missing) if lacking]
    if len(todo) > 1 and all(missing[i] == missing[todo[0]] for i in todo):
        rates = _rates(missing[todo[0]])
        values = log_mgf_many(
            [(pmfs[i][1], pmfs[i][0]) for i in todo],
            step,
            rates / step,
            [layouts[i] for i in todo],
            stacks,
        )
        results = {i: (rates, row) for i, row in zip(todo, values, strict=True)}
    else:
        results = {}
        for i in todo:
            rates = _rates(missing[i])
            offset, masses = pmfs[i]
            results[i] = (rates, log_mgf(masses, offset, step, rates / step, layouts[i]))
    for i, (rates, values) in results.items():
        offset, masses = pmfs[i]
        span = np.abs(rates) * (abs(offset) + masses.shape[0])
        margins = log_mgf_rounding(masses.shape[0], span) + UNIT_ROUNDOFF * np.abs(
            np.where(np.isfinite(values), values, 0.0)
        )
        memos[i].update(
            zip(missing[i], zip(values.tolist(), margins.tolist(), strict=True), strict=True)
        )


def _ends(
    pmfs: Sequence[tuple[int, np.ndarray]],
    memos: Sequence[Memo],
    counts: Sequence[int],
    step: float,
    keys: Sequence[tuple[int, int]],
    log_target: float,
    layouts: Sequence[dict] | None = None,
    stacks: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``sum_i c_i log M_i(t)`` at the lattice points ``keys`` and the window ends (nats)
    it gives, ``(log M - log target) / t``. The sum is raised by the factors' rounding
    bounds (their own sum's rounding, at most ``2 F`` units of it for ``F`` factors,
    included) and by ``(2 F + 8) u sum_i |c_i log M_i|``: the ``F`` products and
    ``F - 1`` additions of the sum (in any order), and the last additions, so it
    stays an upper bound however many factors cancel."""
    _evaluate(pmfs, memos, step, keys, layouts, stacks)
    factors = len(memos)
    entries = np.array([memo[key] for memo in memos for key in keys]).reshape(factors, len(keys), 2)
    weights = np.asarray(counts, dtype=np.float64)[:, np.newaxis]
    terms = weights * entries[:, :, 0]
    total = terms.sum(axis=0)
    margin = (weights * entries[:, :, 1]).sum(axis=0) * (1.0 + 2 * factors * UNIT_ROUNDOFF)
    spread = np.abs(terms).sum(axis=0)
    logs = total + margin + (2 * factors + 8) * UNIT_ROUNDOFF * spread
    return logs, (logs - log_target) / (_rates(keys) / step)


def _tail_bounds(
    pmfs: Sequence[tuple[int, np.ndarray]],
    memos: Sequence[Memo],
    counts: Sequence[int],
    step: float,
    tried: dict,
    thresholds: dict,
    refine: bool,
    layouts: Sequence[dict],
    stacks: dict,
) -> dict:
    """Per side, the smallest Chernoff bound ``exp(log M(t) - t threshold)`` (capped
    at 1) on the mass beyond ``thresholds[side]`` (nats) over the lattice points
    ``(side, k)``, ``k`` in ``tried[side]``, and, with ``refine``, over the lattice:
    the exponent is convex in ``t``, so its lattice minimum lies between the best
    point's neighbours in ``tried``; the lattice points there are added (beyond the
    largest or smallest one, ``_SCAN_MOVE`` at a time) until they hold no better
    one. One :func:`_ends` call per round, both sides together."""
    points = {side: set(tried[side]) for side in thresholds}
    bounds = {}
    for _ in range(_SCAN_EDGES + 2):
        keys = [(side, k) for side, ks in points.items() for k in sorted(ks)]
        limits = np.array([thresholds[side] for side, _ in keys])
        logs = _ends(pmfs, memos, counts, step, keys, 0.0, layouts, stacks)[0]
        exponent = logs - _rates(keys) / step * limits
        missing, start = {}, 0
        for side, ks in points.items():
            stop = start + len(ks)
            best = start + int(np.argmin(exponent[start:stop]))
            bounds[side] = float(min(1.0, math.exp(exponent[best])))
            if refine and exponent[best] < 0.0:
                k = keys[best][1]
                below = keys[best - 1][1] if best > start else k - _SCAN_MOVE - 1
                above = keys[best + 1][1] if best + 1 < stop else min(_TOP + 1, k + _SCAN_MOVE + 1)
                new = set(range(below + 1, above)) - ks
                if new:
                    missing[side] = new
            start = stop
        if not missing:
            break
        for side, new in missing.items():
            points[side] |= new
    return bounds


def _end_mass_exceeds(
    pmfs: Sequence[tuple[int, np.ndarray]], counts: Sequence[int], end: int, log_target: float
) -> bool:
    """Whether the composed mass at one end point of the support (every factor at
    its first, ``end = 0``, or last, ``end = -1``, grid point), a product of
    masses, is clearly above ``exp(log_target)``: then no tail bound can cut that
    end point off the window."""
    ends = [float(m[end]) for _, m in pmfs]
    if min(ends) <= 0.0:
        return False
    log_mass = sum(c * math.log(e) for e, c in zip(ends, counts, strict=True))
    return log_mass > log_target + 1e-6 * (1.0 + abs(log_mass))


def _lattice_index(rate: float) -> int:
    """The lattice point nearest the rate ``|t| h`` (at most the largest)."""
    return min(_TOP, round(_PER_OCTAVE * math.log2(rate)))


def _scan(evaluate, points: dict, spacing: int, edges: int) -> tuple[dict, dict]:
    """Per side, the best lattice point of ``evaluate`` over ``points[side]``, moved
    on by ``_SCAN_MOVE`` points ``spacing`` apart while the best is at an edge
    (``edges`` times at most) -- the end is quasi-convex in ``t`` -- and every point
    tried. ``evaluate(keys)`` returns the signed ends (smaller is tighter)."""
    best, tried = {}, {side: {} for side in points}
    moves = spacing * np.arange(1, _SCAN_MOVE + 1)
    pending = dict(points)
    for _ in range(edges + 1):
        keys = [
            (side, k)
            for side, ks in pending.items()
            for k in sorted(set(np.minimum(ks, _TOP).tolist()) - tried[side].keys())
        ]
        if not keys:
            break
        for (side, k), end in zip(keys, evaluate(keys).tolist(), strict=True):
            tried[side][k] = end
        pending = {}
        for side, ends in tried.items():
            best[side] = min(ends, key=ends.__getitem__)
            if best[side] == max(ends) and best[side] < _TOP:
                pending[side] = best[side] + moves
            elif best[side] == min(ends):
                pending[side] = best[side] - moves
    return best, tried


def _starts(
    pmfs: Sequence[tuple[int, np.ndarray]],
    counts: Sequence[int],
    memos: Sequence[Memo],
    log_target: float,
    sides: Sequence[int],
) -> tuple[dict, int]:
    """Per side, the scan's lattice points, and their spacing.

    They run a quarter of an octave apart from a bound below the best exponent to
    the Gaussian guess (or a little beyond the bound if the guess is below it). With
    ``K(t) = sum_i c_i log M_i(t)``, the end's derivative in ``t`` has the sign of
    ``t K'(t) - K(t) + log target = -K(0) + int_0^t s K''(s) ds + log target``, which
    grows with ``t``. Two bounds keep it negative below ``|t| h = max(slack / reach,
    sqrt(8 slack / sum_i c_i R_i^2))``, ``slack = -log target + sum_i c_i log
    mass_i``: ``K'(t) <= sum_i c_i g_max,i`` with Jensen's ``K(t) >= sum_i c_i (t
    mean_i + log mass_i)`` (``reach = sum_i c_i (g_max,i - mean_i) / h``, mirrored for
    the lower end), and Popoviciu's ``K''(s) <= sum_i c_i R_i^2 / 4`` (a tilted
    variance on a support ``R_i`` grid steps wide). The Gaussian guess, where the
    end ``mean + sqrt(2 log(1/target) var)`` is tightest, is ``|t| h = sqrt(2
    log(1/target) / var)`` (var in grid units).
    """
    moments = [_moments(m, memo) for (_, m), memo in zip(pmfs, memos, strict=True)]
    log_mass = sum(
        c * math.log(max(w, 1e-300)) for (w, _, _), c in zip(moments, counts, strict=True)
    )
    slack = max(-log_target + log_mass, 1.0)
    variance = sum(c * v for (_, _, v), c in zip(moments, counts, strict=True))
    guess = _lattice_index(math.sqrt(2.0 * max(-log_target, 1.0) / max(variance, 1.0)))
    reach = {
        1: sum(
            c * (m.shape[0] - 1 - mean)
            for (_, m), (_, mean, _), c in zip(pmfs, moments, counts, strict=True)
        ),
        -1: sum(c * mean for (_, mean, _), c in zip(moments, counts, strict=True)),
    }
    spread = sum(c * (m.shape[0] - 1) ** 2 for (_, m), c in zip(pmfs, counts, strict=True))
    popoviciu = math.sqrt(8.0 * slack / max(spread, 1.0))
    spans = {}
    for side in sides:
        bound = _lattice_index(max(slack / max(reach[side], 1.0), popoviciu))
        spans[side] = (bound - _SCAN_STEP, max(bound, guess) + _SCAN_STEP)
    from pld.engine.mgf import COMPILED_MGF_ATOMS

    large = max(m.shape[0] for _, m in pmfs) > COMPILED_MGF_ATOMS
    most = _SCAN_POINTS_COMPILED if large else _SCAN_POINTS
    spacing = _SCAN_STEP
    while max(((high - low) // spacing + 1 for low, high in spans.values()), default=0) > most:
        spacing *= 2
    points = {side: np.arange(low, high + spacing, spacing) for side, (low, high) in spans.items()}
    return points, spacing


def composition_window(
    pmfs: Sequence[tuple[int, np.ndarray]],
    counts: Sequence[int],
    step: float,
    tail_mass: float,
    hint: tuple[float, float] | None = None,
    memos: Sequence[Memo] | None = None,
    near: tuple[float, float] | None = None,
) -> Window:
    """Choose the window of the composed pmf and bound the mass outside it.

    Parameters
    ----------
    pmfs : sequence of (offset, masses)
        Each factor's masses on the grid points ``(offset + j) * step``.
    counts : sequence of int
        How many times each factor is composed.
    step : float
        Grid spacing in nats.
    tail_mass : float
        Target bound on the mass outside the window, per side.
    hint : (float, float), optional
        ``(t_up, t_down)`` of the window of a nearly identical composition (the
        other bound of the same direction): only the lattice points nearest these
        two exponents are tried (every exponent gives valid bounds; a good one a
        tight window).
    near : (float, float), optional
        ``(t_up, t_down)`` of the window of a related composition (the other bound
        of the same direction, on another support): the search tries every lattice
        point within a quarter of an octave of those exponents (one MGF call, moved
        on while the best is at an edge) instead of the scan.
    memos : sequence of dict, optional
        One per factor, kept by the caller for as long as the factor's masses do
        not change: the values computed here are stored there and reused.

    Returns
    -------
    Window
        ``low``/``high`` grid indices; ``mass_above`` bounds the mass of
        ``S > high * step`` and ``mass_below`` that of ``S < low * step``
        (zero when the window reaches the support's end).
    """
    if memos is None:
        memos = [{} for _ in pmfs]
    key = ("window", counts[0], tail_mass, hint, near)
    if len(pmfs) == 1 and key in memos[0]:
        return memos[0][key]
    support_low = sum(c * off for (off, _), c in zip(pmfs, counts, strict=True))
    support_high = sum(c * (off + m.shape[0] - 1) for (off, m), c in zip(pmfs, counts, strict=True))
    log_target = math.log(tail_mass)
    # A side whose end point alone holds more composed mass than the target keeps
    # the support's end: no exponent is tried there (``t`` is nan).
    sides = [
        side
        for side, end in ((1, -1), (-1, 0))
        if not _end_mass_exceeds(pmfs, counts, end, log_target)
    ]

    # The kernels' layouts of each factor's atoms and of all together, for this
    # search only.
    layouts, stacks = [{} for _ in pmfs], {}

    def signed(keys):
        ends = _ends(pmfs, memos, counts, step, keys, log_target, layouts, stacks)[1]
        return np.array([side for side, _ in keys]) * ends

    hinted = hint is not None and all(
        math.isfinite(t) for side, t in zip((1, -1), hint, strict=True) if side in sides
    )
    if hinted:
        found = {
            side: _lattice_index(abs(t) * step)
            for side, t in zip((1, -1), hint, strict=True)
            if side in sides
        }
        scanned = _scan(signed, {side: [k] for side, k in found.items()}, 1, 0)[1]
        tried = {side: [found[side]] for side in sides}
    else:
        if near is not None and all(
            math.isfinite(t) for side, t in zip((1, -1), near, strict=True) if side in sides
        ):
            # Every lattice point within a quarter of an octave of the related
            # composition's best one (moved on while the best is at an edge).
            offsets = np.arange(1 - _SCAN_STEP, _SCAN_STEP)
            points = {
                side: _lattice_index(abs(t) * step) + offsets
                for side, t in zip((1, -1), near, strict=True)
                if side in sides
            }
            spacing = _SCAN_STEP
        else:
            points, spacing = _starts(pmfs, counts, memos, log_target, sides)
        found, scanned = _scan(signed, points, spacing, _SCAN_EDGES)
        # Nothing to tighten on a side whose end lies beyond the support's (up to the
        # rounding of the last grid point).
        reach = {1: (support_high - 1) * step, -1: -(support_low + 1) * step}
        inside = [side for side in sides if scanned[side][found[side]] < reach[side]]
        # Between the best point and its nearest tried neighbours: halve gaps wider
        # than the scan step, then try every point of the narrower ones. A best point
        # whose neighbours are both tried is the lattice minimum (quasi-convexity).
        for _ in range(_TOP):
            points = {}
            for side in inside:
                best, ks = found[side], sorted(scanned[side])
                at = ks.index(best)
                below = best - ks[at - 1] if at > 0 else _SCAN_STEP
                above = ks[at + 1] - best if at + 1 < len(ks) else min(_SCAN_STEP, _TOP - best)
                if max(below, above) > _SCAN_STEP:
                    points[side] = np.array([best - below // 2, best + above // 2])
                elif max(below, above) > 1:
                    points[side] = best + np.arange(-below + 1, above)
            if not points:
                break
            _, zoomed = _scan(signed, points, 1, 0)
            for side, ends in zoomed.items():
                scanned[side].update(ends)
                found[side] = min(scanned[side], key=scanned[side].__getitem__)
        tried = {side: list(scanned[side]) for side in sides}
    ends = {side: side * scanned[side][found[side]] for side in sides}
    high, low = support_high, support_low
    t_up = t_down = math.nan
    # A non-finite end (an MGF that overflowed) cuts nothing.
    if 1 in ends and math.isfinite(ends[1]):
        high = min(high, math.ceil(ends[1] / step))
        t_up = float(_rates([(1, found[1])])[0]) / step
    if -1 in ends and math.isfinite(ends[-1]):
        low = max(low, math.floor(ends[-1] / step))
        t_down = float(_rates([(-1, found[-1])])[0]) / step
    low = min(low, high)
    thresholds = {}
    if high < support_high:
        thresholds[1] = (high + 1) * step
    if low > support_low:
        thresholds[-1] = (low - 1) * step
    charges = _tail_bounds(
        pmfs, memos, counts, step, tried, thresholds, not hinted, layouts, stacks
    )
    mass_above, mass_below = charges.get(1, 0.0), charges.get(-1, 0.0)
    window = Window(low, high, mass_above, mass_below, t_up, t_down)
    if len(pmfs) == 1:
        memos[0][key] = window
    return window
