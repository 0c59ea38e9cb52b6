"""The Laplace mechanism: a central mechanism with a bounded privacy loss.

For scale b and l1 sensitivity Δ the pair is ``P = Lap(0, b)``, ``Q = Lap(Δ, b)``
and, with ``eps0 = Δ / b``, the privacy loss of an output x is

    L(x) = (|x - Δ| - |x|) / b  =  eps0            for x <= 0,
                                =  eps0 - 2 x / b   for 0 < x < Δ,
                                = -eps0             for x >= Δ.

It is symmetric (reflect x -> Δ - x) and bounded by eps0, and
(Balle and Wang 2018; derived here by integrating the two densities)

    delta(eps) = 1 - exp((eps - eps0) / 2)   for |eps| < eps0,
               = (1 - e^eps)_+               otherwise,                         (1)

which tests/central/test_central_mechanisms.py checks against quadrature and uses as
the truth. The outputs in ``(0, Δ)`` whose loss falls in the grid cell
``[k h, (k+1) h)`` form an interval of x; its P- and Q-mass are differences of
exponentials, passed to the engine as one merged atom per cell
(docs/architecture.md, "Merged atoms"). The two half-lines are the atoms at
``+-eps0``. The default grid step divides eps0, so those two heavy atoms sit on
the grid and the bracket stays second order in the step.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.distribution import PLD, from_symmetric_pair, refinable
from pld.engine import check_grid_points, choose_loss_grid_step
from pld.numerics import MAX_EPS0


def laplace_delta(eps: float | np.ndarray, scale: float, sensitivity: float = 1.0) -> np.ndarray:
    """Exact delta(eps) of one round of the Laplace mechanism, eq. (1) of the module docstring.

    Parameters
    ----------
    eps : float or ndarray
        Where to evaluate (nats, any real).
    scale : float
        Laplace scale b > 0 (units of the sensitivity).
    sensitivity : float
        l1 sensitivity Δ > 0.
    """
    eps0 = sensitivity / scale
    eps = np.asarray(eps, dtype=np.float64)
    inside = -np.expm1(np.minimum(eps - eps0, 0.0) / 2)
    outside = np.maximum(-np.expm1(eps), 0.0)
    return np.where(np.abs(eps) < eps0, inside, outside)


def _log_exp_difference(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """log(e^-lower - e^-upper) for 0 <= lower <= upper."""
    with np.errstate(divide="ignore"):
        return -lower + np.log(-np.expm1(lower - upper))


@refinable
def laplace(
    scale: float = 1.0, sensitivity: float = 1.0, *, loss_grid_step: float | None = None
) -> PLD:
    """One round of the Laplace mechanism ``f(D) + Lap(scale)``.

    Parameters
    ----------
    scale : float
        Laplace scale b > 0, in units of the query's output.
    sensitivity : float
        l1 sensitivity Δ > 0 of the query; ``sensitivity / scale`` (the pure-DP
        epsilon, nats) must be at most 50.
    loss_grid_step : float, optional
        Grid spacing in nats. By default the largest divisor of eps0 = Δ/b not
        above :func:`pld.engine.choose_loss_grid_step` of the loss's standard
        deviation, which puts the atoms at ``+-eps0`` on the grid (pass the
        same step to compose with mechanisms on another grid).

    Returns
    -------
    PLD
        One round, ``symmetric=True``, with ``max_loss = eps0``.
    """
    scale = validation.positive("scale", scale)
    sensitivity = validation.positive("sensitivity", sensitivity)
    eps0 = sensitivity / scale
    if eps0 > MAX_EPS0:
        raise ValueError(
            f"sensitivity / scale must be at most {MAX_EPS0:g} nats (got {eps0!r}); "
            "the mechanism is then practically non-private"
        )
    if loss_grid_step is None:
        # Loss std: E[L^2] and E[L] from the two atoms and the linear middle part.
        spread = _loss_std(eps0)
        base = choose_loss_grid_step(spread)
        loss_grid_step = eps0 / math.ceil(eps0 / base)
    step = validation.loss_grid_step(loss_grid_step)
    first, last = math.floor(-eps0 / step), math.floor(eps0 / step)
    check_grid_points(
        last - first + 2,
        f"eps0={eps0:g} on the grid of step {step:g} nats",
        "increase loss_grid_step",
    )
    # Cell k holds losses in [k h, (k+1) h) ∩ (-eps0, eps0); u = x / b = (eps0 - L) / 2.
    edges = np.clip(np.arange(first, last + 2) * step, -eps0, eps0)
    u_low = (eps0 - edges[1:]) / 2
    u_high = (eps0 - edges[:-1]) / 2
    keep = u_high > u_low
    u_low, u_high = u_low[keep], u_high[keep]
    log_half = math.log(0.5)
    log_p = log_half + _log_exp_difference(u_low, u_high)
    log_q = log_half + _log_exp_difference(eps0 - u_high, eps0 - u_low)
    atoms_p = [log_half, log_half - eps0]  # x <= 0 (loss eps0), x >= Δ (loss -eps0)
    atoms_q = [log_half - eps0, log_half]
    return from_symmetric_pair(
        np.concatenate([atoms_p, log_p]),
        np.concatenate([atoms_q, log_q]),
        loss_grid_step=step,
        max_loss=eps0,
    )


def _loss_std(eps0: float) -> float:
    """Standard deviation (nats) of the Laplace privacy loss under P."""
    # Under P: L = eps0 w.p. 1/2, -eps0 w.p. e^-eps0 / 2, and L = eps0 - 2u with
    # density e^-u / 2 for u in (0, eps0).
    u = np.linspace(0.0, eps0, 2049)
    density = np.exp(-u) / 2
    loss = eps0 - 2 * u
    weights = np.full(u.size, eps0 / (u.size - 1))
    weights[[0, -1]] /= 2
    mass = density * weights
    values = np.concatenate([[eps0, -eps0], loss])
    masses = np.concatenate([[0.5, math.exp(-eps0) / 2], mass])
    mean = np.average(values, weights=masses)
    return float(math.sqrt(np.average((values - mean) ** 2, weights=masses)))
