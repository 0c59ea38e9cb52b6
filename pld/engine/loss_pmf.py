"""One direction, one bound: a discrete privacy-loss pmf and its delta/epsilon queries.

A :class:`LossPmf` holds masses on the grid ``g_j = (offset + j) * step`` and the
mass at ``+inf``, together with the error terms that turn its hockey-stick value
into a bound:

    delta(eps) = infinity_mass + sum_j m_j (1 - exp(eps - g_j))_+        (seed 004, eq 2.1)

* ``bound == "upper"``: the masses dominate the truth after rounding, aliasing
  and truncation (extra mass only raises delta); add the float round-off term.
* ``bound == "lower"``: the masses are dominated by the truth except for at most
  ``junk_mass`` of aliased mass; subtract it and the float round-off term.

Float round-off: every mass carries an error of at most ``error_max``, and the
error vector has 1-norm at most ``error_l1``; the slack on delta(eps) is
``min(error_max * sum_j w_j, error_l1)`` with ``w_j = (1 - exp(eps - g_j))_+``
(the weights are at most 1), see docs/error-bounds.md.

Loss positions: if every atom's loss may be off by at most ``loss_error`` nats
(float evaluation of the mechanism's log-ratios), the true composed loss is
within ``loss_error`` of the computed one, so ``delta_true(eps) <=
delta(eps - loss_error)`` and ``>= delta(eps + loss_error)``: the queries shift eps.

Mass values: if every finite mass may be off by a relative ``mass_error``, the
finite part of delta is scaled by ``1 + mass_error`` (upper) or ``1 - mass_error``
(lower).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

_UNIT_ROUNDOFF = math.ulp(1.0) / 2
#: Largest exponent used when rescaling inside one block of the discounted sums.
_BLOCK_EXPONENT = 300.0


def discounted_suffix_sum(values: np.ndarray, rate: float) -> np.ndarray:
    """``out[i] = sum_{j >= i} values[j] * exp(-rate * (j - i))`` for non-negative values.

    Computed block by block with rescaled cumulative sums (all terms are
    non-negative, so there is no cancellation), without overflow.
    """
    size = values.shape[0]
    result = np.zeros(size)
    block = max(1, int(_BLOCK_EXPONENT / rate)) if rate > 0 else size
    carry = 0.0
    for stop in range(size, 0, -block):
        start = max(0, stop - block)
        offsets = np.arange(stop - start)
        scaled = values[start:stop] * np.exp(-rate * offsets)
        tail = np.cumsum(scaled[::-1])[::-1] + carry * math.exp(-rate * (stop - start))
        result[start:stop] = tail * np.exp(rate * offsets)
        carry = result[start]
    return result


@dataclass(frozen=True, eq=False)
class LossPmf:
    """Masses of one privacy-loss direction on an equidistant grid (one bound).

    ``step`` and ``loss_error`` are in nats; masses are probabilities.
    """

    step: float
    offset: int
    masses: np.ndarray
    infinity_mass: float
    bound: str
    junk_mass: float = 0.0
    error_max: float = 0.0
    error_l1: float = 0.0
    loss_error: float = 0.0
    mass_error: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        """Grid loss values ``(offset + j) * step`` of the masses, in nats."""
        return (self.offset + np.arange(self.masses.shape[0])) * self.step

    @property
    def finite_mass(self) -> float:
        """Total mass at finite losses (computed, including junk and round-off)."""
        return float(self.masses.sum())

    def refined(self, factor: int) -> LossPmf:
        """The same pmf on the grid of step ``step / factor`` (exact: old points are new ones)."""
        if factor == 1:
            return self
        masses = np.zeros((self.masses.shape[0] - 1) * factor + 1 if self.masses.size else 0)
        masses[::factor] = self.masses
        return LossPmf(
            self.step / factor,
            self.offset * factor,
            masses,
            self.infinity_mass,
            self.bound,
            junk_mass=self.junk_mass,
            error_max=self.error_max,
            error_l1=self.error_l1,
            loss_error=self.loss_error,
            mass_error=self.mass_error,
        )

    @functools.cached_property
    def _suffix(self) -> tuple[np.ndarray, ...]:
        """Suffix sums that make delta(eps) O(1) per query.

        ``mass_tail[i] = sum_{j>=i} m_j``, ``weighted_tail[i] = sum_{j>=i} m_j exp(g_i - g_j)``,
        ``ones_tail[i] = sum_{j>=i} exp(g_i - g_j)``; index ``size`` holds zeros.
        """
        masses = self.masses
        size = masses.shape[0]
        mass_tail = np.zeros(size + 1)
        mass_tail[:size] = np.cumsum(masses[::-1])[::-1]
        weighted_tail = np.zeros(size + 1)
        weighted_tail[:size] = discounted_suffix_sum(masses, self.step)
        remaining = size - np.arange(size + 1)
        ones_tail = -np.expm1(-self.step * remaining) / -math.expm1(-self.step)
        return mass_tail, weighted_tail, remaining.astype(np.float64), ones_tail

    def _raw_delta(self, eps: np.ndarray) -> np.ndarray:
        """Hockey stick of the masses plus (upper) or minus (lower) the error terms."""
        mass_tail, weighted_tail, count_tail, ones_tail = self._suffix
        losses = self.losses
        eps = eps - self.loss_error if self.bound == "upper" else eps + self.loss_error
        index = np.searchsorted(losses, eps, side="right")
        size = losses.shape[0]
        next_loss = np.where(index < size, losses[np.minimum(index, max(size - 1, 0))], np.inf)
        factor = np.exp(np.minimum(eps - next_loss, 0.0))
        finite = mass_tail[index] - factor * weighted_tail[index]
        finite = np.maximum(finite, 0.0)
        weight_sum = np.maximum(count_tail[index] - factor * ones_tail[index], 0.0)
        slack = np.minimum(self.error_max * weight_sum, self.error_l1)
        # Cumulative sums of n non-negative terms err by at most n u relatively.
        slack = slack + 2 * (size + 1) * _UNIT_ROUNDOFF * mass_tail[index]
        if self.bound == "upper":
            return finite * (1 + self.mass_error) + self.infinity_mass + slack
        return finite * (1 - self.mass_error) + self.infinity_mass - slack - self.junk_mass

    @functools.cached_property
    def _lower_suffix_max(self) -> np.ndarray:
        """``max_{j >= i} raw_delta(g_j)``: keeps the lower bound non-increasing in eps."""
        raw = self._raw_delta(self.losses)
        result = np.full(raw.shape[0] + 1, -np.inf)
        if raw.size:
            result[:-1] = np.maximum.accumulate(raw[::-1])[::-1]
        return result

    def delta(self, eps: np.ndarray) -> np.ndarray:
        """Bound on delta(eps) = H_{exp(eps)}(P || Q) for an array of eps (nats).

        Upper bounds are non-increasing in eps by construction. A lower bound
        ``raw(eps)`` is replaced by ``max_{eps' >= eps} raw(eps')``, still a lower
        bound because the true delta is non-increasing.
        """
        eps = np.asarray(eps, dtype=np.float64)
        raw = self._raw_delta(eps)
        if self.bound == "lower":
            index = np.searchsorted(self.losses, eps, side="right")
            raw = np.maximum(raw, self._lower_suffix_max[index])
        return np.clip(raw, 0.0, 1.0)

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with ``self.delta(eps) <= delta`` (``inf`` if none).

        The root is located by Brent's method and then nudged so that an upper
        bound is never below the exact crossing and a lower bound never above it.
        """
        from scipy.optimize import brentq

        if self.delta(np.array([0.0]))[0] <= delta:
            return 0.0
        losses = self.losses
        points = np.concatenate(([0.0], losses[losses > 0]))
        values = self.delta(points)
        below = np.flatnonzero(values <= delta)
        if below.size == 0:
            top = points[-1] + self.step
            if self.delta(np.array([top]))[0] > delta:
                return math.inf
            return float(top)
        right = int(below[0])
        low, high = float(points[right - 1]), float(points[right])

        def excess(eps: float) -> float:
            return float(self.delta(np.array([eps]))[0]) - delta

        if excess(high) == 0.0:
            return high
        root = float(brentq(excess, low, high, xtol=1e-14, rtol=1e-13))
        nudge = 1e-13 * max(1.0, root)
        if self.bound == "upper":
            while excess(root) > 0.0:
                root = min(root + nudge, high)
        else:
            while root > low and excess(root) <= 0.0:
                root = max(root - nudge, low)
        return root
