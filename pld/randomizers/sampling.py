"""Sampling-based randomizers: report one of d attributes, chosen uniformly, through a base.

A user holds d attributes ``(x_1, ..., x_d)`` in the base randomizer's domain; it picks
``j`` uniformly and reports ``(j, y)`` with ``y ~ R(x_j)`` (range queries, marginals,
itemsets: Wang et al. 2024, "parallel composition" in the shuffle model). So
``R_s(x)(j, y) = R(x_j)(y) / d`` and ``min_x R_s(x)(j, y) = omega_min(y) / d``: the
blanket mass is the base's, and for two records that differ in s attributes the
blanket classes are ``s/d`` times the base's classes of a pair plus ``(d - s)/d`` times
the classes ``(rho_v, rho_v)`` of an attribute that is the same under both, with
``rho_v = R(v) / omega_min`` (no ``d x K`` outputs enumerated).

This needs a base whose ordered pairs of inputs all have the same classes and whose
rows all have the same ``rho_v`` classes (k-ary randomised response and any other
symmetric base; checked on its matrix). ``differing`` bounds the attributes in which
neighbouring records differ: ``d`` (default) for a replaced record, whose worst pair
differs everywhere and then equals the base randomizer exactly (the attribute index
carries nothing); ``1`` for records that differ in one attribute, where the other
attributes' reports are blanket-like and the bound drops sharply.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.engine import BudgetError
from pld.randomizers.finite import Classes, FiniteRandomizer, Groups
from pld.randomizers.presets import MAX_MATRIX_ENTRIES, _Preset
from pld.shuffling.blanket import merge_classes


def _row_classes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rho_v, omega_min)`` of row 0, after checking every row has the same classes."""
    low = matrix.min(axis=0)
    if np.any(low <= 0):
        raise ValueError(
            "base must give every output positive probability under every input (a zero "
            "in its matrix leaves outputs outside the blanket)"
        )
    rows = np.sort(matrix / low[None, :], axis=1)
    order = np.argsort(matrix[0] / low)
    if not np.allclose(rows, rows[0], rtol=1e-12, atol=0):
        raise ValueError("base must treat every input alike (its rows are not permutations)")
    return (matrix[0] / low)[order], low[order]


class _Sampled(_Preset):
    def __init__(self, base: FiniteRandomizer, attributes: int, differing: int):
        self.base, self.attributes, self.differing = base, attributes, differing
        matrix = base.exact_matrix()
        if matrix is None:
            raise BudgetError("base's matrix is too large to check its symmetry")
        self._same = _row_classes(matrix)
        pairs = base.blanket_classes()
        if len(pairs) != 1:
            raise ValueError(
                "base must have one class structure for all its ordered pairs of inputs "
                f"(it has {len(pairs)})"
            )
        self._pair = pairs[0]
        m = base.num_inputs
        inputs = m**attributes if attributes * math.log(m) < 60 else 2**62
        super().__init__(
            "sampled", inputs, attributes * base.num_outputs, base.eps0, base.blanket_mass
        )

    def __repr__(self) -> str:
        return f"sampled({self.base!r}, attributes={self.attributes}, differing={self.differing})"

    def _build_matrix(self) -> np.ndarray:
        base, d = self.base.matrix, self.attributes
        records = np.array(list(np.ndindex(*([self.base.num_inputs] * d))))
        return np.concatenate([base[records[:, j]] / d for j in range(d)], axis=1)

    def blanket_classes(self) -> list[Classes]:
        ratio_x, ratio_y, mass = self._pair
        rho, low = self._same
        d = self.attributes
        out = []
        for s in range(1, self.differing + 1):
            out.append(
                merge_classes(
                    np.concatenate((ratio_x, rho)),
                    np.concatenate((ratio_y, rho)),
                    np.concatenate((mass * (s / d), low * ((d - s) / d))),
                )
            )
        return out

    def observer_groups(self) -> list[Groups]:
        # Records differing in ``differing`` attributes (the others equal, their reports
        # in the "equal" group); every other user's record repeats one base dataset.
        share = self.differing / self.attributes
        rest = np.array([0.0, 0.0, 1.0 - share])
        return [
            tuple(share * group + rest for group in candidate)
            for candidate in self.base.observer_groups()
        ]


def sampled(
    base: FiniteRandomizer, attributes: int, differing: int | None = None
) -> FiniteRandomizer:
    """Report one of ``attributes`` attributes, chosen uniformly, through ``base``.

    Parameters
    ----------
    base : FiniteRandomizer
        The randomizer applied to the chosen attribute (e.g. ``krr(k, eps0=...)``); its
        inputs must be alike (module docstring) and its outputs possible under every input.
    attributes : int
        Number of attributes d, >= 1.
    differing : int, optional
        Most attributes in which neighbouring records differ, in [1, d]; default d (a
        replaced record).

    Returns
    -------
    FiniteRandomizer
        Outputs ``(j, y)`` as ``j * K + y``; inputs the records (``K^d`` of them).
    """
    if not isinstance(base, FiniteRandomizer):
        raise ValueError(f"base must be a finite randomizer (got {type(base).__name__})")
    attributes = validation.integer_at_least("attributes", attributes, 1)
    if differing is None:
        differing = attributes
    differing = validation.integer_at_least("differing", differing, 1, attributes)
    if attributes * base.num_outputs > MAX_MATRIX_ENTRIES:
        raise BudgetError(
            f"attributes x base outputs = {attributes * base.num_outputs} outputs, more than "
            f"{MAX_MATRIX_ENTRIES}"
        )
    return _Sampled(base, attributes, differing)
