"""Exponentially tilted composition: relative instead of absolute round-off in a tail.

The FFT composition of :mod:`pld.engine.compose` errs by an absolute amount per
grid point (about ``1e-14`` after long compositions, docs/error-bounds.md §4),
which swamps delta values of that order. Tilting removes this floor near a
chosen loss ``l*``. Every factor's finite masses are multiplied by
``exp(lam g_j) / M_i`` with ``M_i = sum_j m_ij exp(lam g_ij)`` (its moment
generating function at ``lam``); tilting commutes with convolution, so the
composition of the tilted pmfs is the tilted composition, whose masses are
recovered exactly by

    m_k = C exp(-lam g_k) m~_k,      C = prod_i M_i^(c_i)

(Esscher's transform; Koskela et al. 2021 use the same tail bounds for the
window). With ``lam`` chosen so that the tilted composed mean is ``l*``
(``sum_i c_i d/dlam log M_i(lam) = l*``), the tilted law concentrates around
``l*`` and its composition is computed, with all the error terms of
:func:`pld.engine.compose.compose`, on vectors of 1-norm about one. Untilting
multiplies every absolute error at ``g_k >= g_cut`` by at most ``C exp(-lam
g_cut)``, the Chernoff bound of the composed loss beyond ``g_cut``: errors
become relative to the tail that a query at ``eps >= g_cut`` reads.

:func:`tilted_compose_bounds` returns ordinary :class:`LossPmf` bounds, valid for
every eps and tight for ``eps >= g_cut`` (docs/error-bounds.md §4,
"Tilting"): the grid points below the cut are dropped (lower bound) or their
mass is lumped one grid point below the cut (upper bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pld.engine.compose import compose_bounds
from pld.engine.linalg import dot
from pld.engine.loss_pmf import LossPmf
from pld.numerics import UNIT_ROUNDOFF

#: Tilted masses below this are set to zero: the untilted masses of these atoms
#: are charged to +inf (upper bound) or dropped (lower bound). Keeps every kept
#: tilted mass normal, so its relative rounding error holds.
_SMALLEST_TILTED = 2.0**-1000
#: Units of u in the bound on the absolute error of a computed exponent
#: ``log m + lam g - log M`` per unit of ``|log m| + |lam g| + |log M|``: four for
#: the logarithm, two for the product ``lam g`` and the grid value ``g``, two for
#: the two additions.
_EXPONENT_UNITS = 8.0
#: Units of u in the relative error of ``exp`` and of the product with the mass.
_EXP_UNITS = 8.0
#: Newton iterations of the tilt equation (the tilt need not be exact: every
#: ``lam > 0`` gives valid bounds; it only sets where they are tightest).
_NEWTON_STEPS = 30


def _relative_error(magnitude: float) -> float:
    """Relative error of ``exp(x)`` (times a mass) when the computed exponent ``x`` is a
    sum of terms whose magnitudes add up to ``magnitude``."""
    return math.expm1(_EXPONENT_UNITS * UNIT_ROUNDOFF * magnitude) + _EXP_UNITS * UNIT_ROUNDOFF


def _atoms(pmf: LossPmf) -> tuple[np.ndarray, np.ndarray]:
    """Grid losses (nats) and log-masses of the non-zero atoms."""
    index = np.flatnonzero(pmf.masses > 0.0)
    return (pmf.offset + index) * pmf.step, np.log(pmf.masses[index])


def _tilted_moments(losses: np.ndarray, log_masses: np.ndarray, lam: float) -> tuple[float, float]:
    """Mean and variance of the loss under the pmf tilted by ``exp(lam * loss)``."""
    exponent = log_masses + lam * losses
    weights = np.exp(exponent - exponent.max())
    total = weights.sum()
    mean = dot(weights, losses) / float(total)
    variance = dot(weights, (losses - mean) ** 2) / float(total)
    return mean, variance


def tilt_exponent(factors: Sequence[tuple[LossPmf, int]], target: float) -> float | None:
    """The tilt ``lam > 0`` whose tilted composed mean is ``target`` (nats), or None.

    None when ``target`` is at or below the untilted mean (no tail to tilt
    towards) or at or above the largest composed loss (the tail is empty there).
    Solved by Newton's method safeguarded by bisection; the mean is increasing
    in ``lam`` (its derivative is the tilted variance).
    """
    atoms = [(_atoms(pmf), count) for pmf, count in factors]
    if any(losses.size == 0 for (losses, _), _ in atoms):
        return None
    top = sum(count * float(losses.max()) for (losses, _), count in atoms)

    def moments(lam: float) -> tuple[float, float]:
        mean = variance = 0.0
        for (losses, log_masses), count in atoms:
            m, v = _tilted_moments(losses, log_masses, lam)
            mean += count * m
            variance += count * v
        return mean - target, variance

    gap, variance = moments(0.0)
    if gap >= 0.0 or target >= top or variance <= 0.0:
        return None
    low, high = 0.0, math.inf
    lam = -gap / variance
    for _ in range(_NEWTON_STEPS):
        gap, variance = moments(lam)
        if gap > 0.0:
            high = lam
        else:
            low = lam
        if abs(gap) <= 1e-6 * max(1.0, abs(target)) or variance <= 0.0:
            break
        step = lam - gap / variance
        if not low < step < high:
            step = 2.0 * lam if math.isinf(high) else 0.5 * (low + high)
        lam = step
    return lam if lam > 0.0 and math.isfinite(lam) else None


def _tilt(pmf: LossPmf, lam: float) -> tuple[LossPmf, float, float]:
    """``pmf`` tilted by ``exp(lam g) / M``: the tilted pmf (no mass at +inf),
    the float ``log M`` used, and the untilted mass of the atoms set to zero.

    The tilted mass of atom ``j`` is ``exp(log m_j + lam g_j - log M)``; its
    relative error (the exponent's absolute error plus ``exp``'s) is added to
    the pmf's ``mass_error``, so the composition of the tilted pmfs, untilted
    with the same ``log M``, carries it as a relative mass error.
    """
    index = np.flatnonzero(pmf.masses > 0.0)
    losses = (pmf.offset + index) * pmf.step
    log_masses = np.log(pmf.masses[index])
    exponent = log_masses + lam * losses
    peak = float(exponent.max())
    log_mgf = peak + math.log(float(np.exp(exponent - peak).sum()))
    shifted = exponent - log_mgf
    tilted = np.exp(shifted)
    small = tilted < _SMALLEST_TILTED
    dropped = math.fsum(pmf.masses[index[small]]) * (1 + index.size * UNIT_ROUNDOFF)
    tilted[small] = 0.0
    kept = np.flatnonzero(~small)
    masses = np.zeros(int(index[kept[-1]] - index[kept[0]]) + 1)
    masses[index[kept] - index[kept[0]]] = tilted[kept]
    magnitude = float(np.max(np.abs(log_masses) + np.abs(lam * losses))) + abs(log_mgf)
    relative = _relative_error(magnitude)
    mass_error = (1 + pmf.mass_error) * (1 + relative) - 1
    tilted_pmf = LossPmf(
        pmf.step,
        pmf.offset + int(index[kept[0]]),
        masses,
        0.0,
        pmf.bound,
        loss_error=pmf.loss_error,
        mass_error=mass_error,
    )
    return tilted_pmf, log_mgf, dropped


def clip_tails(factors: Sequence[tuple[LossPmf, int]], budget: float) -> list[tuple[LossPmf, int]]:
    """The factors without their highest atoms, of total P-mass at most ``budget`` after
    composition: moved to +inf (upper bound: a dominating pair) or dropped (lower).

    A far atom of tiny mass (a truncated tail charged at the largest loss) would
    otherwise dominate the tilted law and keep it from concentrating at the
    target. Factor ``i`` gives up at most ``budget / (k c_i)`` (``k`` factors), so
    the composed mass at +inf grows by at most ``budget``; the float suffix sums
    that measure it err by at most ``n u`` relatively and are rounded up.
    """
    clipped = []
    for pmf, count in factors:
        allowed = budget / (len(factors) * count)
        size = pmf.masses.shape[0]
        from_top = np.cumsum(pmf.masses[::-1])
        cut = int(np.searchsorted(from_top, allowed / (1 + size * UNIT_ROUNDOFF), side="right"))
        if cut == 0 or cut >= size or not np.any(pmf.masses[: size - cut] > 0.0):
            clipped.append((pmf, count))
            continue
        moved = float(from_top[cut - 1]) * (1 + size * UNIT_ROUNDOFF)
        infinity = pmf.infinity_mass + (moved if pmf.bound == "upper" else 0.0)
        trimmed = LossPmf(
            pmf.step,
            pmf.offset,
            pmf.masses[: size - cut],
            min(1.0, infinity),
            pmf.bound,
            loss_error=pmf.loss_error,
            mass_error=pmf.mass_error,
        )
        clipped.append((trimmed, count))
    return clipped


def tiltable(pmf: LossPmf) -> bool:
    """True when ``pmf`` carries no absolute error terms (round-off, aliased mass), as
    one-round pmfs do: tilting would multiply such errors by unbounded factors."""
    return (
        pmf.error_max == 0.0
        and pmf.error_l1 == 0.0
        and pmf.junk_mass == 0.0
        and bool(np.any(pmf.masses > 0.0))
    )


class TiltOverflowError(ValueError):
    """The tilted composition cannot be untilted at the cut asked (its factor overflows).

    Callers that tilt only to narrow a bracket catch it and keep the untilted one.
    """


def tilted_compose_bounds(
    uppers: Sequence[tuple[LossPmf, int]],
    lowers: Sequence[tuple[LossPmf, int]],
    lam: float,
    cut: float,
    tail_mass: float,
) -> tuple[LossPmf, LossPmf]:
    """The compositions of the upper and of the lower factors of one direction, each
    computed under the tilt ``lam`` and untilted.

    Both tilted compositions go through :func:`pld.engine.compose.compose_bounds`,
    so the lower one's window reuses the upper one's Chernoff exponents when their
    supports agree; every error term is that of :func:`pld.engine.compose.compose`.

    Parameters
    ----------
    uppers, lowers : sequence of (LossPmf, int)
        One-round pmfs (:func:`tiltable`), all with the same grid step, the upper
        and the lower bounds of one direction, and their counts.
    lam : float
        Tilt, > 0 (:func:`tilt_exponent`), in 1/nats.
    cut : float
        Loss (nats) from which the results are tight: grid points below it are
        dropped (lower bound) or lumped one grid point below it (upper bound).
    tail_mass : float
        Window tail target of the tilted compositions, per side.

    Returns
    -------
    (LossPmf, LossPmf)
        Bounds of the same kinds as the factors for every eps; their absolute error
        terms are those of the tilted compositions times ``C exp(-lam g_cut)``.

    Raises
    ------
    BudgetError
        If a tilted composition exceeds the grid budget.
    TiltOverflowError
        If untilting overflows.
    """
    tilted_uppers, tilted_lowers = _tilted(uppers, lam), _tilted(lowers, lam)
    upper, lower = compose_bounds(tilted_uppers[0], tilted_lowers[0], tail_mass)
    return (
        _untilt(upper, tilted_uppers[1:], lam, cut),
        _untilt(lower, tilted_lowers[1:], lam, cut),
    )


def _tilted(
    factors: Sequence[tuple[LossPmf, int]], lam: float
) -> tuple[list[tuple[LossPmf, int]], list[tuple[float, int]], float, float]:
    """The factors tilted by ``lam``, each one's float ``log M`` and count, the
    composed mass at +inf (the dropped atoms' included for an upper bound) and the
    log of a bound on the composed finite mass."""
    bound = factors[0][0].bound
    tilted, log_mgfs, log_finite, log_survive = [], [], 0.0, 0.0
    for pmf, count in factors:
        tilted_pmf, log_mgf, dropped = _tilt(pmf, lam)
        tilted.append((tilted_pmf, count))
        log_mgfs.append((log_mgf, count))
        charged = pmf.infinity_mass + (dropped if bound == "upper" else 0.0)
        # All of the mass charged to +inf (charged >= 1): nothing survives.
        log_survive += count * math.log1p(-charged) if charged < 1.0 else -math.inf
        finite = pmf.finite_mass * (1 + pmf.masses.shape[0] * UNIT_ROUNDOFF)
        log_finite += count * math.log(finite)
    infinity_mass = -math.expm1(log_survive) if log_survive > -math.inf else 1.0
    return tilted, log_mgfs, infinity_mass, log_finite


def _untilt(
    composed: LossPmf,
    tilting: tuple[list[tuple[float, int]], float, float],
    lam: float,
    cut: float,
) -> LossPmf:
    """The tilted composition ``composed`` untilted from ``cut`` on (``tilting`` as
    returned by :func:`_tilted` after its tilted factors)."""
    log_mgfs, infinity_mass, log_finite = tilting
    step, bound = composed.step, composed.bound

    log_scale = math.fsum(count * value for value, count in log_mgfs)
    index = max(composed.offset, math.floor(cut / step))
    kept = composed.masses[index - composed.offset :]
    losses = (index + np.arange(kept.shape[0])) * step
    exponent = log_scale - lam * losses
    magnitude = math.fsum(count * abs(value) for value, count in log_mgfs) + abs(log_scale)
    magnitude += lam * float(np.max(np.abs(losses), initial=0.0))
    relative = _relative_error(magnitude)
    if exponent.size and exponent[0] > 700.0:
        raise TiltOverflowError("untilting overflows: the cut lies too far below the tilted law")
    masses = np.exp(exponent) * kept
    # Results below the smallest normal number lose their relative accuracy: set
    # to zero, each charged at that number to the upper bound.
    tiny = np.finfo(np.float64).tiny
    subnormal = (masses < tiny) & (kept > 0.0)
    masses[subnormal] = 0.0
    underflow = np.count_nonzero(subnormal) * tiny
    # The largest untilting factor (at the cut), rounded up: scales every absolute error.
    scale = math.exp(exponent[0] if exponent.size else log_scale - lam * index * step)
    scale *= 1 + relative
    mass_error = (1 + composed.mass_error) * (1 + relative) - 1
    errors = {
        "error_max": scale * composed.error_max,
        "error_l1": scale * composed.error_l1,
        "loss_error": composed.loss_error,
        "mass_error": mass_error,
    }
    if bound == "lower":
        return LossPmf(
            step,
            index,
            masses,
            infinity_mass,
            bound,
            junk_mass=scale * composed.junk_mass,
            **errors,
        )
    # Everything below the cut, at most the total finite mass, one point below it;
    # the tilted mass above the window (the composition's +inf) untilted at the cut.
    lump = math.exp(log_finite) * (1 + 4 * UNIT_ROUNDOFF)
    above = scale * composed.infinity_mass
    return LossPmf(
        step,
        index - 1,
        np.concatenate(([lump], masses)),
        min(1.0, infinity_mass + above + underflow),
        bound,
        **errors,
    )
