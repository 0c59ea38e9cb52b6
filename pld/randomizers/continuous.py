"""Continuous local randomizers: Gaussian and Laplace noise on a bounded input interval.

A user holds ``x`` in ``[low, high]`` and reports ``x + noise``. The blanket
decomposition (Balle et al. 2019, §5) of such a location family takes
``omega_min(y) = min_x R(x)(y)``, attained at the end point farther from ``y``:
with ``Delta = high - low``,

* Gaussian N(0, sigma^2): ``gamma = 2 Phi(-Delta / (2 sigma))``; the local
  randomizer is not eps0-LDP (``eps0 = inf``);
* Laplace with scale b: ``gamma = exp(-Delta / (2 b))`` and ``eps0 = Delta / b``.

These classes only describe the randomizer; the analyses live in
:mod:`pld.shuffling.blanket.continuous` (docs/blanket-continuous.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.special import ndtr

from pld import validation
from pld.randomizers.base import Randomizer


def _interval(low: object, high: object) -> tuple[float, float]:
    low = validation.finite_real("low", low)
    high = validation.finite_real("high", high)
    if not low < high:
        raise ValueError(f"the input interval must be non-empty: low < high (got [{low}, {high}])")
    return low, high


@dataclass(frozen=True)
class GaussianRandomizer(Randomizer):
    """``R(x) = N(x, sigma^2)`` for inputs ``x`` in ``[low, high]``.

    Attributes
    ----------
    sigma : float
        Noise standard deviation (input units), > 0.
    low, high : float
        End points of the input interval, ``low < high``.
    """

    sigma: float
    low: float = 0.0
    high: float = 1.0

    @property
    def sensitivity(self) -> float:
        """``high - low``: the largest distance between two inputs."""
        return self.high - self.low

    @property
    def eps0(self) -> float:
        """Local epsilon: ``inf`` (the Gaussian likelihood ratio is unbounded)."""
        return math.inf

    @property
    def blanket_mass(self) -> float:
        """``gamma = 2 Phi(-(high - low) / (2 sigma))``."""
        return float(2.0 * ndtr(-self.sensitivity / (2.0 * self.sigma)))


@dataclass(frozen=True)
class LaplaceRandomizer(Randomizer):
    """``R(x)``: density ``exp(-|y - x| / b) / (2 b)`` (b = scale), ``x`` in ``[low, high]``.

    Attributes
    ----------
    scale : float
        Laplace scale b (input units), > 0.
    low, high : float
        End points of the input interval, ``low < high``.
    """

    scale: float
    low: float = 0.0
    high: float = 1.0

    @property
    def sensitivity(self) -> float:
        """``high - low``: the largest distance between two inputs."""
        return self.high - self.low

    @property
    def eps0(self) -> float:
        """Local epsilon ``(high - low) / scale`` (nats)."""
        return self.sensitivity / self.scale

    @property
    def blanket_mass(self) -> float:
        """``gamma = exp(-(high - low) / (2 scale))``."""
        return math.exp(-self.sensitivity / (2.0 * self.scale))


def gaussian(sigma: float, low: float = 0.0, high: float = 1.0) -> GaussianRandomizer:
    """The Gaussian local randomizer ``x -> x + N(0, sigma^2)`` on inputs in ``[low, high]``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation in input units, finite and > 0.
    low, high : float
        Finite end points of the input interval, ``low < high`` (default ``[0, 1]``).
    """
    sigma = validation.positive("sigma", sigma)
    low, high = _interval(low, high)
    return GaussianRandomizer(sigma, low, high)


def laplace(scale: float, low: float = 0.0, high: float = 1.0) -> LaplaceRandomizer:
    """The Laplace local randomizer ``x -> x + Laplace(0, scale)`` on inputs in ``[low, high]``.

    Parameters
    ----------
    scale : float
        Laplace scale b in input units, finite and > 0.
    low, high : float
        Finite end points of the input interval, ``low < high`` (default ``[0, 1]``).
    """
    scale = validation.positive("scale", scale)
    low, high = _interval(low, high)
    return LaplaceRandomizer(scale, low, high)
