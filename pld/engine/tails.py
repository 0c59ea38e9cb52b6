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


@dataclass(frozen=True)
class _CoarsePmf:
    """Log-masses at coarse points that bound the pmf's MGF from above on one side."""

    log_mass: np.ndarray
    points_up: np.ndarray  # for t > 0: each coarse bin's largest loss
    points_down: np.ndarray  # for t < 0: each coarse bin's smallest loss


def _coarsen(offset: int, masses: np.ndarray, step: float) -> _CoarsePmf:
    size = masses.shape[0]
    width = max(1, math.ceil(size / _COARSE_BINS))
    padded = np.zeros(math.ceil(size / width) * width)
    padded[:size] = masses
    sums = padded.reshape(-1, width).sum(axis=1)
    starts = offset + np.arange(sums.shape[0]) * width
    ends = np.minimum(starts + width - 1, offset + size - 1)
    keep = sums > 0
    with np.errstate(divide="ignore"):
        log_mass = np.log(sums[keep])
    return _CoarsePmf(log_mass, ends[keep] * step, starts[keep] * step)


@dataclass(frozen=True)
class Window:
    """Grid indices ``[low, high]`` kept after composing, and the mass bounds outside."""

    low: int
    high: int
    mass_above: float
    mass_below: float


def _log_sum_exp_rows(exponents: np.ndarray) -> np.ndarray:
    """``log(sum_j exp(a_ij))`` per row (rows with only ``-inf`` give ``-inf``)."""
    peak = np.max(exponents, axis=1)
    safe = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(exponents - safe[:, None]), axis=1))


def _log_mgf_sum(coarse: Sequence[_CoarsePmf], counts: Sequence[int], t: np.ndarray) -> np.ndarray:
    total = np.zeros_like(t)
    for pmf, count in zip(coarse, counts, strict=True):
        points = pmf.points_up if t[0] > 0 else pmf.points_down
        total += count * _log_sum_exp_rows(pmf.log_mass[None, :] + t[:, None] * points[None, :])
    return total + _rounding_margin(total, sum(p.log_mass.shape[0] for p in coarse), counts)


def _rounding_margin(total: np.ndarray, atoms: int, counts: Sequence[int]) -> np.ndarray:
    """Added to a computed log-MGF so that it stays an upper bound despite rounding:
    each sum of ``n`` exponentials errs by ``(n + 8) u`` relatively, each log and
    the accumulation by a few ulps of the result."""
    return (atoms + 8) * _UNIT_ROUNDOFF * sum(counts) + 8 * _UNIT_ROUNDOFF * np.abs(total)


def _exact_log_mgf_sum(
    pmfs: Sequence[tuple[int, np.ndarray]], counts: Sequence[int], step: float, t: np.ndarray
) -> np.ndarray:
    """``sum_i c_i log M_i(t)`` over all atoms (no coarsening), with its rounding margin."""
    from pld.engine._kernels import log_mgf

    total = np.zeros_like(t)
    margin = np.zeros_like(t)
    for (offset, masses), count in zip(pmfs, counts, strict=True):
        size = masses.shape[0]
        total += count * log_mgf(np.ascontiguousarray(masses, dtype=np.float64), offset, step, t)
        # Relative error of the sum, and ulps of the exponent t * (offset + j) * step.
        span = np.abs(t) * step * (abs(offset) + size)
        margin += count * ((4 * size + 8) * _UNIT_ROUNDOFF + 8 * _UNIT_ROUNDOFF * span)
    return total + margin + 8 * _UNIT_ROUNDOFF * np.abs(total)


def _refined(
    pmfs: Sequence[tuple[int, np.ndarray]],
    counts: Sequence[int],
    step: float,
    t: np.ndarray,
    log_mgf: np.ndarray,
    log_target: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The coarse grid of t plus exact evaluations around its best point."""
    best = t[int(np.argmin((log_mgf - log_target) / np.abs(t)))]
    fine = best * _T_REFINE
    exact = _exact_log_mgf_sum(pmfs, counts, step, fine)
    return np.concatenate((t, fine)), np.concatenate((log_mgf, exact))


def _tail_bound(log_mgf: np.ndarray, t: np.ndarray, threshold: float) -> float:
    """min over t of exp(log M(t) - t * threshold), capped at 1."""
    return float(min(1.0, np.exp(np.min(log_mgf - t * threshold))))


def composition_window(
    pmfs: Sequence[tuple[int, np.ndarray]],
    counts: Sequence[int],
    step: float,
    tail_mass: float,
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

    Returns
    -------
    Window
        ``low``/``high`` grid indices; ``mass_above`` bounds the mass of
        ``S > high * step`` and ``mass_below`` that of ``S < low * step``
        (zero when the window reaches the support's end).
    """
    support_low = sum(c * off for (off, _), c in zip(pmfs, counts, strict=True))
    support_high = sum(c * (off + m.shape[0] - 1) for (off, m), c in zip(pmfs, counts, strict=True))
    coarse = [_coarsen(off, m, step) for off, m in pmfs]
    means = [np.exp(pmf.log_mass - _log_sum_exp_rows(pmf.log_mass[None, :])) for pmf in coarse]
    spread = math.sqrt(
        sum(
            c * float(np.sum(w * (pmf.points_up - np.sum(w * pmf.points_up)) ** 2))
            for pmf, w, c in zip(coarse, means, counts, strict=True)
        )
    )
    scale = 1.0 / max(spread, step)
    t_up = _T_GRID * scale
    t_down = -t_up
    log_target = math.log(tail_mass)
    t_up, log_up = _refined(
        pmfs, counts, step, t_up, _log_mgf_sum(coarse, counts, t_up), log_target
    )
    t_down, log_down = _refined(
        pmfs, counts, step, t_down, _log_mgf_sum(coarse, counts, t_down), log_target
    )
    high_loss = np.min((log_up - log_target) / t_up)
    low_loss = np.max((log_down - log_target) / t_down)
    high = min(support_high, math.ceil(high_loss / step))
    low = max(support_low, math.floor(low_loss / step))
    low = min(low, high)
    mass_above = 0.0 if high >= support_high else _tail_bound(log_up, t_up, (high + 1) * step)
    mass_below = 0.0 if low <= support_low else _tail_bound(log_down, t_down, (low - 1) * step)
    return Window(low, high, mass_above, mass_below)
