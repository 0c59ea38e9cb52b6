"""The law of a sum of i.i.d. likelihood ratios, bracketed by a split and a merge scheme.

For the pair ``(P, Q)`` of one round, ``X = dP/dQ`` under Q (with an atom at 0
for the Q-mass where P is 0). Random allocation of one round among ``t``
(:mod:`pld.allocation.mechanism`) is the pair ``(Y Q^t, Q^t)`` with ``Y = S / t``
and ``S = X_1 + ... + X_t`` i.i.d. under Q: one law, that of ``S``, holds both
directions.

Binary powering: the laws of ``S_1 = X``, ``S_2``, ``S_4``, ... and of the
running sum of the powers in ``t``'s binary expansion, each by one convolution
of two laws (every pair of atoms, :mod:`pld.allocation.kernels`), put back on a
grid after each step:

* **split** (dominating): each sum ``v`` is split between its two grid points
  keeping mass and mean. With ``V`` the computed variable and ``S`` the exact
  one, ``E[V | X_1..X_t] = S`` (every split keeps the conditional mean and the
  splits are independent), so the kernel "draw ``X`` from its law given ``V``
  under the coupled Q" maps ``Q_V`` to ``Q^t`` and ``(V / t) Q_V`` to
  ``E[V / t | X] Q^t = (S / t) Q^t``: the computed pair dominates the exact one
  (Blackwell). Mass dropped anywhere (beyond the last grid point) is charged to
  the fully revealing pair by the caller, which dominates too.
* **merge** (dominated): each sum goes to its cell, which keeps its mass and
  its mean; the cell means are the next step's values. ``V`` is then a function
  of ``X`` with ``E[S | V] = V`` (by induction: independence of the two operands
  gives ``E[S_a | V_a, V_b] = V_a``), so ``(V / t) Q_V`` and ``Q_V`` are the
  images of ``(S / t) Q^t`` and ``Q^t`` under that function: a post-processing.

Grids. A partial sum of ``m`` terms lives on ``[0, m)`` in ``ceil(1 / h_m)``
linear cells and above ``m`` on a geometric grid of ratio ``e^{h_m}``, with
``h_m = h min(max(sqrt(t / m), STAGE_STEP_FLOOR), STAGE_STEP_CAP)``: a split of a
sum near ``m`` adds a mean-zero error of at most ``m h_m / 2``; summed over the
``t / m`` partial sums of a stage it moves ``Y`` by a standard deviation of about
``h / 2`` (bulk; ``STAGE_STEP_FLOOR`` times that for the last stages), while a single
dominant term (the tail) sees relative errors up to ``h_m``, second order in
delta because means are kept. The last step goes straight to the final grid
``t e^{k h}`` (points of the loss grid ``k h``).

Rounding: every mass is a sum of non-negative products, each product and share
with a relative error of a few units of round-off ``u``; a step adds
``(largest number of terms in one cell + 4) u`` to the relative error of the
masses (operands' errors add), and ``2 u`` to that of the values (sum and cell
mean); the caller widens by both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pld.numerics import UNIT_ROUNDOFF

#: Coarsest stage step, as a multiple of the final loss grid step.
STAGE_STEP_CAP = 16.0

#: Finest stage step, as a multiple of the final loss grid step (splits keep
#: means, so their error is second order: measured on the Gaussian, 4 instead of 1
#: widens brackets from ~2e-6 to ~5e-6 relative at T = 10 and runs 3-4x faster).
STAGE_STEP_FLOOR = 4.0

_UNIT = UNIT_ROUNDOFF

#: Relative distance within which a sum above the last grid point is put on it
#: (its float error; charged as a value error).
SNAP = 64 * _UNIT

_SIDES = ("upper", "lower")


@dataclass(frozen=True)
class Grid:
    """Points ``0 = g_0 < g_1 < ...``: ``linear`` cells on ``[0, start)``, then ratio ``e^step``."""

    start: float
    linear: int
    step: float
    points: np.ndarray

    @classmethod
    def covering(cls, start: float, linear: int, step: float, bottom: float, top: float) -> Grid:
        """The grid from ``bottom`` to ``top`` (the smallest positive and the largest sum).

        Its points are 0, ``bottom``, the regular points strictly between, and
        ``top``: no split moves mass outside the range of the sums.
        """
        count = max(1, math.ceil(math.log(max(top, start) / start) / step) + 1)
        regular = np.concatenate(
            (np.arange(1, linear) * (start / linear), start * np.exp(np.arange(count) * step))
        )
        inside = regular[(regular > bottom) & (regular < top)]
        ends = [bottom, top] if top > bottom else [bottom]
        points = np.concatenate(([0.0], ends[:1], inside, ends[1:]))
        return cls(start, linear, step, points)


@dataclass(frozen=True)
class RatioLaw:
    """Atoms ``values`` (>= 0, increasing) with Q-masses ``mass`` of a sum of ``terms`` ratios.

    ``mass_error`` bounds the relative error of every mass and ``value_error``
    that of every value (:mod:`pld.allocation.sums`, "Rounding").
    """

    values: np.ndarray
    mass: np.ndarray
    terms: int
    mass_error: float = 0.0
    value_error: float = 0.0


def stage_step(step: float, terms: int, total: int) -> float:
    """Relative grid step of a partial sum of ``terms`` of ``total`` ratios."""
    return step * min(max(math.sqrt(total / terms), STAGE_STEP_FLOOR), STAGE_STEP_CAP)


def stage_grid(terms: int, step: float, total: int, bottom: float, top: float) -> Grid:
    """The grid of a partial sum of ``terms`` ratios with positive values in ``[bottom, top]``."""
    h = stage_step(step, terms, total)
    return Grid.covering(float(terms), max(1, math.ceil(1 / h)), h, bottom, top)


def final_grid(total: int, step: float, bottom: float, top: float) -> Grid:
    """Grid ``{0} + {total e^{k h}}`` (points of the loss grid) from below ``bottom`` to ``top``."""
    first = math.floor(math.log(bottom * (1 + SNAP) / total) / step) if bottom > 0 else 0
    start = total * math.exp(first * step)
    # Sums within SNAP of the last point are placed on it (kernels.split_pairs).
    count = max(0, math.ceil(math.log(max(top / (1 + SNAP), start) / start) / step)) + 1
    points = np.concatenate(([0.0], total * np.exp((first + np.arange(count)) * step)))
    return Grid(start, 1, step, points)


def combine(a: RatioLaw, b: RatioLaw, grid: Grid, side: str) -> RatioLaw:
    """The law of the sum of independent ``a`` and ``b`` on ``grid`` (split or merge)."""
    from pld.allocation.kernels import scatter_pairs

    size = grid.points.size
    terms = np.zeros(size, dtype=np.int64)
    mass = np.zeros(size)
    moment = np.zeros(size)
    merge = side == "lower"
    scatter_pairs(a.values, a.mass, b.values, b.mass, grid.points, SNAP, merge, mass, moment, terms)
    if merge:
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where(mass > 0, moment / mass, 0.0)
    else:
        values = grid.points
    keep = mass > 0
    rounding = (float(terms.max(initial=0)) + 4) * _UNIT
    return RatioLaw(
        values[keep],
        mass[keep],
        a.terms + b.terms,
        a.mass_error + b.mass_error + rounding,
        max(a.value_error, b.value_error) + 2 * _UNIT + SNAP,
    )


def trimmed(law: RatioLaw, total: int, budget: float) -> RatioLaw:
    """``law`` without its extreme atoms, charging at most ``budget`` at each end.

    Dropping an atom of a partial sum of m terms drops Q-mass ``w`` and the
    P-mass ``E[S / t ; dropped] <= w (v + t - m) / t`` of the completed sums
    (each other ratio has mean at most 1 under Q). On the upper side the caller
    charges what is missing to the fully revealing pair (dominating); on the
    lower side dropping is a restriction of both measures to one event, which
    lowers every hockey-stick divergence in both directions.
    """
    if budget <= 0 or law.values.size < 3:
        return law
    charge = law.mass * np.maximum((law.values + (total - law.terms)) / total, 1.0)
    from_top = np.cumsum(charge[::-1])[::-1]
    from_bottom = np.cumsum(charge)
    keep = (from_top > budget) & (from_bottom > budget)
    keep[0] |= law.values[0] == 0  # the atom at 0 stays (it is not a tail)
    if keep.all():
        return law
    return RatioLaw(law.values[keep], law.mass[keep], law.terms, law.mass_error, law.value_error)


def estimated_work(law: RatioLaw, total: int, step: float, tail_mass: float) -> float:
    """Pairs of atoms the binary scheme is expected to visit for ``total`` copies of ``law``.

    A partial sum of m terms is expected on ``[m mean - 10 sqrt(m var), m + top]``
    (``top``: the largest value that trimming keeps), its linear cells below m and
    its geometric ones above.
    """
    mean = float(np.sum(law.mass * law.values))
    var = max(float(np.sum(law.mass * law.values**2)) - mean**2, 0.0)
    top = float(trimmed(law, total, tail_mass / (4 * total.bit_length())).values[-1])

    def size(terms: int) -> float:
        h = stage_step(step, terms, total)
        lower = max(0.0, terms * mean - 10 * math.sqrt(terms * var))
        linear = max(0.0, terms - lower) / terms * math.ceil(1 / h)
        return linear + math.log((top + terms) / terms) / h + 2

    work, power, accumulated = 0.0, 1, 0
    remaining = total
    while remaining:
        if remaining & 1:
            if accumulated:
                work += size(accumulated) * size(power)
            accumulated += power
        remaining >>= 1
        if remaining:
            work += size(power) ** 2
            power *= 2
    return work


def iid_sum(law: RatioLaw, total: int, step: float, side: str, tail_mass: float = 0.0) -> RatioLaw:
    """The law of the sum of ``total`` >= 2 i.i.d. copies of ``law`` (one ratio) on the final grid.

    At most ``tail_mass`` of P- or Q-mass is dropped at the ends of the partial
    sums (:func:`trimmed`), split evenly between the steps. The upper side's
    values are points ``total e^{k h}`` of the final grid (and possibly 0), the
    lower side's cell means.
    """
    if side not in _SIDES:
        raise ValueError(f"side must be one of {_SIDES} (got {side!r})")
    steps = 2 * total.bit_length()
    budget = tail_mass / (2 * steps)
    power = trimmed(_rebinned(law, step, total, side), total, budget)
    accumulated: RatioLaw | None = None
    remaining = total
    while remaining:
        if remaining & 1:
            if accumulated is None:
                accumulated = power
            else:
                accumulated = _step(accumulated, power, step, total, side)
                accumulated = trimmed(accumulated, total, budget)
        remaining >>= 1
        if remaining:
            power = _step(power, power, step, total, side)
            power = trimmed(power, total, budget)
    assert accumulated is not None and accumulated.terms == total
    return accumulated


def _rebinned(law: RatioLaw, step: float, total: int, side: str) -> RatioLaw:
    """One ratio on its stage grid (the base pair's atoms split or merged)."""
    zero = RatioLaw(np.zeros(1), np.ones(1), 0)
    grid = stage_grid(1, step, total, _smallest_sum(law, zero), float(law.values[-1]))
    result = combine(law, zero, grid, side)
    return RatioLaw(result.values, result.mass, 1, result.mass_error, result.value_error)


def _step(a: RatioLaw, b: RatioLaw, step: float, total: int, side: str) -> RatioLaw:
    terms = a.terms + b.terms
    top = float(a.values[-1] + b.values[-1])
    bottom = _smallest_sum(a, b)
    if terms < total:
        return combine(a, b, stage_grid(terms, step, total, bottom, top), side)
    return combine(a, b, final_grid(total, step, bottom, top), side)


def _smallest_sum(a: RatioLaw, b: RatioLaw) -> float:
    """The smallest positive sum of an atom of ``a`` and one of ``b`` (values increase)."""
    candidates = []
    for first, second in ((a.values, b.values), (b.values, a.values)):
        positive = first[first > 0]
        if positive.size:
            candidates.append(float(positive[0] + second[0]))
    return min(candidates, default=0.0)
