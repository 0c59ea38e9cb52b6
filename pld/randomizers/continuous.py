"""Continuous local randomizers: Gaussian and Laplace noise on a bounded input interval.

A user holds ``x`` in ``[low, high]`` and reports ``x + noise``. The blanket
decomposition (Balle et al. 2019, §5) of such a location family takes
``omega_min(y) = min_x R(x)(y)``, attained at the end point farther from ``y``:
with ``Delta = high - low``,

* Gaussian N(0, sigma^2): ``gamma = 2 Phi(-Delta / (2 sigma))``; the local
  randomizer is not eps0-LDP (``eps0 = inf``);
* Laplace with scale b: ``gamma = exp(-Delta / (2 b))`` and ``eps0 = Delta / b``.

Each class hands the blanket analysis the law of its blanket ratio
(:meth:`GaussianRandomizer.blanket_law`; :mod:`pld.shuffling.blanket.continuous`,
docs/blanket-continuous.md) and knows its local mechanism (the protocol is a
post-processing of it) and its observer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr

from pld import validation
from pld.numerics import MAX_EPS0
from pld.randomizers.base import Randomizer

if TYPE_CHECKING:
    from pld.distribution import PLD
    from pld.shuffling.blanket import VLaw

#: The eps grids of the continuous randomizers end where the upper delta falls to this,
#: the engine's truncation budget per round (``pld.engine.DEFAULT_TAIL_MASS``): beyond
#: it the profile is held (that much mass goes to +inf per round). The evaluations
#: between 1e-15 and 1e-18 took most of a build (sigma = 1, n = 100: 0.2-0.7 s each
#: against 10-40 ms near delta = 1e-6).
CONTINUOUS_FLOOR = 1e-15


class _Interval(Randomizer):
    """Noise added to an input in ``[low, high]``: what the Gaussian and Laplace share."""

    low: float
    high: float

    @property
    def sensitivity(self) -> float:
        """``high - low``: the largest distance between two inputs."""
        return self.high - self.low

    def blanket_law(self) -> VLaw:
        """The law of the blanket ratio ``V`` of the end-point pair (docs/blanket-continuous.md §2).

        Raises
        ------
        pld.shuffling.blanket.NoBlanketError
            If the blanket mass is too small to evaluate (the noise is negligible
            against the interval).
        """
        raise NotImplementedError  # pragma: no cover - overridden

    def blanket_profile(
        self, n: int, eps: np.ndarray, *, lower_side: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The end-point pair's blanket delta(eps), the worst pair of inputs
        (docs/blanket-continuous.md §3): ``pld.shuffling.blanket.continuous_profile_bounds``."""
        from pld.shuffling.blanket import continuous_profile_bounds

        return continuous_profile_bounds(self.blanket_law(), n, eps)

    def quick_blanket_upper(self, n: int, eps: np.ndarray) -> np.ndarray:
        """Upper values at ascending ``eps``, by a binary search for the first at most
        ``CONTINUOUS_FLOOR`` (:func:`_first_at_floor`); a value refused as too costly
        counts as above it."""
        return _first_at_floor(self._upper_value(n, "blanket"), eps)

    def profile_end(self, n: int, low: float, high: float, analysis: str) -> float:
        """Bisection between the candidates on full upper values, to 5 %: the grid's
        spacing follows its end (the candidates are sqrt(2) apart)."""
        value = self._upper_value(n, analysis)
        while high - low > 0.05 * high:
            middle = 0.5 * (low + high)
            if value(middle) <= CONTINUOUS_FLOOR:
                high = middle
            else:
                low = middle
        return high

    def _upper_value(self, n: int, analysis: str):
        """eps -> the analysis' full upper one-round value by the lattice alone (1 where
        refused): where the eps grid ends."""
        from pld.engine import BudgetError
        from pld.shuffling.blanket import continuous_profile_bounds

        law = self.blanket_law()

        def value(eps_value: float) -> float:
            try:
                bounds = continuous_profile_bounds(
                    law, n, np.array([eps_value]), lattice_free=False
                )
                return float(bounds[1][0])
            except BudgetError:
                return 1.0

        return value

    def local_mechanism(self, loss_grid_step: float | None = None) -> PLD | None:
        """The local randomizer's own PLD, a valid bound on the shuffled protocol for every n.

        The shuffled view of two neighbouring datasets is a post-processing of the
        target's report alone (the other reports do not depend on the target's input),
        so the local mechanism's privacy-loss distribution dominates the protocol's.
        """
        raise NotImplementedError  # pragma: no cover - overridden


def _first_at_floor(value, eps: np.ndarray) -> np.ndarray:
    """Upper values of a non-increasing profile at ascending ``eps`` from ``value(eps)``,
    evaluated only where a binary search for the first at most ``CONTINUOUS_FLOOR``
    goes: 1 before it (where not evaluated) and its value from it on, both valid upper
    values of a non-increasing profile. Values refused as too costly (1) at the largest
    eps are replaced by the first evaluable value below them, valid there too."""
    upper = np.ones(eps.size)
    low, high = -1, eps.size - 1  # the value at low, if evaluated, is above the floor
    upper[high] = value(float(eps[high]))
    while upper[high] >= 1.0 and high > 0:  # refused (a lattice too long at large eps)
        high -= 1
        upper[high] = value(float(eps[high]))
    upper[high:] = upper[high]
    if upper[high] > CONTINUOUS_FLOOR:
        return upper
    while high - low > 1:
        middle = (low + high) // 2
        upper[middle] = value(float(eps[middle]))
        if upper[middle] <= CONTINUOUS_FLOOR:
            high = middle
        else:
            low = middle
    upper[high:] = upper[high]
    upper[:high] = np.maximum(upper[:high], upper[high])
    return upper


def _interval(low: object, high: object) -> tuple[float, float]:
    low = validation.finite_real("low", low)
    high = validation.finite_real("high", high)
    if not low < high:
        raise ValueError(f"the input interval must be non-empty: low < high (got [{low}, {high}])")
    return low, high


@dataclass(frozen=True)
class GaussianRandomizer(_Interval):
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
    def eps0(self) -> float:
        """Local epsilon: ``inf`` (the Gaussian likelihood ratio is unbounded)."""
        return math.inf

    @property
    def blanket_mass(self) -> float:
        """``gamma = 2 Phi(-(high - low) / (2 sigma))``."""
        return float(2.0 * ndtr(-self.sensitivity / (2.0 * self.sigma)))

    def blanket_law(self) -> VLaw:
        """``V = e^{k U}``, ``k = (high - low) / sigma`` (docs/blanket-continuous.md §2)."""
        from pld.shuffling.blanket import gaussian_law

        return gaussian_law(self.sensitivity / self.sigma, self.blanket_mass)

    def local_mechanism(self, loss_grid_step: float | None = None) -> PLD:
        """The Gaussian mechanism with sensitivity ``high - low`` and noise ``sigma``."""
        from pld.central import gaussian

        return gaussian(self.sigma, sensitivity=self.sensitivity, loss_grid_step=loss_grid_step)

    def blanket_usable(self, n: int) -> bool:
        """Whether the best-of analysis evaluates the blanket bound (else: the local mechanism).

        Only for ``(high - low) / sigma <= BEST_MAX_RATIO`` (below, the law of a term
        spans so many orders of magnitude that the evaluation takes minutes) and where
        the blanket profile can be evaluated at eps = 0.
        """
        from pld.engine import BudgetError
        from pld.shuffling.blanket import BEST_MAX_RATIO, NoBlanketError, continuous_profile_bounds

        if self.sensitivity / self.sigma > BEST_MAX_RATIO:
            return False
        try:
            continuous_profile_bounds(self.blanket_law(), n, np.zeros(1))
        except (BudgetError, NoBlanketError):
            return False
        return True

    def shuffle_profiles(
        self,
        n: int,
        eps: np.ndarray,
        analysis: str,
        *,
        lower_side: bool = True,
        fineness: float = 1.0,
    ) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
        """``"best"``: the blanket profile, evaluated down to ``CONTINUOUS_FLOOR`` (the
        bracket ``[0, last value]`` beyond) on ``SHUFFLE_STEPS_PER_STD * fineness``
        lattice steps per deviation with its tail remainder below ``REMAINDER_SHARE /
        fineness^2`` of it, and the local mechanism's
        (``pld.shuffling.blanket.best_profile_components``)."""
        if analysis != "best":
            return super().shuffle_profiles(
                n, eps, analysis, lower_side=lower_side, fineness=fineness
            )
        from pld.shuffling.blanket import (
            LOCAL_LOSS_STEP,
            REMAINDER_SHARE,
            SHUFFLE_STEPS_PER_STD,
            best_profile_components,
        )

        local = self.local_mechanism(LOCAL_LOSS_STEP)
        fineness = max(1.0, fineness)
        # The tail remainder shrinks with the lattice's own (second-order) error, so that
        # both follow a query's rel_accuracy as refinement refines the loss grid.
        return best_profile_components(
            self.blanket_law(),
            n,
            eps,
            local,
            floor=CONTINUOUS_FLOOR,
            chernoff_only=not lower_side,
            steps_per_std=SHUFFLE_STEPS_PER_STD * fineness,
            remainder_share=REMAINDER_SHARE / fineness**2,
        )

    def quick_profile_upper(self, n: int, eps: np.ndarray, analysis: str) -> np.ndarray:
        """``"best"``: full upper values of the minimum with the local mechanism, where a
        binary search for the first at most ``CONTINUOUS_FLOOR`` goes (Chernoff-only
        values ended the grid near eps = 12.5 instead of 4.4 at sigma = 1, n = 100,
        tripling its spacing)."""
        if analysis != "best":
            return super().quick_profile_upper(n, eps, analysis)
        return _first_at_floor(self._upper_value(n, analysis), eps)

    def _upper_value(self, n: int, analysis: str):
        """``"best"``: eps -> the upper value of the minimum with the local mechanism (the
        blanket's by the lattice alone: where the eps grid ends)."""
        if analysis != "best":
            return super()._upper_value(n, analysis)
        from pld.shuffling.blanket import (
            LOCAL_LOSS_STEP,
            SHUFFLE_STEPS_PER_STD,
            best_profile_bounds,
        )

        local = self.local_mechanism(LOCAL_LOSS_STEP)
        law = self.blanket_law()

        def value(eps_value: float) -> float:
            bounds = best_profile_bounds(
                law,
                n,
                np.array([eps_value]),
                local,
                floor=CONTINUOUS_FLOOR,
                steps_per_std=SHUFFLE_STEPS_PER_STD,
                lattice_free=False,
            )
            return float(bounds[1][0])

        return value

    def shuffled_pld(self, n: int, analysis: str, loss_grid_step: float | None) -> PLD | None:
        """``"best"`` where the blanket bound cannot be evaluated (tiny blanket mass, or
        beyond its grid limits): the local Gaussian mechanism's own PLD, valid and exact."""
        direct = super().shuffled_pld(n, analysis, loss_grid_step)
        if direct is None and analysis == "best" and not self.blanket_usable(n):
            return self.local_mechanism(loss_grid_step)
        return direct

    def observer(self, n: int, loss_grid_step: float | None = None) -> PLD:
        """The sum of all reports, ``N(sum x_i, n sigma^2)``: the Gaussian mechanism with
        sensitivity ``high - low`` and noise ``sigma sqrt(n)``, for every choice of the
        other inputs (a post-processing of the shuffled reports)."""
        from pld.central import gaussian

        return gaussian(
            self.sigma * math.sqrt(n), sensitivity=self.sensitivity, loss_grid_step=loss_grid_step
        )


@dataclass(frozen=True)
class LaplaceRandomizer(_Interval):
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
    def eps0(self) -> float:
        """Local epsilon ``(high - low) / scale`` (nats)."""
        return self.sensitivity / self.scale

    @property
    def blanket_mass(self) -> float:
        """``gamma = exp(-(high - low) / (2 scale))``."""
        return math.exp(-self.sensitivity / (2.0 * self.scale))

    def blanket_law(self) -> VLaw:
        """``V = e^{2 min(U, a) / b}`` with an atom at ``e^{Delta / b}``
        (docs/blanket-continuous.md §2)."""
        from pld.shuffling.blanket import laplace_law

        return laplace_law(self.sensitivity / self.scale, self.blanket_mass)

    def local_mechanism(self, loss_grid_step: float | None = None) -> PLD | None:
        """The Laplace mechanism with scale ``b``; None if ``(high - low) / b > 50``."""
        if self.eps0 > MAX_EPS0:
            return None
        from pld.central import laplace

        return laplace(self.scale, self.sensitivity, loss_grid_step=loss_grid_step)

    def observer(self, n: int, loss_grid_step: float | None = None) -> PLD:
        """The number of reports above a threshold: one user at ``high`` versus ``low``,
        everybody else at ``low`` (``pld.shuffling.observer.laplace_count_pmfs``)."""
        from pld.distribution import from_pmfs
        from pld.shuffling import laplace_count_pmfs

        log_p, log_q, outside = laplace_count_pmfs(self.scale, self.sensitivity, n)
        return from_pmfs(
            log_p,
            log_q,
            loss_grid_step=loss_grid_step,
            truncated_mass_p=outside,
            truncated_mass_q=outside,
        )


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
