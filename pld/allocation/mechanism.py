"""Random allocation: each user takes part in exactly k of T rounds chosen uniformly at random.

The scheme (Chua et al. 2024, "balls and bins"; Feldman and Shenfeld 2025, 2026;
Balle et al. 2020's random check-ins with one slot). Rounds ``1..T`` run a
mechanism ``M`` adaptively (round ``i`` may depend on the outputs of rounds
``< i``); a user's record is used in the rounds of a uniformly random k-subset
``I`` of ``[T]``, drawn independently of everything else and never revealed.
Neighbouring datasets differ by adding or removing one record (add/remove).
docs/random-allocation.md states and proves what this module implements.

Dominating pair (one participation). Let ``(P, Q)`` dominate ``M`` under
add/remove at every ``alpha >= 0`` (Zhu, Dong and Wang 2022, Definition 7:
``H_alpha(M(D + z; h) || M(D; h)) <= H_alpha(P || Q)`` for every history
``h``, both orders through ``alpha < 1``). By Blackwell's theorem there is a
kernel ``K_{i,h}`` with ``K_{i,h} P = M_i(D + z; h)`` and ``K_{i,h} Q =
M_i(D; h)``. Draw ``Z_i ~ P`` in the chosen round and ``Z_i ~ Q`` in the others,
and output ``Y_i = K_{i, Y_<i}(Z_i)``: with the record this is the allocated run,
without it the plain run, and the kernels do not depend on ``I``. So the pair

    ( (1/T) sum_i  P at i x Q elsewhere ,  Q^T )                            (1)

dominates the allocated mechanism in both directions at once, for adaptive
rounds (Feldman and Shenfeld 2025 prove the same pair by another route). With
``X = dP/dQ`` its likelihood ratio is ``S / T``, ``S = X_1 + ... + X_T`` i.i.d.
under Q (:mod:`pld.allocation.sums` computes that law, bracketed).

k participations (Feldman and Shenfeld 2026, the floor/ceil decomposition). A
uniform k-subset is a uniformly random partition of ``[T]`` into k blocks of
sizes ``floor(T/k)`` and ``ceil(T/k)`` followed by one uniform round per block
(the result is permutation invariant, hence uniform). For a fixed partition
the kernel argument above, block by block, gives the product of the blocks'
pairs (1); the mixture over partitions is bounded by joint convexity of
``H_alpha`` in both directions, and every partition gives the same product (up
to relabelling rounds). So the composition of the k one-participation PLDs
dominates; it is exact for k = 1 and for k = T (plain composition), an upper
bound in between.

What this does not cover: replace-one neighbours (the rounds without the user
then run on a dataset that has neither record; pair (1) needs a third
distribution), and an allocation that the adversary sees.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.allocation.pairs import OneRound, lower_round, upper_round
from pld.allocation.sums import RatioLaw, estimated_work, iid_sum
from pld.distribution import PLD, compose, from_bounds, from_pmfs, refinable
from pld.engine import DEFAULT_TAIL_MASS, check_grid_points, choose_loss_grid_step

_ADJACENCIES = ("add-remove",)


def _check_mechanism(mechanism: object) -> PLD:
    if not isinstance(mechanism, PLD):
        raise ValueError(
            f"mechanism must be a pld.PLD of one round (got {type(mechanism).__name__})"
        )
    if mechanism.composed:
        raise ValueError(
            "mechanism must be one round of a mechanism, not a composition: allocate first, "
            "then compose (self_compose for epochs)"
        )
    return mechanism


def _check_adjacency(adjacency: object) -> None:
    if adjacency == "replace":
        raise ValueError(
            "adjacency must be 'add-remove' for random allocation: under replace-one the "
            "rounds without the user run on a dataset holding neither record, so the "
            "allocation pair needs three distributions and is not implemented"
        )
    validation.one_of("adjacency", adjacency, _ADJACENCIES)


def _loss_std(law: RatioLaw, rounds: int) -> float:
    """Standard deviation (nats) of the allocation's loss ``log(S / T)`` under P, estimated."""
    x, w = law.values, law.mass
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mean_q = float(np.sum(w * x))
        second = float(np.sum(w * x * x))
        third = float(np.sum(w * x**3))
        var_q = max(second - mean_q**2, 0.0)
        var_p = max(third / max(mean_q, 1e-300) - (second / max(mean_q, 1e-300)) ** 2, 0.0)
        log_x = np.log(x[x > 0])
        weights = (w * x)[x > 0]
        mean_log = np.average(log_x, weights=weights)
        std_log = math.sqrt(float(np.average((log_x - mean_log) ** 2, weights=weights)))
    estimate = math.sqrt(var_p + (rounds - 1) * var_q) / rounds
    if not math.isfinite(estimate) or estimate <= 0:
        return std_log
    return min(std_log, estimate)


def _atoms_pld(law: RatioLaw, one: OneRound, rounds: int, step: float, side: str) -> PLD:
    """The PLD of the pair ``((S/T) Q_S + p_inf at +inf, Q_S)`` from the law of ``S``."""
    values, mass = law.values, law.mass
    positive = values > 0
    log_q = np.log(mass[positive])
    if side == "upper":
        index = np.rint(np.log(values[positive] / rounds) / step)
        log_ratio = index * step
    else:
        log_ratio = np.log(values[positive] / rounds)
    log_p = log_q + log_ratio
    zero_q = float(mass[~positive].sum())
    extra_p = [math.log(one.p_infinity)] if one.p_infinity > 0 else []
    extra_q = [-math.inf] * len(extra_p)
    if zero_q > 0:
        extra_p.append(-math.inf)
        extra_q.append(math.log(zero_q))
    error = min(law.mass_error + 2 * law.value_error, 1e-3)
    return from_pmfs(
        np.concatenate((log_p, extra_p)),
        np.concatenate((log_q, extra_q)),
        loss_grid_step=step,
        mass_relative_error=error,
    )


def _one_participation(mechanism: PLD, rounds: int, step: float, tail_mass: float) -> PLD:
    """The bracketed PLD of pair (1) for one participation among ``rounds`` >= 2."""
    sides = {}
    for side, one in (("upper", upper_round(mechanism)), ("lower", lower_round(mechanism))):
        law = iid_sum(one.law, rounds, step, side, tail_mass)
        sides[side] = _atoms_pld(law, one, rounds, step, side)
    return from_bounds(upper=sides["upper"], lower=sides["lower"])


def _group_sizes(rounds: int, participations: int) -> list[tuple[int, int]]:
    """(block size, number of blocks) of the floor/ceil decomposition."""
    size, extra = divmod(rounds, participations)
    groups = [(size + 1, extra), (size, participations - extra)]
    return [(block, count) for block, count in groups if count > 0]


@refinable
def random_allocation(
    mechanism: PLD,
    rounds: int,
    participations: int = 1,
    *,
    adjacency: str = "add-remove",
    tail_mass: float = DEFAULT_TAIL_MASS,
    loss_grid_step: float | None = None,
) -> PLD:
    """A user takes part in exactly ``participations`` of ``rounds`` rounds chosen at random.

    Each participation runs ``mechanism`` (any one-round PLD under add/remove
    adjacency: ``pld.gaussian(sigma)``, ``pld.laplace(b)``, discrete mechanisms, ...);
    the rounds may be adaptive. The upper side is the composition of the
    one-participation pairs of the floor/ceil decomposition (Feldman and Shenfeld
    2026), each the exact allocation pair (module docstring, eq. 1) of the
    mechanism's dominating pair, computed by a dominating split scheme; the lower
    side is the same from a pair dominated by the mechanism's, by a merge scheme
    (:mod:`pld.allocation.sums`). Compose epochs with ``self_compose``.

    Parameters
    ----------
    mechanism : PLD
        One round (not composed). Its first direction bounds
        ``H_alpha(M(D + z) || M(D))`` (the record added) at every alpha, as every
        one-round PLD of the library does.
    rounds : int
        T, the number of rounds of one allocation (an epoch), >= 1.
    participations : int
        k, the rounds each user takes part in, in [1, T].
    adjacency : {"add-remove"}
        Only add/remove neighbours are covered (replace-one is refused).
    tail_mass : float
        P- and Q-mass of negligible partial sums left out per participation, in
        (0, 1e-3]; charged to the upper bound at +inf (queries lower it to the
        budget of the delta asked).
    loss_grid_step : float, optional
        Loss grid step of the result in nats; by default
        :func:`pld.engine.choose_loss_grid_step` of the allocation loss's
        estimated standard deviation.

    Returns
    -------
    PLD
        One epoch (composed when k > 1), both directions; the upper side is
        rigorous whenever the mechanism's is.

    Raises
    ------
    ValueError
        Bad parameters; ``pld.BudgetError`` (a ValueError) when the work exceeds
        the budget (very large ``rounds / participations`` on a fine grid).
    """
    mechanism = _check_mechanism(mechanism)
    rounds = validation.integer_at_least("rounds", rounds, 1)
    participations = validation.integer_at_least("participations", participations, 1, rounds)
    _check_adjacency(adjacency)
    tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    groups = _group_sizes(rounds, participations)
    largest = groups[0][0]
    upper_law = upper_round(mechanism).law if largest > 1 else None
    if loss_grid_step is None:
        if upper_law is None:
            step = mechanism.loss_grid_step
        else:
            step = choose_loss_grid_step(_loss_std(upper_law, largest))
    else:
        step = validation.loss_grid_step(loss_grid_step)
    if upper_law is not None:
        work = 2 * sum(
            estimated_work(upper_law, block, step, tail_mass) for block, _ in groups if block > 1
        )
        check_grid_points(
            work / 8,
            f"random_allocation(rounds={rounds}, participations={participations}) on the "
            f"loss grid of step {step:g} nats",
            "increase loss_grid_step or participations",
        )
    operands = []
    for block, count in groups:
        one = mechanism if block == 1 else _one_participation(mechanism, block, step, tail_mass)
        operands += [one] * count
    return compose(*operands)  # one composition; identical operands share a spectrum power
