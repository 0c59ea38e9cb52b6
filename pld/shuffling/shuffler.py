"""Shuffling any local randomizer: the privacy blanket, the best of all analyses, lower bounds.

Blanket bound (Balle et al. 2019, §5; Koskela et al. 2023, §4). With
``omega_min(y) = min_x R(x)(y)``, ``gamma = sum_y omega_min(y)`` and
``r_x(y) = R(x)(y) / omega(y)``, ``omega = omega_min / gamma``, revealing which of the
other n - 1 users are non-blanket (and their reports) leaves, for the target's
inputs (x, x'),

    delta_{x,x'}(eps) = (1/(n gamma)) E[(sum_{i=1..n} B_i Z_i)_+],
    B_i ~ Bernoulli(gamma), Y_i ~ omega, Z_i = r_x(Y_i) - e^eps r_x'(Y_i),

(given M ~ Bin(n - 1, gamma) blanket users, the view is a multiset of M + 1 reports
with density ``(1/(M+1)) sum_j r_x(Y_j)`` against ``omega^(M+1)``, and
``Bin(M; n-1, gamma)/(M+1) = Bin(M+1; n, gamma)/(n gamma)``). The mechanism's profile
is the maximum over ordered pairs; for k-RR it is the weak adversary of Koskela et al. (2023)
(``pld.krr(..., adversary="weak")``). The randomizer brackets it
(:meth:`pld.randomizers.Randomizer.blanket_profile`: :mod:`pld.shuffling.blanket`).

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

Best of all analyses. For an eps0-LDP randomizer a clones pair is valid too:
``pld.clones(n, eps0, p)`` at the randomizer's own clone probability
(:attr:`pld.randomizers.Randomizer.clone_probability`: the stronger pair of Feldman,
McMillan and Talwar (2023) for k-RR, binary randomised response and any randomizer in
its class, :attr:`~pld.randomizers.Randomizer.admits_stronger_clones`; the standard pair
of Feldman, McMillan and Talwar (2021) for local hashing, Hadamard response, unary
encoding and the Laplace randomizer; in between for other matrices;
docs/clones-validity.md, Theorem A). ``analysis="best"`` takes the pointwise minimum of
both one-round profiles (upper values) and its greatest convex minorant in
``alpha = e^eps`` (:func:`pld.distribution.profile.profile_hull`), which is still above
the true profile and is what connect-the-dots needs. Binary randomised response
(:attr:`~pld.randomizers.Randomizer.clones_alone`) gets its clones PLD itself: it is
below the blanket profile there and needs no profile grid.

Protocol lower bound: :func:`pld.shuffling.observer.shuffle_observer`.
"""

from __future__ import annotations

import math

import numpy as np

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
from pld.engine import choose_loss_grid_step
from pld.numerics import MAX_EPS0
from pld.randomizers import Randomizer, check_randomizer

ANALYSES = ("best", "blanket", "clones")

#: Default number of eps grid points on [0, eps_top] for connect-the-dots.
DEFAULT_NUM_POINTS = 192

#: Largest number of eps grid points on [0, eps_top] (a fine ``loss_grid_step`` or
#: refinement asks for proportionally more than ``num_points``): about 10 ms each.
MAX_NUM_POINTS = 768

#: The grid ends where the upper one-round delta falls below this.
PROFILE_FLOOR = 1e-25


def profile_bounds(
    randomizer: Randomizer, n: int, eps: np.ndarray, *, lower_side: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) one-round blanket delta(eps) of the shuffled protocol.

    The maximum over ordered input pairs of the blanket divergence (module docstring)
    at each eps >= 0 (nats): :meth:`pld.randomizers.Randomizer.blanket_profile`.

    Parameters
    ----------
    randomizer : Randomizer
        A finite randomizer (:mod:`pld.randomizers.finite`) or a continuous one.
    n : int
        Number of users, in [1, 2**40].
    eps : ndarray
        Values of eps >= 0, nats.
    lower_side : bool
        False: only the upper values are computed (the lower values may then be 0, a
        valid but empty lower bound).

    Returns
    -------
    lower, upper : ndarray
    """
    randomizer = check_randomizer(randomizer)
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    eps = validation.real_array("eps", eps)
    if np.any(eps < 0):
        raise ValueError("eps must be >= 0 (nats)")
    randomizer.check_blanket(n)
    return randomizer.blanket_profile(n, eps, lower_side=lower_side)


def _minimum_upper(components: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    return np.minimum.reduce([upper for _, upper in components])


def _top(eps0: float) -> np.ndarray:
    """Candidate ends of the eps grid: eps0 / 2^(k/2), k = 0..40, and 0."""
    high = eps0 if math.isfinite(eps0) else MAX_EPS0
    return np.concatenate(([0.0], high * 2.0 ** (-np.arange(40, -1, -1) / 2)))


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

    The recipe: a PLD the randomizer knows directly (:meth:`Randomizer.shuffled_pld`:
    the clones pair proven for it, the local mechanism where no blanket helps),
    else the one-round profile of the analysis (:meth:`Randomizer.shuffle_profiles`) on
    an eps grid that follows the loss grid, turned into a dominating pair by
    connect-the-dots and bracketed from below (module docstring).

    Parameters
    ----------
    randomizer : Randomizer
        The local randomizer (``pld.randomizers.krr``, ``matrix``, ...).
    n : int
        Number of users, in [1, 2**40].
    analysis : {"best", "blanket", "clones"}
        ``"blanket"``: the blanket profile (module docstring); ``"clones"``: the
        clones pair of ``pld.clones`` for an eps0-LDP randomizer; ``"best"``
        (default): the convex minorant of the minimum of both profiles (blanket
        alone when eps0 is infinite); for the Gaussian randomizer the minimum
        of the blanket profile and the local Gaussian mechanism's own profile
        (post-processing), which is returned as is (``pld.gaussian``) when the
        blanket bound cannot be evaluated (tiny blanket mass, or beyond its grid
        limits). The clones pair is the one proven for the randomizer, at its
        ``clone_probability`` (module docstring; docs/clones-validity.md).
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
    randomizer = check_randomizer(randomizer)
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    analysis = validation.one_of("analysis", analysis, ANALYSES)
    num_points = validation.integer_at_least("num_points", num_points, 8)
    if loss_grid_step is not None:
        loss_grid_step = validation.in_interval(
            "loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True
        )
    direct = randomizer.shuffled_pld(n, analysis, loss_grid_step)
    if direct is not None:
        return direct
    randomizer.check_blanket(n)
    candidates = _top(randomizer.eps0)
    cheap = randomizer.quick_profile_upper(n, candidates, analysis)
    # Beyond the grid the profile is taken constant (connect-the-dots puts the last
    # value at +inf): end where it is within PROFILE_FLOOR of its value at the largest
    # candidate (0 unless some output is impossible under some input).
    below = np.flatnonzero(cheap <= cheap[-1] + PROFILE_FLOOR)
    top = float(candidates[below[0]]) if below.size else float(candidates[-1])
    if below.size and below[0] > 0:
        top = randomizer.profile_end(n, float(candidates[below[0] - 1]), top, analysis)
    coarse = np.linspace(0.0, top, 9)
    coarse_components, _ = randomizer.shuffle_profiles(n, coarse, analysis, lower_side=False)
    grid, values = _symmetric(coarse, _minimum_upper(coarse_components))
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
    # A blanket evaluation with a resolution of its own follows the eps grid (its
    # error, like the grid's connect-the-dots excess, shrinks with the square).
    fineness = max(
        1.0, default_step * max(1, math.ceil(top / (num_points * default_step))) / spacing
    )
    components, convex = randomizer.shuffle_profiles(n, eps, analysis, fineness=fineness)
    grid, upper_values = _symmetric(eps, _minimum_upper(components))
    if convex:
        # Below the analysis' exact profile between grid points too (module docstring):
        # the first component is the blanket profile, whose limit at eps = +inf the
        # randomizer bounds from below; the others tend to 0 or more.
        tails = [randomizer.blanket_profile_at_infinity()] + [0.0] * (len(components) - 1)
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
