"""Chernoff tail bounds that choose the window of a composition.

For a sum ``S`` of independent privacy losses, Markov's inequality applied to
``exp(t S)`` gives, for every measure (not only probability measures) and every
``t > 0``,

    mass(S >= a) <= exp(sum_i c_i log M_i(t) - t a),   M_i(t) = sum_j m_ij exp(t g_ij),

and the mirror image for ``t < 0`` and the lower tail (Koskela et al. 2021 use
the same bound for the Fourier accountant). Every ``t`` gives a valid bound, so
the search only decides how tight the window is. It tries exponents on a
lattice of rates ``|t| h = 2^(k/32)`` (``h`` the grid step, ``|t| h <= 64``),
always with the exact MGF over all atoms (:func:`pld.engine._kernels.log_mgf`,
raised by its rounding bound). The window end ``(sum_i c_i log M_i(t) - log
target) / t`` is quasi-convex in ``t`` (its sublevel sets are those of a convex
function): 9 lattice points half an octave apart around a Gaussian guess
(moved on while the best is at an edge), then 6 points an eighth of an octave
apart and 6 a 32nd apart around the best, find the best lattice exponent (the
former coarse-then-exact search stopped at a quarter of an octave; at small T
the end is a sharp V in ``log t``, where that resolution matters). Each stage
is one vectorised MGF call per factor (its cost hardly depends on the number
of exponents), and each pmf's values are kept (``memos``): the same
self-composition again costs nothing, another count only the lattice points
not yet evaluated.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np

_UNIT_ROUNDOFF = math.ulp(1.0) / 2
#: Lattice points per octave of the rate ``|t| h``.
_PER_OCTAVE = 32
#: Largest |t| * step at which the MGF is evaluated: beyond it an end moves by
#: less than -log(target) / 64 grid points more (0.54 at the default 1e-15), and
#: the compiled Horner evaluation overflows to +inf above about 86.
_LARGEST_RATE = 64.0
_TOP = math.floor(_PER_OCTAVE * math.log2(_LARGEST_RATE))
#: Lattice points half an octave apart, 2 octaves either side of the Gaussian
#: guess (moved on while the best is at an edge, at most ``_SCAN_EDGES`` times),
#: then an eighth of an octave apart between the best one's neighbours, then
#: every lattice point between the new best one's neighbours.
_SCAN_STEP = 16
_SCAN = _SCAN_STEP * np.arange(-4, 5)
_SCAN_EDGES = 8
_ZOOMS = (np.array([-12, -8, -4, 0, 4, 8, 12]), np.array([-3, -2, -1, 1, 2, 3]))
#: A pmf of at most COMPILED_MGF_TERMS / 8 atoms has its MGF evaluated at that many
#: exponents per call, on the numpy path (no compilation); a larger one at all of
#: them in one call, compiled.
_SMALLEST_CHUNK = 8


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
#: its variance by ``"variance"``, its number of positive masses by ``"atoms"`` and
#: the windows of its self-compositions by ``("window", count, tail, hint)``.
Memo = MutableMapping


def _rates(keys: Sequence[tuple[int, int]]) -> np.ndarray:
    """The exponents ``t h`` of the lattice points ``(side, k)``."""
    return np.array([side * 2.0 ** (k / _PER_OCTAVE) for side, k in keys], dtype=np.float64)


def _variance(masses: np.ndarray, memo: Memo) -> float:
    """Variance of the pmf's normalised masses in grid units squared (memoised)."""
    if "variance" not in memo:
        weights = np.maximum(masses, 0.0)
        total = float(weights.sum())
        index = np.arange(masses.shape[0], dtype=np.float64)
        mean = float(np.dot(weights, index)) / total if total > 0.0 else 0.0
        spread = float(np.dot(weights, (index - mean) ** 2))
        memo["variance"] = spread / total if total > 0.0 else 0.0
    return memo["variance"]


def _evaluate(
    pmfs: Sequence[tuple[int, np.ndarray]],
    memos: Sequence[Memo],
    step: float,
    keys: Sequence[tuple[int, int]],
) -> None:
    """Store each factor's ``log M_i`` and its rounding bound at the lattice points
    ``keys`` its memo lacks, by vectorised :func:`~pld.engine._kernels.log_mgf` calls
    (which err by at most :func:`~pld.engine._kernels.log_mgf_rounding` plus a unit
    of the value), in chunks that keep a small pmf on its numpy path."""
    from pld.engine._kernels import COMPILED_MGF_TERMS, log_mgf, log_mgf_rounding

    for (offset, masses), memo in zip(pmfs, memos, strict=True):
        missing = [key for key in keys if key not in memo]
        if not missing:
            continue
        if "atoms" not in memo:
            memo["atoms"] = max(1, int(np.count_nonzero(masses > 0.0)))
        masses = np.ascontiguousarray(masses, dtype=np.float64)
        chunk = COMPILED_MGF_TERMS // memo["atoms"]
        if chunk < _SMALLEST_CHUNK:
            chunk = len(missing)  # compiled anyway: one call
        for start in range(0, len(missing), chunk):
            part = missing[start : start + chunk]
            rates = _rates(part)
            values = log_mgf(masses, offset, step, rates / step)
            span = np.abs(rates) * (abs(offset) + masses.shape[0])
            margins = log_mgf_rounding(masses.shape[0], span) + _UNIT_ROUNDOFF * np.abs(
                np.where(np.isfinite(values), values, 0.0)
            )
            for key, value, margin in zip(part, values.tolist(), margins.tolist(), strict=True):
                memo[key] = (value, margin)


def _ends(
    pmfs: Sequence[tuple[int, np.ndarray]],
    memos: Sequence[Memo],
    counts: Sequence[int],
    step: float,
    keys: Sequence[tuple[int, int]],
    log_target: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``sum_i c_i log M_i(t)`` at the lattice points ``keys`` and the window ends (nats)
    it gives, ``(log M - log target) / t``. The sum is raised by the factors' rounding
    bounds and 8 ulps of the accumulated sum, so it stays an upper bound."""
    _evaluate(pmfs, memos, step, keys)
    total = np.zeros(len(keys))
    margin = np.zeros(len(keys))
    for memo, count in zip(memos, counts, strict=True):
        entries = np.array([memo[key] for key in keys]).reshape(len(keys), 2)
        total += count * entries[:, 0]
        margin += count * entries[:, 1]
    logs = total + margin + 8 * _UNIT_ROUNDOFF * np.abs(total)
    return logs, (logs - log_target) / (_rates(keys) / step)


def _tail_bound(log_mgf: np.ndarray, t: np.ndarray, threshold: float) -> float:
    """min over t of exp(log M(t) - t * threshold), capped at 1."""
    return float(min(1.0, np.exp(np.min(log_mgf - t * threshold))))


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


def _scan(
    evaluate,
    sides: Sequence[int],
    starts: dict,
    offsets: np.ndarray,
    edges: int,
) -> tuple[dict, dict]:
    """Per side, the best lattice point of ``evaluate`` over ``start + offsets``, the
    points moved on by the offsets' span while the best is at an edge (``edges``
    times at most) -- the end is quasi-convex in ``t`` -- and every point tried.
    ``evaluate(keys)`` returns the signed ends (smaller is tighter)."""
    best, tried = {}, {side: {} for side in sides}
    pending = {side: starts[side] + offsets for side in sides}
    for _ in range(edges + 1):
        todo = {
            side: sorted({min(int(k), _TOP) for k in ks} - tried[side].keys())
            for side, ks in pending.items()
        }
        keys = [(side, k) for side in sides for k in todo.get(side, ())]
        if not keys:
            break
        for (side, k), end in zip(keys, evaluate(keys).tolist(), strict=True):
            tried[side][k] = end
        pending = {}
        for side in sides:
            best[side] = min(tried[side], key=tried[side].__getitem__)
            shift = offsets.max() + offsets[1] - offsets[0]
            if best[side] == max(tried[side]) and best[side] < _TOP:
                pending[side] = best[side] + shift + offsets
            elif best[side] == min(tried[side]):
                pending[side] = best[side] - shift + offsets
    return best, tried


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
        of the same direction, on another support): the search starts there, with
        lattice points an eighth of an octave apart instead of the half-octave scan
        around the Gaussian guess.
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

    def signed(keys):
        ends = _ends(pmfs, memos, counts, step, keys, log_target)[1]
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
        tried = {side: [found[side]] for side in sides}
    else:
        zooms = _ZOOMS
        if near is not None and all(
            math.isfinite(t) for side, t in zip((1, -1), near, strict=True) if side in sides
        ):
            starts = {
                side: _lattice_index(abs(t) * step)
                for side, t in zip((1, -1), near, strict=True)
                if side in sides
            }
            found, scanned = _scan(signed, sides, starts, _ZOOMS[0], _SCAN_EDGES)
            zooms = _ZOOMS[1:]
        else:
            # Gaussian guess: the end mean + sqrt(2 log(1/target) var) has t h =
            # sqrt(2 log(1/target) / var) (var in grid units).
            variance = sum(
                c * _variance(m, memo) for (_, m), c, memo in zip(pmfs, counts, memos, strict=True)
            )
            guess = math.sqrt(2.0 * max(-log_target, 1.0) / max(variance, 1.0))
            center = _SCAN_STEP * round(_lattice_index(guess) / _SCAN_STEP)
            found, scanned = _scan(signed, sides, dict.fromkeys(sides, center), _SCAN, _SCAN_EDGES)
        # Nothing to tighten on a side whose end lies beyond the support's (up to the
        # rounding of the last grid point).
        reach = {1: (support_high - 1) * step, -1: -(support_low + 1) * step}
        inside = [side for side in sides if scanned[side][found[side]] < reach[side]]
        tried = {side: list(scanned[side]) for side in sides}
        for zoom in zooms:
            zoomed, near = _scan(signed, inside, found, zoom, 0)
            for side in inside:
                # The best of the zoom, or the point it surrounded if that is better.
                if scanned[side][found[side]] <= near[side][zoomed[side]]:
                    continue
                found[side] = zoomed[side]
                scanned[side][found[side]] = near[side][zoomed[side]]
            for side in inside:
                tried[side] += list(near[side])
    results = {}
    for side in sides:
        keys = [(side, k) for k in dict.fromkeys(tried[side] + [found[side]])]
        logs, ends = _ends(pmfs, memos, counts, step, keys, log_target)
        results[side] = (logs, _rates(keys) / step, ends[keys.index((side, found[side]))])
    high, low = support_high, support_low
    mass_above = mass_below = 0.0
    t_up = t_down = math.nan
    # A non-finite end (an MGF that overflowed) cuts nothing.
    if 1 in results and math.isfinite(results[1][2]):
        high = min(high, math.ceil(results[1][2] / step))
        t_up = float(_rates([(1, found[1])])[0]) / step
    if -1 in results and math.isfinite(results[-1][2]):
        low = max(low, math.floor(results[-1][2] / step))
        t_down = float(_rates([(-1, found[-1])])[0]) / step
    low = min(low, high)
    if high < support_high:
        mass_above = _tail_bound(results[1][0], results[1][1], (high + 1) * step)
    if low > support_low:
        mass_below = _tail_bound(results[-1][0], results[-1][1], (low - 1) * step)
    window = Window(low, high, mass_above, mass_below, t_up, t_down)
    if len(pmfs) == 1:
        memos[0][key] = window
    return window
