"""``pld.calibrate``: the most generous parameter value that meets an (eps, delta) target.

Given a mechanism family with one free parameter, a target (eps, delta) and a
number of rounds T, :func:`calibrate` returns the value of the parameter that
spends the most privacy budget while the **upper** bound still meets the
target: ``delta_upper(target_eps) <= target_delta`` after T rounds (equivalently
``eps_upper(target_delta) <= target_eps``, Koskela et al. (2023), eq 2.1).

The free parameters and the side on which they are more private:

=========  =====================================  ==============================
param      more private when                      returned value
=========  =====================================  ==============================
eps0       smaller (local randomiser, clones)     the largest eps0
gamma      larger (k-RR: more uniform answers)    the smallest gamma
sigma      larger (Gaussian noise)                the smallest sigma
rate       smaller (subsampling probability)      the largest rate
n          larger (more users to hide among)      the smallest n
rounds     smaller (fewer compositions)           the largest T
participa- smaller (check-in probability p of      the largest p
tion       ``pld.checkin``, distributed check-in)
=========  =====================================  ==============================

``participation`` sets the check-in mechanisms' argument ``p`` (``p`` alone would
collide with ``pld.clones``' clone probability, more private when larger). The
true delta of check-in does not decrease with p: thinning the released multiset,
each report kept independently with probability ``p'/p``, is a post-processing
that gives check-in with ``p'`` exactly. So every p below a value that meets the
target meets it too. The upper bound is not monotone in p (measured with the
stronger clones pair, ``variant="stronger"``: n = 100,
eps0 = 2, eps = 0.5: 6.0e-3 at p = 0.33 but 5.0e-3 at p = 0.61, the clones bases
of different counts; and at tiny deltas, e.g. n = 300, eps0 = 1, eps = 0.1: 1.6e-9
at p = 0.005 and 2.2e-11 at p = 0.0075, the count blocks' floors). So for
``participation`` the bisection is followed by probes at two, four, ... times the
rejected value; if one meets the target, the search bisects again above it. The
result meets the target and its neighbour does not; a passing p between the probes
may still be missed (the result is then less generous than it could be, never invalid).

Search: the parameter is restricted to a lattice, geometric for real
parameters (consecutive values differ by the factor ``1 + tolerance``) and the
integers for ``n`` and ``rounds``. Starting from ``start``, the value is doubled
or halved until the target is bracketed, then the bracket is bisected until its
ends are neighbours on the lattice (monotone root finding). The returned
``value`` meets the target with the upper bound, and its neighbour one
lattice step more generous (``rejected``) was evaluated and does not: both
statements hold whatever the shape of the bound. Bisection assumes that the
upper bound is monotone in the parameter, as the true delta is for the
mechanisms of this library (e.g. one more user's report, or more noise on each
report, is a post-processing of the shuffled output); under it, ``value`` is
the most generous lattice value that meets the target with the upper bound.

Certification: every evaluation asks its bracket for ``rel_accuracy``
(:mod:`pld.distribution.refinement`), and at the end the ``rejected`` neighbour's bracket
is refined until its *lower* bound exceeds ``target_delta``: the rejected value
then truly misses the target, so (under monotonicity) the true most generous
value lies within one lattice step (``tolerance``) of ``value``
(``certified=True``). If the refinement reaches its limit first, ``certified``
is False and an ``AccuracyWarning`` says so.
The tests check the result against independent truths for every family.
"""

from __future__ import annotations

import inspect
import logging
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pld import validation
from pld.distribution import DEFAULT_REL_ACCURACY, PLD, AccuracyWarning, check_rel_accuracy
from pld.engine import BudgetError
from pld.numerics import MAX_EPS0

logger = logging.getLogger(__name__)

#: Default relative tolerance on a real parameter: lattice neighbours differ by 0.1 %.
DEFAULT_TOLERANCE = 1e-3


@dataclass(frozen=True)
class _Parameter:
    """A calibratable parameter: its privacy direction, type and default search range."""

    private_when: str
    integer: bool
    low: float
    high: float
    start: float
    keyword: str | None = None
    monotone_by_thinning: bool = False


#: Calibratable parameters; ``low``/``high`` is the default search range.
PARAMETERS: dict[str, _Parameter] = {
    "eps0": _Parameter("smaller", False, 1e-6, MAX_EPS0, 1.0),
    "gamma": _Parameter("larger", False, 1e-6, 1.0, 0.5),
    "sigma": _Parameter("larger", False, 1e-3, 1e6, 1.0),
    "rate": _Parameter("smaller", False, 1e-9, 1.0, 0.01),
    "n": _Parameter("larger", True, 1, 10**9, 1000),
    "rounds": _Parameter("smaller", True, 1, 10**7, 1),
    "participation": _Parameter(
        "smaller", False, 1e-9, 1.0, 0.01, keyword="p", monotone_by_thinning=True
    ),
}


def keyword_of(mechanism: Callable[..., PLD], param: str) -> str:
    """The mechanism's argument that ``param`` sets (``participation``: check-in's ``p``).

    A parameter with a ``keyword`` applies only to mechanisms that declare it in
    their ``calibration_names`` attribute (``pld.checkin``: ``{"participation": "p"}``),
    since the same argument name means something else elsewhere (``pld.clones``' ``p``).
    """
    spec = PARAMETERS[param]
    if spec.keyword is None:
        return param
    if getattr(mechanism, "calibration_names", {}).get(param) != spec.keyword:
        raise ValueError(
            f"the mechanism has no parameter {param!r} to calibrate (it is the check-in "
            "probability p of pld.checkin and pld.distributed_checkin)"
        )
    return spec.keyword


@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate`.

    Attributes
    ----------
    param : str
        The calibrated parameter.
    value : float or int
        The most generous lattice value that meets the target with the upper bound.
    eps_upper : float
        Upper bound on eps at ``target_delta`` after ``rounds`` rounds, at ``value`` (nats).
    delta_upper : float
        Upper bound on delta at ``target_eps`` after ``rounds`` rounds, at ``value``.
    rejected : float or int or None
        The lattice neighbour one step more generous, which does not meet the
        target; ``None`` if ``value`` is the generous end of the search range.
    target_eps, target_delta : float
        The target.
    rounds : int
        Number of rounds (``value`` itself when ``param == "rounds"``).
    tolerance : float
        Relative lattice step for real parameters; 1 for integers (an absolute
        step: exact).
    evaluations : int
        Number of PLDs built and queried.
    loss : PLD
        The PLD after ``rounds`` rounds at ``value``.
    certified : bool
        True when the ``rejected`` neighbour's lower bound on delta exceeds
        ``target_delta`` (it truly misses the target), or there is no neighbour.
    rejected_delta_lower : float or None
        That lower bound (``None`` without a neighbour).
    """

    param: str
    value: float | int
    eps_upper: float
    delta_upper: float
    rejected: float | int | None
    target_eps: float
    target_delta: float
    rounds: int
    tolerance: float
    evaluations: int
    loss: PLD
    certified: bool = True
    rejected_delta_lower: float | None = None


class _Lattice:
    """Parameter values indexed by generosity: index 0 is the most private end."""

    def __init__(self, spec: _Parameter, low: float, high: float, tolerance: float) -> None:
        self.spec = spec
        self.low, self.high = low, high
        self.ratio = math.log1p(tolerance)
        if spec.integer:
            self.size = int(high - low) + 1
        else:
            self.size = math.ceil(math.log(high / low) / self.ratio - 1e-9) + 1

    def _position(self, index: int) -> int:
        """Index from the low end of the range."""
        return index if self.spec.private_when == "smaller" else self.size - 1 - index

    def value(self, index: int) -> float | int:
        position = self._position(index)
        if self.spec.integer:
            return int(self.low) + position
        if position == self.size - 1:
            return self.high
        return self.low * math.exp(position * self.ratio)

    def index(self, value: float) -> int:
        """Generosity index of the lattice value nearest to ``value`` (clipped to the range)."""
        value = min(max(value, self.low), self.high)
        if self.spec.integer:
            position = round(value - self.low)
        else:
            position = round(math.log(value / self.low) / self.ratio)
        position = min(max(position, 0), self.size - 1)
        return position if self.spec.private_when == "smaller" else self.size - 1 - position

    def more_generous(self, index: int) -> int:
        """Index of a value about twice as generous (doubled or halved), at least index + 1."""
        value = self.value(index)
        target = value * 2 if self.spec.private_when == "smaller" else value / 2
        return min(max(self.index(target), index + 1), self.size - 1)

    def more_private(self, index: int) -> int:
        """Index of a value about twice as private, at most index - 1."""
        value = self.value(index)
        target = value / 2 if self.spec.private_when == "smaller" else value * 2
        return max(min(self.index(target), index - 1), 0)


def _check_range(spec: _Parameter, bounds: tuple[float, float] | None) -> tuple[float, float]:
    if bounds is None:
        return spec.low, spec.high
    try:
        low, high = bounds
    except (TypeError, ValueError) as error:
        raise ValueError(f"bounds must be a pair (low, high) (got {bounds!r})") from error
    if spec.integer:
        low = validation.integer_at_least("bounds[0]", low, 1)
        high = validation.integer_at_least("bounds[1]", high, low)
    else:
        low = validation.positive("bounds[0]", low)
        high = validation.finite_real("bounds[1]", high)
        if high <= low:
            raise ValueError(f"bounds[1] must be > bounds[0] = {low!r} (got {high!r})")
    return low, high


def _accepts(mechanism: Callable[..., PLD], name: str) -> bool:
    try:
        signature = inspect.signature(mechanism)
    except (TypeError, ValueError):
        return True
    parameters = signature.parameters.values()
    return name in signature.parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )


def calibrate(
    mechanism: Callable[..., PLD],
    param: str,
    *,
    target_eps: float,
    target_delta: float,
    rounds: int | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    bounds: tuple[float, float] | None = None,
    start: float | None = None,
    progress: bool | None = None,
    rel_accuracy: float = DEFAULT_REL_ACCURACY,
    **fixed: Any,
) -> Calibration:
    """The most generous value of ``param`` whose upper bound meets (target_eps, target_delta).

    One line, e.g. the largest eps0 each of 10 000 users may use for 100 rounds (1.372
    with ``pld.clones``' standard pair, valid for any eps0-LDP randomizer; pass
    ``variant="stronger"`` only where that pair is proven, docs/clones-validity.md)::

        pld.calibrate(pld.clones, "eps0", n=10_000, rounds=100,
                      target_eps=1.0, target_delta=1e-6).value

    Parameters
    ----------
    mechanism : callable
        Builds one round, e.g. ``pld.clones``, ``pld.krr``, ``pld.gaussian``; it
        is called with ``fixed`` and the calibrated parameter as keyword arguments
        and must return a :class:`pld.PLD`.
    param : {"eps0", "gamma", "sigma", "rate", "n", "rounds", "participation"}
        The free parameter (module docstring for its privacy direction);
        ``"participation"`` is the check-in probability ``p`` of ``pld.checkin``.
        ``"rounds"`` finds the largest number of rounds T within the budget.
    target_eps : float
        Target eps in nats, >= 0.
    target_delta : float
        Target delta, in (0, 1).
    rounds : int, optional
        Number of rounds T >= 1 (default 1); not allowed with ``param="rounds"``.
    tolerance : float
        Relative lattice step for real parameters, in (0, 0.5]: the returned
        value is within a factor ``1 + tolerance`` of the most generous one.
        Integer parameters are calibrated exactly.
    bounds : (float, float), optional
        Search range; default ``PARAMETERS[param]`` (e.g. eps0 in [1e-6, 50]).
    start : float, optional
        First value tried (default ``PARAMETERS[param].start``, clipped to the range).
    progress : bool, optional
        Progress bar: ``None`` shows one on a terminal or in a notebook
        (:mod:`pld.progress`), ``False`` never, ``True`` whenever tqdm is installed.
    rel_accuracy : float
        Relative bracket width asked of every evaluation, in (0, 1]
        (:mod:`pld.distribution.refinement`); the ``rejected`` neighbour is then refined further
        until it is certified to miss the target (``Calibration.certified``).
    **fixed
        The mechanism's other arguments (e.g. ``n=10_000``, ``k=4``, ``loss_grid_step``).

    Returns
    -------
    Calibration
        ``value``, the bounds it achieves, the ``rejected`` neighbour and the PLD.

    Raises
    ------
    ValueError
        For bad arguments, and when no value in the search range meets the
        target; the message then gives the (eps, delta) of the most private value.
    """
    from pld.progress import progress_bar

    if not callable(mechanism):
        raise ValueError(f"mechanism must be a callable returning a pld.PLD (got {mechanism!r})")
    if not isinstance(param, str) or param not in PARAMETERS:
        raise ValueError(f"param must be one of {', '.join(PARAMETERS)} (got {param!r})")
    spec = PARAMETERS[param]
    keyword = param if param == "rounds" else keyword_of(mechanism, param)
    if param in fixed or keyword in fixed:
        raise ValueError(f"{keyword} is the calibrated parameter; do not also fix it")
    if param == "rounds":
        if rounds is not None:
            raise ValueError("rounds is the calibrated parameter; do not also fix it")
    else:
        rounds = validation.integer_at_least("rounds", 1 if rounds is None else rounds, 1)
        if not _accepts(mechanism, keyword_of(mechanism, param)):
            raise ValueError(f"the mechanism has no parameter {param!r} to calibrate")
    target_eps = validation.non_negative("target_eps", target_eps)
    target_delta = validation.in_interval(
        "target_delta", target_delta, 0.0, 1.0, low_open=True, high_open=True
    )
    tolerance = validation.in_interval("tolerance", tolerance, 0.0, 0.5, low_open=True)
    low, high = _check_range(spec, bounds)
    lattice = _Lattice(spec, low, high, tolerance)
    start = spec.start if start is None else validation.positive("start", start)
    rel_accuracy = check_rel_accuracy(rel_accuracy)

    def one_round(**arguments: Any) -> PLD:
        loss = mechanism(**fixed, **arguments)
        if not isinstance(loss, PLD):
            raise ValueError(f"mechanism must return a pld.PLD (got {type(loss).__name__})")
        return loss

    base = one_round() if param == "rounds" else None

    def build(value: float | int) -> PLD:
        try:
            if base is not None:
                return base if value == 1 else base.self_compose(int(value))
            loss = one_round(**{keyword: value})
            return loss if rounds == 1 else loss.self_compose(rounds)
        except ValueError as error:
            # Bad input and refusals by the work budget keep their type.
            message = f"calibrating {param}, at {param}={value:g}: {error}"
            if isinstance(error, BudgetError):
                message += ", or narrow the search range with bounds=(low, high)"
                raise BudgetError(message, estimate=error.estimate, budget=error.budget) from error
            raise ValueError(f"{message} (narrow the search range with bounds=)") from error

    outcomes: dict[int, float] = {}
    lowers: dict[int, float] = {}
    best: dict[str, Any] = {}

    with progress_bar(desc=f"calibrating {param}", unit="eval", enabled=progress) as bar:

        def meets(index: int) -> bool:
            value = lattice.value(index)
            loss = build(value)
            # The raw bracket first: an upper bound at most the target passes and a lower
            # bound above it fails whatever the refinement (which never raises an upper
            # bound, and every upper bound is at least the truth); only a bracket that
            # straddles the target is refined to rel_accuracy.
            delta_lower, delta_upper = loss.delta_bounds(target_eps, rel_accuracy=1.0)
            if delta_lower <= target_delta < delta_upper:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", AccuracyWarning)
                    delta_lower, delta_upper = loss.delta_bounds(
                        target_eps, rel_accuracy=rel_accuracy
                    )
                if delta_lower <= target_delta < delta_upper:
                    # Only a bracket that still straddles the target leaves the decision open.
                    for item in caught:
                        warnings.warn(item.message, item.category, stacklevel=2)
            outcomes[index] = delta_upper
            lowers[index] = delta_lower
            ok = delta_upper <= target_delta
            if ok and index >= best.get("index", -1):
                best.update(index=index, loss=loss)
            if index == 0 and not ok:
                best.update(private_loss=loss)
            logger.debug("calibrate %s=%r: delta_upper=%r (%s)", param, value, delta_upper, ok)
            bar.update(1)
            bar.set_postfix_str(f"{param}={value:.6g} delta={delta_upper:.3g}")
            return ok

        index = lattice.index(start)
        if meets(index):
            passing, failing = index, None
            while passing < lattice.size - 1:
                probe = lattice.more_generous(passing)
                if not meets(probe):
                    failing = probe
                    break
                passing = probe
        else:
            passing, failing = None, index
            while failing > 0:
                probe = lattice.more_private(failing)
                if meets(probe):
                    passing = probe
                    break
                failing = probe
            if passing is None:
                _refuse(param, lattice, best["private_loss"], target_eps, target_delta, rounds)
        while failing is not None:
            while failing - passing > 1:
                middle = (passing + failing) // 2
                if meets(middle):
                    passing = middle
                else:
                    failing = middle
            if not spec.monotone_by_thinning:
                break
            # The truth is monotone but the bound need not be: probe twice, four times,
            # ... the failing value, and bisect again above any probe that passes.
            probe = failing
            while probe < lattice.size - 1:
                probe = lattice.more_generous(probe)
                if meets(probe):
                    passing = probe
                    break
            else:
                break
            failing = next(
                (i for i in sorted(outcomes) if i > passing and outcomes[i] > target_delta), None
            )

        rejected_lower = None
        for _ in range(_PROMOTIONS):
            if failing is None:
                break
            rejected = build(lattice.value(failing))
            rejected_lower, rejected_upper = _certify(
                rejected, target_eps, target_delta, lowers[failing], rel_accuracy
            )
            if rejected_upper > target_delta:
                break
            # Refined, the rejected neighbour meets the target: it becomes the value,
            # and the next lattice value is judged (and certified) in its turn.
            outcomes[failing] = rejected_upper
            best.update(index=failing, loss=rejected)
            passing, failing = failing, None
            while failing is None and passing + 1 < lattice.size:
                if meets(passing + 1):
                    passing += 1
                else:
                    failing = passing + 1
        if failing is None:
            rejected_lower = None
    loss = best["loss"]
    value = lattice.value(passing)
    # The value's own bracket at rel_accuracy (its decision may have come from the raw one).
    delta_upper = min(outcomes[passing], float(loss.delta(target_eps, rel_accuracy=rel_accuracy)))
    return Calibration(
        param=param,
        value=value,
        eps_upper=float(loss.epsilon(target_delta, rel_accuracy=rel_accuracy)),
        delta_upper=delta_upper,
        rejected=None if failing is None else lattice.value(failing),
        target_eps=target_eps,
        target_delta=target_delta,
        rounds=int(value) if param == "rounds" else int(rounds),
        tolerance=1.0 if spec.integer else tolerance,
        evaluations=len(outcomes),
        loss=loss,
        certified=rejected_lower is None or rejected_lower > target_delta,
        rejected_delta_lower=rejected_lower,
    )


#: Smallest rel_accuracy the certification of the rejected neighbour asks for.
_CERTIFY_FLOOR = 1e-6


#: Rejected neighbours that, refined, meet the target after all and are taken in
#: turn, at most.
_PROMOTIONS = 4


def _certify(
    loss: PLD, target_eps: float, target_delta: float, lower: float, rel_accuracy: float
) -> tuple[float, float]:
    """Bounds on delta(target_eps) of the rejected value, refined until the lower one exceeds
    the target, or until the upper one meets it (the value is then not rejected after all).

    Each round asks for a bracket narrow enough to separate its upper bound from
    the target (``(upper - target) / upper``), at most ten times narrower than
    the last; it stops at ``_CERTIFY_FLOOR`` or when the refinement hits a limit.
    """
    accuracy = rel_accuracy
    upper = math.inf
    while lower <= target_delta:
        upper = float(loss.delta(target_eps, rel_accuracy=accuracy))
        if upper <= target_delta:
            break
        gap = (upper - target_delta) / upper
        accuracy = max(_CERTIFY_FLOOR, accuracy / 10, gap / 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", AccuracyWarning)
            lower, upper = loss.delta_bounds(target_eps, rel_accuracy=accuracy)
        if upper <= target_delta:
            break
        if lower <= target_delta and (caught or accuracy <= _CERTIFY_FLOOR):
            warnings.warn(
                f"calibrate: the rejected neighbour's bracket of delta({target_eps:g}) still "
                f"contains target_delta={target_delta:g} at rel_accuracy={accuracy:g}; the "
                "result is not certified to be within tolerance of the most generous value",
                AccuracyWarning,
                stacklevel=3,
            )
            break
    return lower, upper


def _refuse(
    param: str,
    lattice: _Lattice,
    loss: PLD,
    target_eps: float,
    target_delta: float,
    rounds: int | None,
) -> None:
    """Raise: no value in the range meets the target; report the best reachable (eps, delta)."""
    value = lattice.value(0)
    after = "" if param == "rounds" else f" after {rounds} round{'s' if rounds != 1 else ''}"
    raise ValueError(
        f"no {param} in [{lattice.low:g}, {lattice.high:g}] meets the target "
        f"(eps={target_eps:g}, delta={target_delta:g}){after}: the most private, "
        f"{param}={value:g}, reaches only delta_upper={float(loss.delta(target_eps)):.4g} "
        f"at eps={target_eps:g}, or eps_upper={loss.epsilon(target_delta):.4g} at "
        f"delta={target_delta:g}"
    )
