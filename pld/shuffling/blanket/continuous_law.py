"""The law of the blanket ratio ``V`` of a shuffled continuous randomizer.

For a location family on ``[low, high]`` and the end-point pair, ``V = r_high(Y) / gamma``
under the blanket ``omega`` (:mod:`pld.shuffling.blanket.continuous`, docs/blanket-continuous.md
§2): a density on ``[1, v_max)`` and an atom at ``v_max``. Its tails, moments and cell
integrals are closed forms or Gauss-Legendre sums (docs/blanket-continuous.md §4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtri_exp, roots_legendre

#: The bulk of ``V``: below its quantile of this upper tail mass.
BULK_TAIL = 1e-4
#: Smallest blanket mass accepted (below it, 1 / gamma overflows).
_MIN_BLANKET = 1e-300
_GL_NODES, _GL_WEIGHTS = roots_legendre(8)
_GL_PIECE = 0.125
_BLOCK = 2**16  # cells per block of Gauss-Legendre work (bounds the memory)


@dataclass(frozen=True)
class VLaw:
    """Law of ``V >= 1`` (module docstring): a density on ``[1, v_max)`` and an atom at ``v_max``.

    Gaussian: ``v_max = inf`` and no atom; Laplace: ``v_max = e^{Delta/b}`` and the
    atom ``gamma``. Tails, moments and cell integrals are closed forms or
    Gauss-Legendre sums (docs/blanket-continuous.md §4).
    """

    kind: str
    parameter: float  # Gaussian: k = Delta / sigma; Laplace: Delta / b
    v_max: float
    atom: float
    gamma: float

    def cells(self, lower: np.ndarray, upper: np.ndarray):
        """For V-intervals ``[lower, upper]``: mass, ``E[V - lower; .]``, ``E[upper - V; .]``."""
        if self.kind == "laplace":
            root_low, root_high = np.sqrt(lower), np.sqrt(upper)
            gap = (upper - lower) / (root_high + root_low)
            return gap / (root_low * root_high), gap**2 / root_high, gap**2 / root_low
        if lower.shape[0] == 0:
            return lower, lower, lower
        parts = [
            gaussian_cells(self.parameter, lower[i : i + _BLOCK], upper[i : i + _BLOCK])
            for i in range(0, lower.shape[0], _BLOCK)
        ]
        return tuple(np.concatenate([part[j] for part in parts]) for j in range(3))

    def _log_u(self, v: float) -> float:
        return math.log(v) / self.parameter

    def survival(self, v: float) -> float:
        """``P(V > v)``."""
        if v >= self.v_max:
            return 0.0
        if v <= 1.0:
            return 1.0
        if self.kind == "laplace":
            return v**-0.5
        a = self.parameter / 2
        return math.exp(float(log_ndtr(-(self._log_u(v) + a)) - log_ndtr(-a)))

    def moment_above(self, v: float) -> float:
        """``E[V; V > v]`` (uses ``e^{k u} phi(u + a) = phi(u - a)`` for the Gaussian)."""
        if v >= self.v_max:
            return 0.0
        v = max(v, 1.0)
        if self.kind == "laplace":
            return 2.0 * math.sqrt(self.v_max) - math.sqrt(v)
        a = self.parameter / 2
        return math.exp(float(log_ndtr(a - self._log_u(v)) - log_ndtr(-a)))

    def second_moment_below(self, v: float) -> float:
        """``E[V^2; V <= v]`` (Gaussian: ``e^{2ku} phi(u + a) = e^{k^2} phi(u - 3a)``)."""
        if self.kind == "laplace":
            top = min(v, self.v_max)
            value = (top**1.5 - 1.0) / 3.0
            return value + (self.v_max**2 * self.atom if v >= self.v_max else 0.0)
        k = self.parameter
        a = k / 2
        high = float(log_ndtr(self._log_u(max(v, 1.0)) - 3 * a))
        low = float(log_ndtr(-3 * a))
        if high <= low:
            return 0.0
        log_value = k * k + high + math.log1p(-math.exp(low - high)) - float(log_ndtr(-a))
        return math.exp(min(log_value, 700.0))

    def quantile_above(self, mass: float) -> float:
        """The ``v`` with ``P(V > v) = mass`` (at most ``v_max``)."""
        if self.kind == "laplace":
            return min(mass**-2.0, self.v_max)
        a = self.parameter / 2
        u = -float(ndtri_exp(math.log(mass) + float(log_ndtr(-a)))) - a
        return math.exp(self.parameter * max(u, 0.0))

    def moment_quantile(self, moment: float) -> float:
        """The ``v`` with ``E[V; V > v] = moment`` (Gaussian; ``v_max`` for the Laplace)."""
        if self.kind == "laplace":
            return self.v_max
        a = self.parameter / 2
        u = a - float(ndtri_exp(math.log(moment) + float(log_ndtr(-a))))
        return math.exp(self.parameter * max(u, 0.0))

    def bulk_deviation(self) -> float:
        """Standard deviation of ``V`` given ``P(V > v) >= BULK_TAIL`` (sets the grid step)."""
        top = self.quantile_above(BULK_TAIL)
        kept = 1.0 - self.survival(top) if top < self.v_max else 1.0
        if self.kind == "laplace":
            mean = (2.0 / self.gamma - 1.0 - self.moment_above(top)) / kept
        else:  # E[V; U <= u] = (Phi(u - a) - Phi(-a)) / Phi(-a), free of cancellation
            a = self.parameter / 2
            high, low = float(log_ndtr(self._log_u(top) - a)), float(log_ndtr(-a))
            mean = math.exp(high - low) * -math.expm1(low - high) / kept
        variance = self.second_moment_below(top) / kept - mean * mean
        return math.sqrt(variance) if variance > (1e-6 * mean) ** 2 else mean


def gaussian_cells(k: float, lower: np.ndarray, upper: np.ndarray):
    """Gauss-Legendre cell integrals for ``V = e^{kU}``, ``U`` density ``phi(u+a)/Phi(-a)``."""
    a = k / 2
    u_low = np.log(lower) / k
    u_high = np.log(upper) / k
    width = u_high - u_low
    pieces = np.maximum(1, np.ceil(width / _GL_PIECE)).astype(np.int64)
    cell = np.repeat(np.arange(lower.shape[0]), pieces)
    start = np.cumsum(pieces) - pieces
    index = np.arange(cell.shape[0]) - start[cell]
    piece_width = width[cell] / pieces[cell]
    piece_low = index * piece_width  # offset from the cell's u_low
    half = piece_width / 2
    offset = piece_low[:, None] + half[:, None] * (1 + _GL_NODES[None, :])  # u - u_low
    u = u_low[cell][:, None] + offset
    log_density = -0.5 * (u + a) ** 2 - 0.5 * math.log(2 * math.pi) - float(log_ndtr(-a))
    density = np.exp(log_density) * (half[:, None] * _GL_WEIGHTS[None, :])
    above = lower[cell][:, None] * np.expm1(k * offset)
    below = -upper[cell][:, None] * np.expm1(k * (offset - width[cell][:, None]))
    sums = np.stack((density.sum(1), (density * above).sum(1), (density * below).sum(1)))
    totals = np.zeros((3, lower.shape[0]))
    for row in range(3):
        totals[row] = np.bincount(cell, weights=sums[row], minlength=lower.shape[0])
    return totals[0], totals[1], totals[2]


class NoBlanketError(ValueError):
    """The randomizer's blanket mass is too small for the blanket analysis to say anything.

    A ``ValueError`` (the randomizer is not a valid input of the blanket evaluation), of
    its own type so that ``pld.shuffle``'s best-of can fall back to the local mechanism
    without mistaking bad input for it.
    """


def _checked_blanket(gamma: float, usable: bool) -> float:
    if not (gamma > _MIN_BLANKET and usable):
        raise NoBlanketError(
            f"the randomizer has almost no blanket (gamma = {gamma:.3g}: the noise is "
            "negligible against the input interval), so shuffling gives no amplification; "
            "use a larger noise scale (sigma of at least (high - low) / 75, or a Laplace "
            "scale of at least (high - low) / 700)"
        )
    return gamma


def gaussian_law(ratio: float, gamma: float) -> VLaw:
    """``V`` of the Gaussian on an interval: ``ratio = (high - low) / sigma``, blanket ``gamma``.

    Raises
    ------
    NoBlanketError
        If ``gamma`` is below ``1e-300`` (``1 / gamma`` overflows).
    """
    return VLaw("gaussian", ratio, math.inf, 0.0, _checked_blanket(gamma, True))


def laplace_law(ratio: float, gamma: float) -> VLaw:
    """``V`` of the Laplace on an interval: ``ratio = (high - low) / b``, blanket ``gamma``.

    Raises
    ------
    NoBlanketError
        If ``gamma`` is below ``1e-300`` or ``ratio`` above 700 (``e^ratio`` overflows).
    """
    gamma = _checked_blanket(gamma, ratio <= 700)
    return VLaw("laplace", ratio, math.exp(ratio), gamma, gamma)
