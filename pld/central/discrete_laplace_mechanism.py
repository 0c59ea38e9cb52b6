"""The discrete Laplace (two-sided geometric) mechanism: an exact finite pair.

With parameter a > 0 the noise has ``P(k) = tanh(a/2) e^{-a |k|}`` on the
integers (the convention of dp_accounting's ``DiscreteLaplaceDpEvent``,
``noise_parameter = a``); for integer sensitivity Δ the pair is
``P = DLap(0)``, ``Q = DLap(Δ)``, and the privacy loss of an output x is
``a (|x - Δ| - |x|)``:

    L = a Δ             on x <= 0   (P-mass 1 / (1 + e^-a), Q-mass e^{-a Δ} times that),
    L = a (Δ - 2x)      at x = 1 .. Δ-1,
    L = -a Δ            on x >= Δ   (the mirror image).

So the PLD has Δ + 1 atoms, all on the lattice ``a Z``, passed exactly (the two
half-lines merged, which changes nothing: their loss is constant). The pair is
symmetric (x -> Δ - x) and the loss is bounded by ``a Δ``. The truth in
tests/central/test_central_mechanisms.py is the brute-force sum of ``(P(x) - e^eps Q(x))_+``
over the integers.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.distribution import PLD, from_symmetric_pair, refinable
from pld.engine import check_grid_points, choose_loss_grid_step
from pld.numerics import MAX_EPS0


def discrete_laplace_log_pmfs(parameter: float, sensitivity: int) -> tuple[np.ndarray, np.ndarray]:
    """Log P and log Q of the atoms ``x <= 0``, ``x = 1 .. Δ-1``, ``x >= Δ`` (in that order)."""
    a = parameter
    log_norm = math.log(-math.expm1(-a)) - math.log1p(math.exp(-a))  # log tanh(a / 2)
    log_half_line = -math.log1p(math.exp(-a))  # P(x <= 0)
    middle = np.arange(1, sensitivity, dtype=np.float64)
    log_p = np.concatenate(
        [[log_half_line], log_norm - a * middle, [log_half_line - a * sensitivity]]
    )
    return log_p, log_p[::-1].copy()


@refinable
def discrete_laplace(
    parameter: float = 0.5, sensitivity: int = 1, *, loss_grid_step: float | None = None
) -> PLD:
    """One round of the discrete Laplace mechanism ``f(D) + DLap(a)`` (integer-valued f).

    Parameters
    ----------
    parameter : float
        Decay a > 0 of ``P(k) ∝ exp(-a |k|)`` (dp_accounting's ``noise_parameter``);
        ``a * sensitivity`` (the pure-DP epsilon, nats) must be at most 50.
    sensitivity : int
        l1 sensitivity Δ >= 1 of the integer-valued query.
    loss_grid_step : float, optional
        Grid spacing in nats. By default the largest divisor of ``a`` not above
        :func:`pld.engine.choose_loss_grid_step` of the loss's standard
        deviation: every atom is then on the grid and the bracket is exact up
        to round-off (pass the same step to compose with mechanisms on another grid).

    Returns
    -------
    PLD
        One round, ``symmetric=True``, with ``max_loss = a Δ``.
    """
    a = validation.positive("parameter", parameter)
    sensitivity = validation.integer_at_least("sensitivity", sensitivity, 1)
    if a * sensitivity > MAX_EPS0:
        raise ValueError(
            f"parameter * sensitivity must be at most {MAX_EPS0:g} nats "
            f"(got {a * sensitivity!r}); the mechanism is then practically non-private"
        )
    check_grid_points(
        2 * sensitivity, f"sensitivity={sensitivity} (sensitivity + 1 atoms)", "lower sensitivity"
    )
    log_p, log_q = discrete_laplace_log_pmfs(a, sensitivity)
    loss = a * (sensitivity - 2 * np.arange(sensitivity + 1, dtype=np.float64))
    if loss_grid_step is None:
        weights = np.exp(log_p)
        mean = np.average(loss, weights=weights)
        spread = math.sqrt(np.average((loss - mean) ** 2, weights=weights))
        loss_grid_step = a / math.ceil(a / choose_loss_grid_step(spread))
    step = validation.loss_grid_step(loss_grid_step)
    check_grid_points(
        2 * a * sensitivity / step,
        f"a loss range of {2 * a * sensitivity:.3g} nats on the grid of step {step:g} nats",
        "increase loss_grid_step",
    )
    return from_symmetric_pair(
        log_p,
        log_q,
        loss_grid_step=step,
        max_loss=a * sensitivity,
    )
