"""One round's dominating and dominated pairs, as laws of the likelihood ratio under Q.

Upper: the first direction's upper atoms of the mechanism's PLD (P-mass
``p_i`` at loss ``l_i``, Q-mass ``p_i e^{-l_i}``, P-mass ``p_inf`` where Q is 0,
the rest of Q where P is 0) are a pair that dominates the mechanism's pair at
every ``alpha >= 0`` (docs/architecture.md, "The contract"): the engine's
split and truncations each dominate. Each loss is raised by the atoms'
``loss_error`` (Q lowered, P kept: dominating again). Masses adding up to more
than 1 (a symmetric PLD keeps the pointwise maximum of both directions' pmfs)
are scaled down by their total S and ``1 - 1/S`` goes to the fully revealing
pair: ``H/S + 1 - 1/S >= H``.

Lower: the lower atoms are a pair below the true one at every ``alpha``
(merges, and moves to a lower loss that keep Q and drop P), not a genuine pair
(P sums to less than 1); random allocation's addition direction is not
monotone under dropping P. So their hockey-stick curve (and, for a PLD with
two directions, the second direction's through ``H_a(P||Q) = a H_{1/a}(Q||P) +
1 - a``), a lower bound on the true curve at every ``alpha``, is turned into a
genuine pair whose curve lies below every profile in the bracket
(:func:`pld.distribution.below_every_profile`, then the connect-the-dots pair
of its hull): by Blackwell's theorem a post-processing of the true pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pld.allocation.sums import RatioLaw
from pld.distribution import PLD, LossAtoms, below_every_profile, pair_from_hull, profile_hull
from pld.numerics import UNIT_ROUNDOFF

#: Losses above this (nats) are treated as +inf (upper: P moved to +inf; lower:
#: dropped), so that sums of ``e^loss`` stay finite.
LARGEST_LOSS = 500.0


@dataclass(frozen=True)
class OneRound:
    """A pair as the law of ``X = dP/dQ`` under Q plus the P-mass where Q is 0."""

    law: RatioLaw
    p_infinity: float


def upper_round(mechanism: PLD) -> OneRound:
    """The dominating pair of the first direction's upper atoms."""
    atoms = mechanism.atoms("upper")[0]
    loss = atoms.loss + atoms.loss_error
    mass = atoms.mass
    big = loss > LARGEST_LOSS
    p_infinity = float(atoms.infinity_mass + mass[big].sum())
    loss, mass = loss[~big], mass[~big]
    q_mass = np.exp(np.log(mass) - loss)
    # A pair declared symmetric keeps the pointwise maximum of both directions'
    # pmfs, whose masses may add up to more than 1 (by at most the symmetry
    # tolerance). Scaling by 1/S and adding 1 - 1/S to the fully revealing pair
    # gives a genuine pair with H' = H/S + 1 - 1/S >= H >= the true curve.
    total = max(math.fsum(mass.tolist()) + p_infinity, math.fsum(q_mass.tolist()))
    if total > 1:
        mass, q_mass = mass / total, q_mass / total
        p_infinity = p_infinity / total + (1 - 1 / total)
    rest = max(0.0, 1.0 - math.fsum(q_mass.tolist()))
    if rest <= (atoms.mass_error + 8 * q_mass.size * UNIT_ROUNDOFF) * (1 - rest):
        # Float noise of the masses, not an atom where P is 0: leaving it out is
        # charged to the fully revealing pair (the Q-shortfall at the end).
        rest = 0.0
    values = np.concatenate(([0.0], np.exp(loss)))
    masses = np.concatenate(([rest], q_mass))
    keep = masses > 0
    law = RatioLaw(
        values[keep], masses[keep], 1, atoms.mass_error + 4 * UNIT_ROUNDOFF, 2 * UNIT_ROUNDOFF
    )
    return OneRound(law, min(p_infinity, 1.0))


def _curve(atoms: LossAtoms, eps: np.ndarray, side: str) -> np.ndarray:
    """``H(e^eps) = p_inf + sum over loss > eps of (p - e^eps q)``, widened by the atoms' errors."""
    shift = atoms.loss_error if side == "lower" else -atoms.loss_error
    order = np.argsort(atoms.loss, kind="stable")
    loss = atoms.loss[order].astype(np.longdouble)
    p = atoms.mass[order].astype(np.longdouble)
    q = p * np.exp(-loss)
    suffix_p = np.concatenate((np.cumsum(p[::-1])[::-1], [0]))
    suffix_q = np.concatenate((np.cumsum(q[::-1])[::-1], [0]))
    at = eps.astype(np.longdouble) + shift
    index = np.searchsorted(loss, at, side="right")
    values = atoms.infinity_mass + suffix_p[index] - np.exp(at) * suffix_q[index]
    factor = 1 - atoms.mass_error if side == "lower" else 1 + atoms.mass_error
    return np.clip(values * factor, 0, 1)


def _profile(mechanism: PLD, eps: np.ndarray, side: str) -> np.ndarray:
    """A bound on the true curve ``H(e^eps)`` from both directions' atoms."""
    directions = mechanism.atoms(side)
    values = _curve(directions[0], eps, side)
    if len(directions) > 1:
        alpha = np.exp(eps.astype(np.longdouble))
        reverse = alpha * _curve(directions[1], -eps, side) + 1 - alpha
        values = np.maximum(values, reverse) if side == "lower" else np.minimum(values, reverse)
    return np.clip(values, np.maximum(1 - np.exp(eps.astype(np.longdouble)), 0), 1)


def lower_round(mechanism: PLD) -> OneRound:
    """A genuine pair dominated by the mechanism's true pair (module docstring)."""
    step = mechanism.loss_grid_step
    losses = [a.loss for a in mechanism.atoms("upper")]
    losses[1:] = [-value for value in losses[1:]]
    low = min(float(value.min(initial=0.0)) for value in losses)
    high = max(float(value.max(initial=0.0)) for value in losses)
    low, high = max(low, -LARGEST_LOSS), min(high, LARGEST_LOSS)
    eps = np.arange(math.floor(low / step) - 1, math.ceil(high / step) + 2) * step
    lower = _profile(mechanism, eps, "lower")
    upper = np.maximum(_profile(mechanism, eps, "upper"), lower)
    at_infinity = min(a.infinity_mass for a in mechanism.atoms("lower")[:1])
    values = below_every_profile(eps, lower, upper, at_infinity)
    vertices, hull = profile_hull(eps, values.astype(np.float64))
    pair = pair_from_hull(eps, vertices, hull, "lower")
    # Values e^loss with the pair's Q-masses: P = Q e^loss is at most the pair's P.
    values = np.concatenate(([0.0], np.exp(pair.loss)))
    masses = np.concatenate(([pair.q_minus_infinity], np.exp(pair.log_q)))
    keep = masses > 0
    law = RatioLaw(values[keep], masses[keep], 1, 4 * UNIT_ROUNDOFF, 2 * UNIT_ROUNDOFF)
    return OneRound(law, float(pair.p_infinity))
