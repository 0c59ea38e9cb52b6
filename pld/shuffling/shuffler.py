"""Shuffling any local randomizer: the privacy blanket, the best of all analyses, lower bounds.

Blanket bound (Balle, Bell, Gascón and Nissim 2019, Balle et al. (2019), §5; Koskela et al. (2023),
§4). With ``omega_min(y) = min_x R(x)(y)``, ``gamma = sum_y omega_min(y)`` and
``r_x(y) = R(x)(y) / omega(y)``, ``omega = omega_min / gamma``, revealing which of the
other n - 1 users are non-blanket (and their reports) leaves, for the target's
inputs (x, x'),

    delta_{x,x'}(eps) = (1/(n gamma)) E[(sum_{i=1..n} B_i Z_i)_+],
    B_i ~ Bernoulli(gamma), Y_i ~ omega, Z_i = r_x(Y_i) - e^eps r_x'(Y_i),

(given M ~ Bin(n - 1, gamma) blanket users, the view is a multiset of M + 1 reports
with density ``(1/(M+1)) sum_j r_x(Y_j)`` against ``omega^(M+1)``, and
``Bin(M; n-1, gamma)/(M+1) = Bin(M+1; n, gamma)/(n gamma)``). The mechanism's profile
is the maximum over ordered pairs; for k-RR it is Koskela et al.'s (2023) weak adversary
(``pld.krr(..., adversary="weak")``). :func:`profile_bounds` brackets it
(:mod:`pld.shuffling.blanket.finite`). Outputs with ``omega_min(y) = 0`` (a zero
in their column) lie outside every blanket report's support: a target report there
is seen as such, so those views add exactly ``sum_y (R(x)(y) - e^eps R(x')(y))_+``
(the formula above then uses the target's law restricted to the blanket's support,
which the derivation allows; found by the brute-force tests, which include zeros).

Composable PLD. The one-round profile on a symmetric eps grid (negative eps by
``delta(-eps) = 1 - e^-eps + e^-eps delta(eps)``, valid because the profile bounds
both orders) is turned into a dominating pair by connect-the-dots
(:mod:`pld.distribution.profile`, Doroshenko et al. 2022): the upper side from the
upper values. The lower side is built from the lower values lowered by a bound
on the chord excess of every convex profile within the bracket
(:func:`pld.distribution.profile.below_every_profile`; for "best", the minimum of
the lowered blanket and clones curves, lowered again where they cross,
:func:`pld.distribution.profile.lower_envelope`), so its curve lies below the
analysis' exact profile at every eps, not only at grid points. The bracket
(lower, upper) therefore contains the composition of the exact one-round profile
(the limit of ever finer eps grids): it shows both the evaluation error and the
connect-the-dots excess of the grid (about twice the latter on the lower side).
The continuous randomizers' "best" profile (a minimum whose parts are not
exposed) keeps the lower values on the grid.

Best of all analyses. For an eps0-LDP randomizer the clones pair of
``pld.clones`` (Koskela et al. 2023, eq 3.1) is valid too; ``analysis="best"`` takes the
pointwise minimum of both one-round profiles (upper values) and its greatest
convex minorant in ``alpha = e^eps`` (:func:`pld.distribution.profile.profile_hull`),
which is still above the true profile and is what connect-the-dots needs. A
randomizer with a known clone probability p
(:attr:`pld.randomizers.finite.FiniteRandomizer.clone_probability`; k-RR:
``gamma / k``) gets ``pld.clones(n, eps0, p)`` itself: for k-RR that pair meets the
protocol lower bound of :func:`shuffle_observer` (measured: within 2e-5 relative in
eps after 100 rounds at n = 1000, against 0.2 % for the blanket profile), so no
valid analysis can do better.

Protocol lower bound (:func:`shuffle_observer`). One concrete neighbouring pair:
every other user holds one fixed value (x', or a third input), the target x or x'
(the candidate with the largest one-round lower curve is kept; with a third input
z, a second grouping sets aside the reports more likely under z than under x or
x', :meth:`pld.randomizers.finite.FiniteRandomizer.observer_groups`). The outputs are grouped by the
sign of ``log R(x)(y)/R(x')(y)`` (a post-processing: lossless when the ratio takes
only the values c, 1/c and 1, as for all presets) and the histogram of the groups
is enumerated exactly (binomial windows for large n, the dropped mass charged
only to the upper side). Its LOWER bracket, composed, lower-bounds the
protocol's own delta.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from pld import validation
from pld.distribution import (
    PLD,
    below_every_profile,
    from_bounds,
    from_pmfs,
    lower_envelope,
    pair_from_hull,
    profile_hull,
    refinable,
)
from pld.engine import DEFAULT_LOSS_GRID_STEP, choose_loss_grid_step
from pld.numerics import binomial as binom
from pld.randomizers import Randomizer
from pld.shuffling.blanket import chernoff_upper, positive_part_bounds

ANALYSES = ("best", "blanket", "clones")

#: Default number of eps grid points on [0, eps_top] for connect-the-dots.
DEFAULT_NUM_POINTS = 192

#: Largest number of eps grid points on [0, eps_top] (a fine ``loss_grid_step`` or
#: refinement asks for proportionally more than ``num_points``): about 10 ms each.
MAX_NUM_POINTS = 768

#: ``analysis="best"`` evaluates the clones profile at this many evenly spread grid
#: points first, and everywhere only if it beats the blanket profile at one of them.
CLONES_PROBE = 8

#: The grid ends where the upper one-round delta falls below this.
PROFILE_FLOOR = 1e-25

#: For continuous randomizers the grid ends where the upper delta falls below this
#: (their brackets carry an absolute slack of about 1e-19).
CONTINUOUS_FLOOR = 1e-18

#: Tail mass per side of each binomial window of :func:`shuffle_observer`.
OBSERVER_TAIL = 1e-14

#: eps values (nats) at which candidate dataset pairs of :func:`shuffle_observer` are compared.
OBSERVER_SCORE_EPS = np.linspace(0.0, 2.0, 41)

#: Largest number of histogram cells :func:`shuffle_observer` enumerates in 2-d;
#: beyond it the "below 1" group is merged into the rest (a post-processing).
OBSERVER_MAX_ATOMS = 20_000_000
#: Largest n the finite observer accepts: its cost grows about linearly in n
#: (measured, Hadamard response: 8 s at 1e5, 20 s at 1e6 of process time on the loaded
#: 2-core machine, two thirds of it in ``from_pmfs``).
OBSERVER_MAX_USERS = 10**6
#: Largest n the finite blanket evaluation accepts: its cost is about flat in n (the
#: characteristic function's n-th power) and its float error bounds grow like n; at
#: 1e7 a build takes about 2 s (OLH, Hadamard) to 5 s (a 4 x 6 matrix) on the
#: 2-core machine (benchmarks/shuffle.py).
BLANKET_MAX_USERS = 10**7


def _check_randomizer(randomizer: object) -> Randomizer:
    if not isinstance(randomizer, Randomizer):
        raise ValueError(
            f"randomizer must be a pld.randomizers randomizer (got {type(randomizer).__name__})"
        )
    return randomizer


def _check_blanket(randomizer: Randomizer) -> None:
    if not randomizer.blanket_mass > 0:
        raise ValueError(
            "the randomizer has no blanket (gamma = sum_y min_x R(x)(y) = 0): no output is "
            "possible under every input, so another user's report cannot hide the target's "
            "and the blanket analysis gives no amplification"
        )


def profile_bounds(
    randomizer: Randomizer, n: int, eps: np.ndarray, *, lower_side: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) one-round blanket delta(eps) of the shuffled protocol.

    The maximum over ordered input pairs of the blanket divergence (module
    docstring), at each eps >= 0 (nats). Continuous randomizers are handled by
    ``pld.shuffling.blanket.continuous.profile_bounds``.

    Parameters
    ----------
    randomizer : Randomizer
        A finite randomizer (:mod:`pld.randomizers.finite`) or a continuous one.
    n : int
        Number of users, >= 1.
    eps : ndarray
        Values of eps >= 0, nats.
    lower_side : bool
        False: only the upper values are computed (finite randomizers; the lower
        values are then 0, a valid but empty lower bound).

    Returns
    -------
    lower, upper : ndarray
    """
    from pld.randomizers import FiniteRandomizer

    randomizer = _check_randomizer(randomizer)
    n = validation.integer_at_least("n", n, 1)
    eps = validation.real_array("eps", eps)
    if np.any(eps < 0):
        raise ValueError("eps must be >= 0 (nats)")
    if not isinstance(randomizer, FiniteRandomizer):
        from pld.shuffling.blanket import continuous_profile_bounds

        return continuous_profile_bounds(randomizer, n, eps)
    _check_blanket(randomizer)
    lower = np.zeros(eps.size)
    upper = np.zeros(eps.size)
    pairs = randomizer.blanket_classes()
    extra = [_outside_delta(out_x, out_y, eps) for out_x, out_y in randomizer.outside()]
    if len(pairs) == 1:
        lower, upper = positive_part_bounds(*pairs[0], n, eps, lower_side=lower_side)
        return _add(lower, extra[0], -1), _add(upper, extra[0], 1)
    # Pairs whose analytic Chernoff bound is already below the running upper value at
    # some eps cannot raise the maximum there: they are skipped at that eps.
    cheap = [
        _add(chernoff_upper(*classes, n, eps), e, 1)
        for classes, e in zip(pairs, extra, strict=True)
    ]
    for index in np.argsort([-float(np.sum(c)) for c in cheap]):
        needed = cheap[index] > upper
        if not np.any(needed):
            continue
        lo, up = positive_part_bounds(*pairs[index], n, eps[needed], lower_side=lower_side)
        lower[needed] = np.maximum(lower[needed], _add(lo, extra[index][needed], -1))
        upper[needed] = np.maximum(upper[needed], _add(up, extra[index][needed], 1))
    return lower, upper


def _add(values: np.ndarray, extra: np.ndarray, side: int) -> np.ndarray:
    """``values + extra`` with the extra term's float error (relative 1e-12) on ``side``."""
    return np.clip(values + extra * (1 + side * 1e-12), 0.0, 1.0)


def _outside_delta(out_x: np.ndarray, out_y: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``sum_y (R(x)(y) - e^eps R(x')(y))_+`` over outputs outside the blanket's support.

    A report there identifies the target's report exactly, and the other users'
    blanket reports have the same law under x and x', so the views that contain it
    add exactly this to the hockey stick (module docstring of ``finite``).
    """
    if out_x.size == 0:
        return np.zeros(eps.size)
    gaps = out_x[None, :] - np.exp(eps)[:, None] * out_y[None, :]
    return np.maximum(gaps, 0.0).sum(axis=1)


def _profile_function(randomizer: Randomizer, n: int, analysis: str):
    """eps -> one-round profiles of the chosen analysis (eps >= 0).

    The function returns ``(components, convex)``: the (lower, upper) brackets of
    the profiles whose pointwise minimum is the analysis (the blanket profile, and
    the clones profile where ``analysis="best"`` uses it), and whether each is a
    convex profile (false only where the continuous randomizers' blanket values were
    held past a refused evaluation: ``best_profile_components``).
    """
    eps0 = randomizer.eps0
    use_clones = analysis == "best" and 0.0 < eps0 <= 50.0
    continuous_best = _is_continuous_best(randomizer, analysis)

    def evaluate(eps: np.ndarray, lower_side: bool = True):
        if continuous_best:
            from pld.shuffling.blanket import best_profile_components

            return best_profile_components(randomizer, n, eps, chernoff_only=not lower_side)
        lower, upper = profile_bounds(randomizer, n, eps, lower_side=lower_side)
        components = [(lower, upper)]
        if use_clones:
            from pld.shuffling.clones import clones_delta_bounds

            # Probe CLONES_PROBE points first; where the clones pair does not win
            # there, the blanket values alone (valid) are kept everywhere.
            probe = np.unique(np.linspace(0, eps.size - 1, CLONES_PROBE).round().astype(int))
            c_lower, c_upper = clones_delta_bounds(n, eps0, eps[probe])
            if np.any(c_upper < upper[probe]):
                components.append(clones_delta_bounds(n, eps0, eps))
        return components, True

    return evaluate


def _at_infinity(randomizer: Randomizer, count: int) -> list[float]:
    """Lower bounds on each component profile at eps = +inf (its P-mass where Q = 0).

    The blanket profile of a finite randomizer (the first component) tends to the
    largest ``sum_y R(x)(y)`` over the outputs with ``R(x')(y) = 0`` (its outside
    term; the blanket sum vanishes), less a relative 1e-12 for the float sum; the
    other components (clones, continuous) to 0 or more.
    """
    from pld.randomizers import FiniteRandomizer

    tails = [0.0] * count
    if isinstance(randomizer, FiniteRandomizer):
        masses = [float(np.sum(out_x[out_y == 0])) for out_x, out_y in randomizer.outside()]
        tails[0] = max(masses, default=0.0) * (1 - 1e-12)
    return tails


def _minimum_upper(components: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    return np.minimum.reduce([upper for _, upper in components])


def _top(eps0: float) -> np.ndarray:
    """Candidate ends of the eps grid: eps0 / 2^(k/2), k = 0..40, and 0."""
    high = eps0 if math.isfinite(eps0) else 50.0
    return np.concatenate(([0.0], high * 2.0 ** (-np.arange(40, -1, -1) / 2)))


def _is_continuous_best(randomizer: Randomizer, analysis: str) -> bool:
    """The Gaussian's "best": with the local mechanism (the Laplace's has the clones pair)."""
    from pld.randomizers import GaussianRandomizer

    return analysis == "best" and isinstance(randomizer, GaussianRandomizer)


def _cheap_upper(
    randomizer: Randomizer, n: int, eps: np.ndarray, analysis: str = "blanket"
) -> np.ndarray:
    """An upper bound on the blanket profile without enumeration (Chernoff, finite only)."""
    from pld.randomizers import FiniteRandomizer

    if _is_continuous_best(randomizer, analysis):
        from pld.shuffling.blanket import best_profile_bounds

        return best_profile_bounds(randomizer, n, eps, floor=CONTINUOUS_FLOOR, chernoff_only=True)[
            1
        ]
    if not isinstance(randomizer, FiniteRandomizer):
        # Ascending, one eps at a time, up to the first value below the floor: the
        # profile is non-increasing, and very large eps may be refused as too costly.
        upper = np.ones(eps.size)
        for index, value in enumerate(eps):
            try:
                upper[index] = profile_bounds(randomizer, n, np.array([value]))[1][0]
            except ValueError:
                if index == 0:
                    raise
                upper[index:] = upper[index - 1]  # non-increasing: a valid upper value
                break
            if upper[index] <= CONTINUOUS_FLOOR:
                upper[index:] = upper[index]
                break
        return upper
    upper = np.zeros(eps.size)
    for classes, out in zip(randomizer.blanket_classes(), randomizer.outside(), strict=True):
        upper = np.maximum(
            upper, _add(chernoff_upper(*classes, n, eps), _outside_delta(*out, eps), 1)
        )
    return upper


def _symmetric(eps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Grid and values on [-top, top]: delta(-eps) = 1 - e^-eps + e^-eps delta(eps)."""
    positive = eps[1:]
    mirrored = -np.expm1(-positive) + np.exp(-positive) * values[1:]
    grid = np.concatenate((-positive[::-1], eps))
    return grid, np.clip(np.concatenate((mirrored[::-1], values)), 0.0, 1.0)


def _pld(grid: np.ndarray, values: np.ndarray, side: str, step: float) -> PLD:
    vertices, hull = profile_hull(grid, values)
    pair = pair_from_hull(grid, vertices, hull, side)
    return from_pmfs(*pair.log_pmfs(), symmetric=True, loss_grid_step=step)


@refinable
def shuffle(
    randomizer: Randomizer,
    n: int,
    analysis: str = "best",
    loss_grid_step: float | None = None,
    *,
    num_points: int = DEFAULT_NUM_POINTS,
) -> PLD:
    """One round of n users running ``randomizer`` and a shuffler: a certified, composable PLD.

    Parameters
    ----------
    randomizer : Randomizer
        The local randomizer (``pld.randomizers.krr``, ``matrix``, ...).
    n : int
        Number of users, >= 1.
    analysis : {"best", "blanket", "clones"}
        ``"blanket"``: the blanket profile (module docstring); ``"clones"``: the
        clones pair of ``pld.clones`` for an eps0-LDP randomizer; ``"best"``
        (default): the convex minorant of the minimum of both profiles (blanket
        alone when eps0 is infinite); for the Gaussian randomizer the minimum
        of the blanket profile and the local Gaussian mechanism's own profile
        (post-processing), which is returned as is (``pld.gaussian``) when the
        blanket bound cannot be evaluated (tiny blanket mass, or beyond its grid
        limits); the randomizer's own clones pair when it has a
        ``clone_probability`` (k-RR; module docstring).
    loss_grid_step : float, optional
        Loss grid spacing in nats, in (0, 1]; default: the engine's rule for the
        one-round loss's spread.
    num_points : int
        Points of the eps grid on [0, eps_top] at the default loss grid step, >= 8
        (eps_top: where the upper delta falls below ``PROFILE_FLOOR``); a finer
        ``loss_grid_step`` (or refinement by a query) refines the eps grid in
        proportion, up to ``MAX_NUM_POINTS``. The grid is mirrored to negative eps
        and aligned to multiples of the loss grid step.

    Returns
    -------
    PLD
        Symmetric one-round PLD; its upper side dominates every ordered pair of
        neighbouring datasets.
    """
    randomizer = _check_randomizer(randomizer)
    n = validation.integer_at_least("n", n, 1)
    analysis = validation.one_of("analysis", analysis, ANALYSES)
    num_points = validation.integer_at_least("num_points", num_points, 8)
    if loss_grid_step is not None:
        loss_grid_step = validation.in_interval(
            "loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True
        )
    clone_p = getattr(randomizer, "clone_probability", None)
    own_clones = analysis == "best" and clone_p is not None and 0 < randomizer.eps0 <= 50
    if analysis == "clones" or own_clones:
        if not math.isfinite(randomizer.eps0):
            raise ValueError("analysis='clones' needs an eps0-LDP randomizer (eps0 is infinite)")
        from pld.shuffling.clones import clones

        if own_clones:  # the randomizer's own clones pair: tight (module docstring)
            return clones(n, randomizer.eps0, clone_p, loss_grid_step=loss_grid_step)
        return clones(n, min(randomizer.eps0, 50.0), loss_grid_step=loss_grid_step)
    from pld.randomizers import FiniteRandomizer

    if isinstance(randomizer, FiniteRandomizer):
        _check_blanket(randomizer)
        if n > BLANKET_MAX_USERS:
            raise ValueError(
                f"n must be at most {BLANKET_MAX_USERS} for the blanket analysis of a finite "
                f"randomizer (got {n}): about 2-5 s at 1e7, and its float error bounds grow "
                "like n; "
                "analysis='clones' covers an eps0-LDP randomizer at larger n"
            )
    if randomizer.eps0 == 0.0:  # every input has the same output law: nothing leaks
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        return from_pmfs([0.0], [0.0], symmetric=True, loss_grid_step=step)
    if _is_continuous_best(randomizer, analysis):
        from pld.shuffling import blanket as blanket_continuous

        if not blanket_continuous.blanket_available(randomizer, n):
            # Tiny blanket (or beyond the lattice's limits): the local Gaussian
            # mechanism's own PLD is a valid bound (post-processing) and exact.
            return blanket_continuous.local_mechanism(randomizer, loss_grid_step)
    evaluate = _profile_function(randomizer, n, analysis)
    candidates = _top(randomizer.eps0)
    cheap = _cheap_upper(randomizer, n, candidates, analysis)
    # Beyond the grid the profile is taken constant (connect-the-dots puts the last
    # value at +inf): end where it is within PROFILE_FLOOR of its value at the largest
    # candidate (0 unless some output is impossible under some input).
    below = np.flatnonzero(cheap <= cheap[-1] + PROFILE_FLOOR)
    top = float(candidates[below[0]]) if below.size else float(candidates[-1])
    coarse = np.linspace(0.0, top, 9)
    grid, values = _symmetric(coarse, _minimum_upper(evaluate(coarse, lower_side=False)[0]))
    vertices, hull = profile_hull(grid, values)
    pair = pair_from_hull(grid, vertices, hull, "upper")
    p_mass = pair.p_mass
    total = p_mass.sum()
    mean = float(np.dot(p_mass, pair.loss) / total) if total > 0 else 0.0
    std = math.sqrt(float(np.dot(p_mass, (pair.loss - mean) ** 2) / total)) if total else 0.0
    default_step = choose_loss_grid_step(std)
    step = default_step if loss_grid_step is None else loss_grid_step
    # The eps grid follows the loss grid: num_points at the default step, proportionally
    # more on a finer one (refinement narrows the connect-the-dots part of the
    # bracket too), at most MAX_NUM_POINTS.
    multiple = max(1, math.ceil(top / (num_points * default_step)))
    multiple = max(multiple, math.ceil(top / (MAX_NUM_POINTS * step)))
    spacing = step * multiple
    eps = spacing * np.arange(math.ceil(top / spacing) + 1)
    components, convex = evaluate(eps)
    grid, upper_values = _symmetric(eps, _minimum_upper(components))
    if convex:
        # Below the analysis' exact profile between grid points too (module docstring).
        tails = _at_infinity(randomizer, len(components))
        lowered = [
            below_every_profile(grid, _symmetric(eps, lo)[1], _symmetric(eps, up)[1], tail)
            for (lo, up), tail in zip(components, tails, strict=True)
        ]
        # The pair is symmetric: keep eps >= 0 and mirror (the mirror of a curve below
        # the profile is below it, and maps chords to chords).
        positive = lower_envelope(grid, lowered)[eps.size - 1 :].astype(np.float64)
        _, lower_values = _symmetric(eps, positive)
    else:
        _, lower_values = _symmetric(eps, np.minimum.reduce([lo for lo, _ in components]))
    return from_bounds(
        upper=_pld(grid, upper_values, "upper", step),
        lower=_pld(grid, lower_values, "lower", step),
    )


# -- the protocol's own lower bound --------------------------------------------------


def _log_multinomial(
    total: int, a: np.ndarray, b: np.ndarray, log_pi: np.ndarray, log_factorial: np.ndarray
) -> np.ndarray:
    """Log multinomial masses of the counts (a_i, b_j, total - a_i - b_j), row-major in (i, j).

    ``a`` and ``b`` are 1-d; ``log_factorial[k] = log k!`` for k = 0..total. The
    parts that depend on one count are computed once per count and broadcast.
    """
    a2, b2 = a[:, None], b[None, :]
    rest = total - a2 - b2
    valid = (a2 >= 0) & (b2 >= 0) & (rest >= 0)
    a_, b_, r_ = (np.clip(v, 0, total) for v in (a, b, rest))
    with np.errstate(invalid="ignore"):
        terms = [np.where(c > 0, c * lp, 0.0) for c, lp in zip((a_, b_, r_), log_pi, strict=True)]
    value = (log_factorial[total] - log_factorial[a_])[:, None] - log_factorial[b_][None, :]
    value = value - log_factorial[r_] + terms[0][:, None] + terms[1][None, :] + terms[2]
    return np.where(valid, value, -np.inf).ravel()


def _log_sum_three(terms: list[np.ndarray]) -> np.ndarray:
    """``log(exp(t0) + exp(t1) + exp(t2))`` elementwise (-inf where all three are -inf).

    A few ulps from scipy's ``logsumexp``, well inside the relative mass error of
    1e-9 that :func:`shuffle_observer` declares to ``from_pmfs``.
    """
    top = np.maximum(np.maximum(terms[0], terms[1]), terms[2])
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.exp(terms[0] - top)
    total += np.exp(terms[1] - top)
    total += np.exp(terms[2] - top)
    with np.errstate(divide="ignore"):
        return top + np.log(total)


def _window(trials: int, prob: float) -> tuple[int, int]:
    if prob <= 0:
        return 0, min(1, trials)
    lo = int(binom.ppf(OBSERVER_TAIL, trials, prob))
    hi = int(trials - binom.ppf(OBSERVER_TAIL, trials, 1.0 - prob)) if prob < 1 else trials
    return max(0, lo - 1), min(trials, hi + 1)


def observer_pmfs(
    pi_x: np.ndarray, pi_y: np.ndarray, pi_others: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(log P, log Q, dropped P, dropped Q) of the grouped histogram view (module docstring).

    Group 0 and 1 counts (a, b) of n reports: n - 1 users draw from ``pi_others`` and
    the target from ``pi_x`` (P) or ``pi_y`` (Q). Beyond ``OBSERVER_MAX_ATOMS`` cells,
    group 1 is merged into group 2 (a post-processing: still a lower bound).
    """
    a_lo, a_hi = _window(n, max(pi_others[0], 1.0 / n))
    b_lo, b_hi = _window(n, max(pi_others[1], 1.0 / n))
    if (a_hi - a_lo + 1) * (b_hi - b_lo + 1) > OBSERVER_MAX_ATOMS:
        pi_x, pi_y, pi_others = (
            np.array([v[0], 0.0, v[1] + v[2]]) for v in (pi_x, pi_y, pi_others)
        )
        b_lo, b_hi = 0, 0
    with np.errstate(divide="ignore"):
        log_x, log_y, log_o = np.log(pi_x), np.log(pi_y), np.log(pi_others)
    a, b = np.arange(a_lo, a_hi + 1), np.arange(b_lo, b_hi + 1)
    shifts = ((1, 0), (0, 1), (0, 0))
    log_factorial = gammaln(np.arange(n, dtype=np.float64) + 1.0)  # the same values, tabulated
    others = [_log_multinomial(n - 1, a - s, b - t, log_o, log_factorial) for s, t in shifts]
    log_p = _log_sum_three([log_x[g] + others[g] for g in range(3)])
    log_q = _log_sum_three([log_y[g] + others[g] for g in range(3)])
    keep = np.isfinite(log_p) | np.isfinite(log_q)
    log_p, log_q = log_p[keep], log_q[keep]
    # numpy's pairwise sum errs by at most about (128 + log2 N) ulps of the total (blocks
    # of 128 summed in order): 256 ulps are charged to the dropped mass.
    sum_p, sum_q = float(np.sum(np.exp(log_p))), float(np.sum(np.exp(log_q)))
    dropped_p = max(0.0, 1.0 - sum_p * (1 - 256 * math.ulp(1.0)))
    dropped_q = max(0.0, 1.0 - sum_q * (1 - 256 * math.ulp(1.0)))
    return log_p, log_q, dropped_p, dropped_q


@refinable
def shuffle_observer(randomizer: Randomizer, n: int, loss_grid_step: float | None = None) -> PLD:
    """The exact PLD of one concrete neighbouring pair: a lower bound on the protocol.

    Every other user holds one fixed value (x' or a third input, whichever gives
    the larger one-round curve), the target x (P) or x' (Q); the view is the
    histogram of the reports grouped by the sign of ``log R(x)(y) / R(x')(y)``
    (module docstring). Only its LOWER bracket is a statement about the protocol:
    composed T times, ``delta_lower`` is at most the protocol's own T-round delta.
    Continuous randomizers: ``pld.shuffling.blanket.continuous.observer``.

    Parameters
    ----------
    randomizer : Randomizer
        The local randomizer.
    n : int
        Number of users, >= 1.
    loss_grid_step : float, optional
        Loss grid spacing in nats (default: the engine's rule).
    """
    from pld.randomizers import FiniteRandomizer

    randomizer = _check_randomizer(randomizer)
    n = validation.integer_at_least("n", n, 1)
    if n > OBSERVER_MAX_USERS and isinstance(randomizer, FiniteRandomizer):
        raise ValueError(
            f"n must be at most {OBSERVER_MAX_USERS} for shuffle_observer of a finite "
            f"randomizer (got {n}): its work grows linearly in n (about 20 s at 1e6)"
        )
    if not isinstance(randomizer, FiniteRandomizer):
        from pld.shuffling import blanket as blanket_continuous

        return blanket_continuous.observer(randomizer, n, loss_grid_step=loss_grid_step)
    best, score = None, -1.0
    for pi_x, pi_y, pi_others in randomizer.observer_groups():
        log_p, log_q, dropped_p, dropped_q = observer_pmfs(pi_x, pi_y, pi_others, n)
        candidate = from_pmfs(
            log_p,
            log_q,
            loss_grid_step=loss_grid_step,
            truncated_mass_p=min(dropped_p, 0.5),
            truncated_mass_q=min(dropped_q, 0.5),
            mass_relative_error=1e-9,
        )
        # Keep the dataset pair whose one-round lower curve is largest on average.
        value = float(np.sum(candidate.delta_bounds(OBSERVER_SCORE_EPS, rel_accuracy=1.0)[0]))
        if value > score:
            best, score = candidate, value
    return best


# -- command line --------------------------------------------------------------------
