"""Lattice laws that bound ``E[(Z_1 + ... + Z_n)_+]`` for i.i.d. ``Z`` from both sides.

The blanket bound of a shuffled randomizer (docs/blanket-continuous.md) is
``(1/n) E[(S)_+]`` for a sum ``S`` of ``n`` i.i.d. copies of a real variable.
This module turns the variable's law into lattice laws (grid ``z_j = j h``) that
bound the expectation from both sides; :mod:`pld.shuffling.blanket.continuous_window`
evaluates it on each. ``(.)_+`` is convex and non-decreasing, and convex order is
preserved by sums of independent variables, so

* a **mean-preserving spread** of each cell's mass onto the cell's two end
  points (:func:`spread_to_grid`) gives an upper bound, and
* a **contraction** (merging masses into their barycentre, :func:`contract_to_grid`),
  followed at the very end by moving a left-over carry down, gives a lower bound;

both are second order in ``h``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


def spread_to_grid(
    index: np.ndarray, frac: np.ndarray, mass: np.ndarray, first: int, size: int
) -> np.ndarray:
    """Mean-preserving spread of atoms onto the grid (an upper bound in convex order).

    An atom of ``mass`` at ``(index + frac) h`` with ``0 <= frac <= 1`` goes to
    ``index`` with ``mass (1 - frac)`` and to ``index + 1`` with ``mass frac``.
    Returns the masses on grid indices ``first .. first + size - 1``.
    """
    low = np.bincount(index - first, weights=mass * (1.0 - frac), minlength=size)
    high = np.bincount(index + 1 - first, weights=mass * frac, minlength=size)
    return low[:size] + high[:size]


@njit(cache=True)
def _contract(positions, masses, out, first):  # pragma: no cover - numba
    """Left-to-right sweep into ``out`` (grid index ``first`` at 0); returns the final carry."""
    carry_mass = 0.0
    carry_deficit = 0.0  # sum of mass * (target - position) >= 0
    target = 0
    for i in range(positions.shape[0]):
        mass = masses[i]
        if mass <= 0.0:
            continue
        x = positions[i]
        if carry_mass == 0.0:
            target = int(math.ceil(x))
            carry_mass = mass
            carry_deficit = mass * (target - x)
            continue
        excess = x - target
        if excess <= 0.0:
            carry_mass += mass
            carry_deficit += mass * (target - x)
            continue
        share = carry_deficit / (mass * excess)
        if share > 1.0:
            carry_mass += mass
            carry_deficit -= mass * excess
            continue
        out[target - first] += carry_mass + share * mass
        rest = (1.0 - share) * mass
        target = int(math.ceil(x))
        carry_mass = rest
        carry_deficit = rest * (target - x)
    if carry_mass > 0.0:
        return carry_mass, target - carry_deficit / carry_mass
    return 0.0, 0.0


def contract_to_grid(positions: np.ndarray, masses: np.ndarray) -> tuple[int, np.ndarray]:
    """A lattice law below the given atoms in convex order (a lower bound).

    Atoms (``positions`` in grid units, sorted increasingly) are swept from the
    top down to the lowest atom, then that atom is swept up (as the engine
    sweeps from both ends, docs/error-bounds.md §2): a
    carried mass whose barycentre lies on one side of the next grid point ``g``
    is merged with just enough of the next atom beyond ``g`` to put the
    barycentre exactly on ``g`` (merging is a contraction). The downward sweep's
    final carry joins the lowest atom as one atom at its barycentre; the last
    carry is moved down to the grid point below its barycentre, which lowers
    every non-decreasing functional. Heavy isolated atoms at either end (the
    Laplace randomizer's) are thus merged with their neighbours instead of
    being rounded (first order). Returns ``(first, masses)`` on grid indices
    ``first, first + 1, ...``.
    """
    first = int(math.floor(positions[0])) - 1
    size = int(math.ceil(positions[-1])) - first + 2
    out = np.zeros(size)
    split = 1  # the last carry ends at the bottom, where (.)_+ of a sum cares least
    mirrored = np.zeros(size)
    # Grid index g of the mirror image -g is stored at mirrored[last - g].
    last = first + size - 1
    carry_mass, carry_mean = _contract(
        -positions[split:][::-1].copy(), masses[split:][::-1].copy(), mirrored, -last
    )
    out += mirrored[::-1]
    lower_positions = positions[:split]
    lower_masses = masses[:split]
    if carry_mass > 0.0:
        lower_positions = np.append(lower_positions, -carry_mean)
        lower_masses = np.append(lower_masses, carry_mass)
    if lower_positions.shape[0]:
        carry_mass, carry_mean = _contract(lower_positions, lower_masses, out, first)
        if carry_mass > 0.0:
            out[int(math.floor(carry_mean)) - first] += carry_mass
    return first, out


def with_zero_atom(first: int, masses: np.ndarray, weight: float) -> tuple[int, np.ndarray]:
    """The lattice law of ``B Z``, ``B ~ Bernoulli(weight)``, from the law of ``Z``.

    ``weight`` times the masses on grid indices ``first, first + 1, ...``, plus
    ``1 - weight`` at index 0 (the grid is grown to hold it).
    """
    if first > 0 or first + masses.shape[0] <= 0:
        low = min(first, 0)
        grown = np.zeros(max(first + masses.shape[0], 1) - low)
        grown[first - low : first - low + masses.shape[0]] = masses
        first, masses = low, grown
    masses = weight * masses
    masses[-first] += 1.0 - weight
    return first, masses
