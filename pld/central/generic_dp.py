"""Generic pure eps-DP and (eps, delta)-DP mechanisms: their worst-case pairs.

Every (eps, delta)-DP mechanism is a post-processing of the four-outcome pair
(Kairouz, Oh and Viswanath 2015, Thm 2.1; Murtagh and Vadhan 2016)

    P = (delta, (1 - delta) e^eps / (1 + e^eps), (1 - delta) / (1 + e^eps), 0),
    Q = (0,     (1 - delta) / (1 + e^eps), (1 - delta) e^eps / (1 + e^eps), delta),

so it is a dominating pair for both orders of neighbours (it is symmetric under
swapping the outcomes), and with delta = 0 it is eps-randomised response. Its
delta curve is ``delta + (1 - delta) H_RR(eps')`` with ``H_RR`` the curve of
eps-randomised response: ``H_RR(eps') = (e^eps - e^eps') / (1 + e^eps)`` for
``|eps'| <= eps`` (tests/central/test_central_mechanisms.py).
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.distribution import PLD, from_symmetric_pair, refinable
from pld.engine import DEFAULT_LOSS_GRID_STEP
from pld.numerics import MAX_EPS0


def generic_dp_delta(eps_query: float | np.ndarray, eps: float, delta: float) -> np.ndarray:
    """Exact delta(eps_query) of one round of the generic (eps, delta) pair (any real eps_query)."""
    eps_query = np.asarray(eps_query, dtype=np.float64)
    with np.errstate(over="ignore"):
        inside = (math.exp(eps) - np.exp(eps_query)) / (1 + math.exp(eps))
    rr = np.where(eps_query >= eps, 0.0, np.where(eps_query <= -eps, -np.expm1(eps_query), inside))
    return delta + (1 - delta) * rr


@refinable
def approximate_dp(
    eps: float = 1.0, delta: float = 1e-6, *, loss_grid_step: float | None = None
) -> PLD:
    """The worst case of all (eps, delta)-DP mechanisms (one round).

    Parameters
    ----------
    eps : float
        Epsilon in nats, in [0, 50].
    delta : float
        Delta in [0, 1): the P-mass at loss +inf.
    loss_grid_step : float, optional
        Grid spacing in nats; by default the largest divisor of eps not above
        ``pld.engine.DEFAULT_LOSS_GRID_STEP`` (both finite atoms on the grid, an
        exact bracket).

    Returns
    -------
    PLD
        One round, ``symmetric=True``.
    """
    eps = validation.in_interval("eps", eps, 0.0, MAX_EPS0)
    delta = validation.in_interval("delta", delta, 0.0, 1.0, high_open=True)
    if loss_grid_step is None:
        loss_grid_step = (
            eps / math.ceil(eps / DEFAULT_LOSS_GRID_STEP) if eps > 0 else DEFAULT_LOSS_GRID_STEP
        )
    step = validation.loss_grid_step(loss_grid_step)
    log_rest = math.log1p(-delta)
    log_delta = math.log(delta) if delta > 0 else -math.inf
    log_true = log_rest - float(np.logaddexp(0.0, -eps))
    log_flip = log_rest - float(np.logaddexp(0.0, eps))
    log_p = [log_delta, log_true, log_flip, -math.inf]
    log_q = [-math.inf, log_flip, log_true, log_delta]
    return from_symmetric_pair(log_p, log_q, loss_grid_step=step)


@refinable
def pure_dp(eps: float = 1.0, *, loss_grid_step: float | None = None) -> PLD:
    """The worst case of all pure eps-DP mechanisms: eps-randomised response (one round).

    Parameters
    ----------
    eps : float
        Epsilon in nats, in [0, 50].
    loss_grid_step : float, optional
        As for :func:`approximate_dp`.
    """
    return approximate_dp(eps, 0.0, loss_grid_step=loss_grid_step)
