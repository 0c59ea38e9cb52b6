"""What a composition of PLDs does to its operands' grids and directions, PLD-free.

:func:`pld.compose` (in :mod:`pld.distribution.loss_distribution`) checks its arguments,
calls :func:`common_grid` to place the operands on nested grids and
:func:`compose_directions` to convolve them with the engine
(:func:`pld.engine.compose.compose`, Koskela et al. 2023, Thm 4), then wraps the result in a
PLD with its recipe and its one-round factors (:func:`one_round_factors`), from
which queries recompute it exponentially tilted (:func:`tilted_directions`,
:mod:`pld.engine.tilted`). These functions only read the operands' public contract
(``loss_grid_step``, ``refinable``, ``rebuilt``) and their per-direction
:class:`~pld.engine.loss_pmf.LossPmf` pairs, so this module imports no PLD.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pld.engine import LossPmf

if TYPE_CHECKING:
    from pld.distribution.loss_distribution import PLD

#: Per pmf (while it lives), its copies refined onto finer grids: a PLD composed again
#: hands the engine the same refined pmf, whose window-search memo is then reused.
_REFINED: weakref.WeakKeyDictionary[LossPmf, dict[int, LossPmf]] = weakref.WeakKeyDictionary()
#: Refined copies of more grid points than this (32 MiB) are made afresh each time.
_REFINED_KEPT_POINTS = 2**22


def _refined(pmf: LossPmf, factor: int) -> LossPmf:
    """``pmf.refined(factor)``, one copy per (pmf, factor) unless it is large."""
    if factor == 1:
        return pmf
    if pmf.masses.shape[0] * factor > _REFINED_KEPT_POINTS:
        return pmf.refined(factor)
    copies = _REFINED.setdefault(pmf, {})
    if factor not in copies:
        copies[factor] = pmf.refined(factor)
    return copies[factor]


def common_grid(plds: Sequence[PLD]) -> tuple[list[PLD], dict[int, int]]:
    """The PLDs on nested grids, and each one's step as a multiple of the finest (by ``id``).

    Steps that differ by powers of two nest already; a PLD on another step is
    rebuilt on the finest one if it can be (:attr:`pld.PLD.refinable`), else refused.
    """
    finest = min(p.loss_grid_step for p in plds)

    def factor(p: PLD) -> int | None:
        ratio = round(p.loss_grid_step / finest)
        nested = abs(p.loss_grid_step - ratio * finest) <= 1e-9 * finest
        return ratio if nested and not ratio & (ratio - 1) else None

    rebuilt: dict[int, PLD] = {}
    for p in plds:
        if id(p) in rebuilt or factor(p) is not None:
            continue
        if not p.refinable:
            steps = sorted({q.loss_grid_step for q in plds})
            raise ValueError(
                "PLDs composed together need the same loss_grid_step, or steps that differ "
                f"by powers of two (got {steps}); build them with one loss_grid_step"
            )
        rebuilt[id(p)] = p.rebuilt(finest)
    result = [rebuilt.get(id(p), p) for p in plds]
    finest = min(p.loss_grid_step for p in result)
    factors = {}
    for p in result:
        value = factor(p)
        if value is None:
            raise ValueError(
                f"a PLD rebuilt on loss_grid_step={finest:g} came back on {p.loss_grid_step:g}"
            )
        factors[id(p)] = value
    return result, factors


def compose_directions(
    groups: Sequence[tuple[Sequence[Any], int, int]], n_directions: int, tail_mass: float
) -> list[tuple[LossPmf, LossPmf]]:
    """The (upper, lower) pmfs of each direction of the composition.

    Parameters
    ----------
    groups : sequence of (directions, factor, count)
        Per distinct operand: its directions (each with ``upper`` and ``lower``
        :class:`~pld.engine.loss_pmf.LossPmf`; one stands for both when the
        operand is symmetric), its step as a multiple of the finest, and how many
        times it is composed.
    n_directions : int
        1 when every operand is symmetric, else 2 (P->Q, then Q->P).
    tail_mass : float
        Mass allowed outside the composition window, per side.
    """
    from pld.engine import compose_bounds

    result = []
    for index in range(n_directions):
        chosen = [
            (directions[min(index, len(directions) - 1)], f, c) for directions, f, c in groups
        ]
        result.append(
            compose_bounds(
                [(_refined(d.upper, f), c) for d, f, c in chosen],
                [(_refined(d.lower, f), c) for d, f, c in chosen],
                tail_mass,
            )
        )
    return result


def one_round_factors(
    operands: Sequence[tuple[Sequence[Any], int, int, bool, Any]], n_directions: int
) -> tuple[tuple[list, list], ...] | None:
    """Per direction, the one-round (upper, lower) pmfs and counts behind a composition.

    Parameters
    ----------
    operands : sequence of (directions, factor, count, composed, tilt_factors)
        Per distinct operand: as for :func:`compose_directions`, whether it is a
        composition, and its own one-round factors (None if unknown). Nested
        compositions are flattened (counts multiplied).
    n_directions : int
        1 when every operand is symmetric, else 2.

    Returns
    -------
    tuple or None
        None when some operand's factors are unknown (a loaded composition) or
        carry absolute error terms (:func:`pld.engine.tilted.tiltable`).
    """
    from pld.engine import tiltable

    result = []
    for index in range(n_directions):
        uppers, lowers = [], []
        for directions, f, count, composed, inner in operands:
            if inner is not None:
                inner_uppers, inner_lowers = inner[min(index, len(inner) - 1)]
                uppers += [(_refined(q, f), k * count) for q, k in inner_uppers]
                lowers += [(_refined(q, f), k * count) for q, k in inner_lowers]
                continue
            d = directions[min(index, len(directions) - 1)]
            if composed or not (tiltable(d.upper) and tiltable(d.lower)):
                return None
            uppers.append((_refined(d.upper, f), count))
            lowers.append((_refined(d.lower, f), count))
        result.append((uppers, lowers))
    return tuple(result)


def tilted_directions(
    directions: Sequence[Any],
    factors: Sequence[tuple[list, list]],
    target: float,
    cut: float,
    budget: float,
    tail_mass: float,
) -> list[tuple[LossPmf, LossPmf]] | None:
    """Each direction recomputed from its one-round factors, exponentially tilted.

    The tilt puts the composed mean at ``target`` (nats); the result is tight
    for eps >= ``cut`` and valid at every eps (:mod:`pld.engine.tilted`). The
    factors' highest atoms, of composed P-mass at most ``budget``, first go to
    +inf (upper) or are dropped (lower). A direction whose mean is above
    ``target`` keeps its (upper, lower) pmfs. None when no direction can be
    tilted or the grid budget refuses it.
    """
    from pld.engine import (
        BudgetError,
        TiltOverflowError,
        clip_tails,
        tilt_exponent,
        tilted_compose_bounds,
    )

    result, tilted = [], False
    for direction, pair in zip(directions, factors, strict=True):
        uppers, lowers = (clip_tails(f, budget) if budget > 0 else f for f in pair)
        lam = tilt_exponent(uppers, target)
        if lam is None:
            result.append((direction.upper, direction.lower))
            continue
        start = cut - direction.upper.loss_error - 2 * direction.upper.step
        try:
            upper, lower = tilted_compose_bounds(uppers, lowers, lam, start, tail_mass)
        except (BudgetError, TiltOverflowError, MemoryError):
            return None
        result.append((upper, lower))
        tilted = True
    return result if tilted else None
