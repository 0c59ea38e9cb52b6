"""Ways to build a :class:`~pld.distribution.loss_distribution.PLD` from the masses of a pair.

:func:`from_pmfs` discretises the privacy loss of a pair of probability mass
functions (both directions, upper and lower bounds; a pair declared symmetric is
checked and kept as one direction). :func:`from_bounds` joins the upper side of
one PLD with the lower side of another, for mechanisms that build a dominating
pair for the upper bound and a dominated pair for the lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pld import validation
from pld.distribution.direction import _Direction
from pld.distribution.loss_distribution import PLD
from pld.engine import DEFAULT_TAIL_MASS, MIN_LOSS_GRID_STEP, LossPmf, choose_loss_grid_step
from pld.numerics import UNIT_ROUNDOFF

#: Tolerance on a pmf's total mass in :func:`from_pmfs`.
PMF_SUM_TOLERANCE = 1e-6

#: Default relative accuracy of the masses given to :func:`from_pmfs` (their
#: logs are known to about 1e-12 absolute when computed in log space).
DEFAULT_MASS_RELATIVE_ERROR = 1e-12

#: Largest total-variation distance between the two directions' discretised
#: upper pmfs for which :func:`from_pmfs` accepts ``symmetric=True`` (the mass
#: tolerance; the upper side keeps the maximum of both, so it holds regardless).
SYMMETRY_TOLERANCE = PMF_SUM_TOLERANCE


def _direction_from_atoms(
    loss: np.ndarray,
    mass: np.ndarray,
    loss_scale: np.ndarray,
    step: float,
    extra_mass: float,
    extra_loss: float,
    mass_error: float,
    lower: bool = True,
) -> _Direction | LossPmf:
    """Discretise one direction; ``extra_mass`` (truncated) is charged to the upper side only.

    ``mass`` holds the atoms' masses (exps of their logs). Without ``lower``, only
    the upper side's :class:`LossPmf`; with it, the lower side is built on first use.
    """
    from pld.engine import charge_mass, discretise, loss_rounding_error

    upper_masses, lower_masses = discretise(
        loss, mass, step, loss_scale=loss_scale, tail_mass=DEFAULT_TAIL_MASS, lower=lower
    )
    upper_masses = charge_mass(upper_masses, extra_loss, extra_mass, step)
    rounding = loss_rounding_error(loss_scale[mass > 0], step)

    def pmf(grid, bound: str) -> LossPmf:
        return LossPmf(
            step,
            grid.offset,
            grid.masses,
            grid.infinity_mass,
            bound,
            loss_error=rounding,
            mass_error=mass_error,
        )

    upper = pmf(upper_masses, "upper")
    if not lower:
        return upper
    return _Direction(upper, build_lower=lambda: pmf(lower_masses(), "lower"))


def _log_pmf(name: str, values: object) -> np.ndarray:
    try:
        array = np.atleast_1d(np.asarray(values, dtype=np.float64))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of log-probabilities") from error
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array of log-probabilities")
    if not (array <= 1e-12).all():  # NaN fails the comparison too
        raise ValueError(f"{name} must hold log-probabilities in [-inf, 0] (no NaN)")
    return np.minimum(array, 0.0)


def _split_sum_bounds(masses: np.ndarray) -> tuple[float, float]:
    """Bounds ``(low, high)`` on the exact sum of masses in ``[0, 1]``, a few ulps apart.

    Each mass is split exactly into a multiple of ``2^-52`` and a remainder of
    magnitude at most ``2^-53`` (both differences are exact: the multiple is the
    mass rounded in fixed point, and the remainder has at most 53 significant
    bits). The multiples are summed exactly as integers (their float value
    rounds only above 2^53, i.e. a sum above 1); the ``n`` remainders in
    floating point, in any order, err by at most ``(n - 1) u n 2^-53``. The two
    sums are added with one more rounding, and the bounds allow for twice all of
    it (the arithmetic of the bounds themselves included).
    """
    scaled = np.rint(masses * 2.0**52)
    whole = float(scaled.astype(np.int64).sum()) * 2.0**-52  # exact below 2^53 (sum < 1)
    rest = float(np.sum(masses - scaled * 2.0**-52))
    size = float(masses.size)
    approx = whole + rest
    slack = 2.0 * (size * size * 2.0**-106 + 2.0 * UNIT_ROUNDOFF * (whole + abs(rest)))
    return approx - slack, approx + slack


def _charged(name: str, masses: np.ndarray, truncated: float, mass_error: float) -> float:
    """The mass to charge to the upper bound (:func:`_charged_mass`), after checking
    that the pmf's ``masses`` (those of its outcomes of positive probability) sum to 1
    within ``PMF_SUM_TOLERANCE`` together with ``truncated``.

    Decided on the exactly rounded sum of the masses (``math.fsum``). Bounds on it
    settle the usual case first: every decision below is monotone in the total,
    so when both ends of the bounds agree that the pmf is valid and only
    ``truncated`` is charged, the exact sum would decide the same. The bounds are
    a plain sum and its rounding bound, then (when those are too far apart, as
    for 10^4 masses and the default ``mass_error``) :func:`_split_sum_bounds`.
    """

    def settled(low: float, high: float) -> bool:
        return (
            not high > 1 + PMF_SUM_TOLERANCE
            and not low + truncated < 1 - PMF_SUM_TOLERANCE
            and not (1.0 - low) - truncated > mass_error
        )

    approx = float(np.sum(masses))
    # |sum - exact| <= (n - 1) u exact for non-negative terms, in any order.
    slack = 4.0 * (masses.size + 1) * UNIT_ROUNDOFF * approx
    if settled(approx - slack, approx + slack):
        return truncated
    # Masses summing to at most 2 keep the split sum's integers far below 2^63.
    if approx - slack <= 2.0 and settled(*_split_sum_bounds(masses)):
        return truncated
    total = math.fsum(masses.tolist())
    if total > 1 + PMF_SUM_TOLERANCE or total + truncated < 1 - PMF_SUM_TOLERANCE:
        raise ValueError(
            f"{name} must sum to 1 within {PMF_SUM_TOLERANCE:g} together with its truncated "
            f"mass (got {total!r} + {truncated!r})"
        )
    return _charged_mass(total, truncated, mass_error)


def _loss_std(loss: np.ndarray, mass: np.ndarray) -> float:
    """Standard deviation of the finite privacy loss (nats) under its distribution."""
    finite = np.isfinite(loss)
    weights = mass[finite]
    if weights.sum() <= 0:
        return 0.0
    mean = np.average(loss[finite], weights=weights)
    return float(np.sqrt(np.average((loss[finite] - mean) ** 2, weights=weights)))


def _charged_mass(total: float, truncated: float, mass_error: float) -> float:
    """Mass to charge to the upper bound: the truncated mass, or the whole shortfall
    when the given masses fall short of 1 by more than their relative error."""
    shortfall = 1.0 - total
    return shortfall if shortfall - truncated > mass_error else truncated


def from_pmfs(
    log_p: Sequence[float] | np.ndarray,
    log_q: Sequence[float] | np.ndarray,
    *,
    symmetric: bool = False,
    loss_grid_step: float | None = None,
    truncated_mass_p: float = 0.0,
    truncated_mass_q: float = 0.0,
    max_loss: float | None = None,
    mass_relative_error: float = DEFAULT_MASS_RELATIVE_ERROR,
) -> PLD:
    """The PLD of a pair of probability mass functions on a common support.

    Parameters
    ----------
    log_p, log_q : array_like
        Natural logs of P and Q at each outcome (``-inf`` for zero mass). An
        outcome may also stand for several outcomes whose privacy losses lie in
        the same grid cell (docs/architecture.md, "Merged atoms").
    symmetric : bool
        Declare that the loss of Q/P under Q has the same law as that of P/Q
        under P; only one direction is then composed. The claim is checked: both
        directions are discretised and must agree within ``SYMMETRY_TOLERANCE``
        in total variation, and the upper side keeps their pointwise maximum, so
        the upper bound holds for both. (The library's mechanisms whose pair is
        symmetric by construction use :func:`from_symmetric_pair` instead.)
    loss_grid_step : float, optional
        Grid spacing in nats, in [1e-12, 1]. By default
        :func:`pld.engine.choose_loss_grid_step` of the loss's standard deviation
        under P. Pass it explicitly when the outcomes are merged atoms (they
        must be merged on the grid they will be placed on).
    truncated_mass_p, truncated_mass_q : float
        Mass of P (resp. Q) that the caller left out, in [0, 1) (resp. [0, 1]; a
        symmetric pair may leave out all of Q's side). It is charged to
        the upper bound at loss ``max_loss`` (or ``+inf``) and dropped from the
        lower bound (Koskela et al. 2023, §3.2: ``delta(inf) = 1 - prod(1 - tau_i)``). A
        shortfall of the given masses below ``1 - truncated mass`` that exceeds
        ``mass_relative_error`` is charged the same way.
    max_loss : float, optional
        A known bound on the absolute privacy loss of the mechanism, in nats.
    mass_relative_error : float
        Relative accuracy of each given mass, in [0, 1e-3]; the finite part of
        every delta is scaled by ``(1 +- mass_relative_error)^T`` after T rounds.

    Returns
    -------
    PLD
        One round of the mechanism.
    """
    if not isinstance(symmetric, (bool, np.bool_)):
        raise ValueError(f"symmetric must be True or False (got {symmetric!r})")
    return _from_pmfs(
        log_p,
        log_q,
        "checked" if symmetric else "no",
        loss_grid_step,
        truncated_mass_p,
        truncated_mass_q,
        max_loss,
        mass_relative_error,
    )


def from_symmetric_pair(
    log_p: Sequence[float] | np.ndarray,
    log_q: Sequence[float] | np.ndarray,
    *,
    loss_grid_step: float | None = None,
    truncated_mass_p: float = 0.0,
    truncated_mass_q: float = 0.0,
    max_loss: float | None = None,
    mass_relative_error: float = DEFAULT_MASS_RELATIVE_ERROR,
) -> PLD:
    """The one-direction PLD of a pair that is symmetric by construction, unchecked.

    For the library's own mechanisms (the Gaussian, Laplace and randomised-response
    pairs, the clones and k-RR pairs, connect-the-dots pairs of privacy profiles,
    whose one direction bounds both orders of neighbours): as
    :func:`from_pmfs` with ``symmetric=True``, but only the P->Q direction is
    discretised and the claim is not checked, so it costs half. A claim that is
    wrong makes a bound too small: every mechanism that calls this is measured by
    tests/house/test_guards.py (its two directions agree to 5e-11), and nothing
    outside the library should call it; use :func:`from_pmfs`, which checks.

    Parameters are those of :func:`from_pmfs`.
    """
    return _from_pmfs(
        log_p,
        log_q,
        "by-construction",
        loss_grid_step,
        truncated_mass_p,
        truncated_mass_q,
        max_loss,
        mass_relative_error,
    )


def _from_pmfs(
    log_p: Sequence[float] | np.ndarray,
    log_q: Sequence[float] | np.ndarray,
    symmetry: str,
    loss_grid_step: float | None,
    truncated_mass_p: float,
    truncated_mass_q: float,
    max_loss: float | None,
    mass_relative_error: float,
) -> PLD:
    """:func:`from_pmfs` with ``symmetry`` "no", "checked" or "by-construction"."""
    symmetric = symmetry != "no"
    if loss_grid_step is not None:
        validation.in_interval("loss_grid_step", loss_grid_step, MIN_LOSS_GRID_STEP, 1.0)
    truncated_mass_p = validation.in_interval(
        "truncated_mass_p", truncated_mass_p, 0.0, 1.0, high_open=True
    )
    truncated_mass_q = validation.in_interval("truncated_mass_q", truncated_mass_q, 0.0, 1.0)
    extra_loss = math.inf if max_loss is None else validation.non_negative("max_loss", max_loss)
    log_p = _log_pmf("log_p", log_p)
    log_q = _log_pmf("log_q", log_q)
    if log_p.shape != log_q.shape:
        raise ValueError(
            f"log_p and log_q must have the same length ({log_p.size} != {log_q.size})"
        )
    mass_error = validation.in_interval("mass_relative_error", mass_relative_error, 0.0, 1e-3)
    # Outcomes of positive probability; the loss is +inf where the other side has none.
    has_p = log_p > -np.inf
    mass_p = np.exp(log_p[has_p])
    charged_p = _charged("P", mass_p, truncated_mass_p, mass_error)
    has_q = log_q > -np.inf
    mass_q = np.exp(log_q[has_q])
    charged_q = _charged("Q", mass_q, truncated_mass_q, mass_error)

    # max(|log p|, |log q|) of logs <= 0.
    scale = -np.minimum(log_p, log_q)
    loss_pq = log_p[has_p] - log_q[has_p]
    step = loss_grid_step
    if step is None:
        step = choose_loss_grid_step(_loss_std(loss_pq, mass_p))
    directions = [
        _direction_from_atoms(
            loss_pq, mass_p, scale[has_p], step, charged_p, extra_loss, mass_error
        )
    ]
    if symmetry != "by-construction":
        # A symmetric pair keeps the forward lower side: the reverse one is not needed.
        directions.append(
            _direction_from_atoms(
                log_q[has_q] - log_p[has_q],
                mass_q,
                scale[has_q],
                step,
                charged_q,
                extra_loss,
                mass_error,
                lower=not symmetric,
            )
        )
    if symmetry == "checked":
        directions = [_checked_symmetric(*directions)]
    return PLD(directions, symmetric=symmetric)


def _checked_symmetric(forward: _Direction, reverse: LossPmf) -> _Direction:
    """One direction for a pair declared symmetric, after checking the claim.

    ``reverse`` is the upper pmf of the reverse direction. The upper side is the
    pointwise maximum of both directions' upper pmfs (and of their masses at
    +inf): every delta of any composition is a sum of non-negative weights times
    these masses, so it bounds both directions. The lower side of either
    direction is a lower bound on their maximum.
    """
    a, b = forward.upper, reverse
    first = min(a.offset, b.offset)
    last = max(a.offset + a.masses.size, b.offset + b.masses.size)
    aligned = np.zeros((2, max(last - first, 0)))
    aligned[0, a.offset - first : a.offset - first + a.masses.size] = a.masses
    aligned[1, b.offset - first : b.offset - first + b.masses.size] = b.masses
    gaps = np.abs(aligned[0] - aligned[1])
    # A plain sum settles the check unless it lies within its rounding bound of the
    # tolerance; the exactly rounded sum decides then.
    approx = 0.5 * (float(np.sum(gaps)) + abs(a.infinity_mass - b.infinity_mass))
    distance = approx
    if not approx * (1 + 4.0 * (gaps.size + 2) * UNIT_ROUNDOFF) <= SYMMETRY_TOLERANCE:
        distance = 0.5 * (math.fsum(gaps.tolist()) + abs(a.infinity_mass - b.infinity_mass))
    if not distance <= SYMMETRY_TOLERANCE:
        raise ValueError(
            "symmetric=True needs the loss of Q/P under Q to have the law of the loss of P/Q "
            f"under P, but they are {distance:.3g} apart in total variation (tolerance "
            f"{SYMMETRY_TOLERANCE:g}); pass symmetric=False"
        )
    upper = LossPmf(
        a.step,
        first,
        np.max(aligned, axis=0),
        max(a.infinity_mass, b.infinity_mass),
        "upper",
        loss_error=max(a.loss_error, b.loss_error),
        mass_error=max(a.mass_error, b.mass_error),
    )
    return _Direction(upper, build_lower=lambda: forward.lower)


def from_bounds(*, upper: PLD, lower: PLD, analysis_width: float = 0.0) -> PLD:
    """A PLD whose upper side is ``upper``'s and whose lower side is ``lower``'s.

    For mechanisms that build a dominating pair for the upper bound and a
    dominated pair for the lower bound. Both must share the grid step and the
    symmetry. ``analysis_width``: the largest relative width, in [0, 1], of the
    analysis' own (lower, upper) values that a finer grid may leave as they are (a
    query's refinement stops at the first rebuild that makes no progress when it
    exceeds the query's ``rel_accuracy``; 0 when none).
    """
    if upper.loss_grid_step != lower.loss_grid_step or upper.symmetric != lower.symmetric:
        raise ValueError("upper and lower must have the same loss_grid_step and symmetry")
    directions = [
        _Direction(u.upper, build_lower=lambda v=v: v.lower)
        for u, v in zip(upper._directions, lower._directions, strict=True)
    ]
    result = PLD(directions, symmetric=upper.symmetric, composed=upper.composed or lower.composed)
    result._analysis_width = validation.in_interval("analysis_width", analysis_width, 0.0, 1.0)
    return result


def upper_only(loss: PLD) -> PLD:
    """A copy of ``loss`` whose lower side is empty: every lower bound 0 (valid, and vacuous).

    Composing it composes the upper side alone, at half the cost: for callers that
    report only upper bounds (``pld.integrations.dp_accounting.Accountant.get_epsilon``).
    The copy has no recipe, so its queries are not refined.
    """
    directions = [
        _Direction(d.upper, LossPmf(d.upper.step, 0, np.zeros(0), 0.0, "lower"))
        for d in loss._directions
    ]
    return PLD(directions, symmetric=loss.symmetric, composed=loss.composed)
