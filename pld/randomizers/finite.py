"""Finite local randomizers: a row-stochastic matrix and the common presets.

A finite randomizer maps an input x in {0..m-1} to a distribution ``R(x)`` on the
outputs {0..K-1}: row x of an m x K row-stochastic matrix. The blanket
decomposition (Balle et al. 2019, §5; Koskela et al. 2023, §4) uses
``omega_min(y) = min_x R(x)(y)``, ``gamma = sum_y omega_min(y)`` and, for an
ordered pair of inputs (x, x'), the ratios ``R(x)(y) / omega_min(y)``.

What the shuffle accountants read (:mod:`pld.shuffling.shuffler`):

* :meth:`FiniteRandomizer.blanket_classes`: for every ordered pair of distinct
  inputs, the outputs grouped into classes with equal ratios
  ``(R(x)(y) / omega_min(y), R(x')(y) / omega_min(y))`` and the class's blanket mass
  ``sum_y omega_min(y)``; duplicate pairs (same classes) are listed once.
* :meth:`FiniteRandomizer.observer_groups`: concrete neighbouring datasets (the
  target holds x or x', every other user one fixed value) as the probabilities of
  the three groups of outputs where ``R(x)(y) / R(x')(y)`` is > 1, < 1 and = 1.

The presets (:mod:`pld.randomizers.presets`) compute both from closed forms. With
them the class answers the shuffle analyses (:mod:`pld.randomizers.base`): its blanket
profile is :func:`pld.shuffling.blanket.finite_profile_bounds` of its classes, its
observer :func:`pld.shuffling.observer.finite_observer` of its groups.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from pld import validation
from pld.numerics import MAX_EPS0
from pld.randomizers.base import Randomizer
from pld.shuffling.blanket import merge_classes

if TYPE_CHECKING:
    from pld.distribution import PLD

#: Rows of a user-given matrix must sum to 1 within this absolute tolerance.
ROW_SUM_TOLERANCE = 1e-9


Classes = tuple[np.ndarray, np.ndarray, np.ndarray]
Groups = tuple[np.ndarray, np.ndarray, np.ndarray]


class FiniteRandomizer(Randomizer):
    """A local randomizer with finitely many inputs and outputs (row-stochastic matrix).

    Build one with :func:`matrix` or a preset (:func:`krr`, :func:`local_hashing`,
    :func:`hadamard`, :func:`unary`).
    """

    def __init__(self, probs: np.ndarray, name: str = "matrix") -> None:
        self._probs = probs
        self._name = name
        column_min = probs.min(axis=0)
        self._omega_min = column_min
        self._gamma = float(math.fsum(column_min))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log(probs.max(axis=0)) - np.log(column_min)
        used = probs.max(axis=0) > 0
        self._eps0 = float(np.max(ratio[used])) if np.any(used) else 0.0

    def __repr__(self) -> str:
        return f"{self._name}(inputs={self.num_inputs}, outputs={self.num_outputs})"

    @property
    def name(self) -> str:
        """Short name of the randomizer (``"matrix"``, ``"krr"``, ...)."""
        return self._name

    @property
    def num_inputs(self) -> int:
        """Number of inputs m."""
        return int(self._probs.shape[0])

    @property
    def num_outputs(self) -> int:
        """Number of outputs K."""
        return int(self._probs.shape[1])

    @property
    def matrix(self) -> np.ndarray:
        """The m x K matrix: ``matrix[x, y] = R(x)(y)`` (a copy)."""
        return self._probs.copy()

    @property
    def eps0(self) -> float:
        """Local epsilon ``max_y log(max_x R(x)(y) / min_x R(x)(y))``, nats (may be ``inf``)."""
        return self._eps0

    @property
    def blanket_mass(self) -> float:
        """gamma = ``sum_y min_x R(x)(y)``, in [0, 1]."""
        return self._gamma

    @property
    def admits_stronger_clones(self) -> bool:
        """Whether ``(e^eps0 + 1) R(x)(y) >= R(x0)(y) + R(x1)(y)`` for all inputs x, x0 != x1
        and outputs y, checked exactly.

        The class of the stronger clones pair (docs/clones-validity.md, Theorem A). Per
        output y the worst case is the smallest entry of column y against the sum of
        its two largest, and e^eps0 is the largest ratio of two entries of a column;
        both sides are compared in exact rationals of the matrix's floats. Every
        randomizer with two inputs passes (x ranges over x0, x1 only).
        """
        if not 0.0 < self._eps0 <= MAX_EPS0:
            return False
        columns = np.sort(self._probs, axis=0)
        used = columns[-1] > 0
        low = [Fraction(float(v)) for v in columns[0, used]]
        high = [Fraction(float(v)) for v in columns[-1, used]]
        second = [Fraction(float(v)) for v in columns[-2, used]]
        ratio = max(h / lo for h, lo in zip(high, low, strict=True))
        return all((ratio + 1) * lo >= h + s for lo, h, s in zip(low, high, second, strict=True))

    @property
    def clone_probability(self) -> float | None:
        """Largest per-side clone probability p <= 1/(e^eps0 + 1) with
        ``R(x) >= p (R(x0) + R(x1))`` for all inputs x and x0 != x1 (None if eps0 is
        not in (0, MAX_EPS0]).

        ``1/(e^eps0 + 1)`` (the stronger pair) when :attr:`admits_stronger_clones`;
        else ``min_y min_x R(x)(y) / (sum of the two largest R(.)(y))``, lowered by a
        relative 1e-12 for the float error of that ratio, and never below the
        standard ``e^-eps0 / 2`` that every eps0-LDP randomizer allows
        (docs/clones-validity.md, Theorem A and its corollaries).
        """
        standard = super().clone_probability
        if standard is None:
            return None
        if self.admits_stronger_clones:
            return 1.0 / (math.exp(self._eps0) + 1.0)
        columns = np.sort(self._probs, axis=0)
        top = columns[-1] + columns[-2]
        used = top > 0
        largest = float(np.min(columns[0, used] / top[used])) * (1.0 - 1e-12)
        return min(max(standard, largest), 1.0 / (math.exp(self._eps0) + 1.0))

    def blanket_profile(
        self, n: int, eps: np.ndarray, *, lower_side: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The maximum over ordered input pairs of the blanket divergence of their classes
        (:func:`pld.shuffling.blanket.finite_profile_bounds`)."""
        from pld.shuffling.blanket import finite_profile_bounds

        return finite_profile_bounds(
            self.blanket_classes(), self.outside(), n, eps, lower_side=lower_side
        )

    def quick_blanket_upper(self, n: int, eps: np.ndarray) -> np.ndarray:
        """Chernoff bounds of every pair (:func:`pld.shuffling.blanket.finite_quick_upper`)."""
        from pld.shuffling.blanket import finite_quick_upper

        return finite_quick_upper(self.blanket_classes(), self.outside(), n, eps)

    def blanket_profile_at_infinity(self) -> float:
        """The largest ``sum_y R(x)(y)`` over the outputs with ``R(x')(y) = 0`` (the outside
        term's limit; the blanket sum vanishes), less a relative 1e-12 for the float sum."""
        masses = [float(np.sum(out_x[out_y == 0])) for out_x, out_y in self.outside()]
        return max(masses, default=0.0) * (1 - 1e-12)

    def observer(self, n: int, loss_grid_step: float | None = None) -> PLD:
        """The grouped histogram of one concrete dataset pair of :meth:`observer_groups`
        (:func:`pld.shuffling.observer.finite_observer`)."""
        from pld.shuffling import finite_observer

        return finite_observer(self.observer_groups(), n, loss_grid_step)

    def exact_matrix(self) -> np.ndarray | None:
        """The matrix, or None where it is too large to write out."""
        from pld.engine import BudgetError

        try:
            return self.matrix
        except BudgetError:
            return None

    def blanket_classes(self) -> list[Classes]:
        """Distinct ordered pairs (x, x') as classes ``(ratio_x, ratio_x', blanket mass)``.

        ``ratio_x = R(x)(y) / omega_min(y)`` (>= 1) on the outputs of a class, whose
        ``omega_min`` masses sum to ``blanket mass``; the masses of a pair sum to gamma.
        Outputs with ``omega_min(y) = 0`` are not in any class: see :meth:`outside`.
        """
        return [classes for classes, _ in self._pairs()]

    def outside(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per pair of :meth:`blanket_classes` (same order): ``(R(x)(y), R(x')(y))`` on the
        outputs with ``omega_min(y) = 0``.

        A target report there cannot be hidden by any blanket report: the view shows
        it, and it adds ``sum_y (R(x)(y) - e^eps R(x')(y))_+`` to the pair's delta.
        """
        return [out for _, out in self._pairs()]

    def _pairs(self) -> list[tuple[Classes, tuple[np.ndarray, np.ndarray]]]:
        probs, low = self._probs, self._omega_min
        positive = low > 0
        ratios = np.ones_like(probs)
        ratios[:, positive] = probs[:, positive] / low[positive]
        seen: dict[bytes, tuple[Classes, tuple[np.ndarray, np.ndarray]]] = {}
        for x in range(self.num_inputs):
            for other in range(self.num_inputs):
                if x == other:
                    continue
                classes = merge_classes(ratios[x], ratios[other], low)
                out = (probs[x, ~positive], probs[other, ~positive])
                key = np.concatenate((*classes, *out)).tobytes()
                seen.setdefault(key, (classes, out))
        return list(seen.values())

    def observer_groups(self) -> list[Groups]:
        """Concrete neighbouring datasets as group probabilities ``(pi_x, pi_x', pi_others)``.

        For the pair (x, x') with the largest total-variation distance between its
        rows, the outputs are grouped by ``R(x)(y) / R(x')(y)`` above 1, below 1 and
        equal to 1 (in this order); every other user holds one value: x' or, for up
        to two candidates, another input z. ``pi_others`` is that value's law on the
        groups. For each z a second grouping also sends the outputs more likely under
        z than under x or x' to the last group (the reports that betray the other
        users, as the blanket analysis reveals non-blanket reports); the presets'
        closed forms follow the same rule.
        """
        probs = self._probs
        distance = 0.5 * np.abs(probs[:, None, :] - probs[None, :, :]).sum(axis=2)
        x, other = np.unravel_index(int(np.argmax(distance)), distance.shape)
        thirds = [v for v in range(self.num_inputs) if v not in (x, other)][:2]
        candidates = [_group(probs[x], probs[other], probs[v]) for v in [other, *thirds]]
        for v in thirds:
            betraying = probs[v] > np.minimum(probs[x], probs[other])
            candidates.append(_group(probs[x], probs[other], probs[v], betraying))
        return candidates


def _group(
    first: np.ndarray,
    second: np.ndarray,
    others: np.ndarray,
    discard: np.ndarray | None = None,
) -> Groups:
    # Any grouping is a post-processing of the view; ratios within round-off of 1
    # go to the "equal" group, and so do the ``discard`` outputs.
    above, below = first > second * (1 + 1e-12), first < second * (1 - 1e-12)
    if discard is not None:
        above, below = above & ~discard, below & ~discard
    same = ~(above | below)
    groups = [above, below, same]
    return tuple(np.array([math.fsum(row[g]) for g in groups]) for row in (first, second, others))


def matrix(probs: object, *, tolerance: float = ROW_SUM_TOLERANCE) -> FiniteRandomizer:
    """A finite randomizer from its row-stochastic matrix.

    Parameters
    ----------
    probs : array_like
        ``probs[x, y] = R(x)(y)``: rows are inputs (at least 2), columns outputs.
        Entries must be finite and non-negative; each row must sum to 1 within
        ``tolerance`` (rows are then divided by their sums).
    tolerance : float
        Allowed absolute deviation of a row sum from 1, in [0, 1e-3].

    Returns
    -------
    FiniteRandomizer
    """
    tolerance = validation.in_interval("tolerance", tolerance, 0.0, 1e-3)
    try:
        array = np.array(probs, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError("probs must be a 2-d array of probabilities") from error
    if array.ndim != 2 or array.shape[1] < 1:
        raise ValueError(f"probs must be a 2-d array (inputs x outputs) (got shape {array.shape})")
    if array.shape[0] < 2:
        raise ValueError(
            f"probs must have at least 2 rows (inputs); got {array.shape[0]}: "
            "with one input there is nothing to protect"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError("probs must contain only finite numbers (no NaN or inf)")
    if np.any(array < 0):
        raise ValueError("probs must be non-negative")
    sums = array.sum(axis=1)
    worst = float(np.max(np.abs(sums - 1.0)))
    if worst > tolerance:
        row = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(
            f"probs must be row-stochastic: every row must sum to 1 within {tolerance:g} "
            f"(row {row} sums to {sums[row]!r})"
        )
    return FiniteRandomizer(array / sums[:, None])
