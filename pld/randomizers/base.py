"""What a local randomizer is, as the shuffle accountants see it.

A local randomizer R maps an input x to a distribution R(x) on outputs. The
blanket decomposition (Balle et al. 2019, §5; Koskela et al. (2023), §4) writes
``R(x) = gamma * omega + (1 - gamma) * rest_x`` with ``omega_min(y) =
min_x R(x)(y)``, ``gamma = sum_y omega_min(y)`` and ``omega = omega_min / gamma``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class Randomizer(ABC):
    """A local randomizer: an input space, an output space and R(x) for each input.

    Subclasses are immutable descriptions; the analyses (``pld.shuffle``,
    ``pld.shuffle_observer``) read them and never change them.
    """

    @property
    @abstractmethod
    def eps0(self) -> float:
        """Local epsilon: ``sup_{x, x', y} log R(x)(y) / R(x')(y)`` (``inf`` if unbounded)."""

    @property
    @abstractmethod
    def blanket_mass(self) -> float:
        """gamma = total mass of ``min_x R(x)(y)`` over outputs y, in [0, 1]."""
