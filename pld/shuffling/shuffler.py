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

Populations of groups and several messages per user: :mod:`pld.shuffling.population`.

Protocol lower bound: :func:`pld.shuffling.observer.shuffle_observer`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pld import validation
from pld.distribution import PLD, refinable
from pld.randomizers import Randomizer, check_randomizer
from pld.shuffling.grid import DEFAULT_NUM_POINTS, profile_pld

ANALYSES = ("best", "blanket", "clones")


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


@refinable
def shuffle(
    randomizer: Randomizer | Sequence[tuple[Randomizer, int]],
    n: int | None = None,
    analysis: str = "best",
    loss_grid_step: float | None = None,
    *,
    messages: int = 1,
    num_points: int = DEFAULT_NUM_POINTS,
) -> PLD:
    """One round of n users running ``randomizer`` and a shuffler: a certified, composable PLD.

    The recipe: a PLD the randomizer knows directly (:meth:`Randomizer.shuffled_pld`:
    the clones pair proven for it, the local mechanism where no blanket helps),
    else the one-round profile of the analysis (:meth:`Randomizer.shuffle_profiles`) on
    an eps grid that follows the loss grid, turned into a dominating pair by
    connect-the-dots and bracketed from below (module docstring).

    A population of groups, ``shuffle([(randomizer_1, n_1), (randomizer_2, n_2), ...])``
    (finite randomizers on the same inputs and outputs), is bounded by the worst target
    group of the common-blanket bound and the clones pair with per-user clone
    probabilities (:mod:`pld.shuffling.population`, docs/shuffle-groups.md;
    :func:`pld.shuffling.worst_group` says which group). ``messages=m``: every user
    sends m independent reports, all shuffled together (docs/multi-message.md).

    Parameters
    ----------
    randomizer : Randomizer or list of (Randomizer, int)
        The local randomizer (``pld.randomizers.krr``, ``matrix``, ...), or the groups
        of a population as (randomizer, number of users) pairs (then ``n`` is omitted).
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
    messages : int
        Reports per user, >= 1 (a single randomizer only).
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
    analysis = validation.one_of("analysis", analysis, ANALYSES)
    num_points = validation.integer_at_least("num_points", num_points, 8)
    messages = validation.integer_at_least("messages", messages, 1)
    if loss_grid_step is not None:
        loss_grid_step = validation.in_interval(
            "loss_grid_step", loss_grid_step, 0.0, 1.0, low_open=True
        )
    if isinstance(randomizer, list | tuple):
        from pld.shuffling.population import check_population, shuffle_population

        if n is not None:
            raise ValueError(
                "n must not be given with a list of groups: each group's (randomizer, "
                "count) pair says how many users run it"
            )
        if messages != 1:
            raise ValueError("messages must be 1 for a population of groups (not supported)")
        population = check_population(randomizer)
        if len(population.randomizers) > 1:
            return shuffle_population(population, analysis, loss_grid_step, num_points)
        randomizer, n = population.randomizers[0], population.size
    randomizer = check_randomizer(randomizer)
    if n is None:
        raise ValueError("n (the number of users, >= 1) must be given with one randomizer")
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    if messages > 1:
        from pld.shuffling.population import shuffle_messages

        single = "best" if analysis == "clones" else analysis
        composed = shuffle(randomizer, n, single, loss_grid_step, num_points=num_points)
        return shuffle_messages(
            composed.self_compose(messages),
            randomizer,
            n,
            messages,
            analysis,
            loss_grid_step,
            num_points,
        )
    direct = randomizer.shuffled_pld(n, analysis, loss_grid_step)
    if direct is not None:
        return direct
    randomizer.check_blanket(n)
    return profile_pld(
        lambda eps, lower_side=True, fineness=1.0: randomizer.shuffle_profiles(
            n, eps, analysis, lower_side=lower_side, fineness=fineness
        ),
        lambda eps: randomizer.quick_profile_upper(n, eps, analysis),
        randomizer.eps0,
        loss_grid_step,
        num_points,
        randomizer.blanket_profile_at_infinity(),
        end=lambda low, high: randomizer.profile_end(n, low, high, analysis),
    )
