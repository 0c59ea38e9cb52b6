"""The d-dimensional Gaussian randomizer with L2 clipping (the federated-learning randomizer).

A user holds ``x`` in the ball ``{|x| <= clip}`` of ``R^dim`` (an update clipped to L2
norm ``clip``) and reports ``x + N(0, sigma^2 I_dim)``. The shuffle analyses
(docs/vector-gaussian.md):

* bound B, the pairwise blanket with every shortfall charged
  (:mod:`pld.shuffling.blanket.pairwise`): valid in every dimension, and the same
  for every dimension;
* for ``dim = 1`` the interval's end-point blanket bound (the ball is
  ``[-clip, clip]``: :class:`pld.randomizers.GaussianRandomizer`);
* the local mechanism, the Gaussian mechanism with sensitivity ``2 clip``
  (post-processing).

The blanket of the ball, ``omega_min(y) = phi(|y| + clip)``, has the mass
``gamma_d = E[exp(-a chi_d - a^2/2)]`` (``a = clip / sigma``), which falls like
``exp(-a sqrt(d))``: the ball's own blanket bound (docs/vector-gaussian.md §3, Theorem A,
proved there) helps only for small ``d`` and is not evaluated here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import integrate
from scipy.special import gammaln, ndtr

from pld import validation
from pld.randomizers.base import CLONES_PROBE, Randomizer
from pld.randomizers.continuous import CONTINUOUS_FLOOR, GaussianRandomizer

if TYPE_CHECKING:
    from pld.distribution import PLD

#: Largest dimension accepted (the analyses are dimension-free; the blanket mass's
#: quadrature is checked up to here).
MAX_DIM = 10**10
#: eps values, in units of ``2 clip / sigma``, at which bound B is compared with the
#: local mechanism before "best" evaluates it on a whole grid.
_PROBE_EPS = np.array([0.0, 0.5, 1.0, 2.0, 4.0])


def ball_blanket_mass(a: float, dim: int) -> float:
    """``gamma_d = int phi_d(|y| + a) dy = E[exp(-a chi_d - a^2/2)]``, ``a = clip / sigma``.

    ``d = 1``: ``2 Phi(-a)``. Otherwise adaptive quadrature of the chi density in log
    space around its mode (relative error about 1e-10; a description of the
    randomizer, not used by any bound).
    """
    if dim == 1:
        return float(2.0 * ndtr(-a))
    log_norm = (1.0 - dim / 2.0) * math.log(2.0) - float(gammaln(dim / 2.0))
    mode = (-a + math.sqrt(a * a + 4.0 * (dim - 1))) / 2.0

    def log_integrand(r: float) -> float:
        return (dim - 1) * math.log(r) - 0.5 * r * r - a * r - 0.5 * a * a + log_norm

    peak = log_integrand(mode)
    if peak < -745.0:
        return 0.0
    width = 40.0
    value = integrate.quad(
        lambda r: math.exp(log_integrand(r) - peak) if r > 0 else 0.0,
        max(mode - width, 0.0),
        mode + width,
        points=[mode],
        limit=200,
        epsrel=1e-11,
    )[0]
    return float(math.exp(peak) * value)


@dataclass(frozen=True)
class VectorGaussianRandomizer(Randomizer):
    """``R(x) = N(x, sigma^2 I_dim)`` for inputs ``x`` with ``|x| <= clip`` in ``R^dim``.

    Attributes
    ----------
    sigma : float
        Noise standard deviation per coordinate (input units), > 0.
    dim : int
        Dimension, >= 1.
    clip : float
        L2 radius of the input ball, > 0.
    """

    sigma: float
    dim: int
    clip: float = 1.0

    @property
    def sensitivity(self) -> float:
        """``2 clip``: the largest L2 distance between two inputs."""
        return 2.0 * self.clip

    @property
    def ratio(self) -> float:
        """``s = 2 clip / sigma``: the diameter of the ball in units of sigma."""
        return self.sensitivity / self.sigma

    @property
    def eps0(self) -> float:
        """Local epsilon: ``inf`` (the Gaussian likelihood ratio is unbounded)."""
        return math.inf

    @property
    def blanket_mass(self) -> float:
        """``gamma_d`` of the ball (:func:`ball_blanket_mass`)."""
        return ball_blanket_mass(self.clip / self.sigma, self.dim)

    def interval(self) -> GaussianRandomizer:
        """For ``dim = 1``: the same randomizer as the scalar Gaussian on ``[-clip, clip]``."""
        return GaussianRandomizer(self.sigma, -self.clip, self.clip)

    def local_mechanism(self, loss_grid_step: float | None = None) -> PLD:
        """The Gaussian mechanism with sensitivity ``2 clip`` and noise ``sigma`` (valid for
        every n: the shuffled view is a post-processing of the target's report)."""
        from pld.central import gaussian

        return gaussian(self.sigma, sensitivity=self.sensitivity, loss_grid_step=loss_grid_step)

    # -- the blanket analyses -------------------------------------------------------------

    def check_blanket(self, n: int) -> None:
        """Nothing to refuse: bound B needs no blanket of the ball and works for every n."""

    def pairwise_available(self) -> bool:
        """Whether bound B is evaluated: ``2 clip / sigma <= PAIRWISE_MAX_RATIO`` of
        :mod:`pld.shuffling.blanket.pairwise` (beyond, the local mechanism is better)."""
        from pld.shuffling.blanket import PAIRWISE_MAX_RATIO

        return self.ratio <= PAIRWISE_MAX_RATIO

    def _pairwise(
        self, n: int, eps: np.ndarray, lower_side: bool, fineness: float = 1.0
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Bound B's bracket at each of its clone probabilities, on a lattice of ``Z``
        ``fineness`` (>= 1) times finer than its default (its width shrinks like the
        square of the step, as the eps grid's connect-the-dots excess)."""
        from pld.shuffling.blanket import (
            PAIRWISE_STEPS_PER_STD,
            clone_probabilities,
            pairwise_profile_bounds,
        )

        if not self.pairwise_available():
            raise ValueError(
                f"bound B is evaluated for 2 clip / sigma <= 3 only (got {self.ratio:.3g}); "
                "with less noise use analysis='best' (the local Gaussian mechanism)"
            )
        steps = PAIRWISE_STEPS_PER_STD * max(1.0, fineness)
        return [
            pairwise_profile_bounds(
                self.ratio, n, eps, q, lower_side=lower_side, steps_per_std=steps
            )
            for q in clone_probabilities(self.ratio, n)
        ]

    def _interval_usable(self, n: int) -> bool:
        return self.dim == 1 and self.interval().blanket_usable(n)

    def blanket_profile(
        self, n: int, eps: np.ndarray, *, lower_side: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """``dim = 1``: the interval's end-point blanket profile (the worst pair,
        docs/blanket-continuous.md §3); else the minimum of bound B over its clone
        probabilities (docs/vector-gaussian.md §2)."""
        if self.dim == 1:
            return self.interval().blanket_profile(n, eps, lower_side=lower_side)
        components = self._pairwise(n, eps, lower_side)
        lower = np.minimum.reduce([low for low, _ in components])
        upper = np.minimum.reduce([high for _, high in components])
        return lower, upper

    def quick_blanket_upper(self, n: int, eps: np.ndarray) -> np.ndarray:
        """Upper values of :meth:`blanket_profile` (bound B's are cheap: no Chernoff step)."""
        if self.dim == 1:
            return self.interval().quick_blanket_upper(n, eps)
        return self.blanket_profile(n, eps, lower_side=False)[1]

    def shuffle_profiles(
        self,
        n: int,
        eps: np.ndarray,
        analysis: str,
        *,
        lower_side: bool = True,
        fineness: float = 1.0,
    ) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
        """The profiles whose minimum the analysis is, each a convex privacy profile.

        ``"blanket"``: for ``dim = 1`` the interval's blanket profile, else bound B at
        each of its clone probabilities. ``"best"``: bound B at each clone probability
        and the local mechanism's profile; for ``dim = 1`` where the interval's blanket
        profile can be evaluated, that and the local mechanism's, with bound B only if it
        beats them at one of ``CLONES_PROBE`` points. Both blanket evaluations refine
        their lattices with ``fineness`` (the base class).
        """
        if analysis != "best":
            if self.dim == 1:
                return self.interval().shuffle_profiles(
                    n, eps, analysis, lower_side=lower_side, fineness=fineness
                )
            return self._pairwise(n, eps, lower_side, fineness), True
        if self._interval_usable(n):
            components, convex = self.interval().shuffle_profiles(
                n, eps, "best", lower_side=lower_side, fineness=fineness
            )
            # Bound B joins where it beats the interval's profiles at a probe point.
            probe = np.unique(np.linspace(0, eps.size - 1, CLONES_PROBE).round().astype(int))
            best = np.minimum.reduce([high for _, high in components])[probe]
            if not self.pairwise_available():
                return components, convex
            pairwise = self._pairwise(n, eps[probe], False)
            if not any(np.any(high < best) for _, high in pairwise):
                return components, convex
            return self._pairwise(n, eps, lower_side, fineness) + components, convex
        from pld.shuffling.blanket import LOCAL_LOSS_STEP

        local = self.local_mechanism(LOCAL_LOSS_STEP).delta_bounds(eps, rel_accuracy=1.0)
        return [*self._pairwise(n, eps, lower_side, fineness), local], True

    def quick_profile_upper(self, n: int, eps: np.ndarray, analysis: str) -> np.ndarray:
        """Cheap upper values of the analysis' profile: for ``"best"`` the interval's quick
        values where :meth:`shuffle_profiles` uses them, else the minimum of bound B's upper
        values and the local mechanism's, held from the first below the floor."""
        if analysis != "best":
            return self.quick_blanket_upper(n, eps)
        if self._interval_usable(n):
            return self.interval().quick_profile_upper(n, eps, "best")
        upper = np.minimum.reduce([high for _, high in self._pairwise(n, eps, False)])
        from pld.shuffling.blanket import LOCAL_LOSS_STEP

        local = self.local_mechanism(LOCAL_LOSS_STEP).delta_bounds(eps, rel_accuracy=1.0)[1]
        values = np.minimum(upper, local)
        # Held at the floor from its first value below it (a valid, non-increasing profile).
        below = np.flatnonzero(values <= CONTINUOUS_FLOOR)
        if below.size:
            values[below[0] :] = values[below[0]]
        return values

    def profile_end(self, n: int, low: float, high: float, analysis: str) -> float:
        """The interval's search where its profiles are used (``dim = 1``); else ``high``
        (bound B's quick values are its full upper values already)."""
        if self.dim == 1 and (analysis != "best" or self._interval_usable(n)):
            return self.interval().profile_end(n, low, high, analysis)
        return high

    def shuffled_pld(self, n: int, analysis: str, loss_grid_step: float | None) -> PLD | None:
        """``"best"`` at ``n = 1``, or where neither bound B nor (``dim = 1``) the interval's
        blanket bound beats the local mechanism at a few probe eps: the local mechanism's
        own PLD (exact, no connect-the-dots)."""
        direct = super().shuffled_pld(n, analysis, loss_grid_step)
        if direct is not None or analysis != "best":
            return direct
        if n == 1:  # the protocol is the local mechanism itself
            return self.local_mechanism(loss_grid_step)
        if self._interval_usable(n):
            return None
        if not self.pairwise_available():
            return self.local_mechanism(loss_grid_step)
        from pld.shuffling.blanket import LOCAL_LOSS_STEP

        eps = _PROBE_EPS * self.ratio
        pairwise = np.minimum.reduce([high for _, high in self._pairwise(n, eps, False)])
        local = self.local_mechanism(LOCAL_LOSS_STEP).delta_bounds(eps, rel_accuracy=1.0)[0]
        if np.all(pairwise >= local):
            return self.local_mechanism(loss_grid_step)
        return None

    def observer(self, n: int, loss_grid_step: float | None = None) -> PLD:
        """The sum of all reports, ``N(sum x_i, n sigma^2 I)``: the Gaussian mechanism with
        sensitivity ``2 clip`` and noise ``sigma sqrt(n)``, for one user at ``clip e`` versus
        ``-clip e`` and any other inputs (a post-processing of the shuffled reports)."""
        from pld.central import gaussian

        return gaussian(
            self.sigma * math.sqrt(n), sensitivity=self.sensitivity, loss_grid_step=loss_grid_step
        )


def vector_gaussian(sigma: float, dim: int, clip: float = 1.0) -> VectorGaussianRandomizer:
    """The clipped Gaussian randomizer ``x -> x + N(0, sigma^2 I_dim)`` on ``|x| <= clip``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation per coordinate, in input units, finite and > 0.
    dim : int
        Dimension, an integer in [1, 1e10].
    clip : float
        L2 radius of the input ball (the clipping norm), finite and > 0 (default 1).

    Examples
    --------
    The seed FL setting (sigma / (2 clip) = 9.48, n = 60 000 clients):

    >>> import pld
    >>> r = pld.randomizers.vector_gaussian(sigma=9.48, dim=10**6, clip=0.5)
    >>> r.ratio  # 2 clip / sigma  # doctest: +ELLIPSIS
    0.1054...
    """
    sigma = validation.positive("sigma", sigma)
    dim = validation.integer_at_least("dim", dim, 1, MAX_DIM)
    clip = validation.positive("clip", clip)
    return VectorGaussianRandomizer(sigma, dim, clip)
