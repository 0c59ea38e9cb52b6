"""Chernoff tail bounds that choose the window of a composition.

For a sum ``S`` of independent privacy losses, Markov's inequality applied to
``exp(t S)`` gives, for every measure (not only probability measures) and every
``t > 0``,

    mass(S >= a) <= exp(sum_i c_i log M_i(t) - t a),   M_i(t) = sum_j m_ij exp(t g_ij),

and the mirror image for ``t < 0`` and the lower tail (Koskela et al. 2021 use
the same bound for the Fourier accountant). Every ``t`` gives a valid bound; the
search is in two stages. The moment generating functions are first evaluated on
a coarsened copy of each pmf whose atoms are moved outwards (up for ``t > 0``,
down for ``t < 0``), which can only increase ``M_i(t)`` and costs O(#coarse
bins) per ``t``, over a wide logarithmic grid of ``t``. Moving atoms outwards
inflates the bound by about ``T t`` times the coarse bin width after T rounds,
so the best coarse ``t`` is then refined with the exact MGF over all atoms at a
few nearby values (which halves the window of a long self-composition).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_COARSE_BINS = 512
_T_GRID = np.logspace(-5, 5, 41)
#: Multiples of the best coarse t at which the exact MGF is evaluated.
_T_REFINE = np.geomspace(0.5, 2.0, 9)
_UNIT_ROUNDOFF = math.ulp(1.0) / 2
#: Largest |t| * step at which the exact MGF is evaluated.
_LARGEST_RATE = 600.0


@dataclass(frozen=True)
class _Grid:
    """Masses at the points ``(offset + j) * step`` (``offset`` may be fractional)."""

    offset: float
    step: float
    masses: np.ndarray


def _coarsen(offset: int, masses: np.ndarray, step: float) -> tuple[_Grid, _Grid]:
    """Bins of ``width`` points, each bin's mass placed at its largest loss (for
    ``t > 0``) and at its smallest loss (for ``t < 0``): both can only increase
    ``M(t)``. Both are regular grids of step ``width * step``."""
    size = masses.shape[0]
    width = max(1, math.ceil(size / _COARSE_BINS))
    padded = np.zeros(math.ceil(size / width) * width)
    padded[:size] = masses
    sums = padded.reshape(-1, width).sum(axis=1)
    coarse_step = width * step
    return (
        _Grid((offset + width - 1) / width, coarse_step, sums),
        _Grid(offset / width, coarse_step, sums),
    )


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


def _log_mgf_sum(grids: Sequence[_Grid], counts: Sequence[int], t: np.ndarray) -> np.ndarray:
    """``sum_i c_i log M_i(t)``, raised by its rounding bound so it stays an upper bound.

    Each :func:`pld.engine._kernels.log_mgf` errs by at most
    :func:`pld.engine._kernels.log_mgf_rounding` plus a unit of its value; the
    accumulation by 8 ulps of the result.
    """
    from pld.engine._kernels import log_mgf, log_mgf_rounding

    total = np.zeros_like(t)
    margin = np.zeros_like(t)
    for grid, count in zip(grids, counts, strict=True):
        size = grid.masses.shape[0]
        masses = np.ascontiguousarray(grid.masses, dtype=np.float64)
        value = log_mgf(masses, grid.offset, grid.step, t)
        total += count * value
        span = np.abs(t) * grid.step * (abs(grid.offset) + size)
        margin += count * (
            log_mgf_rounding(size, span)
            + _UNIT_ROUNDOFF * np.abs(np.where(np.isfinite(value), value, 0.0))
        )
    return total + margin + 8 * _UNIT_ROUNDOFF * np.abs(total)


def _exact_log_mgf_sum(
    pmfs: Sequence[tuple[int, np.ndarray]], counts: Sequence[int], step: float, t: np.ndarray
) -> np.ndarray:
    """``sum_i c_i log M_i(t)`` over all atoms (no coarsening), with its rounding margin."""
    return _log_mgf_sum([_Grid(offset, step, masses) for offset, masses in pmfs], counts, t)


def _fine(t: np.ndarray, log_mgf: np.ndarray, log_target: float, step: float) -> np.ndarray:
    """Exponents around the best of the coarse grid ``t``, where the exact MGF is tried."""
    best = t[int(np.argmin((log_mgf - log_target) / np.abs(t)))]
    # Beyond |t| step = 600 an end moves by less than -log(target) / 600 < 1 grid
    # point more, and the exact MGF costs an exponential per atom.
    return np.clip(best * _T_REFINE, -_LARGEST_RATE / step, _LARGEST_RATE / step)


def _exact_pair(
    pmfs: Sequence[tuple[int, np.ndarray]],
    counts: Sequence[int],
    step: float,
    t_up: np.ndarray,
    t_down: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The exact ``sum_i c_i log M_i`` at ``t_up`` and at ``t_down``, in one evaluation."""
    both = np.concatenate((t_up, t_down))
    if not both.size:
        return both, both
    values = _exact_log_mgf_sum(pmfs, counts, step, both)
    return values[: t_up.shape[0]], values[t_up.shape[0] :]


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


def composition_window(
    pmfs: Sequence[tuple[int, np.ndarray]],
    counts: Sequence[int],
    step: float,
    tail_mass: float,
    hint: tuple[float, float] | None = None,
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
        other bound of the same direction): only these two exponents are tried,
        with the exact MGF (every exponent gives valid bounds; a good one a tight
        window).

    Returns
    -------
    Window
        ``low``/``high`` grid indices; ``mass_above`` bounds the mass of
        ``S > high * step`` and ``mass_below`` that of ``S < low * step``
        (zero when the window reaches the support's end).
    """
    support_low = sum(c * off for (off, _), c in zip(pmfs, counts, strict=True))
    support_high = sum(c * (off + m.shape[0] - 1) for (off, m), c in zip(pmfs, counts, strict=True))
    log_target = math.log(tail_mass)
    # A side whose end point alone holds more composed mass than the target keeps
    # the support's end: no exponent is tried there (``t`` is nan).
    fixed_high = _end_mass_exceeds(pmfs, counts, -1, log_target)
    fixed_low = _end_mass_exceeds(pmfs, counts, 0, log_target)
    none = np.zeros(0)
    if hint is not None and all(
        fixed or math.isfinite(t) for fixed, t in ((fixed_high, hint[0]), (fixed_low, hint[1]))
    ):
        t_up = none if fixed_high else np.array([hint[0]])
        t_down = none if fixed_low else np.array([hint[1]])
        log_up, log_down = _exact_pair(pmfs, counts, step, t_up, t_down)
    else:
        coarse = [_coarsen(off, m, step) for off, m in pmfs]
        variance = 0.0
        for (up, _), count in zip(coarse, counts, strict=True):
            weights = up.masses / up.masses.sum()
            points = (up.offset + np.arange(weights.shape[0])) * up.step
            variance += count * float(np.dot(weights, (points - np.dot(weights, points)) ** 2))
        scale = 1.0 / max(math.sqrt(variance), step)
        # The exact MGF cannot bring an end inside the support when the coarse end
        # lies beyond the support's by more than coarsening moves atoms (``width -
        # 1`` points per round).
        moved = step * sum(
            c * (round(up.step / step) - 1) for (up, _), c in zip(coarse, counts, strict=True)
        )
        t_up, log_up, t_down, log_down = none, none, none, none
        fine_up, fine_down = none, none
        if not fixed_high:
            t_up = _T_GRID * scale
            log_up = _log_mgf_sum([up for up, _ in coarse], counts, t_up)
            if np.min((log_up - log_target) / t_up) - moved < support_high * step:
                fine_up = _fine(t_up, log_up, log_target, step)
        if not fixed_low:
            t_down = -_T_GRID * scale
            log_down = _log_mgf_sum([down for _, down in coarse], counts, t_down)
            if np.max((log_down - log_target) / t_down) + moved > support_low * step:
                fine_down = _fine(t_down, log_down, log_target, step)
        exact_up, exact_down = _exact_pair(pmfs, counts, step, fine_up, fine_down)
        t_up, log_up = np.concatenate((t_up, fine_up)), np.concatenate((log_up, exact_up))
        t_down, log_down = (
            np.concatenate((t_down, fine_down)),
            np.concatenate((log_down, exact_down)),
        )
    up_ends = (log_up - log_target) / t_up
    down_ends = (log_down - log_target) / t_down
    high = support_high
    if up_ends.size:
        high = min(high, math.ceil(float(np.min(up_ends)) / step))
    low = support_low
    if down_ends.size:
        low = max(low, math.floor(float(np.max(down_ends)) / step))
    low = min(low, high)
    mass_above = 0.0 if high >= support_high else _tail_bound(log_up, t_up, (high + 1) * step)
    mass_below = 0.0 if low <= support_low else _tail_bound(log_down, t_down, (low - 1) * step)
    return Window(
        low,
        high,
        mass_above,
        mass_below,
        float(t_up[int(np.argmin(up_ends))]) if up_ends.size else math.nan,
        float(t_down[int(np.argmax(down_ends))]) if down_ends.size else math.nan,
    )
