"""What a composition of PLDs does to its operands' grids and directions, PLD-free.

:func:`pld.compose` (in :mod:`pld.loss_distribution`) checks its arguments,
calls :func:`common_grid` to place the operands on nested grids and
:func:`compose_directions` to convolve them with the engine
(:func:`pld.engine.compose.compose`, seed 004 Thm 4), then wraps the result in a
PLD with its recipe. These functions only read the operands' public contract
(``loss_grid_step``, ``refinable``, ``rebuilt``) and their per-direction
:class:`~pld.engine.loss_pmf.LossPmf` pairs, so this module imports no PLD.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pld.engine.loss_pmf import LossPmf

if TYPE_CHECKING:
    from pld.loss_distribution import PLD


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
    from pld.engine.compose import compose as compose_pmfs

    result = []
    for index in range(n_directions):
        chosen = [
            (directions[min(index, len(directions) - 1)], f, c) for directions, f, c in groups
        ]
        upper = compose_pmfs([(d.upper.refined(f), c) for d, f, c in chosen], tail_mass)
        lower = compose_pmfs([(d.lower.refined(f), c) for d, f, c in chosen], tail_mass)
        result.append((upper, lower))
    return result
