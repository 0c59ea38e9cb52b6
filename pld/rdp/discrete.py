"""Rényi DP of a discrete privacy-loss distribution from the engine (e.g. the clones pair).

For one direction with P-mass ``mass[i]`` at privacy loss ``loss[i] = log(P/Q)`` the
Rényi divergence of order ``lam`` is

    D_lam(P || Q) = 1/(lam - 1) log E_P[exp((lam - 1) L)]
                  = 1/(lam - 1) log sum_i mass[i] exp((lam - 1) loss[i])

(``E_Q[(P/Q)^lam] = E_P[(P/Q)^(lam-1)]``); Q-mass where P is zero adds nothing. The
RDP of the pair is the larger of its two directions.

The upper atoms of a one-round PLD form a dominating pair (docs/architecture.md).
Domination in every hockey-stick divergence implies domination in every
f-divergence with convex ``f`` (an f-divergence is a mixture of hockey-stick
divergences weighted by ``f''``), and ``E_Q[(P/Q)^lam]`` is the f-divergence of
``f(x) = x^lam``; so the RDP of the upper atoms is an upper bound on the
mechanism's RDP.

``infinity_mass`` is P-mass the engine could not place on the grid (truncated tails
and a tiny underflow charge): its loss is unknown, so by default it makes the RDP
``+inf``. If the mechanism's privacy loss is known to be at most ``infinity_loss``
(e.g. ``eps0`` for randomised response), pass it and the mass is charged there.

Mechanisms with an unbounded loss (Gaussian, subsampled Gaussian, discrete
Gaussian) attach instead, per direction, an upper bound on the truncated mass's
moment ``E_P[exp((lam - 1) L) ; truncated]``
(:class:`pld.distribution.loss_distribution.TailMoments`).
The pair made of the split atoms of the kept outcomes and the exact truncated
outcomes dominates the mechanism (merging the split atoms gives it back), and
the moment of the truncated part is added exactly, so the sum of the atoms'
moments and that bound bounds the mechanism's Rényi moment. It is used when it
covers all of ``infinity_mass`` (up to a relative 1e-9); any excess is charged
as above.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

from pld.rdp.orders import real_orders
from pld.validation import finite_real


def from_pld(loss: Any, orders: object, *, infinity_loss: float = math.inf) -> np.ndarray:
    """RDP of the dominating pair of a one-round PLD, maximised over its two directions.

    Uses only the engine's public contract ``loss.atoms("upper")``.

    Parameters
    ----------
    loss : pld.PLD
        A one-round privacy-loss distribution (before composition: composed atoms
        are not a dominating pair of the composition's RDP in the same sense, and RDP
        composes by addition anyway).
    orders : array_like
        Rényi orders ``lam > 1`` (any reals).
    infinity_loss : float
        Privacy loss (nats) at which the atoms' ``infinity_mass`` is charged;
        ``+inf`` (default) returns ``+inf`` whenever that mass is positive.

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order (``+inf`` where unbounded).
    """
    lams = real_orders(orders)
    if not (isinstance(infinity_loss, float) and math.isinf(infinity_loss)):
        infinity_loss = finite_real("infinity_loss", infinity_loss)
    directions = loss.atoms("upper")
    tails = getattr(loss, "tail_moments", ())
    result = np.full(lams.shape, -np.inf)
    for index, atoms in enumerate(directions):
        losses = np.asarray(atoms.loss, dtype=np.float64)
        masses = np.asarray(atoms.mass, dtype=np.float64)
        keep = masses > 0
        log_mass = np.log(masses[keep])
        exponents = np.outer(lams - 1.0, losses[keep]) + log_mass[None, :]
        remaining = atoms.infinity_mass
        tail = tails[index] if index < len(tails) else None
        if remaining > 0 and tail is not None and remaining <= tail.mass * (1 + 1e-9):
            log_tail = np.asarray(tail.log_moment(lams - 1.0), dtype=np.float64)
            exponents = np.column_stack([exponents, log_tail])
            remaining = 0.0
        if remaining > 0:
            if math.isinf(infinity_loss):
                return np.full(lams.shape, np.inf)
            extra = (lams - 1.0) * infinity_loss + math.log(remaining)
            exponents = np.column_stack([exponents, extra])
        log_moment = logsumexp(exponents, axis=1) if exponents.shape[1] else np.zeros(lams.shape)
        result = np.maximum(result, np.maximum(log_moment, 0.0) / (lams - 1.0))
    return result
