"""What a PLD hands out about its atoms: the atoms of a direction and truncated tails' moments.

:meth:`pld.PLD.atoms` returns one :class:`LossAtoms` per direction (the public contract
mechanisms and integrations build on, docs/architecture.md); mechanisms that truncate a
tail attach its Rényi moments as :class:`TailMoments` (:meth:`pld.PLD.with_tail_moments`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LossAtoms:
    """Atoms of one direction: P-mass ``mass[i]`` at privacy loss ``loss[i]`` (nats).

    ``infinity_mass`` is the P-mass where Q is zero (loss ``+inf``). For a
    one-round PLD the upper atoms form a dominating pair and the lower atoms a
    dominated one: the Q-mass of atom ``i`` is ``mass[i] * exp(-loss[i])``.
    ``loss_error`` (nats) bounds how far the true losses may lie from ``loss``
    (float evaluation of the mechanism): a user of the atoms should evaluate an
    upper bound at ``eps - loss_error`` and a lower bound at ``eps + loss_error``.
    ``mass_error`` bounds the relative error of every finite mass (and so of its
    Q-mass): a user should widen what it computes from them by that factor.
    """

    loss: np.ndarray
    mass: np.ndarray
    infinity_mass: float
    loss_error: float = 0.0
    mass_error: float = 0.0


@dataclass(frozen=True)
class TailMoments:
    """Rényi moments of the P-mass a mechanism truncated (charged to +inf) in one direction.

    ``mass`` is the truncated P-mass this describes; ``log_moment(t)`` returns,
    for an array of ``t > 0``, an upper bound on ``log E_P[exp(t L) ; truncated]``
    (L the privacy loss, nats). :func:`pld.rdp.from_pld` adds it to the atoms'
    moments instead of making the RDP infinite.
    """

    mass: float
    log_moment: Callable[[np.ndarray], np.ndarray]
