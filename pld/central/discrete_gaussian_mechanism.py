"""The discrete Gaussian mechanism (Canonne, Kamath and Steinke 2020) by exact summation.

The noise has ``P(x) = exp(-x^2 / (2 σ^2)) / Z`` on the integers,
``Z = sum_x exp(-x^2 / (2 σ^2))``; for integer sensitivity Δ the pair is
``P = N_Z(0, σ^2)``, ``Q = N_Z(Δ, σ^2)`` (the same Z, since Δ is an integer), with
privacy loss ``L(x) = (Δ^2 - 2 Δ x) / (2 σ^2)`` on the lattice ``Δ/(2σ^2) Z``.

Symmetry: the Q/P loss at y under Q, with ``y = Δ - x`` and x ~ P (P is even,
so y ~ Q), is ``(y^2 - (y - Δ)^2) / (2 σ^2) = L(x)``: the two directions have
the same law for every integer Δ (checked numerically by building both
directions in tests/central/test_central_mechanisms.py).

The outputs ``|x| <= X`` (X = σ · ``_REACH`` + Δ) are enumerated and their
masses divided by the enumerated sum, a lower bound on Z within a relative
1e-20 (inside the engine's assumed mass accuracy); the mass outside, bounded by
``2 σ sqrt(2π) Φ(-X/σ) / Z`` (the sum over ``|x| > X`` is at most the integral
of the decreasing tail), is handed to the engine as truncated mass and charged
to +inf; a bound on its Rényi moments is attached, so ``PLD.rdp``
is finite.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, logsumexp

from pld import validation
from pld.distribution import PLD, TailMoments, from_symmetric_pair, refinable
from pld.engine import BudgetError, choose_loss_grid_step

#: Enumerate outputs up to this many standard deviations (mass beyond < 1e-20).
_REACH = 9.6

#: Most outputs enumerated; a larger σ is refused.
MAX_OUTPUTS = 2**24

#: Smallest σ accepted: below it σ² underflows (and the losses, ~Δ/(2σ²) nats, exceed
#: any grid long before: σ = 1e-10 is already refused by the grid budget).
SMALLEST_SIGMA = 1e-100


def discrete_gaussian_log_pmfs(
    sigma: float, sensitivity: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outputs x, and log P(x), log Q(x) for ``|x| <= X``, normalised by the enumerated sum.

    Each mass is at least its true value and at most ``1 + 1e-20`` times it
    (the enumerated sum misses at most ``1e-20`` of Z), well inside the engine's
    assumed relative mass accuracy.
    """
    outputs = 2.0 * (_REACH * sigma + sensitivity) + 1.0
    if outputs > MAX_OUTPUTS:
        raise BudgetError(
            f"sigma={sigma:g} needs about {outputs:.3g} outputs (limit {MAX_OUTPUTS}); "
            "for sigma this large use pld.gaussian, whose pair is practically the same",
            estimate=outputs,
            budget=MAX_OUTPUTS,
        )
    reach = math.ceil(_REACH * sigma) + sensitivity
    x = np.arange(-reach, reach + 1, dtype=np.float64)
    log_z = float(logsumexp(-(x**2) / (2 * sigma**2)))
    log_p = -(x**2) / (2 * sigma**2) - log_z
    log_q = -((x - sensitivity) ** 2) / (2 * sigma**2) - log_z
    return x, log_p, log_q


def _truncated_masses(sigma: float, sensitivity: int, reach: int) -> tuple[float, float, float]:
    """log Z_enum, and bounds on the P- and Q-mass outside ``[-reach, reach]``.

    ``sum_{|y| > X} exp(-y^2 / (2σ^2)) <= 2 σ sqrt(2π) Phi(-X/σ)`` (each tail is
    at most the integral of the decreasing function beyond X); Q's outside
    mass also holds the points ``y = x - Δ`` in ``(X - Δ, X]``.
    """
    y = np.arange(-reach, reach + 1, dtype=np.float64)
    log_z = float(logsumexp(-(y**2) / (2 * sigma**2)))
    log_tail = math.log(2 * sigma * math.sqrt(2 * math.pi)) + float(log_ndtr(-reach / sigma))
    edge = np.arange(reach - sensitivity + 1, reach + 1, dtype=np.float64)
    log_edge = float(logsumexp(-(edge**2) / (2 * sigma**2)))
    missing_p = math.exp(log_tail - log_z)
    missing_q = math.exp(float(np.logaddexp(log_tail, log_edge)) - log_z)
    return log_z, missing_p, missing_q


@refinable
def discrete_gaussian(
    sigma: float = 2.0, sensitivity: int = 1, *, loss_grid_step: float | None = None
) -> PLD:
    """One round of the discrete Gaussian mechanism ``f(D) + N_Z(0, σ^2)`` (integer f).

    Parameters
    ----------
    sigma : float
        Scale σ of the discrete Gaussian (integer units), at least ``SMALLEST_SIGMA``, at most about
        ``MAX_OUTPUTS / 19``.
    sensitivity : int
        l1 (= l2 in one dimension) sensitivity Δ >= 1 of the integer-valued query.
    loss_grid_step : float, optional
        Grid spacing in nats. By default the loss lattice spacing
        ``g = Δ / (2σ^2)`` divided by the smallest integer that brings it
        below :func:`pld.engine.choose_loss_grid_step` of the loss's standard
        deviation Δ/σ (every atom on the grid), or that default itself when
        the lattice is already finer.

    Returns
    -------
    PLD
        One round, ``symmetric=True``.
    """
    sigma = validation.in_interval("sigma", sigma, SMALLEST_SIGMA, math.inf)
    sensitivity = validation.integer_at_least("sensitivity", sensitivity, 1)
    x, log_p, log_q = discrete_gaussian_log_pmfs(sigma, sensitivity)
    if loss_grid_step is None:
        base = choose_loss_grid_step(sensitivity / sigma)
        lattice = sensitivity / (2 * sigma**2)
        loss_grid_step = lattice / math.ceil(lattice / base) if lattice >= base else base
    step = validation.loss_grid_step(loss_grid_step)
    reach = int(x[-1])
    log_z, missing_p, missing_q = _truncated_masses(sigma, sensitivity, reach)
    loss = from_symmetric_pair(
        log_p,
        log_q,
        loss_grid_step=step,
        truncated_mass_p=missing_p,
        truncated_mass_q=missing_q,
    )
    return loss.with_tail_moments(
        TailMoments(missing_p, _tail_log_moment(sigma, sensitivity, reach, log_z, missing_p))
    )


def _tail_log_moment(sigma: float, sensitivity: int, reach: int, log_z: float, mass: float):
    """``t -> `` a bound on ``log E_P[exp(t L) ; |x| > reach]``, L = (Δ^2 - 2Δx) / (2σ^2).

    Above the reach the loss is negative, so those outputs add at most their
    P-mass (``mass`` bounds it). Below, completing the square,
    ``P(x) e^{tL} = e^{t(1+t) Δ^2 / (2σ^2)} exp(-(x + tΔ)^2 / (2σ^2)) / Z``; the
    points ``y = -x - tΔ >= y0 = reach + 1 - tΔ`` are spaced by 1 and the
    function is decreasing for ``y >= 0``, so their sum is at most
    ``f(y0) + σ sqrt(2π) Phi(-y0/σ)`` (``y0 >= 0``), and at most
    ``1 + σ sqrt(2π)`` in any case; ``Z`` is at least the enumerated sum.
    """
    log_width = math.log(sigma * math.sqrt(2 * math.pi))

    def log_moment(t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        y0 = reach + 1 - t * sensitivity
        near = np.logaddexp(-(y0**2) / (2 * sigma**2), log_width + log_ndtr(-y0 / sigma))
        whole = np.log1p(sigma * math.sqrt(2 * math.pi))
        log_sum = np.where(y0 >= 0, np.minimum(near, whole), whole)
        below = t * (1 + t) * sensitivity**2 / (2 * sigma**2) + log_sum - log_z
        return np.logaddexp(below, math.log(mass) if mass > 0 else -np.inf)

    return log_moment
