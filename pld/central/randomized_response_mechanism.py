"""Binary randomised response: the reference mechanism with an exact composition.

With ``p = e^eps0 / (1 + e^eps0)`` the dominating pair is P = (p, 1 - p),
Q = (1 - p, p); its privacy loss is ``+eps0`` with probability p and ``-eps0``
otherwise, under both P and Q (a symmetric pair). After T rounds the loss is
``eps0 (2K - T)`` with ``K ~ Bin(T, p)``, so delta(eps) is a binomial sum
(tests/central/test_reference_mechanisms.py uses it as the truth).
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.distribution import PLD, from_symmetric_pair, refinable
from pld.engine import DEFAULT_LOSS_GRID_STEP
from pld.numerics import MAX_EPS0

#: A smaller eps0 is computed as this one (it dominates): the default grid step
#: divides eps0 and stays above ``pld.engine.MIN_LOSS_GRID_STEP``.
_SMALLEST_EPS0 = 1e-9


@refinable
def randomized_response(eps0: float, *, loss_grid_step: float | None = None) -> PLD:
    """One round of eps0-randomised response on one bit.

    Parameters
    ----------
    eps0 : float
        Local privacy parameter in nats, in (0, 50].
    loss_grid_step : float, optional
        Grid spacing in nats. By default the largest divisor of eps0 not above
        ``pld.engine.DEFAULT_LOSS_GRID_STEP``, which puts both atoms on the grid
        and makes the bracket exact up to round-off (pass the same step to
        compose with mechanisms on another grid).
    """
    eps0 = validation.in_interval("eps0", eps0, 0.0, MAX_EPS0, low_open=True)
    # Randomised response with a larger eps0 dominates (the smaller one is a
    # post-processing of it: flip its output with the right probability).
    eps0 = max(eps0, _SMALLEST_EPS0)
    if loss_grid_step is None:
        loss_grid_step = eps0 / math.ceil(eps0 / DEFAULT_LOSS_GRID_STEP)
    log_true = -np.logaddexp(0.0, -eps0)
    log_flip = -np.logaddexp(0.0, eps0)
    return from_symmetric_pair(
        [log_true, log_flip],
        [log_flip, log_true],
        loss_grid_step=loss_grid_step,
    )
