"""One delta(eps) or one eps(delta) of a :class:`~pld.engine.loss_pmf.LossPmf` in Python floats.

The array queries of :class:`~pld.engine.loss_pmf.LossPmf` (``delta``, ``epsilon``)
spend microseconds per numpy call on one-element arrays; a query of one value
calls these functions instead. They run the array code's operations in the same
order on the same floats (``+ - * /`` are IEEE in both; ``exp``, ``expm1`` and
``log`` are numpy's ufuncs applied to one float, which give the array's values),
so a value queried alone is bit for bit the value it gets in an array
(``tests/engine/test_engine_numerics.py`` checks both bounds). The formulas are those of
:mod:`pld.engine.loss_pmf` (Koskela et al. 2023, eq 2.1; docs/error-bounds.md §5).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pld.numerics import UNIT_ROUNDOFF

if TYPE_CHECKING:
    from pld.engine.loss_pmf import LossPmf

#: Extra relative rounding, in units of u, of the final few additions and
#: products that turn the suffix sums into a bound (each errs by at most u).
FINAL_ROUNDING = 8.0
#: Most times a candidate eps is nudged (by steps growing NUDGE_GROWTH-fold from
#: 4 ulps) before the query falls back to the neighbouring breakpoint, where the
#: bound was evaluated. The closed-form candidate misses the bound's last rounding
#: terms, about 1e-13 relative: four-fold steps get there in about five tries,
#: overshooting by at most four times that.
MAX_NUDGES = 64
NUDGE_GROWTH = 4.0


def _divide(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as numpy divides (inf or nan for a zero denominator)."""
    if denominator != 0.0:
        return numerator / denominator
    if numerator != numerator or numerator == 0.0:
        return math.nan
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def _log(value: float) -> float:
    """``np.log`` of one float (-inf at 0, nan below or at nan)."""
    if value > 0.0:
        return float(np.log(value))
    return -math.inf if value == 0.0 else math.nan


def bound(pmf: LossPmf, index: int, factor: float) -> float:
    """:meth:`LossPmf._evaluate <pld.engine.loss_pmf.LossPmf._evaluate>` at one point."""
    first, mass_tail, weighted_tail = pmf._suffix_from(index)
    tail = float(mass_tail[index - first])
    finite = tail - factor * float(weighted_tail[index - first])
    finite = finite if finite >= 0.0 else 0.0
    count = float(pmf.masses.shape[0] - index)
    ones = float(pmf._suffixes[3][index])
    weight_sum = count - factor * ones
    weight_sum = weight_sum if weight_sum >= 0.0 else 0.0
    weight_sum = weight_sum + 4.0 * UNIT_ROUNDOFF * (count + ones)
    slack = pmf.error_max * weight_sum
    slack = slack if slack <= pmf.error_l1 else pmf.error_l1
    slack = slack + pmf._summation_error * tail
    if pmf.bound == "upper":
        value = finite * (1.0 + pmf.mass_error) + pmf.infinity_mass + slack
        return value * (1.0 + FINAL_ROUNDING * UNIT_ROUNDOFF)
    value = finite * (1.0 - pmf.mass_error) + pmf.infinity_mass - slack - pmf.junk_mass
    return value - FINAL_ROUNDING * UNIT_ROUNDOFF * abs(value)


def delta(pmf: LossPmf, eps: float) -> float:
    """:meth:`LossPmf.delta <pld.engine.loss_pmf.LossPmf.delta>` of one eps (nats)."""
    size = pmf.masses.shape[0]
    upper = pmf.bound == "upper"
    shifted = eps - pmf.loss_error if upper else eps + pmf.loss_error
    index = pmf._index_one(shifted, "right")
    factor = 1.0
    if index < size:
        gap = shifted - (pmf.offset + index) * pmf.step
        factor = float(np.exp(gap if gap <= 0.0 else 0.0))
    raw = bound(pmf, index, factor)
    if not upper:
        index = pmf._index_one(shifted, "left")
        first, values = pmf._grid_maxima(index)
        at = float(values[index - first])
        raw = raw if raw >= at else at
    raw = raw if raw >= 0.0 else 0.0
    return raw if raw <= 1.0 else 1.0


def _segment(pmf: LossPmf, index: int) -> tuple[float, float, float, float]:
    """:meth:`LossPmf._segment <pld.engine.loss_pmf.LossPmf._segment>` at one index."""
    first, mass_tail, weighted_tail = pmf._suffix_from(index)
    return (
        float(mass_tail[index - first]),
        float(weighted_tail[index - first]),
        float(pmf.masses.shape[0] - index),
        float(pmf._suffixes[3][index]),
    )


def epsilon_upper(pmf: LossPmf, target: float) -> float:
    """``LossPmf._epsilon_upper`` of one delta (see :meth:`LossPmf.epsilon
    <pld.engine.loss_pmf.LossPmf.epsilon>`)."""
    size = pmf.masses.shape[0]
    decay = math.exp(-pmf.step)
    first = pmf._index_one(-pmf.loss_error, "right")
    low, high = first - 1, size
    for start in pmf._suffix_starts:
        if start <= first:
            break
        if bound(pmf, start + 1, decay) > target:
            low = start
            break
        high = start
    if first < size:
        high = pmf._first_at_or_below_one(target, low, high)
    if high <= first and target >= delta(pmf, 0.0):
        return 0.0
    if high >= size:
        return math.inf
    right = high
    s, w, c, o = _segment(pmf, right)
    grow = 1 + pmf.mass_error
    base = grow * s + pmf.infinity_mass + pmf._summation_error * s - target
    linear = _divide(base + pmf.error_max * c, grow * w + pmf.error_max * o)
    capped = _divide(base + pmf.error_l1, grow * w)
    if linear != linear:
        factor = capped
    elif capped != capped:
        factor = linear
    else:
        factor = linear if linear <= capped else capped
    at_right = (pmf.offset + right) * pmf.step
    low_eps = (pmf.offset + right - 1) * pmf.step + pmf.loss_error if right > first else 0.0
    high_eps = at_right + pmf.loss_error
    candidate = at_right + _log(factor) + pmf.loss_error
    candidate = candidate if math.isfinite(candidate) else high_eps
    candidate = min(max(candidate, low_eps), high_eps)
    return nudge(pmf, candidate, target, high_eps, upward=True)


def epsilon_lower(pmf: LossPmf, target: float) -> float:
    """``LossPmf._epsilon_lower`` of one delta (see :meth:`LossPmf.epsilon
    <pld.engine.loss_pmf.LossPmf.epsilon>`)."""
    size = pmf.masses.shape[0]
    beyond = float(pmf._grid_maxima(size)[1][-1])
    if beyond > 0.0 and target < beyond:
        return math.inf
    first = pmf._index_one(pmf.loss_error, "right")
    if first >= size:
        return 0.0
    start = size
    while True:
        low, values = pmf._grid_maxima(start)
        if low <= first or values[0] > target:
            break
        start = low - 1
    zero = pmf._index_one(pmf.loss_error, "left")
    if not (values[max(zero - low, 0)] > target and target < 1.0):
        if not target < delta(pmf, 0.0):
            return 0.0
    skip = max(0, low - first)
    position = skip + int(
        np.searchsorted(-values[first + skip - low : size - low], -target, side="left")
    )
    if position >= size - first:
        last = (pmf.offset + size - 1) * pmf.step - pmf.loss_error
        return nudge(pmf, last, target, 0.0, upward=False)
    right = first + position
    s, w, c, o = _segment(pmf, right)
    shrink = 1 - pmf.mass_error
    base = shrink * s + pmf.infinity_mass - pmf._summation_error * s - pmf.junk_mass - target
    at_right = (pmf.offset + right) * pmf.step
    low_eps = (pmf.offset + right - 1) * pmf.step - pmf.loss_error if position > 0 else 0.0
    high_eps = at_right - pmf.loss_error
    gap = low_eps + pmf.loss_error - at_right
    low_factor = float(np.exp(gap if gap <= 0.0 else 0.0))
    best = -math.inf
    for intercept, slope in (
        (base - pmf.error_max * c, pmf.error_max * o - shrink * w),
        (base - pmf.error_l1, -shrink * w),
    ):
        root = _divide(-intercept, slope)
        root = 1.0 if 1.0 < root else root
        at_top = 1.0 if intercept + slope > 0 else -math.inf
        factor = root if slope < 0 else at_top
        factor = factor if factor >= low_factor else -math.inf
        best = best if best >= factor else factor
    candidate = at_right + _log(best) - pmf.loss_error
    candidate = candidate if math.isfinite(candidate) else low_eps
    candidate = min(max(candidate, low_eps), high_eps)
    return nudge(pmf, candidate, target, low_eps, upward=False)


def nudge(pmf: LossPmf, candidate: float, target: float, fallback: float, *, upward: bool) -> float:
    """``LossPmf._nudge`` of one candidate: moved one step at a time (the ladder's
    positions) until ``delta(eps) <= target`` (``upward``) or ``delta(eps) > target``
    or ``eps == 0``; then the neighbouring breakpoints."""

    def verified(value: float) -> bool:
        found = delta(pmf, value)
        return found <= target if upward else found > target or value <= 0.0

    if verified(candidate):
        return candidate
    step = 4 * UNIT_ROUNDOFF * max(1.0, abs(candidate))
    running = candidate
    for _ in range(MAX_NUDGES):
        # The running sum of the steps, clamped: the array query's ladder.
        running = running + step if upward else running - step
        if upward:
            position = running if running <= fallback else fallback
        else:
            position = running if running >= fallback else fallback
        position = position if position >= 0.0 else 0.0
        if verified(position):
            return position
        step *= NUDGE_GROWTH
    walked = pmf._walk_to_breakpoints(
        np.array([position]), np.array([target]), np.zeros(1, dtype=np.int64), upward=upward
    )
    return float(walked[0])
