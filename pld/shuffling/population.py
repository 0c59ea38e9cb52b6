"""Real populations: groups of users with different randomizers, several messages per user.

``pld.shuffle([(R_1, n_1), (R_2, n_2), ...])`` (docs/shuffle-groups.md): the target may
be in any group; per target group the bound is the smaller of

* the blanket bound against a common blanket law (Theorems 1 and 3;
  :class:`pld.shuffling.blanket.GroupBlanket`), from the groups' matrices, and
* the clones pair with per-user clone probabilities (Theorem 4;
  :func:`pld.shuffling.clones.clones_profile`),
  ``p_h = min_{x, y, x0 != x1} R_h(x)(y) / (R_g(x0)(y) + R_g(x1)(y))`` computed exactly
  from the matrices, with the target's ``eps_t`` its randomizer's eps0;

and the population's bound is the largest over target groups (:func:`worst_group` says
which). Both are valid for every choice of the other users' inputs, with nothing taken
from the caller. The one-round profile becomes a PLD by connect-the-dots
(:func:`pld.shuffling.shuffler.profile_pld`); the lower bracket keeps the lower
values on the grid (a maximum of minima).

``pld.shuffle(R, n, messages=m)`` (docs/multi-message.md): the best of the m-fold
composition of the single-message bound and the multi-message clones pair
(Theorem 5), which is never above the composition of single-message clones pairs.

``pld.clones([(eps0_1, n_1), ...])``: :func:`pld.shuffling.clones.clones_population`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pld import validation
from pld.distribution import PLD
from pld.numerics import MAX_EPS0
from pld.randomizers import FiniteRandomizer, Randomizer
from pld.shuffling.grid import DEFAULT_NUM_POINTS, profile_pld

#: Largest number of entries of a group's matrix the population analyses write out.
MAX_GROUP_MATRIX = 10**6

#: Largest number of groups.
MAX_GROUPS = 64

#: eps values (nats) of the grid on which :func:`shuffle_messages` compares its two bounds.
MESSAGES_PROBE = 9


@dataclass(frozen=True)
class Population:
    """Validated groups: ``randomizers[h]`` run by ``counts[h]`` users."""

    randomizers: tuple[Randomizer, ...]
    counts: tuple[int, ...]

    @property
    def size(self) -> int:
        return sum(self.counts)

    @property
    def eps0(self) -> float:
        return max(r.eps0 for r in self.randomizers)


def check_population(groups: object) -> Population:
    """The groups ``[(randomizer, count), ...]`` validated, identical randomizers merged.

    Raises
    ------
    ValueError
        For an empty list, an entry that is not a (randomizer, count) pair, a count that
        is not a positive integer, randomizers with different input or output spaces,
        or more than ``MAX_GROUPS`` groups.
    """
    if not isinstance(groups, list | tuple) or len(groups) == 0:
        raise ValueError("groups must be a non-empty list of (randomizer, count) pairs")
    if len(groups) > MAX_GROUPS:
        raise ValueError(f"groups must hold at most {MAX_GROUPS} groups (got {len(groups)})")
    randomizers: list[Randomizer] = []
    counts: list[int] = []
    for index, entry in enumerate(groups):
        if not isinstance(entry, list | tuple) or len(entry) != 2:
            raise ValueError(f"groups[{index}] must be a (randomizer, count) pair (got {entry!r})")
        randomizer, count = entry
        if not isinstance(randomizer, Randomizer):
            raise ValueError(
                f"groups[{index}][0] must be a pld.randomizers randomizer "
                f"(got {type(randomizer).__name__})"
            )
        count = validation.integer_at_least(f"groups[{index}] count", count, 1)
        for seen, merged in zip(randomizers, range(len(randomizers)), strict=True):
            if seen is randomizer:
                counts[merged] += count
                break
        else:
            randomizers.append(randomizer)
            counts.append(count)
    first = randomizers[0]
    for index, randomizer in enumerate(randomizers[1:], start=1):
        if not (
            isinstance(first, FiniteRandomizer)
            and isinstance(randomizer, FiniteRandomizer)
            and randomizer.num_inputs == first.num_inputs
            and randomizer.num_outputs == first.num_outputs
        ):
            raise ValueError(
                "every group's randomizer must be a finite randomizer on the same inputs and "
                f"outputs: group 0 is {first!r}, group {index} is {randomizer!r}"
            )
    validation.integer_at_least("the number of users", sum(counts), 1)
    return Population(tuple(randomizers), tuple(counts))


def _matrix(randomizer: Randomizer) -> np.ndarray | None:
    if isinstance(randomizer, FiniteRandomizer):
        if randomizer.num_inputs * randomizer.num_outputs <= MAX_GROUP_MATRIX:
            return randomizer.exact_matrix()
    return None


def clone_ratio(other: Randomizer, target: Randomizer) -> float | None:
    """A clone probability of a user of ``other`` for a target running ``target`` (Theorem 4).

    ``min_{x, y, x0 != x1} R_other(x)(y) / (R_target(x0)(y) + R_target(x1)(y))``
    from the matrices; for the same randomizer without a matrix, ``e^-eps0 / 2``
    (every eps0-LDP randomizer, Feldman et al. 2021); else None (no clone bound).
    """
    theirs, ours = _matrix(other), _matrix(target)
    if theirs is not None and ours is not None:
        low = theirs.min(axis=0)
        best = math.inf
        for x0 in range(ours.shape[0]):
            sums = ours[x0] + ours[x0 + 1 :]
            positive = sums > 0
            if np.any(positive):
                ratios = np.where(positive, low[None, :] / np.where(positive, sums, 1.0), np.inf)
                best = min(best, float(np.min(ratios)))
        return min(best, 0.5)
    if other is target and 0.0 < target.eps0 <= MAX_EPS0:
        return math.exp(-target.eps0) / 2.0
    return None


class _Analyses:
    """Per target group: its clones count and eps_t, its blanket bound (each if available)."""

    def __init__(self, population: Population, analysis: str, messages: int = 1):
        from pld.shuffling.blanket import GroupBlanket
        from pld.shuffling.clones import CloneCount

        self.messages = messages
        randomizers, counts = population.randomizers, population.counts
        matrices = [_matrix(r) for r in randomizers]
        self.groups = []
        for g, target in enumerate(randomizers):
            entry: dict[str, object] = {"group": g}
            if analysis in ("best", "clones") and 0.0 < target.eps0 <= MAX_EPS0:
                ratios = [clone_ratio(other, target) for other in randomizers]
                if all(ratio is not None for ratio in ratios):
                    components = [
                        ((counts[h] - (h == g)) * messages, 2.0 * ratios[h])
                        for h in range(len(counts))
                    ]
                    entry["clones"] = (CloneCount(components), target.eps0)
            if analysis in ("best", "blanket") and messages == 1:
                if all(m is not None for m in matrices):
                    blanket = GroupBlanket(matrices, list(counts), g)
                    if blanket.available:
                        entry["blanket"] = blanket
            if target.eps0 == 0.0 and "clones" not in entry:
                entry["clones"] = None  # the target's reports do not depend on its input
            self.groups.append(entry)
        missing = [e["group"] for e in self.groups if not ({"clones", "blanket"} & set(e))]
        if missing:
            raise ValueError(
                f"no {analysis!r} analysis applies to a target in group {missing[0]}: the "
                "blanket needs every group's matrix (at most "
                f"{MAX_GROUP_MATRIX} entries) and a common blanket law with positive mass for "
                "every group; the clones pair needs a finite eps0 and the matrices"
            )

    def _clones(self, entry: dict, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from pld.shuffling.clones import clones_profile

        if entry["clones"] is None:
            return np.zeros(eps.size), np.zeros(eps.size)
        count, eps_t = entry["clones"]
        return clones_profile(count, self.messages, eps_t, eps)

    def evaluate(
        self, eps: np.ndarray, lower_side: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lower, upper, worst group) of ``max_g min(blanket_g, clones_g)`` at each eps."""
        parts = []
        for entry in self.groups:
            if "clones" in entry:
                c_lower, c_upper = self._clones(entry, eps)
            else:
                c_lower, c_upper = np.ones(eps.size), np.ones(eps.size)
            cheap = c_upper
            if "blanket" in entry:
                cheap = np.minimum(cheap, entry["blanket"].cheap_upper(eps))
            parts.append((entry, c_lower, c_upper, cheap))
        # Target groups in decreasing order of a cheap upper bound; a group's blanket is
        # evaluated only where that bound exceeds the running maximum (elsewhere it
        # cannot raise the maximum).
        parts.sort(key=lambda part: -float(np.sum(part[3])))
        lower, upper = np.zeros(eps.size), np.zeros(eps.size)
        worst = np.full(eps.size, parts[0][0]["group"])
        for entry, c_lower, c_upper, cheap in parts:
            g_lower, g_upper = c_lower.copy(), np.minimum(c_upper, cheap)
            if "blanket" in entry:
                needed = (cheap > upper) | (upper == 0)
                g_lower[~needed] = 0.0
                if np.any(needed):
                    b_lower, b_upper = entry["blanket"].bounds(eps[needed], lower_side)
                    g_lower[needed] = np.minimum(c_lower[needed], b_lower)
                    g_upper[needed] = np.minimum(c_upper[needed], b_upper)
            worst = np.where(g_upper > upper, entry["group"], worst)
            lower = np.maximum(lower, g_lower)
            upper = np.maximum(upper, g_upper)
        return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0), worst


def shuffle_population(
    population: Population,
    analysis: str = "best",
    loss_grid_step: float | None = None,
    num_points: int = DEFAULT_NUM_POINTS,
) -> PLD:
    """One round of a shuffled population of several randomizers (module docstring).

    ``pld.shuffle(groups)`` validates the groups (:func:`check_population`) and sends a
    population of one randomizer to the single-randomizer recipe.
    """
    analyses = _Analyses(population, analysis)

    def profiles(eps: np.ndarray, lower_side: bool = True):
        lower, upper, _ = analyses.evaluate(eps, lower_side)
        return [(lower, upper)], False

    return profile_pld(
        profiles,
        lambda eps: analyses.evaluate(eps, lower_side=False)[1],
        population.eps0,
        loss_grid_step,
        num_points,
    )


def worst_group(groups: object, eps: float | np.ndarray, analysis: str = "best") -> np.ndarray:
    """Index of the group whose target has the largest one-round bound, at each eps (nats).

    The index refers to ``groups`` as given (identical randomizer objects are merged into
    their first group).
    """
    population = check_population(groups)
    eps = validation.real_array("eps", eps)
    if len(population.randomizers) == 1:
        return np.zeros(eps.size, dtype=np.int64)
    first = {id(r): i for i, (r, _) in reversed(list(enumerate(groups)))}
    _, _, worst = _Analyses(population, analysis).evaluate(eps, lower_side=False)
    return np.array([first[id(population.randomizers[g])] for g in worst], dtype=np.int64)


def shuffle_messages(
    composed: PLD,
    randomizer: Randomizer,
    n: int,
    messages: int,
    analysis: str = "best",
    loss_grid_step: float | None = None,
    num_points: int = DEFAULT_NUM_POINTS,
) -> PLD:
    """n users each sending ``messages`` reports of their input, all shuffled together.

    ``composed`` is ``pld.shuffle(randomizer, n).self_compose(messages)``. The best of it
    and the multi-message clones pair (docs/multi-message.md): ``composed`` itself where
    the clones pair does not beat it at any of ``MESSAGES_PROBE`` eps values, else the
    connect-the-dots pair of the minimum of both one-round profiles on an eps grid at
    every point of ``composed``'s loss grid (whose profile is piecewise linear in e^eps
    with kinks there), so nowhere above ``composed``.
    """
    from pld.shuffling.clones import CloneCount, clones_profile

    ratio = clone_ratio(randomizer, randomizer) if 0.0 < randomizer.eps0 <= MAX_EPS0 else None
    if analysis == "blanket" or ratio is None or n == 1:
        return composed
    count = CloneCount([((n - 1) * messages, 2.0 * ratio)])
    eps_t = randomizer.eps0

    def clones_only(eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return clones_profile(count, messages, eps_t, eps)

    top = messages * eps_t
    probe = np.linspace(0.0, top, MESSAGES_PROBE)
    composed_upper = composed.delta_bounds(probe, rel_accuracy=1.0)[1]
    if analysis == "best" and not np.any(clones_only(probe)[1] < composed_upper):
        return composed

    def profiles(eps: np.ndarray, lower_side: bool = True):
        c_lower, c_upper = clones_only(eps)
        if analysis == "clones":
            return [(c_lower, c_upper)], True
        a_lower, a_upper = composed.delta_bounds(eps, rel_accuracy=1.0)
        return [(np.minimum(a_lower, c_lower), np.minimum(a_upper, c_upper))], False

    def quick_upper(eps: np.ndarray) -> np.ndarray:
        return np.minimum(clones_only(eps)[1], composed.delta_bounds(eps, rel_accuracy=1.0)[1])

    # The eps grid at every point of the composition's loss grid: its profile is piecewise
    # linear in e^eps with kinks there, so the chords of the minimum stay below it.
    if analysis == "clones":
        return profile_pld(profiles, quick_upper, top, loss_grid_step, num_points)
    return profile_pld(
        profiles, quick_upper, top, composed.loss_grid_step, num_points, every_step=True
    )
