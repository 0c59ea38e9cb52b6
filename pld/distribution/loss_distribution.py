"""The accountant: a privacy-loss distribution with both directions and both bounds.

A :class:`PLD` holds, for each direction of the dominating pair (the loss of P/Q
under P and, unless the pair is symmetric, of Q/P under Q), an upper-bound and a
lower-bound :class:`~pld.engine.loss_pmf.LossPmf`. Every query returns the
maximum over the directions (Koskela et al. 2023, Definition 1 asks for both inequalities).

Data flows one way: a mechanism builds log-pmfs, :func:`pld.distribution.construction.from_pmfs`
discretises them, :func:`compose` (or :meth:`PLD.compose` / :meth:`PLD.self_compose`)
convolves (:mod:`pld.distribution.composition`), and the queries read the result
(:mod:`pld.distribution.queries`). How a PLD rebuilds itself on a finer grid is recorded by
:func:`pld.distribution.recipes.refinable` and by :func:`compose`;
:mod:`pld.distribution.storage` writes it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pld import validation
from pld.distribution import queries, storage
from pld.distribution.atoms import LossAtoms, TailMoments
from pld.distribution.composition import (
    common_grid,
    compose_directions,
    one_round_factors,
    tilted_directions,
)
from pld.distribution.direction import _Direction
from pld.distribution.refinement import DEFAULT_REL_ACCURACY, check_rel_accuracy
from pld.engine import DEFAULT_TAIL_MASS, LossPmf, check_grid_points

#: Tilted compositions kept per PLD for later queries (:meth:`PLD._remember_view`).
_KEPT_VIEWS = 4

#: How a PLD rebuilds itself: ``recipe(loss_grid_step, tail_mass)`` returns the same
#: mechanism (or composition) on the grid of that step, with tail and truncation
#: budgets of at most ``tail_mass`` per round and side (``None``: its own).
Recipe = Callable[[float, "float | None"], "PLD"]


class PLD:
    """A discrete privacy-loss distribution with rigorous (lower, upper) bounds.

    Build one with :func:`pld.distribution.construction.from_pmfs` or a mechanism
    (``pld.randomized_response``, ``pld.gaussian``, ``pld.clones``, ...). Instances
    are immutable (a query may cache a refined copy, see :mod:`pld.distribution.refinement`).

    PLDs made by mechanisms and by :func:`compose` carry a recipe to rebuild
    themselves on a finer grid: every query then honours ``rel_accuracy``
    (default :attr:`rel_accuracy`, 1e-2), the largest relative width
    ``(upper - lower) / upper`` of its bracket.
    """

    def __init__(
        self,
        directions: Sequence[_Direction],
        *,
        symmetric: bool,
        composed: bool = False,
        recipe: Recipe | None = None,
        rounds: int = 1,
        rel_accuracy: float = DEFAULT_REL_ACCURACY,
        tail_budget: float = 0.0,
    ) -> None:
        self._directions = tuple(directions)
        self._symmetric = symmetric
        self._composed = composed
        self._recipe = recipe
        self._rounds = rounds
        self._rel_accuracy = rel_accuracy
        self._tail_budget = tail_budget
        self._refined: PLD | None = None
        self._build_seconds = 0.0  # to make it (0: unknown); refinement's cost predictions
        # Relative width of a one-round analysis bracket that no finer grid narrows (a
        # profile's own lower and upper values; 0: none known): refinement stops at the
        # first rebuild that makes no progress when it exceeds the target.
        self._analysis_width = 0.0

    @property
    def tail_budget(self) -> float:
        """Largest per-round, per-side tail or truncation budget used to build this PLD.

        0 when no mechanism or composition in it has one (or it is unknown).
        """
        return self._tail_budget

    @property
    def rel_accuracy(self) -> float:
        """Default relative bracket width of this PLD's queries, in (0, 1]."""
        return self._rel_accuracy

    @property
    def refinable(self) -> bool:
        """True when the PLD knows how to rebuild itself on a finer grid (:meth:`rebuilt`)."""
        return self._recipe is not None

    @property
    def rounds(self) -> int:
        """Number of mechanism rounds composed into this PLD (1 for one round)."""
        return self._rounds

    @property
    def error_floor(self) -> float:
        """Absolute width (a probability) that round-off and aliasing add to a delta bracket.

        The sum of what the upper side adds and the lower side subtracts for the
        FFT's round-off and aliased mass (:attr:`LossPmf.error_floor
        <pld.engine.loss_pmf.LossPmf.error_floor>`), the largest over the directions.
        delta brackets near or below it are dominated by it, whatever the grid:
        queries whose ``rel_accuracy`` it prevents say so with an ``AccuracyWarning``.
        """
        return max(d.upper.error_floor + d.lower.error_floor for d in self._directions)

    @property
    def grid_size(self) -> int:
        """Number of grid points of the largest direction and bound."""
        return max(max(d.upper.masses.shape[0], d.lower.masses.shape[0]) for d in self._directions)

    def rebuilt(self, loss_grid_step: float, *, tail_mass: float | None = None) -> PLD:
        """The same mechanism or composition rebuilt on the grid of ``loss_grid_step`` (nats).

        Parameters
        ----------
        loss_grid_step : float
            New grid step in (0, 1]; a power-of-two division of the current one
            keeps every component's grid nested.
        tail_mass : float, optional
            Cap on the tail and truncation budgets (per round and side) of the
            mechanisms and compositions that have one.

        Raises
        ------
        ValueError
            If the PLD has no recipe (:attr:`refinable` is False).
        """
        step = validation.loss_grid_step(loss_grid_step)
        if tail_mass is not None:
            tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
        if self._recipe is None:
            raise ValueError(
                "this PLD cannot be rebuilt: it was not made by a mechanism or composition "
                "that records its recipe (pld.distribution.recipes.refinable)"
            )
        return self._recipe(step, tail_mass)

    def with_rel_accuracy(self, rel_accuracy: float) -> PLD:
        """The same PLD whose queries default to ``rel_accuracy`` (in (0, 1])."""
        return self._copy(rel_accuracy=check_rel_accuracy(rel_accuracy))

    def _copy(self, **changes: Any) -> PLD:
        fields = {
            "symmetric": self._symmetric,
            "composed": self._composed,
            "recipe": self._recipe,
            "rounds": self._rounds,
            "rel_accuracy": self._rel_accuracy,
            "tail_budget": self._tail_budget,
        }
        fields.update(changes)
        copy = PLD(self._directions, **fields)
        copy._tail_moments = self._tail_moments
        copy._tilt_factors = self._tilt_factors
        copy._build_seconds = self._build_seconds
        copy._analysis_width = self._analysis_width
        return copy

    def _without_error_terms(self, *, keep_tails: bool) -> PLD:
        """This PLD without floating-point error terms (and without tails unless ``keep_tails``).

        Not a bound: its bracket shows how much of a width is due to the grid
        and the tails (which refinement can reduce) rather than to the bounds on
        floating-point error (round-off of the composition, and the evaluation
        error of the mechanism's losses and masses).
        Without tails, the junk mass of the lower side is dropped and the upper
        side's mass at +inf is replaced by the lower side's.
        """
        directions = []
        for d in self._directions:
            exact = {"error_max": 0.0, "error_l1": 0.0, "loss_error": 0.0, "mass_error": 0.0}
            lower = d.lower.with_terms(**exact)
            upper = d.upper.with_terms(**exact)
            if not keep_tails:
                lower = lower.with_terms(junk_mass=0.0)
                upper = upper.with_terms(infinity_mass=d.lower.infinity_mass)
            directions.append(_Direction(upper, lower))
        return PLD(directions, symmetric=self._symmetric)

    #: Per direction, the one-round (upper, lower) factor pmfs and counts of a
    #: composition, for tilted queries (:meth:`_tilted`); None when unknown.
    _tilt_factors: tuple[tuple[list, list], ...] | None = None

    def _tilted(self, target: float, cut: float, budget: float = 0.0) -> PLD | None:
        """This composition recomputed exponentially tilted towards the loss ``target``
        (nats), tight from ``cut`` on, valid at every eps, with far tails of composed
        mass at most ``budget`` moved to +inf
        (:func:`pld.distribution.composition.tilted_directions`);
        None when it has no one-round factors or no direction can be tilted."""
        if self._tilt_factors is None:
            return None
        directions = tilted_directions(
            self._directions, self._tilt_factors, target, cut, budget, DEFAULT_TAIL_MASS
        )
        if directions is None:
            return None
        return PLD([_Direction(u, lo) for u, lo in directions], symmetric=self._symmetric)

    def _finest(self) -> PLD:
        """The most refined rebuild a query has made of this PLD (itself if none)."""
        return self._refined if self._refined is not None else self

    def _remember(self, refined: PLD) -> None:
        self._refined = refined

    #: Tilted compositions queries have made of this PLD (the newest few): every
    #: later query intersects its bracket with theirs, so an eps(delta) verified by
    #: one stays verified by a later delta(eps).
    _views: tuple[PLD, ...] = ()

    def _remember_view(self, view: PLD) -> None:
        self._views = (*self._views, view)[-_KEPT_VIEWS:]

    def _target(self, rel_accuracy: float | None) -> float:
        if rel_accuracy is None:
            return self._rel_accuracy
        return check_rel_accuracy(rel_accuracy)

    @property
    def composed(self) -> bool:
        """True for the result of a composition (not one round of a mechanism)."""
        return self._composed

    @property
    def symmetric(self) -> bool:
        """True when one direction stands for both (the pair is symmetric)."""
        return self._symmetric

    @property
    def loss_grid_step(self) -> float:
        """Spacing of the privacy-loss grid, in nats."""
        return self._directions[0].upper.step

    def __repr__(self) -> str:
        sizes = "+".join(str(d.upper.masses.shape[0]) for d in self._directions)
        return (
            f"PLD(loss_grid_step={self.loss_grid_step:g}, symmetric={self._symmetric}, "
            f"grid_points={sizes})"
        )

    # -- composition -------------------------------------------------------

    def self_compose(
        self,
        rounds: int,
        *,
        tail_mass: float = DEFAULT_TAIL_MASS,
        rel_accuracy: float | None = None,
    ) -> PLD:
        """The PLD of ``rounds`` adaptive compositions of this mechanism.

        The composed pair dominates the adaptive composition (Koskela et al. 2023, Cor 10).

        Parameters
        ----------
        rounds : int
            Number of rounds T >= 1.
        tail_mass : float
            Bound on the mass outside the composition window, per side, in (0, 1e-3].
        rel_accuracy : float, optional
            Default accuracy target of the result's queries (default: this PLD's).
        """
        rounds = validation.integer_at_least("rounds", rounds, 1)
        return compose(self, rounds=rounds, tail_mass=tail_mass, rel_accuracy=rel_accuracy)

    def compose(
        self,
        other: PLD,
        *,
        tail_mass: float = DEFAULT_TAIL_MASS,
        rel_accuracy: float | None = None,
    ) -> PLD:
        """The PLD of this mechanism followed by ``other`` (Koskela et al. 2023, Thm 4)."""
        return compose(self, other, tail_mass=tail_mass, rel_accuracy=rel_accuracy)

    # -- queries ----------------------------------------------------------

    def _delta_upper(self, values: np.ndarray) -> np.ndarray:
        if len(self._directions) == 1:
            return self._directions[0].upper.delta(values)
        return np.max([d.upper.delta(values) for d in self._directions], axis=0)

    def _delta_bracket(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        upper = self._delta_upper(values)
        if len(self._directions) == 1:
            lower = self._directions[0].lower.delta(values)
        else:
            lower = np.max([d.lower.delta(values) for d in self._directions], axis=0)
        return np.minimum(lower, upper), upper

    def _epsilon_bracket(self, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lower = self._directions[0].lower.epsilon(delta)
        upper = self._directions[0].upper.epsilon(delta)
        for d in self._directions[1:]:
            lower = np.maximum(lower, d.lower.epsilon(delta))
            upper = np.maximum(upper, d.upper.epsilon(delta))
        return np.minimum(lower, upper), upper

    def delta_bounds(
        self, eps: float | Sequence[float] | np.ndarray, *, rel_accuracy: float | None = None
    ) -> tuple:
        """Lower and upper bounds on delta(eps), for a scalar or an array of eps (nats).

        ``delta(eps) = max over directions of H_{e^eps}`` (Koskela et al. 2023, eq 2.1). The
        upper bound is never below the true value; the lower bound never above.
        Returns floats for a scalar eps, arrays otherwise.

        Parameters
        ----------
        eps : float or array_like
            Where to evaluate, in nats.
        rel_accuracy : float, optional
            Largest relative width ``(upper - lower) / upper`` wanted, in (0, 1];
            default :attr:`rel_accuracy`. The grid is refined until every delta
            whose upper bound is at least ``1e-15`` meets it (:mod:`pld.distribution.refinement`);
            otherwise an ``AccuracyWarning`` names the limit. 1 turns refinement off.
        """
        return queries.delta_bounds(self, eps, rel_accuracy)

    def delta(
        self, eps: float | Sequence[float] | np.ndarray, *, rel_accuracy: float | None = None
    ) -> float | np.ndarray:
        """Upper bound on delta(eps): the number that is safe to report."""
        return self.delta_bounds(eps, rel_accuracy=rel_accuracy)[1]

    def epsilon_bounds(
        self, delta: float | Sequence[float] | np.ndarray, *, rel_accuracy: float | None = None
    ) -> tuple:
        """Lower and upper bounds on eps(delta) = min{eps >= 0 : delta(eps) <= delta}.

        ``inf`` when no finite eps reaches ``delta`` (more mass at +inf than delta).
        ``rel_accuracy`` (in (0, 1], default :attr:`rel_accuracy`) is the largest
        relative width ``(upper - lower) / upper`` wanted; the grid, and the tail
        and truncation budgets, are refined until it is met (:mod:`pld.distribution.refinement`).
        ``delta`` (in (0, 1]) may be an array: floats for a scalar, arrays (nats)
        otherwise, all solved in one sweep; where no refinement is needed each
        element equals the answer for that delta alone.
        """
        return queries.epsilon_bounds(self, delta, rel_accuracy)

    def epsilon(
        self, delta: float | Sequence[float] | np.ndarray, *, rel_accuracy: float | None = None
    ) -> float | np.ndarray:
        """Upper bound on eps(delta): the number that is safe to report (an array for an
        array of delta)."""
        return self.epsilon_bounds(delta, rel_accuracy=rel_accuracy)[1]

    def curve(
        self, eps: Sequence[float] | np.ndarray, *, rel_accuracy: float | None = None
    ) -> np.ndarray:
        """Table of ``(eps, delta_lower, delta_upper)`` rows for an array of eps."""
        values = validation.real_array("eps", eps)
        lower, upper = self.delta_bounds(values, rel_accuracy=rel_accuracy)
        return np.column_stack([values, lower, upper])

    def directions(self, bound: str = "upper") -> tuple[LossPmf, ...]:
        """The discrete privacy-loss pmf of each direction, for one bound.

        P->Q first, then Q->P unless the PLD is :attr:`symmetric` (its one direction
        then bounds both). Each is a :class:`pld.engine.LossPmf`: masses at the losses
        ``(offset + j) * loss_grid_step`` nats, the mass at +inf and the error terms
        its queries charge (docs/error-bounds.md); :meth:`atoms` as plain arrays.

        Parameters
        ----------
        bound : {"upper", "lower"}
            Which discretisation: the dominating one or the dominated one.
        """
        if not isinstance(bound, str) or bound not in ("upper", "lower"):
            raise ValueError(f"bound must be 'upper' or 'lower' (got {bound!r})")
        return tuple(getattr(direction, bound) for direction in self._directions)

    def atoms(self, bound: str = "upper") -> list[LossAtoms]:
        """The atoms of each direction (P->Q first, then Q->P unless symmetric), of the
        ``bound`` ("upper" or "lower") discretisation, as in :meth:`directions`."""
        return [
            LossAtoms(
                pmf.losses[pmf.masses > 0],
                pmf.masses[pmf.masses > 0],
                pmf.infinity_mass,
                pmf.loss_error,
                pmf.mass_error,
            )
            for pmf in self.directions(bound)
        ]

    def rdp(
        self, orders: Sequence[float] | np.ndarray, *, infinity_loss: float = math.inf
    ) -> np.ndarray:
        """Rényi-DP of the dominating pair at the given orders (see :func:`pld.rdp.from_pld`).

        Mass at +inf (truncated tails) makes the RDP infinite unless the
        mechanism's privacy loss is known to be at most ``infinity_loss`` nats,
        where that mass is then placed, or the mechanism attached the Rényi
        moments of its truncated tails (:meth:`with_tail_moments`; the Gaussian,
        subsampled Gaussian and discrete Gaussian do). Mechanisms built with
        ``max_loss`` (clones, randomised response, Laplace) already place their
        truncated mass there.
        """
        from pld.rdp import from_pld

        return from_pld(self, orders, infinity_loss=infinity_loss)

    # -- hypothesis testing (pld.distribution.tradeoff) ---------------------------------

    def tradeoff(self, fpr: float | Sequence[float] | np.ndarray) -> tuple:
        """Bounds on the smallest false-negative rate of any test at each false-positive rate.

        The trade-off curve f of f-DP (Dong, Roth and Su 2022), from delta(eps) by
        duality (see :mod:`pld.distribution.tradeoff`). Returns ``(lower, upper)``, floats for
        a scalar ``fpr`` in [0, 1], arrays otherwise; ``lower`` is the safe one.
        The largest true-positive rate of a test is ``1 - f(fpr)``.
        """
        from pld.distribution.tradeoff import tradeoff_bounds

        return tradeoff_bounds(self, fpr)

    # -- Rényi moments of truncated tails (pld.rdp) ---------------------------

    #: Per direction, ``None`` or a :class:`TailMoments` of the mass charged to +inf.
    _tail_moments: tuple[TailMoments | None, ...] = ()

    @property
    def tail_moments(self) -> tuple[TailMoments | None, ...]:
        """Per direction, what the mechanism knows about the mass it charged to +inf.

        Empty unless set by :meth:`with_tail_moments`; lets :meth:`rdp` stay
        finite for mechanisms with an unbounded privacy loss.
        """
        return self._tail_moments

    def with_tail_moments(self, *tails: TailMoments | None) -> PLD:
        """A copy of this one-round PLD that knows the Rényi moments of its truncated mass.

        One :class:`TailMoments` (or ``None``) per direction (P->Q first). Each
        must bound, for the outcomes the mechanism left out of its pmf and
        charged to +inf, ``E_P[exp(t L) ; left out]`` from above for every
        ``t > 0`` (L the privacy loss of that direction).
        """
        if self._composed:
            raise ValueError("tail moments describe one round, not a composition")
        if len(tails) != len(self._directions):
            raise ValueError(
                f"give one tail (or None) per direction ({len(self._directions)}, got {len(tails)})"
            )
        for tail in tails:
            if tail is not None and not isinstance(tail, TailMoments):
                raise ValueError(f"tails must be TailMoments or None (got {type(tail).__name__})")
        copy = self._copy()
        copy._tail_moments = tuple(tails)
        return copy

    # -- equality and storage (pld.distribution.storage) ---------------------------------

    def __eq__(self, other: object) -> bool:
        """Value equality: same symmetry, composition flag, grid, masses and error terms.

        Two equal PLDs answer every query identically, bit for bit;
        ``pld.load(path) == loss`` after ``loss.save(path)``.
        """
        if not isinstance(other, PLD):
            return NotImplemented
        return (
            self._symmetric == other._symmetric
            and self._composed == other._composed
            and len(self._directions) == len(other._directions)
            and all(
                _same_pmf(getattr(mine, bound), getattr(theirs, bound))
                for mine, theirs in zip(self._directions, other._directions, strict=True)
                for bound in storage.BOUNDS
            )
        )

    # Equal PLDs hold equal float arrays; hashing them is not worth its cost.
    __hash__ = None  # type: ignore[assignment]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this PLD to a small versioned file; read it back with ``pld.load(path)``.

        The format is described in :mod:`pld.distribution.storage`; ``pld.load(path) == self``.
        """
        storage.save_state(self._state(), path)

    def _state(self) -> dict[str, Any]:
        """The plain state :mod:`pld.distribution.storage` writes (its docstring describes it)."""
        return {
            "symmetric": self._symmetric,
            "composed": self._composed,
            "loss_grid_step": self.loss_grid_step,
            "directions": [
                {bound: storage.pmf_state(getattr(direction, bound)) for bound in storage.BOUNDS}
                for direction in self._directions
            ],
        }


def _same_pmf(a: LossPmf, b: LossPmf) -> bool:
    return (
        a.step == b.step
        and a.bound == b.bound
        and all(getattr(a, name) == getattr(b, name) for name in storage.PMF_FIELDS)
        and np.array_equal(a.masses, b.masses)
    )


def load(path: str | os.PathLike[str]) -> PLD:
    """Read a PLD written by :meth:`PLD.save`.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    PLD
        A PLD equal (``==``) to the one that was saved.

    Raises
    ------
    ValueError
        If the file is truncated or corrupted, its checksum does not match its
        content, it was written by a newer format version, or it is not a
        ``pld`` file (:func:`pld.distribution.storage.load_state`).
    """
    state = storage.load_state(path)
    step = state["loss_grid_step"]
    directions = [
        _Direction(*(storage.pmf_from_state(entry[b], step, b) for b in storage.BOUNDS))
        for entry in state["directions"]
    ]
    return PLD(directions, symmetric=state["symmetric"], composed=state["composed"])


def compose(
    *plds: PLD,
    rounds: int = 1,
    tail_mass: float = DEFAULT_TAIL_MASS,
    rel_accuracy: float | None = None,
) -> PLD:
    """Compose PLDs, each ``rounds`` times (Koskela et al. 2023, Thm 4).

    Identical objects are grouped, so ``compose(a, a, b)`` raises ``a``'s
    spectrum to the power 2 instead of multiplying twice. PLDs on grids whose
    steps differ by powers of two (as all default grids do) are placed on the
    finest one, which is exact; a PLD on another step is rebuilt on the finest
    one (when it records its recipe; otherwise the mixture is refused). The
    result records how to rebuild itself from its operands' recipes, so its
    queries can refine (:mod:`pld.distribution.refinement`).

    Parameters
    ----------
    *plds : PLD
        The mechanisms, in any order (composition is commutative).
    rounds : int
        How many times the whole sequence is repeated (>= 1).
    tail_mass : float
        Bound on the mass outside the composition window, per side, in (0, 1e-3].
    rel_accuracy : float, optional
        Default accuracy target of the result's queries, in (0, 1]; default the
        smallest of the operands'.
    """
    started = time.perf_counter()
    if not plds:
        raise ValueError("compose needs at least one PLD")
    for item in plds:
        if not isinstance(item, PLD):
            raise ValueError(f"compose takes PLD objects (got {type(item).__name__})")
    rounds = validation.integer_at_least("rounds", rounds, 1)
    tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    if rel_accuracy is None:
        target = min(p.rel_accuracy for p in plds)
    else:
        target = check_rel_accuracy(rel_accuracy)
    if len(plds) == 1 and rounds == 1:
        return plds[0] if target == plds[0].rel_accuracy else plds[0].with_rel_accuracy(target)
    operands = plds
    plds, factors = common_grid(plds)
    check_grid_points(
        sum(p._directions[0].upper.masses.size * factors[id(p)] for p in plds),
        f"placing PLDs of loss_grid_step {sorted({p.loss_grid_step for p in plds})} on the "
        "finest grid",
        "build them with one loss_grid_step",
    )
    counts: dict[int, list] = {}
    for item in plds:
        counts.setdefault(id(item), [item, 0])[1] += rounds
    groups = list(counts.values())
    symmetric = all(p.symmetric for p, _ in groups)
    n_directions = 1 if symmetric else 2
    operand_directions = [(p._directions, factors[id(p)], c) for p, c in groups]
    directions = [
        _Direction(upper, lower)
        for upper, lower in compose_directions(operand_directions, n_directions, tail_mass)
    ]
    tilt_factors = one_round_factors(
        [
            (p._directions, f, c, p.composed, p._tilt_factors)
            for (_, f, c), (p, _) in zip(operand_directions, groups, strict=True)
        ],
        n_directions,
    )
    finest = min(p.loss_grid_step for p in plds)
    unique = {id(p): p for p in operands}

    def recipe(step: float, budget: float | None) -> PLD:
        ratio = step / finest
        rebuilt = {
            key: p.rebuilt(p.loss_grid_step * ratio, tail_mass=budget) if p.refinable else p
            for key, p in unique.items()
        }
        return compose(
            *(rebuilt[id(p)] for p in operands),
            rounds=rounds,
            tail_mass=tail_mass if budget is None else min(tail_mass, budget),
            rel_accuracy=target,
        )

    result = PLD(
        directions,
        symmetric=symmetric,
        composed=True,
        recipe=recipe if any(p.refinable for p in operands) else None,
        rounds=rounds * sum(p.rounds for p in operands),
        rel_accuracy=target,
        tail_budget=max(tail_mass, *(p.tail_budget for p in operands)),
    )
    result._tilt_factors = tilt_factors
    operands_seconds = sum(p._build_seconds for p in unique.values())  # a rebuild redoes them
    result._build_seconds = time.perf_counter() - started + operands_seconds
    result._analysis_width = max(p._analysis_width for p in unique.values())
    return result
