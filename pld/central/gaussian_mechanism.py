"""The Gaussian mechanism: the continuous reference with an analytic delta.

For sensitivity Δ and noise σ the privacy loss is ``L ~ N(mu, 2 mu)`` under P
with ``mu = Δ² / (2σ²)``, and the pair is symmetric. The pmf handed to the
engine merges, per grid cell ``[k h, (k+1) h)``, the exact P- and Q-mass of the
loss falling in the cell (differences of the normal CDF, in log space), which
the engine splits exactly as it would split the continuum (docs/architecture.md,
"Merged atoms"). The Rényi moments of the truncated tails are attached in closed
form, so ``PLD.rdp`` is finite. The analytic delta(eps) of Balle and Wang (2018), Thm 8, for T
rounds, with σ/√T, is the truth in tests/central/test_reference_mechanisms.py.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtri

from pld import validation
from pld.distribution import PLD, TailMoments, from_symmetric_pair, refinable
from pld.engine import check_grid_points, choose_loss_grid_step

#: Default P-mass of the loss left outside the grid per round, both tails (charged to +inf).
_TRUNCATION = 1e-20

#: Grid points of the work budget charged per cell: a cell costs four normal
#: log-CDFs and its discretisation, about 0.75 us on the shared reference machine,
#: several times a grid point of a composition.
WORK_PER_CELL = 8

#: A smaller ratio Δ/σ is computed as this one: the pair N(0, 1), N(a, 1) for
#: a < a' is a post-processing of the pair for a' (x -> (a/a') x + N(0, 1 - (a/a')²)),
#: so the larger ratio dominates; its loss (below 1e-99 nats) is far inside the
#: engine's float placement error, and Δ²/(2σ²) does not underflow.
_SMALLEST_RATIO = 1e-100


def log_normal_interval_mass(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """log(Phi(upper) - Phi(lower)) for standard-normal bounds, accurate in both tails."""
    upper_side = lower > 0
    log_big = np.where(upper_side, log_ndtr(-lower), log_ndtr(upper))
    log_small = np.where(upper_side, log_ndtr(-upper), log_ndtr(lower))
    return _log_difference(log_big, log_small)


def _log_difference(log_big: np.ndarray, log_small: np.ndarray) -> np.ndarray:
    """``log(e^big - e^small)`` for ``small <= big`` (``-inf`` where ``big`` is)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        result = log_big + np.log1p(-np.exp(log_small - log_big))
    return np.where(log_big == -np.inf, -np.inf, result)


def log_normal_cell_masses(edges: np.ndarray) -> np.ndarray:
    """``log(Phi(e_(i+1)) - Phi(e_i))`` for non-decreasing standard-normal bounds ``e``.

    The floats of ``log_normal_interval_mass(edges[:-1], edges[1:])`` (each cell's
    terms are the same normal log-CDFs of the same bounds), with one log-CDF per
    edge instead of four per cell: the cells below 0 take ``log Phi(e)`` of their
    edges, those above ``log Phi(-e)``. Unsorted edges take the general route.
    """
    edges = np.asarray(edges, dtype=np.float64)
    if edges.shape[0] < 2 or not np.all(edges[1:] >= edges[:-1]):
        return log_normal_interval_mass(edges[:-1], edges[1:])
    # Cells whose lower bound is above 0 (a suffix of them) use the upper tail.
    split = int(np.searchsorted(edges[:-1], 0.0, side="right"))
    below = log_ndtr(edges[: split + 1])
    above = log_ndtr(-edges[split:])
    log_big = np.concatenate((below[1:], above[:-1]))
    log_small = np.concatenate((below[:-1], above[1:]))
    return _log_difference(log_big, log_small)


def gaussian_delta(eps: float | np.ndarray, sigma: float, sensitivity: float = 1.0) -> np.ndarray:
    """Exact delta(eps) of the Gaussian mechanism (Balle and Wang 2018, Thm 8).

    ``delta = Phi(-eps/a + a/2) - e^eps Phi(-eps/a - a/2)`` with ``a = Δ/σ``,
    evaluated in log space. For T rounds pass ``sigma / sqrt(T)``.
    """
    a = sensitivity / sigma
    eps = np.asarray(eps, dtype=np.float64)
    log_first = log_ndtr(-eps / a + a / 2)
    log_second = eps + log_ndtr(-eps / a - a / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.exp(log_first) * -np.expm1(np.minimum(log_second - log_first, 0.0))
    return np.where(log_first == -np.inf, 0.0, value)


@refinable
def gaussian(
    sigma: float,
    *,
    sensitivity: float = 1.0,
    tail_mass: float = _TRUNCATION,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of the Gaussian mechanism N(0, σ²) with the given l2 sensitivity.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0 (same units as the sensitivity).
    sensitivity : float
        l2 sensitivity Δ > 0.
    tail_mass : float
        P-mass of the loss left outside the grid (both tails), in (0, 1e-3]; charged
        to +inf (queries lower it to the budget of the delta asked).
    loss_grid_step : float, optional
        Grid spacing in nats (default: ``pld.engine.choose_loss_grid_step`` of
        the loss's standard deviation Δ/σ).
    """
    sigma = validation.positive("sigma", sigma)
    sensitivity = validation.positive("sensitivity", sensitivity)
    tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    ratio = max(sensitivity / sigma, _SMALLEST_RATIO)
    mu = ratio * ratio / 2
    spread = ratio
    step = choose_loss_grid_step(spread) if loss_grid_step is None else loss_grid_step
    step = validation.in_interval("loss_grid_step", step, 0.0, 1.0, low_open=True)
    reach = -float(ndtri(tail_mass / 2))
    check_grid_points(
        WORK_PER_CELL * (2 * reach * spread / step + 2),
        f"gaussian(sigma={sigma:g}, sensitivity={sensitivity:g}) on the grid of step {step:g} nats",
        "increase sigma or loss_grid_step",
    )
    first = math.floor((mu - reach * spread) / step)
    last = math.floor((mu + reach * spread) / step)
    edges = np.arange(first, last + 2) * step
    log_p = log_normal_cell_masses((edges - mu) / spread)
    log_q = log_normal_cell_masses((edges + mu) / spread)
    outside_p = math.exp(log_ndtr(-(edges[-1] - mu) / spread)) + math.exp(
        log_ndtr((edges[0] - mu) / spread)
    )
    outside_q = math.exp(log_ndtr(-(edges[-1] + mu) / spread)) + math.exp(
        log_ndtr((edges[0] + mu) / spread)
    )
    loss = from_symmetric_pair(
        log_p,
        log_q,
        loss_grid_step=step,
        truncated_mass_p=outside_p,
        truncated_mass_q=outside_q,
    )
    return loss.with_tail_moments(
        TailMoments(outside_p, _tail_log_moment(mu, float(edges[0]), float(edges[-1])))
    )


def _tail_log_moment(mu: float, low: float, high: float):
    """``t -> log E[exp(t L) ; L < low or L > high]`` for ``L ~ N(mu, 2 mu)`` (exact).

    ``E[e^{tL} ; L > a] = e^{t mu + t^2 mu} Phi((mu + 2 mu t - a) / sqrt(2 mu))`` (the
    tilted normal), and the same with ``Phi((b - mu - 2 mu t) / sqrt(2 mu))`` below b.
    """
    spread = math.sqrt(2 * mu)

    def log_moment(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        centre = mu + 2 * mu * t
        above = log_ndtr((centre - high) / spread)
        below = log_ndtr((low - centre) / spread)
        return t * mu + t * t * mu + np.logaddexp(above, below)

    return log_moment
