"""Recipes: how a mechanism's PLD rebuilds itself on a finer grid.

:func:`refinable` is the decorator a mechanism puts on its public constructor;
the PLD it returns records a recipe (:data:`pld.distribution.loss_distribution.Recipe`) that
calls the constructor again on a finer grid, so that queries can meet their
``rel_accuracy`` (:mod:`pld.distribution.refinement`).
:func:`pld.distribution.loss_distribution.compose` records the recipe of a composition
from its operands' ones.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pld.distribution.loss_distribution import PLD
from pld.distribution.refinement import check_rel_accuracy

_Constructor = TypeVar("_Constructor", bound=Callable[..., PLD])


def _rebuilt_argument(value: object, ratio: float, tail_mass: float | None) -> object:
    if isinstance(value, PLD) and value.refinable:
        return value.rebuilt(value.loss_grid_step * ratio, tail_mass=tail_mass)
    return value


def refinable(constructor: _Constructor) -> _Constructor:
    """Make a mechanism's PLDs rebuildable on a finer grid: the one line a mechanism adds.

    Decorate the public constructor (``@refinable`` above ``def mechanism(...)``). It
    must take ``loss_grid_step`` as a keyword (``None``: its default grid). The
    returned PLD records a recipe that calls the constructor again with the same
    arguments and a finer ``loss_grid_step``; PLD arguments (e.g. ``subsample``'s
    base) are rebuilt with the same step ratio, and a ``tail_mass`` keyword, if the
    constructor has one, is lowered to the budget a query asks for. The
    decorated constructor also accepts ``rel_accuracy`` (in (0, 1]): the default
    accuracy target of the PLD's queries (:mod:`pld.distribution.refinement`).
    """
    parameters = inspect.signature(constructor).parameters
    tail_default = parameters["tail_mass"].default if "tail_mass" in parameters else None

    @functools.wraps(constructor)
    def build(*args: Any, rel_accuracy: float | None = None, **kwargs: Any) -> PLD:
        started = time.perf_counter()
        result = constructor(*args, **kwargs)
        seconds = time.perf_counter() - started
        target = result.rel_accuracy if rel_accuracy is None else check_rel_accuracy(rel_accuracy)
        own_step = result.loss_grid_step

        def recipe(step: float, tail_mass: float | None) -> PLD:
            ratio = step / own_step
            new_args = [_rebuilt_argument(value, ratio, tail_mass) for value in args]
            new_kwargs = {
                key: _rebuilt_argument(value, ratio, tail_mass) for key, value in kwargs.items()
            }
            new_kwargs["loss_grid_step"] = step
            current_tail = kwargs.get("tail_mass", tail_default)
            if tail_mass is not None and isinstance(current_tail, float):
                new_kwargs["tail_mass"] = min(current_tail, tail_mass)
            return build(*new_args, rel_accuracy=target, **new_kwargs)

        own_tail = kwargs.get("tail_mass", tail_default)
        budgets = [
            value.tail_budget for value in (*args, *kwargs.values()) if isinstance(value, PLD)
        ]
        if isinstance(own_tail, float):
            budgets.append(own_tail)
        made = result._copy(
            recipe=recipe, rel_accuracy=target, tail_budget=max(budgets, default=0.0)
        )
        made._build_seconds = seconds
        return made

    return build  # type: ignore[return-value]
