"""What a local randomizer is, and what it tells the shuffle analyses about itself.

A local randomizer R maps an input x to a distribution R(x) on outputs. The
blanket decomposition (Balle et al. 2019, §5; Koskela et al. 2023, §4) writes
``R(x) = gamma * omega + (1 - gamma) * rest_x`` with ``omega_min(y) =
min_x R(x)(y)``, ``gamma = sum_y omega_min(y)`` and ``omega = omega_min / gamma``.

What differs between kinds of randomizer is behaviour of their classes, so that
``pld.shuffle``, ``pld.shuffle_observer`` and ``pld.checkin`` read as one recipe:

* :meth:`Randomizer.blanket_profile` and :meth:`Randomizer.quick_blanket_upper`: the
  one-round blanket delta(eps) of the worst pair of inputs, bracketed, and a cheap upper
  bound on it (:mod:`pld.shuffling.blanket` evaluates the randomizer's description);
* :meth:`Randomizer.shuffle_profiles`: the profiles whose minimum an analysis is
  (``"best"``: the blanket profile and every other profile valid for this randomizer);
* :meth:`Randomizer.shuffled_pld`: a PLD the randomizer knows without a profile (the
  clones pair proven for it, :attr:`Randomizer.clone_probability`; its local mechanism);
* :meth:`Randomizer.observer`: a concrete pair of neighbouring datasets seen through a
  post-processing, whose lower bracket lower-bounds the protocol (``pld.shuffle_observer``);
* :meth:`Randomizer.exact_matrix`: the matrix where exact enumeration is possible
  (``pld.checkin``'s small counts).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

import numpy as np

from pld.numerics import MAX_EPS0

if TYPE_CHECKING:
    from pld.distribution import PLD

#: ``analysis="best"`` evaluates the clones profile at this many evenly spread grid
#: points first, and everywhere only if it beats the blanket profile at one of them.
CLONES_PROBE = 8


class Randomizer(ABC):
    """A local randomizer: an input space, an output space and R(x) for each input.

    Subclasses are immutable descriptions that also know how the shuffle analyses
    treat them (module docstring); the analyses never change them.
    """

    #: Largest number of users the blanket evaluation accepts (None: any).
    max_blanket_users: int | None = None

    @property
    @abstractmethod
    def eps0(self) -> float:
        """Local epsilon: ``sup_{x, x', y} log R(x)(y) / R(x')(y)`` (``inf`` if unbounded)."""

    @property
    @abstractmethod
    def blanket_mass(self) -> float:
        """gamma = total mass of ``min_x R(x)(y)`` over outputs y, in [0, 1]."""

    @property
    def clone_probability(self) -> float | None:
        """Per-side clone probability p of the clones pair proven for this randomizer.

        ``pld.clones(n, eps0, p)`` dominates its shuffle when ``R(x) >= p (R(x0) + R(x1))``
        for every input x and every pair x0 != x1 (docs/clones-validity.md, Theorem A;
        Feldman, McMillan and Talwar (2021), §3). Every eps0-LDP randomizer allows
        ``e^-eps0 / 2``, the standard pair (Feldman, McMillan and Talwar (2021),
        Thm 3.2), which is this default; None when eps0 is not in (0, MAX_EPS0].
        """
        if not 0.0 < self.eps0 <= MAX_EPS0:
            return None
        return math.exp(-self.eps0) / 2.0

    @property
    def admits_stronger_clones(self) -> bool:
        """Whether ``(e^eps0 + 1) R(x) >= R(x0) + R(x1)`` for all inputs x, x0, x1.

        The class of the stronger clones pair (Feldman, McMillan and Talwar (2023),
        Thm 3.1, as restricted by its erratum; docs/clones-validity.md, Theorem A):
        then :attr:`clone_probability` is ``1/(e^eps0 + 1)``. False unless proven.
        """
        return False

    #: Whether ``pld.shuffle``'s "best" is the clones pair alone, without the blanket
    #: profile (binary randomised response overrides it).
    clones_alone: bool = False

    # -- the blanket analysis ---------------------------------------------------------

    @abstractmethod
    def blanket_profile(
        self, n: int, eps: np.ndarray, *, lower_side: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous (lower, upper) one-round blanket delta(eps) of n shuffled users.

        The supremum over ordered pairs of inputs of the blanket divergence
        (``pld.shuffling.shuffler``), at each eps >= 0 (nats, validated by the caller).
        With ``lower_side=False`` only the upper values need be computed (the lower
        ones may then be 0).
        """

    @abstractmethod
    def quick_blanket_upper(self, n: int, eps: np.ndarray) -> np.ndarray:
        """Upper bounds on :meth:`blanket_profile`'s upper values, cheaply (for grid ends)."""

    def blanket_profile_at_infinity(self) -> float:
        """A lower bound on the blanket profile's limit at eps = +inf (its P-mass where Q = 0)."""
        return 0.0

    def check_blanket(self, n: int) -> None:
        """Refuse a blanket analysis that cannot say anything or would not fit the budget.

        Raises
        ------
        ValueError
            If the randomizer has no blanket (gamma = 0).
        pld.BudgetError
            If ``n`` exceeds :attr:`max_blanket_users`.
        """
        if not self.blanket_mass > 0:
            raise ValueError(
                "the randomizer has no blanket (gamma = sum_y min_x R(x)(y) = 0): no output "
                "is possible under every input, so another user's report cannot hide the "
                "target's and the blanket analysis gives no amplification"
            )
        if self.max_blanket_users is not None and n > self.max_blanket_users:
            from pld.engine import BudgetError

            raise BudgetError(
                f"n must be at most {self.max_blanket_users} for the blanket analysis of "
                f"this randomizer (got {n}); analysis='clones' covers an eps0-LDP "
                "randomizer at larger n"
            )

    # -- what pld.shuffle asks ------------------------------------------------------------

    def shuffle_profiles(
        self,
        n: int,
        eps: np.ndarray,
        analysis: str,
        *,
        lower_side: bool = True,
        fineness: float = 1.0,
    ) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
        """The (lower, upper) brackets of the one-round profiles whose minimum ``analysis`` is.

        ``"blanket"``: the blanket profile alone; ``"best"``: with the profile of the
        clones pair proven for this randomizer (``pld.clones(n, eps0, p)`` at
        :attr:`clone_probability`) where it beats the blanket profile at one of
        ``CLONES_PROBE`` points. The flag says
        whether every bracket is that of a convex privacy profile (then the lower PLD is
        built below every such profile between grid points). ``fineness`` (>= 1): how
        much finer than at its default the loss grid is, for randomizers whose blanket
        evaluation has a resolution of its own to follow it (the others ignore it).
        """
        lower, upper = self.blanket_profile(n, eps, lower_side=lower_side)
        components = [(lower, upper)]
        clone_p = self.clone_probability
        if analysis == "best" and clone_p is not None:
            from pld.shuffling.clones import clones_delta_bounds

            # Probe CLONES_PROBE points first; where the clones pair does not win
            # there, the blanket values alone (valid) are kept everywhere.
            probe = np.unique(np.linspace(0, eps.size - 1, CLONES_PROBE).round().astype(int))
            _, probe_upper = clones_delta_bounds(n, self.eps0, eps[probe], clone_p)
            if np.any(probe_upper < upper[probe]):
                components.append(clones_delta_bounds(n, self.eps0, eps, clone_p))
        return components, True

    def quick_profile_upper(self, n: int, eps: np.ndarray, analysis: str) -> np.ndarray:
        """Cheap upper values of the analysis' profile, to find where the eps grid ends."""
        return self.quick_blanket_upper(n, eps)

    def profile_end(self, n: int, low: float, high: float, analysis: str) -> float:
        """Where the eps grid ends, given that it ends in ``(low, high]`` (``high``: the
        first candidate whose quick upper value reached the floor); by default ``high``."""
        return high

    def shuffled_pld(self, n: int, analysis: str, loss_grid_step: float | None) -> PLD | None:
        """A one-round PLD of the shuffle that needs no profile, or None.

        ``analysis="clones"`` (and ``"best"`` where :attr:`clones_alone`): the clones
        pair proven for this randomizer, at :attr:`clone_probability`
        (docs/clones-validity.md); eps0 = 0 (every input has the same output law): the
        PLD of identical distributions.
        """
        clone_p = self.clone_probability
        alone = analysis == "best" and clone_p is not None and self.clones_alone
        if analysis == "clones" or alone:
            if not math.isfinite(self.eps0):
                raise ValueError(
                    "analysis='clones' needs an eps0-LDP randomizer (eps0 is infinite)"
                )
            from pld.shuffling.clones import clones

            # Beyond MAX_EPS0 (clone_p is None): the standard pair at MAX_EPS0, as before.
            eps0 = min(self.eps0, MAX_EPS0)
            return clones(n, eps0, clone_p, loss_grid_step=loss_grid_step)
        if self.eps0 == 0.0:  # nothing leaks
            from pld.distribution import from_pmfs
            from pld.engine import DEFAULT_LOSS_GRID_STEP

            step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
            return from_pmfs([0.0], [0.0], symmetric=True, loss_grid_step=step)
        return None

    # -- the protocol's lower bound and exact enumeration ------------------------------------

    @abstractmethod
    def observer(self, n: int, loss_grid_step: float | None = None) -> PLD:
        """A PLD of one concrete pair of neighbouring datasets, seen through a post-processing.

        Its LOWER bracket, composed, lower-bounds the shuffled protocol's own delta
        (``pld.shuffle_observer``).
        """

    def exact_matrix(self) -> np.ndarray | None:
        """The row-stochastic matrix, where exact enumeration over it is possible; else None."""
        return None


def check_randomizer(randomizer: object) -> Randomizer:
    """``randomizer`` if it is a :class:`Randomizer`; else a ``ValueError`` naming its type."""
    if not isinstance(randomizer, Randomizer):
        raise ValueError(
            f"randomizer must be a pld.randomizers randomizer (got {type(randomizer).__name__})"
        )
    return randomizer
