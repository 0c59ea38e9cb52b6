"""Real populations: groups of users with different randomizers, several messages per user.

``pld.shuffle([(R_1, n_1), (R_2, n_2), ...])`` (docs/shuffle-groups.md): the target may
be in any group; per target group the bound is the smaller of

* the blanket bound against a common blanket law (Theorems 1 and 3;
  :class:`pld.shuffling.blanket.GroupBlanket`), from the groups' matrices, and
* the clones pair with per-user clone probabilities (Theorem 4;
  :func:`pld.shuffling.clones.clones_profile`),
  ``p_h = min_{x, y, x0 != x1} R_h(x)(y) / (R_g(x0)(y) + R_g(x1)(y))`` from the
  matrices for users of another group, and for the target's own group the clone
  probability proven for its randomizer (:attr:`Randomizer.clone_probability`;
  docs/clones-validity.md, Theorem A: the stronger pair's ``1/(e^eps0 + 1)`` only
  for randomizers in its class, never k-RR's withdrawn ``gamma / k``), with the
  target's ``eps_t`` its randomizer's eps0;

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
from scipy.special import gammaln

from pld import validation
from pld.distribution import PLD
from pld.numerics import MAX_EPS0
from pld.randomizers import Randomizer
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
    shape = (getattr(first, "num_inputs", None), getattr(first, "num_outputs", None))
    for index, randomizer in enumerate(randomizers[1:], start=1):
        other = (getattr(randomizer, "num_inputs", None), getattr(randomizer, "num_outputs", None))
        if None in shape or other != shape:
            raise ValueError(
                "every group's randomizer must be a finite randomizer on the same inputs and "
                f"outputs: group 0 is {first!r}, group {index} is {randomizer!r}"
            )
    validation.integer_at_least("the number of users", sum(counts), 1, validation.MAX_USERS)
    return Population(tuple(randomizers), tuple(counts))


def _matrix(randomizer: Randomizer) -> np.ndarray | None:
    """The randomizer's matrix where it has one of at most ``MAX_GROUP_MATRIX`` entries."""
    size = getattr(randomizer, "num_inputs", 0) * getattr(randomizer, "num_outputs", 0)
    if 0 < size <= MAX_GROUP_MATRIX:
        return randomizer.exact_matrix()
    return None


#: Relative margin by which a clone probability computed in floats from two matrices
#: is lowered (the float ratio may exceed the exact one by a few ulp).
CLONE_RATIO_MARGIN = 1e-12


def clone_ratio(other: Randomizer, target: Randomizer) -> float | None:
    """A clone probability of a user of ``other`` for a target running ``target`` (Theorem 4).

    The same randomizer: the one proven for it, :attr:`Randomizer.clone_probability`
    (docs/clones-validity.md, Theorem A: the stronger pair only for randomizers in its
    class). Two randomizers with matrices:
    ``min_{x, y, x0 != x1} R_other(x)(y) / (R_target(x0)(y) + R_target(x1)(y))``, lowered
    by ``CLONE_RATIO_MARGIN`` for its float error; else None (no clone bound).
    """
    if other is target:
        return target.clone_probability
    theirs, ours = _matrix(other), _matrix(target)
    if theirs is None or ours is None:
        return None
    low = theirs.min(axis=0)
    best = math.inf
    for x0 in range(ours.shape[0]):
        sums = ours[x0] + ours[x0 + 1 :]
        positive = sums > 0
        if np.any(positive):
            ratios = np.where(positive, low[None, :] / np.where(positive, sums, 1.0), np.inf)
            best = min(best, float(np.min(ratios)))
    return min(best, 0.5) * (1.0 - CLONE_RATIO_MARGIN)


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

    def profiles(eps: np.ndarray, lower_side: bool = True, fineness: float = 1.0):
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

    ratio = randomizer.clone_probability
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

    def profiles(eps: np.ndarray, lower_side: bool = True, fineness: float = 1.0):
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


#: Largest product of the groups' two-count window sizes the population observer convolves
#: directly (about the number of multiply-adds); beyond it only the count of reports
#: favouring x is kept (a post-processing).
OBSERVER_CELLS = 50_000_000


def _count_pmf(trials: int, prob: float) -> tuple[int, np.ndarray, float]:
    """Window start, pmf on the window and the mass left out, of ``Bin(trials, prob)``."""
    from pld.numerics import binomial

    if trials == 0 or prob <= 0.0:
        return 0, np.array([1.0]), 0.0
    lo, hi = (int(v) for v in binomial.window(1e-16, trials, prob))
    pmf = binomial.pmf(np.arange(lo, hi + 1), trials, prob)
    return lo, pmf, max(0.0, 1.0 - float(math.fsum(pmf)))


def _pair_counts(trials: int, law: np.ndarray) -> tuple[int, int, np.ndarray, float]:
    """Window starts, the (above, below) count pmf on the windows, and the mass left out."""
    from pld.numerics import binomial

    if trials == 0:
        return 0, 0, np.array([[1.0]]), 0.0
    lows, highs = [], []
    for prob in law[:2]:
        if prob <= 0.0:
            lows.append(0)
            highs.append(0)
        else:
            lo, hi = (int(v) for v in binomial.window(1e-16, trials, prob))
            lows.append(lo)
            highs.append(hi)
    a = np.arange(lows[0], highs[0] + 1)[:, None]
    b = np.arange(lows[1], highs[1] + 1)[None, :]
    rest = trials - a - b
    valid = rest >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pi = np.log(law)
        log = (
            gammaln(trials + 1.0)
            - gammaln(a + 1.0)
            - gammaln(b + 1.0)
            - gammaln(np.maximum(rest, 0) + 1.0)
            + np.where(a > 0, a * log_pi[0], 0.0)
            + np.where(b > 0, b * log_pi[1], 0.0)
            + np.where(rest > 0, rest * log_pi[2], 0.0)
        )
    part = np.where(valid, np.exp(np.where(valid, log, -np.inf)), 0.0)
    return lows[0], lows[1], part, max(0.0, 1.0 - float(math.fsum(part.ravel())))


def population_observer(population: Population, loss_grid_step: float | None = None) -> PLD:
    """One concrete neighbouring pair of a population, seen through counts: a lower bound.

    The target is in the group of largest eps0 and holds x or x' (the two rows of its
    matrix farthest apart in total variation); every other user holds x', x or a third
    input (the largest one-round lower curve is kept). The reports
    are grouped by the sign of ``log R_g(x)(y) / R_g(x')(y)``; the view kept is the
    pair of counts (above 1, below 1) where it is small enough to convolve exactly, else
    the count above 1 alone (both post-processings of the released multiset). Masses
    left out of the windows are charged to the upper side only, so the LOWER bracket,
    composed, lower-bounds the protocol.
    """
    matrices = [_matrix(r) for r in population.randomizers]
    if any(m is None for m in matrices):
        raise ValueError(
            f"shuffle_observer of a population needs every group's matrix (at most "
            f"{MAX_GROUP_MATRIX} entries)"
        )
    g = int(np.argmax([r.eps0 for r in population.randomizers]))
    target = matrices[g]
    distance = 0.5 * np.abs(target[:, None, :] - target[None, :, :]).sum(axis=2)
    x, other = np.unravel_index(int(np.argmax(distance)), distance.shape)
    above = target[x] > target[other] * (1 + 1e-12)
    below = target[x] < target[other] * (1 - 1e-12)

    def grouped(row: np.ndarray) -> np.ndarray:
        high, low = math.fsum(row[above]), math.fsum(row[below])
        return np.array([high, low, max(0.0, 1.0 - high - low)])

    # Every other user at x', at x or at one of two third inputs: the dataset with the
    # largest one-round lower curve is kept.
    candidates = [
        _observer_pair(
            [(population.counts[h] - (h == g), grouped(m[held])) for h, m in enumerate(matrices)],
            grouped(target[x]),
            grouped(target[other]),
            loss_grid_step,
        )
        for held in (other, x, *[v for v in range(target.shape[0]) if v not in (x, other)][:2])
    ]
    scores = [
        float(np.sum(c.delta_bounds(np.linspace(0.0, 2.0, 21), rel_accuracy=1.0)[0]))
        for c in candidates
    ]
    return candidates[int(np.argmax(scores))]


def _observer_pair(
    laws: list[tuple[int, np.ndarray]],
    pi_x: np.ndarray,
    pi_y: np.ndarray,
    loss_grid_step: float | None,
) -> PLD:
    """The counts' PLD of :func:`population_observer` for one dataset of the other users."""
    from scipy.signal import convolve2d

    from pld.distribution import from_pmfs

    parts = [_pair_counts(n, law) for n, law in laws]
    cost = math.prod(part[2].size for part in parts)
    dropped = 0.0
    if cost <= OBSERVER_CELLS:
        # Two counts: per group, the histogram of (above, below) on its windows,
        # convolved exactly (direct sums).
        joint = np.array([[1.0]])
        for _, _, part, left in parts:
            joint = convolve2d(joint, part)
            dropped += left
        shifts = ((1, 0, 0), (0, 1, 1), (0, 0, 2))
        size = (joint.shape[0] + 1, joint.shape[1] + 1)
        p_law, q_law = np.zeros(size), np.zeros(size)
        for da, db, index in shifts:
            p_law[da : da + joint.shape[0], db : db + joint.shape[1]] += pi_x[index] * joint
            q_law[da : da + joint.shape[0], db : db + joint.shape[1]] += pi_y[index] * joint
        p_law, q_law = p_law.ravel(), q_law.ravel()
    else:
        # The count above 1 alone.
        pmf, low = np.array([1.0]), 0
        for n, law in laws:
            start, part, left = _count_pmf(n, law[0])
            pmf, low, dropped = np.convolve(pmf, part), low + start, dropped + left
        p_law = np.concatenate(([0.0], pmf)) * pi_x[0] + np.concatenate((pmf, [0.0])) * (
            1 - pi_x[0]
        )
        q_law = np.concatenate(([0.0], pmf)) * pi_y[0] + np.concatenate((pmf, [0.0])) * (
            1 - pi_y[0]
        )
    keep = (p_law > 0) | (q_law > 0)
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p_law[keep]), np.log(q_law[keep])
    missing_p = max(0.0, 1.0 - math.fsum(p_law[keep]) * (1 - 1e-12))
    missing_q = max(0.0, 1.0 - math.fsum(q_law[keep]) * (1 - 1e-12))
    return from_pmfs(
        log_p,
        log_q,
        loss_grid_step=loss_grid_step,
        truncated_mass_p=min(max(missing_p, dropped), 0.5),
        truncated_mass_q=min(max(missing_q, dropped), 0.5),
        mass_relative_error=1e-9,
    )
