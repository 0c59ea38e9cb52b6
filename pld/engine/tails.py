"""Chernoff tail bounds that choose the window of a composition.

For a sum ``S`` of independent privacy losses, Markov's inequality applied to
``exp(t S)`` gives, for every measure (not only probability measures) and every
``t > 0``,

    mass(S >= a) <= exp(sum_i c_i log M_i(t) - t a),   M_i(t) = sum_j m_ij exp(t g_ij),

and the mirror image for ``t < 0`` and the lower tail (Koskela et al. 2021 use
the same bound for the Fourier accountant). The moment generating functions are
evaluated on a coarsened copy of each pmf whose atoms are moved outwards (up for
``t > 0``, down for ``t < 0``), which can only increase ``M_i(t)``: the bound
stays rigorous and costs O(#coarse bins) per ``t``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

_COARSE_BINS = 512
_T_GRID = np.logspace(-5, 5, 81)


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


def _log_mgf_sum(coarse: Sequence[_CoarsePmf], counts: Sequence[int], t: np.ndarray) -> np.ndarray:
    total = np.zeros_like(t)
    for pmf, count in zip(coarse, counts, strict=True):
        points = pmf.points_up if t[0] > 0 else pmf.points_down
        total += count * logsumexp(pmf.log_mass[None, :] + t[:, None] * points[None, :], axis=1)
    return total


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
    means = [np.exp(pmf.log_mass - logsumexp(pmf.log_mass)) for pmf in coarse]
    spread = math.sqrt(
        sum(
            c * float(np.sum(w * (pmf.points_up - np.sum(w * pmf.points_up)) ** 2))
            for pmf, w, c in zip(coarse, means, counts, strict=True)
        )
    )
    scale = 1.0 / max(spread, step)
    t_up = _T_GRID * scale
    t_down = -t_up
    log_up = _log_mgf_sum(coarse, counts, t_up)
    log_down = _log_mgf_sum(coarse, counts, t_down)
    log_target = math.log(tail_mass)
    high_loss = np.min((log_up - log_target) / t_up)
    low_loss = np.max((log_down - log_target) / t_down)
    high = min(support_high, math.ceil(high_loss / step))
    low = max(support_low, math.floor(low_loss / step))
    low = min(low, high)
    mass_above = 0.0 if high >= support_high else _tail_bound(log_up, t_up, (high + 1) * step)
    mass_below = 0.0 if low <= support_low else _tail_bound(log_down, t_down, (low - 1) * step)
    return Window(low, high, mass_above, mass_below)
