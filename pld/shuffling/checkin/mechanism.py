"""Shuffled check-in (Liew et al. 2022, Algorithm 1) as a PLD: a mixture over the public count.

The protocol
------------
Each of ``n`` users checks in independently with probability ``p``; every
checked-in user sends one report of a local randomizer to a shuffler, which
outputs the multiset of reports. Its size ``K`` is public.

Each round is bounded as a Bin(n, p) mixture over the public count k of k-of-n
subsampled shufflers (Koskela et al. 2023, Lemma 7 on a base of k reports), under replace-one
and add/remove adjacency; :mod:`pld.shuffling.checkin.mixture` derives it (eqs.
1-3 there), documents which pair dominates under add/remove, and builds the
bracket. Here: the bases. For any eps0-LDP randomizer the base of k reports is the
clones pair ``pld.clones(k, eps0, variant=variant)``: by default the standard pair of
Feldman, McMillan and Talwar (2021), Thm 3.2, proven for every eps0-LDP randomizer
(docs/clones-validity.md); for a specific randomizer, ``pld.shuffle(randomizer, k)``,
which uses the pair that randomizer is proven for. For a finite randomizer the small counts are not
bounded through a base at all but enumerated exactly (:mod:`pld.shuffling.checkin.exact`:
the worst case over the other users' inputs, coupled across counts; at n <= 5 the
bound is the protocol's worst neighbouring pair). A bulk whose largest count needs a
base beyond ``pld.clones``' work budget or ``pld.shuffle``'s user cap is refused up
front, naming ``max_base_count`` (larger counts then use that base: valid, looser).
The check-in probability is calibrated as ``pld.calibrate(..., "participation")``.

Distributed check-in (Liew et al. 2022, §4, Thm 4 and suppl. Thm 5)
-------------------------------------------------------------------
Checked-in clients add ``N(0, sigma^2 I)`` to their vectors, any two of which are
at most ``sensitivity`` apart in l2 norm, and the server sees only the sum. Given
``k`` the sum is a k-of-n subsampled Gaussian mechanism with noise
``sigma sqrt(k)``: the base pair of ``k`` reports is the Gaussian pair
``pld.gaussian(sigma sqrt(k), sensitivity=...)``, exact for the sum. The bound
assumes the count ``k`` is revealed; when it is not (the setting of Liew et al. 2022, suppl. Thm 5),
the unlabelled output is a post-processing, so the bound still holds (it may
then be loose). Under add/remove too, the decomposition of eqs. (2)-(3) of
:mod:`pld.shuffling.checkin.mixture` compares
the target's vector with another client's, so ``sensitivity`` is the largest
distance between two clients' vectors (``2 C`` for vectors clipped to norm C), not
the norm bound ``C`` of one vector.
"""

from __future__ import annotations

import math

from pld import validation
from pld.distribution import PLD, refinable
from pld.engine import BudgetError, budget_advice
from pld.numerics import MAX_EPS0
from pld.randomizers import Randomizer
from pld.shuffling.checkin.exact import ExactCounts, exact_count_limit
from pld.shuffling.checkin.mixture import (
    COUNT_TAIL_MASS,
    DEFAULT_COUNT_TOLERANCE,
    bulk_counts,
    checkin_from_bases,
)

#: Truncation of the clones pair of each count (``pld.clones``'s ``tail_mass``):
#: charged at loss eps0, it sits below ``checkin_mixture.GRID_DELTA_RESOLUTION`` after
#: subsampling
#: for rates <= 1e-2.
CLONES_TAIL_MASS = 1e-16


@refinable
def checkin(
    n: int,
    p: float | None = None,
    eps0: float | None = None,
    *,
    randomizer: Randomizer | None = None,
    analysis: str = "best",
    variant: str | None = None,
    adjacency: str = "replace",
    loss_grid_step: float | None = None,
    tail_mass: float = COUNT_TAIL_MASS,
    count_tolerance: float = DEFAULT_COUNT_TOLERANCE,
    exact_counts: int | None = None,
    max_base_count: int | None = None,
    schedule: str = "poisson",
    window: int | None = None,
    participations: int = 1,
) -> PLD:
    """One round of shuffled check-in (Liew et al. 2022, Algorithm 1).

    Each of ``n`` users checks in with probability ``p`` and sends one report of
    a local randomizer; the shuffled multiset is released. The round is bounded
    as a Bin(n, p) mixture over the public count k of k-of-n subsampled shufflers,
    each by Koskela et al. (2023), Lemma 7 (:mod:`pld.shuffling.checkin.mixture`, eqs. 1-3) on
    a base of k reports: the clones pair ``pld.clones(k, eps0, variant=variant)`` (by
    default the standard pair, proven for any eps0-LDP randomizer), or
    ``pld.shuffle(randomizer, k, analysis)`` for a specific one
    (its worst-case profile does not increase with k: one more user's report is
    a post-processing). Compose rounds with ``self_compose``.

    Parameters
    ----------
    n : int
        Number of users, >= 1 (under add/remove: of the dataset without the target).
    p : float
        Check-in probability in (0, 1] (in (0, 1) for add/remove); ``schedule="poisson"`` only.
    eps0 : float, optional
        Local privacy parameter of an arbitrary randomizer, nats, in (0, 50].
    randomizer : pld.randomizers.Randomizer, optional
        A specific randomizer (``pld.randomizers.krr(k=4, gamma=0.25)``, ...), instead
        of ``eps0``.
    analysis : {"best", "blanket", "clones"}
        With ``randomizer``: the analysis of ``pld.shuffle`` for each count.
    variant : {"standard", "stronger"}, optional
        With ``eps0``: the clones pair of ``pld.clones`` (default "standard", valid for
        every eps0-LDP randomizer; "stronger" only for the randomizers
        docs/clones-validity.md proves it for: with ``schedule="random"`` and
        ``participations`` k > 1, for the k-fold product of the randomizer).
    adjacency : {"replace", "add-remove"}
        Replace one user's data (default), or add/remove one user.
    loss_grid_step : float, optional
        Loss grid spacing in nats; default from the loss's estimated spread.
    tail_mass : float
        Count probability left out per side of the binomial bulk, in (0, 1e-3]; charged to delta.
    count_tolerance : float
        Block width knob (:mod:`pld.shuffling.checkin.mixture`), in [0, 1]; 0: every
        count of the bulk. On a ``loss_grid_step`` finer than the default (as
        ``rel_accuracy`` refinement builds) it shrinks in proportion to the step.
    exact_counts : int, optional
        With a finite ``randomizer`` and ``analysis="best"``: counts ``1..exact_counts``
        are bounded by the exact worst case over the other users' inputs
        (:mod:`pld.shuffling.checkin.exact`), the rest by ``pld.shuffle``. Default:
        every count whose enumeration fits ``checkin_exact.MAX_ENUMERATION_WORK``; 0: none.
    max_base_count : int, optional
        Counts above it are bounded with the base of ``max_base_count`` reports (valid,
        looser). Without it, a binomial bulk whose largest count needs a base beyond
        ``pld.clones``' work budget or ``pld.shuffle``'s user cap is refused up front.
    schedule : {"poisson", "random"}
        ``"poisson"``: each user checks in to this round with probability ``p``.
        ``"random"``: each user checks in to exactly ``participations`` of the
        ``window`` rounds of a window, chosen uniformly at random; the PLD is then
        one whole window (:mod:`pld.shuffling.checkin.random_schedule`: one
        shuffle of n users of the k-fold product randomizer; replace-one only).
    window : int
        Rounds T of a window (``schedule="random"``), >= ``participations``.
    participations : int
        Check-ins k of each user per window (``schedule="random"``), >= 1.

    Returns
    -------
    PLD
        One round, symmetric; its upper side is a rigorous bound (for every eps0-LDP
        randomizer, or for ``randomizer``: exact per count where enumerated, else as
        certified by ``pld.shuffle``).
    """
    if (eps0 is None) == (randomizer is None):
        raise ValueError(
            "give exactly one of eps0 (a local privacy parameter in (0, 50] nats) and "
            "randomizer (a pld.randomizers randomizer)"
        )
    if randomizer is not None and variant is not None:
        raise ValueError("variant applies to eps0 only: a randomizer gets its proven pair")
    schedule = validation.one_of("schedule", schedule, ("poisson", "random"))
    if schedule == "random":
        return _random_schedule(
            n,
            p,
            eps0,
            randomizer,
            analysis,
            variant,
            window,
            participations,
            adjacency,
            loss_grid_step,
        )
    if p is None:
        raise ValueError("p (the check-in probability, in (0, 1]) is needed for schedule='poisson'")
    if window is not None or participations != 1:
        raise ValueError(
            "window and participations are for schedule='random' (got schedule='poisson')"
        )
    if randomizer is not None:
        from pld.shuffling import ANALYSES, shuffle

        analysis = validation.one_of("analysis", analysis, ANALYSES)
        if max_base_count is None:
            _check_bases(n, p, tail_mass, randomizer=randomizer, analysis=analysis)
        shuffle(randomizer, 1, analysis)  # rejects an incompatible randomizer up front
        exact = _exact_counts(randomizer, analysis, adjacency, n, exact_counts)

        def base(k: int, step: float | None) -> PLD:
            return shuffle(randomizer, k, analysis, loss_grid_step=step)

    else:
        from pld.shuffling.clones import VARIANTS, clones

        eps0 = validation.in_interval("eps0", eps0, 0.0, MAX_EPS0, low_open=True)
        variant = validation.one_of("variant", variant or "standard", VARIANTS)
        exact = None
        if max_base_count is None:
            _check_bases(n, p, tail_mass, eps0=eps0, variant=variant)

        def base(k: int, step: float | None) -> PLD:
            return clones(k, eps0, variant=variant, tail_mass=CLONES_TAIL_MASS, loss_grid_step=step)

    return checkin_from_bases(
        n,
        p,
        base,
        adjacency=adjacency,
        loss_grid_step=loss_grid_step,
        tail_mass=tail_mass,
        count_tolerance=count_tolerance,
        exact=exact,
        max_base_count=max_base_count,
    )


def _random_schedule(
    n: int,
    p: float | None,
    eps0: float | None,
    randomizer: Randomizer | None,
    analysis: str,
    variant: str | None,
    window: int | None,
    participations: int,
    adjacency: str,
    loss_grid_step: float | None,
) -> PLD:
    """``checkin(..., schedule="random")``: one window (:mod:`.random_schedule`)."""
    from pld.shuffling.checkin.random_schedule import random_schedule_round
    from pld.shuffling.shuffler import ANALYSES

    if p is not None:
        raise ValueError(
            "p is for schedule='poisson'; schedule='random' takes window and participations"
        )
    if window is None:
        raise ValueError(
            "window (the rounds T of a window, an integer >= 1) is needed for schedule='random'"
        )
    analysis = validation.one_of("analysis", analysis, ANALYSES)
    if eps0 is not None:
        eps0 = validation.in_interval("eps0", eps0, 0.0, 50.0, low_open=True)
    return random_schedule_round(
        n, eps0, randomizer, analysis, window, participations, adjacency, loss_grid_step, variant
    )


def _check_bases(
    n: int,
    p: float,
    tail_mass: float,
    *,
    eps0: float | None = None,
    randomizer: Randomizer | None = None,
    analysis: str = "best",
    variant: str | None = None,
) -> None:
    """Refuse up front a bulk whose largest count needs a base beyond its builder's limit."""
    from pld.shuffling.clones import check_clones_work

    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    p = validation.in_interval("p", p, 0.0, 1.0, low_open=True)
    tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    largest = bulk_counts(n, p, tail_mass)[1]
    what = f"checkin(n={n}, p={p:g}) needs bases of up to {largest} reports"
    knob = (
        "pass max_base_count (counts above it use the base of that many reports: valid, "
        "looser), e.g. max_base_count=10**6"
    )
    if randomizer is not None and not isinstance(randomizer, Randomizer):
        return  # pld.shuffle names it
    if randomizer is not None and analysis != "clones" and not randomizer.clones_alone:
        limit = randomizer.max_blanket_users
        if limit is not None and largest > limit:
            raise BudgetError(
                f"{what}, above pld.shuffle's {limit} users for this randomizer's blanket "
                f"analysis; {knob}"
            )
        return
    if randomizer is not None:
        # The randomizer's clone probability is at most the stronger pair's: the most work.
        variant = "stronger"
    local = eps0 if randomizer is None else min(randomizer.eps0, MAX_EPS0)
    try:
        check_clones_work(largest, local, tail_mass=CLONES_TAIL_MASS, variant=variant)
    except BudgetError as refusal:
        raise BudgetError(
            f"{what}, beyond the work budget of pld.clones (about {refusal.estimate:.3g} grid "
            f"points, budget {refusal.budget:.3g}); {knob}, or {budget_advice(refusal.estimate)}",
            estimate=refusal.estimate,
            budget=refusal.budget,
        ) from None


def _exact_counts(
    randomizer: Randomizer, analysis: str, adjacency: str, n: int, requested: int | None
) -> ExactCounts | None:
    """The enumerated counts of a finite randomizer (``None`` if none)."""
    if requested is not None:
        requested = validation.integer_at_least("exact_counts", requested, 0)
    if analysis != "best" or requested == 0:
        return None
    matrix = randomizer.exact_matrix()
    if matrix is None:
        return None
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    limit = exact_count_limit(matrix, adjacency, n, requested)
    return ExactCounts(matrix, limit, randomizer.eps0) if limit > 0 else None


@refinable
def distributed_checkin(
    n: int,
    p: float,
    sigma: float,
    *,
    sensitivity: float = 2.0,
    adjacency: str = "replace",
    loss_grid_step: float | None = None,
    tail_mass: float = COUNT_TAIL_MASS,
    count_tolerance: float = DEFAULT_COUNT_TOLERANCE,
) -> PLD:
    """One round of distributed check-in: checked-in clients' Gaussian-noised vectors are summed.

    Liew et al. (2022), §4, Thm 4 and suppl. Thm 5: each client adds ``N(0, sigma^2 I)``;
    given the count k the sum is a k-of-n subsampled Gaussian mechanism with noise
    ``sigma sqrt(k)`` (module docstring). Certified whether or not the server
    learns k.

    Parameters
    ----------
    n, p, adjacency, loss_grid_step, tail_mass, count_tolerance
        As in :func:`checkin`.
    sigma : float
        Noise standard deviation of each client, > 0 (units of the vectors).
    sensitivity : float
        Largest l2 distance between two clients' vectors, > 0, under both
        adjacencies (module docstring): ``2 C`` for vectors clipped to norm C; the
        default 2 is the unit ball, as in Liew et al. (2022), Thm 4 and
        ``pld.rdp.distributed_checkin_gaussian``.

    Returns
    -------
    PLD
        One round, symmetric; rigorous upper side.
    """
    from pld.central import gaussian

    sigma = validation.positive("sigma", sigma)
    sensitivity = validation.positive("sensitivity", sensitivity)

    def base(k: int, step: float | None) -> PLD:
        return gaussian(sigma * math.sqrt(k), sensitivity=sensitivity, loss_grid_step=step)

    return checkin_from_bases(
        n,
        p,
        base,
        adjacency=adjacency,
        loss_grid_step=loss_grid_step,
        tail_mass=tail_mass,
        count_tolerance=count_tolerance,
    )


#: ``pld.calibrate(..., "participation")`` sets the check-in probability ``p``.
for _mechanism in (checkin, distributed_checkin):
    _mechanism.calibration_names = {"participation": "p"}
