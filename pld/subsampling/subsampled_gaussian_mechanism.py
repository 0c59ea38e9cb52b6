"""The Poisson-subsampled Gaussian mechanism (DP-SGD's accounting workload).

Each record is used with probability q and the sum gets N(0, σ²) noise, with
sensitivity 1. Under add/remove adjacency the pair
``P = (1 - q) N(0, σ²) + q N(1, σ²)``, ``Q = N(0, σ²)`` dominates both the
removal (loss of P/Q under P) and, read the other way, the addition (loss of Q/P
under Q) of a record (Zhu, Dong and Wang 2022, Thm 11), so the PLD keeps both
directions. It is the workload on which the peer accountants are compared
(shared/notes/measurements.md: δ(1) = 0.0026124 after 1000 steps at σ = 1,
q = 0.01).

The privacy loss ``l(x) = log(1 - q + q exp((2x - 1) / (2σ²)))`` is increasing in
the output x, so the outputs whose loss falls in the grid cell ``[k h, (k+1) h)``
form the interval ``[x(k h), x((k+1) h))`` with
``x(l) = σ² log((e^l - 1 + q) / q) + 1/2``; its P- and Q-mass are differences of
normal CDFs, passed to the engine as one merged atom per cell
(docs/architecture.md, "Merged atoms").
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtri

from pld import validation
from pld.central import WORK_PER_CELL, gaussian, log_normal_cell_masses
from pld.distribution import PLD, TailMoments, from_pmfs, refinable
from pld.engine import DEFAULT_LOSS_GRID_STEP, check_grid_points, choose_loss_grid_step

#: Mass of each distribution above the last cell (charged to +inf).
_TRUNCATION = 1e-20

#: Larger noise is computed as this one: the mechanism with noise σ' > σ is a
#: post-processing of the one with σ (add N(0, σ'² - σ²) to the output), so the
#: pair at σ dominates, and its loss (below 1e-200 nats) is far inside the
#: engine's float placement error.
_LARGEST_SIGMA = 1e100


def _output_at_loss(loss: np.ndarray, sigma: float, rate: float) -> np.ndarray:
    """Inverse of the loss function: the output x with l(x) = loss (-inf below log(1-q))."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        excess = np.expm1(loss) + rate
        return np.where(excess > 0, sigma**2 * np.log(excess / rate) + 0.5, -np.inf)


@refinable
def subsampled_gaussian(sigma: float, rate: float, *, loss_grid_step: float | None = None) -> PLD:
    """One step of the Poisson-subsampled Gaussian mechanism, both directions.

    Parameters
    ----------
    sigma : float
        Noise standard deviation in units of the sensitivity, > 0.
    rate : float
        Sampling probability q, in (0, 1]; at q = 1 this is ``pld.gaussian(sigma)``
        (one symmetric direction).
    loss_grid_step : float, optional
        Grid spacing in nats (default: ``pld.engine.choose_loss_grid_step`` of
        the one-step loss's standard deviation, from a first pass on the
        coarsest default grid).
    """
    sigma = validation.positive("sigma", sigma)
    rate = validation.in_interval("rate", rate, 0.0, 1.0, low_open=True)
    if rate == 1.0:
        return gaussian(sigma, loss_grid_step=loss_grid_step)
    sigma = min(sigma, _LARGEST_SIGMA)
    if loss_grid_step is None:
        log_p, log_q, _, _ = _cells(sigma, rate, DEFAULT_LOSS_GRID_STEP)
        both = np.isfinite(log_p) & np.isfinite(log_q)
        loss, weight = log_p[both] - log_q[both], np.exp(log_p[both])
        mean = np.average(loss, weights=weight)
        spread = math.sqrt(np.average((loss - mean) ** 2, weights=weight))
        loss_grid_step = choose_loss_grid_step(spread)
    step = validation.loss_grid_step(loss_grid_step)
    log_p, log_q, tail_p, tail_q = _cells(sigma, rate, step)
    loss = from_pmfs(
        log_p,
        log_q,
        loss_grid_step=step,
        truncated_mass_p=tail_p,
        truncated_mass_q=tail_q,
    )
    top = 1.0 - sigma * float(ndtri(_TRUNCATION))
    return loss.with_tail_moments(
        TailMoments(tail_p, _removal_tail(sigma, rate, top)),
        TailMoments(tail_q, lambda t: np.full(np.shape(t), math.log(tail_q))),
    )


def _removal_tail(sigma: float, rate: float, top: float):
    """``t -> `` a bound on ``log E_P[exp(t L) ; x > top]`` (the truncated outputs).

    With ``lam = 1 + t`` the moment is ``∫_top phi_σ(x) (a + b(x))^lam dx``,
    ``a = 1 - q``, ``b(x) = q exp((2x - 1) / (2σ^2))``, and
    ``∫_top phi_σ b^lam = q^lam exp((lam^2 - lam) / (2σ^2)) Phi((lam - top) / σ)``.
    Two bounds on ``(a + b)^lam``, the smaller taken: ``2^(lam-1) (a^lam + b^lam)``
    and ``(1 + a / b(top))^lam b^lam`` (b increases with x). On the addition
    side (Q/P under Q) the loss is negative above ``x = 1/2``, so the moment
    is at most the truncated Q-mass.
    """
    log_rest = math.log1p(-rate) if rate < 1 else -math.inf
    log_ratio = log_rest - math.log(rate) - (2 * top - 1) / (2 * sigma**2)

    def log_moment(t: np.ndarray) -> np.ndarray:
        lam = 1.0 + np.asarray(t, dtype=np.float64)
        log_b = lam * math.log(rate) + (lam * lam - lam) / (2 * sigma**2)
        log_b = log_b + log_ndtr((lam - top) / sigma)
        log_a = lam * log_rest + float(log_ndtr(-top / sigma)) if rate < 1 else -np.inf
        split = (lam - 1) * math.log(2.0) + np.logaddexp(log_a, log_b)
        dominant = lam * np.log1p(math.exp(log_ratio)) + log_b
        return np.minimum(split, dominant)

    return log_moment


def _cells(sigma: float, rate: float, step: float):
    """Log P- and Q-mass of the outputs in each loss cell, and the masses above the last."""
    top_output = 1.0 - sigma * float(ndtri(_TRUNCATION))
    # l(top) = log(1 - q + q e^x) = x + log(q + (1 - q) e^-x) without overflow for large x.
    exponent = (2 * top_output - 1) / (2 * sigma) / sigma
    if exponent > 0:
        top_loss = exponent + math.log(rate + (1 - rate) * math.exp(-exponent))
    else:
        top_loss = math.log1p(rate * math.expm1(exponent))
    check_grid_points(
        WORK_PER_CELL * ((top_loss - math.log1p(-rate)) / step + 2),
        f"subsampled_gaussian(sigma={sigma:g}, rate={rate:g}) on the grid of step {step:g} nats",
        "increase sigma or loss_grid_step",
    )
    first = math.floor(math.log1p(-rate) / step)
    last = math.floor(top_loss / step)
    edges = _output_at_loss(np.arange(first, last + 2) * step, sigma, rate)
    edges[-1] = top_output
    bounds = edges / sigma
    log_q = log_normal_cell_masses(bounds)
    shifted = log_normal_cell_masses(bounds - 1 / sigma)
    log_p = np.logaddexp(math.log1p(-rate) + log_q, math.log(rate) + shifted)
    tail_q = math.exp(log_ndtr(-top_output / sigma))
    tail_p = (1 - rate) * tail_q + rate * math.exp(log_ndtr(-(top_output - 1) / sigma))
    return log_p, log_q, tail_p, tail_q
