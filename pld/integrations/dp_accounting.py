"""Google's ``dp_accounting``: exchange PLDs, and a drop-in ``PrivacyAccountant``.

Optional: ``pip install dp-accounting`` (or ``pip install '.[dp-accounting]'`` in a
checkout of pld). Only dp_accounting's public API is
used (its ``DpEvent`` fields, ``PrivacyAccountant``, the ``PrivacyLossDistribution``
constructor and ``get_delta_for_epsilon``, ``pld_pmf.DensePLDPmf``).

Both libraries store one direction of a privacy-loss distribution the same way:
P-masses ``m_k`` at the losses ``k * h`` plus a mass at ``+inf``, and
``delta(eps) = infinity_mass + sum_k m_k (1 - exp(eps - k h))_+`` (Koskela et al. 2023,
eq 2.1). ``dp_accounting``'s ``PrivacyLossDistribution`` keeps a REMOVE and an
ADD direction; pld's first (P->Q) and second (Q->P) directions map to them.

Accountant (:class:`Accountant`)
    A ``dp_accounting.PrivacyAccountant`` that converts every event with
    :func:`pld.from_dp_event` and composes in pld: code written for
    ``dp_accounting.pld.PLDAccountant`` runs unchanged, and ``get_epsilon`` /
    ``get_delta`` return pld's rigorous upper bounds (``epsilon_bounds`` /
    ``delta_bounds`` give the bracket).

Export (:func:`to_dp_accounting`)
    ``bound="upper"`` gives a *pessimistic* ``dp_accounting`` PLD whose exact
    delta(eps) is at least pld's bound on the true one for every eps: the error
    terms pld adds when it queries (loss-position error, relative mass error,
    float round-off of the masses, see :mod:`pld.engine.loss_pmf`) are folded
    into the masses and the mass at +inf (:func:`_exported_masses`). pld's
    allowance for the round-off of its own summation concerns the evaluation,
    not the masses, and is not exported: ``dp_accounting`` sums with its own
    round-off, which pld does not bound. ``bound="lower"`` gives an
    *optimistic* one from pld's lower side (masses scaled by ``1 -
    mass_error``); its exact delta(eps) may exceed pld's lower bound by at most
    ``junk_mass + error_l1 + loss_error`` (times a mass <= 1; about 1e-12 for
    one round of this library's mechanisms, 1e-10 after 100 rounds), which
    cannot be folded into a pmf.

Import (:func:`from_dp_accounting`)
    dp_accounting's public API shows a PLD only through its privacy profile
    ``delta(eps)`` (the larger of its two directions). A discrete PLD on the grid
    ``k h`` has a profile that is piecewise linear in ``alpha = e^eps`` with kinks
    at the grid points, so evaluated at every ``k h`` of its support it determines
    a pair exactly: the connect-the-dots pair of :mod:`pld.distribution.profile`
    (Doroshenko et al. 2022, Alg. 1), which is symmetric (one pair bounds both
    directions). The values are first raised to at least ``(1 - e^eps)_+``, which
    every true profile is (dp_accounting's pessimistic pmfs may carry a little
    more than unit Q-mass; raising an upper bound keeps it one, and raising a
    lower bound to a value every profile has keeps it one). The pessimistic
    profile gives pld's upper side: rigorous whenever the dp_accounting PLD is
    pessimistic, a claim pld cannot check through the public API except against
    an optimistic PLD, which must lie below it. The optimistic profile gives the
    lower side, through the pair whose curve interpolates it between grid
    points; that is below the optimistic curve only when every kink is a grid
    point, i.e. when ``value_discretization_interval`` is the one the PLD was
    built with and the evaluated lattice ``[-K h, K h]`` covers the support.
    ``K h`` is the first grid point above every atom (where the profile reaches
    ``delta(+inf)``); below ``-K h`` the interpolation runs straight to
    ``(alpha, delta) = (0, 1)``, which for the lower side can exceed the
    optimistic curve by at most ``e^{-K h}`` in delta, at eps below ``-K h`` only
    (the upper side stays rigorous everywhere). The import does not trust
    dp_accounting's ``symmetric`` flag: the profile at negative eps determines the
    reverse direction of the pair (``H(Q||P)(eps) = 1 - e^eps + e^eps H(P||Q)(-eps)``),
    and a PLD whose reverse direction provably exceeds its profile (by more than
    the discretisation allows) is refused (:func:`_check_reverse_direction`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pld import validation
from pld.distribution import PLD, compose, from_bounds, from_symmetric_pair, upper_only
from pld.engine import DEFAULT_LOSS_GRID_STEP
from pld.integrations.dp_events import (
    UnsupportedEventError,
    from_dp_event,
    is_non_private,
    non_private,
    relation_name,
)
from pld.integrations.pld_events import PLDEvent, RandomAllocationDpEvent

try:
    from dp_accounting import dp_event, privacy_accountant
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution
except ImportError as error:  # pragma: no cover - the extra is installed in the tests
    raise ImportError(
        "pld.integrations.dp_accounting needs dp_accounting: pip install dp-accounting (or, "
        "in a checkout of pld, pip install '.[dp-accounting]')"
    ) from error

__all__ = [
    "Accountant",
    "PLDEvent",
    "RandomAllocationDpEvent",
    "from_dp_accounting",
    "from_dp_event",
    "to_dp_accounting",
]


def _shifted_up(masses: np.ndarray, shift: float, step: float) -> np.ndarray:
    """Masses of atoms moved up by ``shift`` in [0, step] nats, put back on the grid.

    Each atom at ``g`` moved to ``g + shift`` is split between ``g`` and ``g + step``
    with the same P- and Q-mass (connect-the-dots, Doroshenko et al. 2022, Alg. 1):
    the fraction ``(1 - e^-shift) / (1 - e^-step)`` goes up. The split pair
    dominates the shifted one, whose hockey stick at eps is the original's at
    ``eps - shift``. The result has one more grid point.
    """
    fraction = math.expm1(-shift) / math.expm1(-step)
    result = np.zeros(masses.shape[0] + 1)
    result[:-1] = masses * (1.0 - fraction)
    result[1:] += masses * fraction
    return result


def _exported_masses(pmf: Any, bound: str) -> tuple[int, np.ndarray, float]:
    """Masses and +inf mass for ``dp_accounting`` (module docstring).

    pld's upper query is ``(1 + mass_error) H(eps - loss_error) + infinity_mass +
    min(error_max * W(eps), error_l1)`` plus the round-off of its own summation,
    where ``H`` is the exact hockey stick of the stored masses and ``W(eps)`` the
    hockey stick of a unit mass on every grid point (pld.engine.loss_pmf). The
    upper export shifts the masses up by ``loss_error``, scales them by
    ``1 + mass_error`` and adds ``error_max`` to every grid point (or
    ``error_l1`` at +inf, whichever is smaller at its largest), so its exact
    hockey stick is at least the bound on the true one. The summation round-off
    concerns the evaluation, not the masses: ``dp_accounting`` has its own.
    """
    masses = np.asarray(pmf.masses, dtype=np.float64)
    offset = int(pmf.offset)
    if bound == "lower":
        return offset, masses * (1 - pmf.mass_error), pmf.infinity_mass
    infinity_mass = pmf.infinity_mass
    whole_cells = math.floor(pmf.loss_error / pmf.step)
    offset += whole_cells
    remainder = pmf.loss_error - whole_cells * pmf.step
    if remainder > 0:
        masses = _shifted_up(masses, remainder, pmf.step)
    masses = masses * (1 + pmf.mass_error)
    if pmf.error_max * masses.shape[0] <= pmf.error_l1:
        masses = masses + pmf.error_max
    else:
        infinity_mass += pmf.error_l1
    return offset, masses, infinity_mass


def to_dp_accounting(loss: PLD, bound: str = "upper") -> Any:
    """Export a PLD as a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.

    Parameters
    ----------
    loss : PLD
        The PLD to export (one round or composed).
    bound : {"upper", "lower"}
        ``"upper"``: a pessimistic PLD whose delta(eps) is at least pld's upper
        bound; ``"lower"``: an optimistic one from pld's lower side (module
        docstring for its exact guarantee).

    Returns
    -------
    PrivacyLossDistribution
        On the same grid (``value_discretization_interval = loss.loss_grid_step``);
        symmetric when ``loss`` is.
    """
    if bound not in ("upper", "lower"):
        raise ValueError(f"bound must be 'upper' or 'lower' (got {bound!r})")
    if not isinstance(loss, PLD):
        raise ValueError(f"loss must be a pld.PLD (got {type(loss).__name__})")
    exported = []
    for pmf in loss.directions(bound):
        offset, masses, infinity_mass = _exported_masses(pmf, bound)
        if masses.size == 0:
            masses, offset = np.zeros(1), 0
        exported.append(
            pld_pmf.DensePLDPmf(
                discretization=pmf.step,
                lower_loss=int(offset),
                probs=masses,
                infinity_mass=float(infinity_mass),
                pessimistic_estimate=bound == "upper",
            )
        )
    if loss.symmetric:
        return privacy_loss_distribution.PrivacyLossDistribution(exported[0])
    return privacy_loss_distribution.PrivacyLossDistribution(exported[0], exported[1])


def _profile_values(loss: Any, eps: np.ndarray) -> tuple[np.ndarray, float]:
    """``loss.get_delta_for_epsilon(eps)`` raised to ``(1 - e^eps)_+`` and kept in [0, 1].

    Also returns, from the same pass over dp_accounting's pmf, how far its P-mass
    (atoms and +inf: the profile at ``eps = -inf``) exceeds 1, or 0; compositions of
    pessimistic pmfs carry ~1e-8 more than 1.
    """
    points = np.concatenate(([-math.inf], eps))  # dp_accounting wants them ascending
    raw = np.asarray(loss.get_delta_for_epsilon(points), dtype=np.float64)
    values = np.clip(np.maximum(raw[1:], -np.expm1(eps)), 0.0, 1.0)
    return values, max(0.0, float(raw[0]) - 1.0)


def _support_top(loss: Any, step: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The lattice ``eps = k h``, ``|k| <= K``, with ``K`` the first index above every atom.

    Returns the lattice, the profile on it and the excess P-mass
    (:func:`_profile_values`). Above the largest atom the profile equals
    ``delta(+inf)`` exactly, which a call on the points ``2^j h`` locates;
    dp_accounting evaluates a vector of eps in one pass over its pmf (a Python
    loop, ~5 us per atom or point), so three calls suffice.
    """
    floor = float(np.asarray(loss.get_delta_for_epsilon(np.array([math.inf])))[0])
    limit = max(1, math.floor(_MAX_IMPORT_LOSS / step))
    powers = np.unique(np.minimum(2 ** np.arange(0, limit.bit_length() + 1), limit))
    flat = np.asarray(loss.get_delta_for_epsilon(powers * step)) <= floor
    reach = int(powers[np.argmax(flat)]) if np.any(flat) else limit
    eps = np.arange(-reach, reach + 1) * step
    values, excess = _profile_values(loss, eps)
    above = np.flatnonzero(values[reach:] > floor)
    top = reach + (int(above[-1]) + 1 if above.size else 0)
    top = min(max(top, reach + 1), eps.size - 1)
    keep = slice(2 * reach - top, top + 1)
    return eps[keep], values[keep], excess


def _trim_q_excess(pair: Any) -> Any:
    """A lower pair whose Q-masses sum to at most 1: P- and Q-mass removed from the bottom.

    Float round-off of a profile near 1 at very negative eps can leave the
    interpolating pair with slightly more than unit Q-mass. Removing the lowest
    atoms' mass (P with its Q) lowers every hockey stick, so a lower side stays one.
    """
    q_mass = pair.q_mass
    excess = math.fsum(q_mass) + pair.q_minus_infinity - 1.0
    if excess <= 0:
        return pair
    reached = np.cumsum(q_mass)
    last = min(int(np.searchsorted(reached, excess)), q_mass.size - 1)
    before = float(reached[last - 1]) if last > 0 else 0.0
    left = max(0.0, 1.0 - (excess - before) / q_mass[last])
    shrink = np.zeros(q_mass.size)
    shrink[:last] = -np.inf
    with np.errstate(divide="ignore"):
        shrink[last] = math.log(left) if left > 0 else -np.inf
    return type(pair)(
        pair.loss, pair.log_p + shrink, pair.log_q + shrink, pair.p_infinity, pair.q_minus_infinity
    )


#: Largest |loss| (nats) at which an imported profile is evaluated.
_MAX_IMPORT_LOSS = 700.0

#: Allowance, times e^eps, for float error in the reverse profile
#: 1 - e^eps + e^eps delta(-eps) (and for masses exported with a relative error).
_REVERSE_ROUNDOFF = 1e-9


def _reverse_profile(eps: np.ndarray, values: np.ndarray) -> np.ndarray:
    """At each ``eps > 0`` of a lattice symmetric about 0: ``1 - e^eps + e^eps delta(-eps)``.

    For any pair, H_{e^eps}(Q || P) = 1 - e^eps + e^eps H_{e^-eps}(P || Q): the
    profile of the reverse direction, read off the profile at negative eps.
    """
    positive = eps > 0
    exp = np.exp(eps[positive])
    return -np.expm1(eps[positive]) + exp * values[::-1][positive]


def _check_reverse_direction(
    eps: np.ndarray,
    upper_values: np.ndarray,
    lower_values: np.ndarray | None,
    step: float,
    excess: tuple[float, float],
) -> None:
    """Refuse a profile that misses the reverse direction of its own pair.

    Every valid PLD bounds both directions, so the reverse profile of its pair
    (:func:`_reverse_profile`) lies below its profile. A PLD that dp_accounting
    was told is ``symmetric`` (its ``from_two_probability_mass_functions`` default)
    when its pair is not reports one direction only; pld would inherit that.

    A rigorous lower bound on the reverse direction comes from the pessimistic
    profile at ``-eps`` minus what it may exceed the truth by there: its
    discretisation, at most ``e^-eps (e^h - 1)`` (atoms moved up by less than
    ``h``, or connect-the-dots chords in ``e^eps`` whose slopes lie in [-1, 0]),
    plus its mass at +inf (truncation) and its P-mass above 1 (``excess[0]``); and
    from the optimistic profile (below the truth but for its P-mass above 1,
    ``excess[1]``). Where that bound is above the profile, the PLD is refused.
    """
    positive = eps > 0
    exp = np.exp(eps[positive])
    lowest = _reverse_profile(eps, upper_values) - np.expm1(step) - exp * excess[0]
    if lower_values is not None:
        lowest = np.maximum(lowest, _reverse_profile(eps, lower_values) - exp * excess[1])
    above = lowest - exp * _REVERSE_ROUNDOFF - upper_values[positive]
    if np.any(above > 0):
        worst = int(np.argmax(above))
        raise ValueError(
            "pessimistic must bound both directions: its delta at eps = "
            f"{eps[positive][worst]:.6g} is {upper_values[positive][worst]:.3g}, but the "
            f"reverse direction of its own pair has at least {lowest[worst]:.3g} there "
            "(was it built with symmetric=True from an asymmetric pair? use "
            "symmetric=False; or is value_discretization_interval not its grid?)"
        )


def _checked_pld(obj: Any, name: str) -> Any:
    if not isinstance(obj, privacy_loss_distribution.PrivacyLossDistribution):
        raise ValueError(
            f"{name} must be a dp_accounting PrivacyLossDistribution (got {type(obj).__name__})"
        )
    return obj


def from_dp_accounting(
    pessimistic: Any,
    optimistic: Any | None = None,
    *,
    value_discretization_interval: float = 1e-4,
    loss_grid_step: float | None = None,
) -> PLD:
    """Import a ``dp_accounting`` ``PrivacyLossDistribution`` as a symmetric :class:`pld.PLD`.

    Through the public API only: the profile ``delta(eps)`` at every grid point
    ``k h`` of the support (module docstring).

    Parameters
    ----------
    pessimistic : PrivacyLossDistribution
        Built with ``pessimistic_estimate=True``: it becomes pld's upper side
        (and, without ``optimistic``, its lower side too).
    optimistic : PrivacyLossDistribution, optional
        The same mechanism with ``pessimistic_estimate=False``: it becomes pld's
        lower side. Its delta must not exceed the pessimistic one anywhere.
    value_discretization_interval : float
        The grid ``h`` both PLDs were built on (dp_accounting's default 1e-4),
        in (0, 1]. Another value still gives a valid upper side, looser.
    loss_grid_step : float, optional
        pld's grid step in nats, in (0, 1]; default ``h``, which places every atom
        exactly. PLDs compose in pld only on grids whose steps differ by powers
        of two: pass ``loss_grid_step=other.loss_grid_step`` to compose with ``other``.

    Returns
    -------
    PLD
        Symmetric: one pair bounds both directions.

    Notes
    -----
    Evaluating the profile costs about 1 s per 10^5 grid points in dp_accounting.
    """
    from pld.distribution import connect_the_dots

    _checked_pld(pessimistic, "pessimistic")
    if optimistic is not None:
        _checked_pld(optimistic, "optimistic")
    step = validation.in_interval(
        "value_discretization_interval", value_discretization_interval, 0.0, 1.0, low_open=True
    )
    loss_grid_step = validation.optional_loss_grid_step(loss_grid_step)
    grid_step = step if loss_grid_step is None else loss_grid_step
    eps, upper_values, upper_excess = _support_top(pessimistic, step)
    lower_values, lower_excess = (
        (None, 0.0) if optimistic is None else _profile_values(optimistic, eps)
    )
    if lower_values is not None:
        excess = float(np.max(lower_values - upper_values))
        if excess > 1e-12:
            raise ValueError(
                "optimistic must not exceed pessimistic: its delta is larger by "
                f"{excess:.3g} somewhere (were the two swapped?)"
            )
    excess = (float(upper_values[-1]) + upper_excess, lower_excess)
    _check_reverse_direction(eps, upper_values, lower_values, step, excess)
    upper_pair = connect_the_dots(eps, upper_values, side="upper")
    upper = from_symmetric_pair(
        *upper_pair.log_pmfs(),
        loss_grid_step=grid_step,
    )
    if lower_values is None:
        return upper
    lower_pair = _trim_q_excess(connect_the_dots(eps, lower_values, side="lower"))
    lower = from_symmetric_pair(
        *lower_pair.log_pmfs(),
        loss_grid_step=grid_step,
    )
    return from_bounds(upper=upper, lower=lower)


_NeighboringRelation = privacy_accountant.NeighboringRelation


#: The accountant composes on grids at least as fine as ``PLDAccountant``'s default
#: ``value_discretization_interval`` (1e-4 nats): the largest default grid below it.
#: DP-SGD (sigma = 1.5, q = 0.04, 2250 steps) at pld's own default grid (2.5e-4)
#: gave eps(1e-5) <= 6.768824, above dp_accounting's 6.768787; on this one 6.768783.
ACCOUNTANT_LOSS_GRID_STEP = DEFAULT_LOSS_GRID_STEP / 16


def _fine(loss: PLD) -> PLD:
    """``loss`` rebuilt on ``ACCOUNTANT_LOSS_GRID_STEP`` where its grid is coarser."""
    if loss.refinable and loss.loss_grid_step > ACCOUNTANT_LOSS_GRID_STEP:
        return loss.rebuilt(ACCOUNTANT_LOSS_GRID_STEP)
    return loss


#: Events whose PLDs keep their own grids in the accountant (:func:`_own_grid`).
_OWN_GRID_EVENTS = (PLDEvent.__name__, RandomAllocationDpEvent.__name__)


def _own_grid(event: Any) -> bool:
    """True for an event tree holding a :class:`PLDEvent` or a random allocation.

    Their PLDs are composed on their own grids: a caller's PLD as given, a random
    allocation on the grid its loss's spread calls for (the accountant's fine grid
    would cost it ~10^9 points). Queries still refine to their ``rel_accuracy``.
    """
    if type(event).__name__ in _OWN_GRID_EVENTS:  # by name, as the converter reads events
        return True
    inner = getattr(event, "event", None)
    children = list(getattr(event, "events", None) or ()) + ([] if inner is None else [inner])
    return any(_own_grid(child) for child in children)


class Accountant(privacy_accountant.PrivacyAccountant):
    """A ``dp_accounting.PrivacyAccountant`` that accounts with pld (drop-in for ``PLDAccountant``).

    Every event is converted by :func:`pld.from_dp_event` (its docstring lists the
    events); identical events are converted once and their counts added, and
    the whole sequence is composed by FFT when first queried. Central events are
    rebuilt on :data:`ACCOUNTANT_LOSS_GRID_STEP`; events holding a :class:`PLDEvent`
    (shuffled rounds, check-ins, any pld mechanism: its ``neighboring_relations``
    must include this accountant's) or a :data:`RandomAllocationDpEvent` keep
    their own grids, which the composition nests.

    Parameters
    ----------
    neighboring_relation : dp_accounting NeighboringRelation or str
        ``ADD_OR_REMOVE_ONE`` (default, as ``PLDAccountant``) or ``REPLACE_ONE``
        (or ``"add-remove"`` / ``"replace"``).
    tail_mass : float
        Bound on the mass outside the composition window, per side, in (0, 1e-3]
        (``pld.compose``).

    Examples
    --------
    >>> from dp_accounting import dp_event
    >>> from pld.integrations.dp_accounting import Accountant
    >>> step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))
    >>> eps = Accountant().compose(step, 1000).get_epsilon(1e-6)  # upper bound, nats
    """

    def __init__(
        self,
        neighboring_relation: Any = _NeighboringRelation.ADD_OR_REMOVE_ONE,
        *,
        tail_mass: float | None = None,
    ) -> None:
        self._relation = relation_name(neighboring_relation)
        if isinstance(neighboring_relation, str):
            neighboring_relation = (
                _NeighboringRelation.ADD_OR_REMOVE_ONE
                if self._relation == "add-remove"
                else _NeighboringRelation.REPLACE_ONE
            )
        super().__init__(neighboring_relation)
        from pld.engine import DEFAULT_TAIL_MASS

        self._tail_mass = DEFAULT_TAIL_MASS if tail_mass is None else tail_mass
        validation.in_interval("tail_mass", self._tail_mass, 0.0, 1e-3, low_open=True)
        self._losses: dict[int, tuple[PLD, int]] = {}
        self._as_built: set[int] = set()  # ids of the losses kept on their own grids
        self._converted: dict[Any, PLD] = {}
        self._last: tuple[Any, PLD] | None = None
        self._total: PLD | None = None
        self._upper: PLD | None = None  # the upper side alone (get_epsilon, get_delta)

    def _convert(self, event: Any) -> PLD:
        try:
            hash(event)
        except TypeError:  # e.g. ComposedDpEvent (a list): remember the last one only
            if self._last is None or self._last[0] is not event:
                self._last = (event, from_dp_event(event, neighboring_relation=self._relation))
            return self._last[1]
        if event not in self._converted:
            self._converted[event] = from_dp_event(event, neighboring_relation=self._relation)
        return self._converted[event]

    def _maybe_compose(
        self, event: Any, count: int, do_compose: bool
    ) -> privacy_accountant.PrivacyAccountant.CompositionErrorDetails | None:
        """Convert ``event`` (cached) and, if ``do_compose``, add it ``count`` times."""
        try:
            loss = self._convert(event)
        except UnsupportedEventError as error:
            return self.CompositionErrorDetails(
                invalid_event=error.event, error_message=error.reason
            )
        if do_compose and count > 0 and not isinstance(event, dp_event.NoOpDpEvent):
            if _own_grid(event):
                self._as_built.add(id(loss))
            _, before = self._losses.get(id(loss), (loss, 0))
            self._losses[id(loss)] = (loss, before + count)
            self._total = self._upper = None
        return None

    @property
    def pld(self) -> PLD | None:
        """The PLD of everything composed so far (``None`` before any event)."""
        if self._total is None and self._losses:
            self._total = self._composition(lambda loss: loss)
        return self._total

    def _composition(self, side: Any) -> PLD:
        """The composition of every event, each one-round PLD passed through ``side``."""
        if any(is_non_private(loss) for loss, _ in self._losses.values()):
            return non_private()
        sides = [
            (side(loss if id(loss) in self._as_built else _fine(loss)), count)
            for loss, count in self._losses.values()
        ]
        parts = [
            one.self_compose(count, tail_mass=self._tail_mass) if count > 1 else one
            for one, count in sides
        ]
        return compose(*parts, tail_mass=self._tail_mass)

    def _upper_bounds(self) -> PLD | None:
        """The full composition if there is one, else the upper side's alone (half the
        work: what ``get_epsilon`` and ``get_delta`` report)."""
        if self._total is not None or not self._losses:
            return self._total
        if self._upper is None:
            self._upper = self._composition(upper_only)
        return self._upper

    def epsilon_bounds(self, target_delta: float) -> tuple[float, float]:
        """Lower and upper bounds on epsilon at ``target_delta`` (nats)."""
        total = self.pld
        if total is None:
            validation.in_interval("target_delta", target_delta, 0.0, 1.0, low_open=True)
            return 0.0, 0.0
        return total.epsilon_bounds(target_delta)

    def delta_bounds(self, target_epsilon: float) -> tuple[float, float]:
        """Lower and upper bounds on delta at ``target_epsilon`` (nats)."""
        total = self.pld
        if total is None:
            return 0.0, 0.0
        return total.delta_bounds(target_epsilon)

    def get_epsilon(self, target_delta: float) -> float:
        """Upper bound on epsilon at ``target_delta``, accounting for every composed event.

        Before any ``*_bounds`` query only the upper side is composed, and its
        bound is not refined (on the accountant's grid the bracket is typically
        1e-5 wide); afterwards this is ``epsilon_bounds(target_delta)[1]``.
        """
        total = self._upper_bounds()
        if total is None or total is self._total:
            return self.epsilon_bounds(target_delta)[1]
        return float(total.epsilon_bounds(target_delta, rel_accuracy=1.0)[1])

    def get_delta(self, target_epsilon: float) -> float:
        """Upper bound on delta at ``target_epsilon``, accounting for every composed event
        (only the upper side is composed first, as in :meth:`get_epsilon`)."""
        total = self._upper_bounds()
        if total is None or total is self._total:
            return self.delta_bounds(target_epsilon)[1]
        return float(total.delta_bounds(target_epsilon, rel_accuracy=1.0)[1])
