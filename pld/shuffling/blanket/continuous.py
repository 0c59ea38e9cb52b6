"""Shuffled continuous randomizers (Gaussian, Laplace): the blanket bound and an observer.

Blanket bound (docs/blanket-continuous.md; Balle et al. (2019), §5): with ``omega_min(y) = min_x
R(x)(y)``, ``gamma = int omega_min``, ``omega = omega_min / gamma`` and
``r_x = R(x) / omega``, the shuffled view of neighbours that differ in one
user's input ``x`` versus ``x'`` satisfies

    delta_{x,x'}(eps) <= (1 / (n gamma)) E[(sum_{i<=n} B_i Z_i)_+],
    B_i ~ Bernoulli(gamma), Y_i ~ omega, Z_i = r_x(Y_i) - e^eps r_{x'}(Y_i).   (1)

For a location family on ``[low, high]`` and the end-point pair, writing
``U = |Y - mid|`` and ``V = r_high(Y) / gamma`` on the side of ``high``,
``Z / gamma`` is ``V - e^eps`` or ``1 - e^eps V`` with probability 1/2 each
(docs/blanket-continuous.md, §2), where under ``omega``

* Gaussian (units of sigma, ``k = Delta / sigma``, ``a = k / 2``): ``V = e^{k U}``,
  ``P(U > u) = Phi(-(u + a)) / Phi(-a)``;
* Laplace (units of b): ``V = e^{2 min(U, a) / b}``, ``U ~ Exp(1/b)``, so
  ``P(V > v) = v^{-1/2}`` on ``[1, e^{Delta/b})`` and an atom of mass ``gamma``
  at ``e^{Delta / b}``.

Worst pair: the end points, for every n and eps (docs/blanket-continuous.md §3:
each input's ratio ``r_x(Y)`` is below ``r_high(Y)`` in convex order, the end
points' ratios are monotone in ``y``, so ``Z_{x,x'}`` is below ``Z_{high,low}`` in
increasing convex order, which sums and ``(.)_+`` preserve). The numerics
(:mod:`pld.shuffling.blanket.continuous_sum`) are rigorous for the end-point pair, hence
for the supremum over all pairs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr

from pld import validation
from pld.engine import BudgetError
from pld.shuffling.blanket.continuous_far import far_bracket
from pld.shuffling.blanket.continuous_law import VLaw
from pld.shuffling.blanket.continuous_terms import (
    MASS_ERROR,
    UNIT_ROUNDOFF,
    Tails,
    atoms,
    branches,
    chernoff_negative,
    lattice,
    negative_part,
    one_jump_lower,
    one_jump_upper,
)
from pld.shuffling.blanket.continuous_window import WindowError, positive_part_window

if TYPE_CHECKING:
    from pld.distribution import PLD

#: Grid steps per standard deviation of the bulk of ``V`` (:func:`default_grid_step`).
STEPS_PER_STD = 64
#: ``pld.shuffle``'s lattice at its default loss grid, in the same units; it takes
#: proportionally more on a finer loss grid (the lattice's error shrinks like the
#: square of its step, as connect-the-dots' with the eps grid). At 16 the one-round
#: bracket is about 7e-4 of delta near delta = 1e-6 (sigma = 1, n = 100), below the
#: eps grid's connect-the-dots excess, at a quarter of the cells of 64.
SHUFFLE_STEPS_PER_STD = 16
#: Initial reach of the core: the other users' drift plus this many standard deviations.
_REACH_SDS = 10.0
#: The reach grows until the Chernoff remainder is at most this share of the lower
#: bound (or below ``_REMAINDER_FLOOR``); the core has at most ``GROWTH_CELLS`` cells.
REMAINDER_SHARE = 1e-3
_REMAINDER_FLOOR = 1e-20
#: The first reach aims at an estimated remainder below this (then ``REMAINDER_SHARE``).
_FIRST_TARGET = 1e-9
#: The core never reaches beyond the quantile of ``V`` of this upper tail mass.
_NEGLIGIBLE = 1e-30
#: Beyond this many cells a longer reach coarsens the lattice instead: far reaches
#: are needed where delta is small (the other users' drift grows like n e^eps), and
#: there the remainder, not the lattice, limits the bracket (sigma = 1, n = 100, eps
#: = 3: 8.6e-5 relative with 2^14 cells in 54 ms, 3.4e-5 with 2^17 in 0.2 s).
GROWTH_CELLS = 2**14
#: Beyond ``GROWTH_CELLS`` cells the reach still grows, with a step up to this many
#: times the default (the lattice error grows like its square).
_COARSENING = 8.0
_ATTEMPTS = 4
#: Factor between the reaches tried by :func:`_cut_for`: the remainder falls steeply
#: once the reach passes the other users' drift, so a coarse ladder overshoots.
_LADDER = 1.2
#: ``pld.shuffle``'s default evaluates the Gaussian's blanket bound only for
#: ``(high - low) / sigma`` up to this (:func:`blanket_available`).
BEST_MAX_RATIO = 4.0
#: Largest number of lattice cells of one term per eps.
MAX_CELLS = 2**24
#: Where a Chernoff bound on the whole upper value is below this, it is the upper value
#: (and the closed-form part the lower one): no lattice sum.
_NEGLIGIBLE_DELTA = 1e-19
#: Largest lattice index of a term (``e^eps / step``): float64 holds integers exactly
#: up to 2^53; beyond, the evaluation is refused (a profile caller holds its last value).
_LARGEST_INDEX = 2.0**52
#: Where the lattice's bracket is wider than this (relative), the lattice-free bracket
#: of :mod:`pld.shuffling.blanket.continuous_far` is computed too and the best of both
#: kept (it costs about 40 ms per eps).
_WIDE = 0.01
#: Where the others' drift is beyond the lattice's longest reach, a lattice-free bracket
#: with upper at most this many times its lower value is kept without a lattice (at
#: sigma = 0.25, n = 10^4 the lattice there only repeats the local mechanism's value).
_FAR_ENOUGH = 2.0
#: Atoms of V heavier than this are put on the grid (per eps).
_ALIGN_ATOM = 1e-6
#: Loss grid step (nats) of the local mechanism's PLD in :func:`best_profile_bounds`
#: (its bracket there is ~1e-4 relative or better, and it builds in milliseconds).
LOCAL_LOSS_STEP = 1e-3


def _check_eps(eps: object) -> np.ndarray:
    values = validation.real_array("eps", eps)
    if np.any(values < 0):
        raise ValueError("eps must be >= 0 (nats)")
    return values


def default_grid_step(law: VLaw) -> float:
    """Lattice step for ``Z / gamma``: the deviation of ``V``'s bulk over ``STEPS_PER_STD``.

    The bulk is ``V`` below its ``1 - BULK_TAIL`` quantile: for small noise the
    full variance of ``V`` (log-normal tails) is set by values that almost never occur.
    """
    return law.bulk_deviation() / STEPS_PER_STD


def _cut_for(law: VLaw, n: int, alpha: float, t: float, largest: float, target: float) -> float:
    """A core reach from ``t`` up (at most ``largest``): the first on a geometric ladder
    whose estimated remainder ``p(t) E[(t + W_1 + ... + W_{n-1})_-]`` (a normal
    approximation of the sum) is below ``target``; the rigorous remainder is
    computed afterwards (:func:`_one_eps`)."""
    t = min(t, largest)
    while t < largest:
        v = alpha + t
        p = 0.5 * law.gamma * law.survival(v)
        second = law.second_moment_below(v) - 2 * (2 / law.gamma - 1) + 1  # E[(V - 1)^2; core]
        spread = math.sqrt(max((n - 1) * 0.5 * law.gamma * (1 + alpha * alpha) * second, 1e-300))
        mean = t + (n - 1) * (1 - alpha)
        ratio = min(abs(mean / spread), 1e100)
        negative = spread * math.exp(-0.5 * ratio * ratio) / math.sqrt(2 * math.pi)
        negative -= mean * float(ndtr(-mean / spread))
        if p * max(negative, 0.0) <= target:
            break
        t = min(_LADDER * t, largest)
    return t


def continuous_profile_bounds(
    law: VLaw,
    n: int,
    eps: np.ndarray,
    *,
    grid_step: float | None = None,
    chernoff_only: bool = False,
    hint: float | None = None,
    remainder_share: float = REMAINDER_SHARE,
    lattice_free: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) of the one-round blanket delta(eps) of a shuffled randomizer.

    Evaluates eq. (1) of the module docstring for the end-point pair
    ``(high, low)`` (by symmetry ``(low, high)`` gives the same values), which
    is the worst ordered pair of inputs in ``[low, high]`` for every n and eps
    (proved in docs/blanket-continuous.md §3). Each term is split at a reach ``t``
    (docs/blanket-continuous.md §4b): its core is bracketed by lattice laws
    (mean-preserving spread / contraction, second order in the step) and one
    tilted convolution per eps, with the aliasing, round-off and truncation terms of
    :mod:`pld.shuffling.blanket.continuous_window`; the users whose term
    exceeds ``t`` enter by the exact closed form of ``E[S; some term > t]`` (Gaussian
    tail functions) and a Chernoff bound on the negative part there, which is kept
    below ``remainder_share`` of the result (``t`` grows until it is, within
    ``GROWTH_CELLS`` cells).

    Parameters
    ----------
    law : VLaw
        The blanket law of the randomizer (``GaussianRandomizer.blanket_law()``, ...).
    n : int
        Number of users, >= 1.
    eps : array_like
        Values of eps >= 0 (nats).
    grid_step : float, optional
        Lattice step for ``Z / gamma`` (default :func:`default_grid_step`);
        the bracket's width shrinks like its square.
    chernoff_only : bool
        Only a quick upper value (a Chernoff bound on the core instead of the lattice
        sum, no lattice-free bracket; lower values 0): for choosing grids.
    hint : float, optional
        A value near which delta is expected (a neighbouring eps's lower value): the
        first reach then aims at ``remainder_share`` of it, so that one pass usually
        suffices where delta is small. Any value gives valid bounds.
    remainder_share : float
        The tail remainder is kept below this share of the lower value, in (0, 1]
        (default ``REMAINDER_SHARE``; ``pld.shuffle`` lowers it with the loss grid, so
        that it follows a query's ``rel_accuracy`` through refinement).
    lattice_free : bool
        Also the lattice-free bracket (docs/blanket-continuous.md §4e) where the
        lattice's is wide (default); False: the lattice alone (how ``pld.shuffle``
        places its eps grid's end, as before that bracket existed).

    Returns
    -------
    lower, upper : ndarray
        Bounds on ``sup_{x, x'} delta_{x,x'}(eps)`` of eq. (1), in [0, 1]; the
        upper one is non-increasing in eps and the lower one too. For
        composition, extend to negative eps by ``delta(-t) = 1 - e^{-t} +
        e^{-t} delta(t)`` (the supremum over ordered pairs is symmetric) before
        :func:`pld.from_privacy_profile` (docs/blanket-continuous.md §6).

    Raises
    ------
    ValueError
        On bad input, or if one eps needs more than ``MAX_CELLS`` cells (then
        increase ``grid_step``).
    """
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    eps = _check_eps(eps)
    step = default_grid_step(law) if grid_step is None else grid_step
    step = validation.positive("grid_step", step)
    remainder_share = validation.in_interval(
        "remainder_share", remainder_share, 0.0, 1.0, low_open=True
    )
    lower = np.zeros(eps.shape[0])
    upper = np.zeros(eps.shape[0])
    smallest = _REACH_SDS * law.bulk_deviation()
    if 2 * smallest / step > MAX_CELLS:
        raise BudgetError(
            f"grid_step = {step:g} is too small: a term's core needs about "
            f"{2 * smallest / step:.3g} lattice cells (limit {MAX_CELLS}); increase grid_step"
        )
    use_far = lattice_free and not chernoff_only
    for i, alpha in enumerate(np.exp(eps)):
        alpha = float(alpha)
        if alpha >= law.v_max:  # the Laplace's Z <= 0
            continue
        if alpha / step > _LARGEST_INDEX:
            if use_far:
                lower[i], upper[i] = far_bracket(law, n, alpha)
                if math.isfinite(upper[i]):
                    continue
            raise BudgetError(
                f"eps = {float(eps[i]):g} is too large for the lattice of step {step:g}: its "
                f"grid indices reach about {alpha / step:.3g} (limit {_LARGEST_INDEX:.3g})"
            )
        largest = GROWTH_CELLS * step / 2
        # Where the whole tail beyond v has E[V; V > v] negligible and v is affordable,
        # the core reaches v (one attempt); else the reach is fitted to the drift.
        short = law.moment_quantile(_NEGLIGIBLE_DELTA / law.gamma) - alpha
        if smallest <= short <= largest:
            t = short
        else:
            first_target = _FIRST_TARGET
            if hint is not None and hint > 0:
                # The normal approximation of _cut_for underestimates the rigorous
                # (Chernoff) remainder: aiming 64 times lower saves most second passes.
                wanted = max(remainder_share * hint, _REMAINDER_FLOOR) / 64
                first_target = min(first_target, wanted)
            t = _cut_for(law, n, alpha, smallest, largest, first_target)
        far = None
        if use_far and (n - 1) * (alpha - 1) > _COARSENING * largest:
            # The others' drift is beyond the lattice's longest reach: the lattice-free
            # bracket first, and no lattice where it is already close.
            far = far_bracket(law, n, alpha)
            if far[1] <= _FAR_ENOUGH * far[0]:
                lower[i], upper[i] = far
                continue
        local = step
        lower[i], upper[i] = 0.0, math.inf
        reach_lower = 0.0
        # Every (reach, step) gives a valid bracket: keep the best of both sides.
        for _ in range(_ATTEMPTS):
            low, high, remainder, failed, weighed = _one_eps(law, n, alpha, local, t, chernoff_only)
            lower[i], upper[i] = max(lower[i], low), min(upper[i], high)
            reach_lower = max(reach_lower, weighed)
            wanted = max(remainder_share * reach_lower, _REMAINDER_FLOOR)
            if far is None and use_far and upper[i] > (1 + _WIDE) * lower[i]:
                # Small noise, large eps: the lattice may not reach the reports that
                # decide; the lattice-free bracket too (a longer reach may still beat it).
                far = far_bracket(law, n, alpha)
            if failed and local < _COARSENING * step:  # transform too long: coarser
                local *= 2
            elif remainder > wanted and t < _COARSENING * largest:  # reach further
                t = _cut_for(law, n, alpha, _LADDER * t, _COARSENING * largest, wanted / 8)
                local = max(local, 2 * t / GROWTH_CELLS)
            else:
                break
        if far is not None:
            lower[i], upper[i] = max(lower[i], far[0]), min(upper[i], far[1])
    order = np.argsort(eps, kind="stable")
    upper[order] = np.minimum.accumulate(np.clip(upper[order], 0.0, 1.0))
    lower[order] = np.maximum.accumulate(np.clip(lower[order], 0.0, 1.0)[::-1])[::-1]
    return lower, np.maximum(upper, lower)


def _one_eps(law: VLaw, n: int, alpha: float, step: float, t: float, chernoff_only: bool):
    """(lower, upper, remainder, failed, reach_lower) at one eps with the core reach ``t``
    (remainder 0: no use in growing ``t``, the core already reaches the law's negligible
    tail; failed: the transform was too long, a Chernoff bound stands in; reach_lower:
    the lower value without the one-jump bound, against which the remainder is weighed,
    so that the reach grows as it did before that bound)."""
    v_cap = min(law.quantile_above(_NEGLIGIBLE), law.v_max)
    v_plus = min(alpha + t, v_cap)
    v_minus = min((1 + t) / alpha, v_cap)
    cuts = (min(max(1.0, alpha - t), v_plus), v_plus, v_minus)
    local = step
    # A heavy atom at the top of Z (the Laplace's) goes exactly on the grid,
    # so that the contraction never has to round it (first order).
    if law.atom > _ALIGN_ATOM and v_plus >= law.v_max:
        local = (law.v_max - alpha) / math.ceil((law.v_max - alpha) / step)
    term = branches(law, alpha, local, cuts)
    tails = Tails.of(law, alpha, cuts)
    out = {}
    failed = False
    first, masses = lattice(term, law.gamma, "upper")
    remainder = tails.p * negative_part(first, masses, local, n - 1, v_plus - alpha, tails.p)
    jumps = tails.upper_term(n) + remainder
    if remainder > 0:
        # Where the remainder cancels against E[S'; K_P >= 1] (small noise, large eps),
        # one jump at a time bounds the same part without it (§4d).
        jumps = min(
            jumps, one_jump_upper(law, alpha, v_plus, v_cap, first, masses, local, n, tails)
        )
    z, log_mass = atoms(first, masses, local)
    # E[(S)_+] = E[(-S)_-]: a Chernoff bound first; where it is negligible, no lattice sum.
    cheap = chernoff_negative(-z, log_mass, n, 0.0) / n
    tail_lower = tails.lower_term(n)
    jump_lower = one_jump_lower(law, alpha, v_plus, n, tails)
    if chernoff_only or cheap + max(jumps, 0.0) <= _NEGLIGIBLE_DELTA:
        lower = max(tail_lower, 0.0)
        return max(lower, jump_lower), cheap + jumps, 0.0, False, lower
    for side in ("upper", "lower"):
        if side == "lower":
            first, masses = lattice(term, law.gamma, side)
        try:
            out[side] = positive_part_window(
                first,
                masses,
                n,
                local,
                side,
                mass_error=MASS_ERROR + 8 * UNIT_ROUNDOFF,
                position_error=term.position_error,
            )
        except WindowError:
            # Too wide a sum for one transform: the Chernoff bound for the upper
            # side, nothing for the lower one.
            out[side] = cheap if side == "upper" else 0.0
            failed = True
    out["upper"] = min(out["upper"], cheap)
    upper = out["upper"] + jumps
    lower = out["lower"] + tail_lower
    saturated = v_plus >= v_cap and v_minus >= v_cap and cuts[0] == 1.0
    best_lower = out["lower"] + max(tail_lower, jump_lower)
    return best_lower, upper, remainder if not saturated else 0.0, failed, lower


def best_profile_bounds(
    law: VLaw,
    n: int,
    eps: np.ndarray,
    local: PLD | None,
    *,
    floor: float = 0.0,
    chernoff_only: bool = False,
    steps_per_std: float = STEPS_PER_STD,
    lattice_free: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of ``min(blanket profile, local mechanism's profile)``, never refused.

    Both are valid upper profiles of the shuffled protocol (the local one by
    post-processing: the shuffled view is a function of the target's report and of
    reports that do not depend on the target's input), so their minimum is one too.
    eps values are evaluated in increasing order; from the first one at which the
    blanket bound is refused by its cost limits (a lattice or transform beyond
    ``MAX_CELLS`` / ``continuous_window.MAX_LENGTH``), or at which its upper value is at
    most ``floor``, the blanket component's bracket is ``[0, its last upper value]``
    (the blanket profile is non-increasing, so this is still a valid bracket), or
    ``[0, 1]`` if there is none.

    Parameters
    ----------
    law : VLaw
        The randomizer's blanket law.
    n : int
        Number of users, >= 1.
    eps : array_like
        Values of eps >= 0 (nats).
    local : PLD or None
        The local mechanism's own PLD (``Randomizer.local_mechanism``), if it has one.
    floor : float
        Stop evaluating the blanket bound once its upper value is at most this,
        and return the minimum's first upper value at most this for every larger
        eps (on both sides: a valid, non-increasing upper profile).
    chernoff_only : bool
        The blanket component's quick upper values (:func:`continuous_profile_bounds`).
    steps_per_std : float
        Lattice steps per standard deviation of ``V``'s bulk (:func:`default_grid_step`
        has ``STEPS_PER_STD``), > 0.
    lattice_free : bool
        As in :func:`continuous_profile_bounds`.

    Returns
    -------
    lower, upper : ndarray
        Bracket of the minimum profile, in [0, 1].
    """
    components, _ = best_profile_components(
        law,
        n,
        eps,
        local,
        floor=floor,
        chernoff_only=chernoff_only,
        steps_per_std=steps_per_std,
        lattice_free=lattice_free,
    )
    eps = _check_eps(eps)
    lower = np.minimum.reduce([low for low, _ in components])
    upper = np.minimum.reduce([high for _, high in components])
    if floor > 0:
        # The minimum, too, is held from its first value at the floor on, so that a
        # grid ending at the floor does not move out with the local profile's tail.
        order = np.argsort(eps, kind="stable")
        at_floor = np.flatnonzero(upper[order] <= floor)
        if at_floor.size:
            rest = order[at_floor[0] :]
            upper[rest] = upper[order[at_floor[0]]]
            lower[rest] = 0.0
    return lower, upper


def best_profile_components(
    law: VLaw,
    n: int,
    eps: np.ndarray,
    local: PLD | None,
    *,
    floor: float = 0.0,
    chernoff_only: bool = False,
    steps_per_std: float = STEPS_PER_STD,
    remainder_share: float = REMAINDER_SHARE,
    lattice_free: bool = True,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
    """The (lower, upper) brackets of the profiles whose minimum :func:`best_profile_bounds` is.

    The blanket profile's bracket and, where it exists, the local mechanism's. The
    blanket profile is evaluated in increasing eps (each evaluation's first reach
    aimed at the previous eps's lower value, :func:`continuous_profile_bounds`); from
    the first value at most ``floor`` on, its bracket is ``[0, that value]`` (a valid
    bracket: the profile is non-increasing and non-negative), and so it is from the
    first eps whose evaluation is refused (held at its smallest upper value so far,
    or 1). Every bracket is thus one of a convex privacy profile (the blanket term is
    ``E[(A - e^eps B)_+]``, convex in ``e^eps``; the local mechanism's is a
    hockey-stick divergence), so a lower curve below every profile between grid points
    can be built from them (``profile.below_every_profile``); the flag says so.

    Parameters
    ----------
    law, n, eps, local, floor, chernoff_only, steps_per_std
        As in :func:`best_profile_bounds`.
    remainder_share, lattice_free
        As in :func:`continuous_profile_bounds`.

    Returns
    -------
    components : list of (lower, upper)
        Brackets in [0, 1] at ``eps``.
    convex : bool
        True: every bracket is one of a convex profile.
    """
    from pld.progress import progress_bar

    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    eps = _check_eps(eps)
    steps_per_std = validation.positive("steps_per_std", steps_per_std)
    step = default_grid_step(law) * STEPS_PER_STD / steps_per_std
    lower = np.zeros(eps.shape[0])
    upper = np.ones(eps.shape[0])
    held, hint, previous = None, None, None
    with progress_bar(total=eps.shape[0], desc="blanket profile", unit="eps") as bar:
        for i in np.argsort(eps, kind="stable"):
            bar.update(1)
            if held is None:
                try:
                    low, high = continuous_profile_bounds(
                        law,
                        n,
                        eps[i : i + 1],
                        grid_step=step,
                        chernoff_only=chernoff_only,
                        hint=hint,
                        remainder_share=remainder_share,
                        lattice_free=lattice_free,
                    )
                    lower[i], upper[i] = low[0], high[0]
                    if lower[i] > 0:
                        # delta falls about geometrically along the grid: the next value
                        # is expected near this one times its ratio to the last.
                        ratio = min(1.0, lower[i] / previous) if previous else 1.0
                        hint, previous = lower[i] * ratio, lower[i]
                    if upper[i] <= floor:
                        held = float(upper[i])
                    continue
                except BudgetError:
                    held = float(np.min(upper))
            lower[i], upper[i] = 0.0, held
    components = [(lower, upper)]
    if local is not None:
        components.append(local.delta_bounds(eps, rel_accuracy=1.0))  # no refinement
    return components, True
