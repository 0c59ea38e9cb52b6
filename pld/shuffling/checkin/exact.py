"""Exact small-count terms of shuffled check-in for a finite randomizer.

Given the public count ``K = k`` (eq. 1 of :mod:`pld.shuffling.checkin.mixture`),
part ``k`` of check-in is a k-of-N subsampled shuffler: ``N`` users in all (``n``
under replacement, ``n + 1`` under add/remove), the target among the ``k``
reporters with probability ``g = k/N``. For small ``k`` and a finite randomizer
``R`` (an ``m x K`` row-stochastic matrix) its worst case is computed exactly,
instead of through a dominating pair of the k-report shuffler.

Write ``S(v; y)`` for the law of the histogram of the shuffled reports of input
``v`` and of the multiset ``y`` of inputs, and ``Sh(z)`` for that of ``z`` alone.
Draw a uniform ``k``-subset ``Z`` of the others and ``j`` uniform in ``Z``: then
``Z - j`` is a uniform ``(k-1)``-subset, so the target-present part is
``S(t; x_{Z-j})`` and the target-absent part ``Sh(x_Z)``:

    M_k(D)  = E_Z [ g avg_{j in Z} S(t;  x_{Z-j}) + (1 - g) Sh(x_Z) ],
    M_k(D') = E_Z [ g avg_{j in Z} S(t'; x_{Z-j}) + (1 - g) Sh(x_Z) ]     (replace-one).

Joint convexity of the hockey-stick divergence in the pair moves ``E_Z``
outside, and the maximum over the multiset ``z`` the ``k`` drawn others may hold
bounds the average (``h_k(t, t', z)`` the divergence inside):

    H_alpha(M_k(D) || M_k(D')) <= max_{t != t', |z| = k} h_k(t, t', z)            (E1)

per ``k`` and per ``alpha``, over ordered pairs ``(t, t')`` (both orders of the
neighbours); any ``k <= n - 1`` values are some ``k`` others'. At ``k = n``
(``g = 1``) every other reports: ``max_{|y| = n-1} H_alpha(S(t; y) || S(t'; y))``.

Under add/remove (``D' = D`` plus the target; eqs. 2-3 there) ``T_k = E_Z avg_j
S(t; x_{Z-j})`` and ``U_k = E_Z Sh(x_Z)`` with ``g = k/(n+1)``, and the same
argument bounds the terms of the Lemma 7 mixture:

    A_k(beta) <= max_{t, z} H_beta(g avg_j S(t; z-j) + (1-g) Sh(z) || Sh(z)),
    B_k(beta) <= max_{t, z} H_beta(Sh(z) || g avg_j S(t; z-j) + (1-g) Sh(z)).     (E2)

The count's own ratio ``r_k`` stays outside the hockey-stick argument.

Coupling the counts
-------------------
(E1)-(E2) maximise each count separately; a real dataset must serve all counts at
once. Two tighter bounds couple them, both per ``alpha`` and per direction:

* Every dataset (E5)-(E6). For a dataset ``x`` of the others (a multiset) and
  target inputs ``(t, t')``, the enumerated part of eq. (1) is computed exactly:
  ``M_k(D) = g S(t; Y_{k-1}) + (1 - g) Y_k`` with ``Y_j`` the shuffle of a uniform
  ``j``-subset of ``x`` (multivariate hypergeometric over its sub-multisets), and
  ``sum_k w_k H_alpha(M_k(D) || M_k(D'))`` is maximised over ``x`` and ``(t, t')``.
  Every real pair is one of these (and the counts beyond the enumerated ones are
  bounded for every dataset), so this is the protocol's exact worst case over the
  enumerated counts. Used while ``datasets x pairs x counts <= MAX_DATASET_PAIRS``.
* A sequence (E3)-(E4). Order the others uniformly at random; the first ``k`` are a
  uniform ``k``-subset for every ``k`` at once, so ``M(D) = E_pi[M_pi(D)]`` with
  the count-``k`` part of ``M_pi`` built from the prefix ``z_k`` of the order
  (target-present: ``avg_{j in z_k} S(t; z_k - j)``). Joint convexity over ``pi``
  bounds the sum of the enumerated counts by the maximum over sequences ``w`` of
  ``sum_k w_k h_k(t, t', prefix_k(w))``, a longest path over multisets (dynamic
  programming, two levels of ``multisets x grid`` floats, ``MAX_PATH_FLOATS``).
  Beyond that memory, the per-count maxima (E1)-(E2) are summed.

Arithmetic: histograms are built one report at a time in float64; every mass is a
sum of products of ``k`` entries of ``R``, so counts are enumerated only while
``(min positive entry)^k > e^-600`` (no underflow). Each hockey-stick value is
raised (upper) or lowered (lower) by a relative margin on the masses it sums and
counts the outputs whose computed loss clears ``log alpha`` by a tolerance
(:class:`pld.shuffling.checkin.shuffled_laws.HockeyGrid`): rounding and near-ties
cannot bring the upper value below the exact maximum. The work is ``pairs x
histograms`` per grid point of a pair's loss range; counts are enumerated while
:func:`enumeration_work` stays within ``MAX_ENUMERATION_WORK``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from pld.engine import BudgetError
from pld.shuffling.checkin.shuffled_laws import (
    Histograms,
    HockeyGrid,
    all_multisets,
    datasets,
    distinct_rows,
    groups,
    multisets,
    present_laws,
    subset_law,
)

#: Largest ``pairs x histograms`` of one count (:func:`enumeration_work`) that is
#: enumerated; about 0.5 s per count on the reference machine.
MAX_ENUMERATION_WORK = 400_000

#: Largest work of one count that an explicit ``exact_counts`` may ask for (~1 min).
MAX_REQUESTED_WORK = 100 * MAX_ENUMERATION_WORK

#: Largest number of floats that two levels of the dynamic programme (E3)-(E4) may
#: hold; beyond it the per-count maxima (E1)-(E2) are summed instead.
MAX_PATH_FLOATS = 2 * 10**7

#: Largest ``datasets x target pairs x counts`` for which every dataset of the others
#: is enumerated (E5)-(E6); beyond it the dynamic programme (E3)-(E4).
MAX_DATASET_PAIRS = 20_000

#: Counts are enumerated only while the smallest possible histogram mass stays above
#: ``e^SMALLEST_LOG_MASS`` (no float64 underflow).
SMALLEST_LOG_MASS = -600.0

#: Largest count ever enumerated.
MAX_EXACT_COUNT = 64


def enumeration_work(inputs: int, outputs: int, k: int, adjacency: str) -> int:
    """``pairs x histograms`` for count ``k``: multisets ``z``, target inputs, histograms."""
    multisets = math.comb(inputs + k - 1, k)
    histograms = math.comb(outputs + k - 1, k)
    pairs = inputs * (inputs - 1) if adjacency == "replace" else 2 * inputs
    return multisets * (pairs + inputs) * histograms


def exact_count_limit(
    matrix: np.ndarray, adjacency: str, n: int, requested: int | None = None
) -> int:
    """Largest count enumerated: within the work budget, or up to ``requested`` (0: none).

    Counts stop at ``n``, at ``MAX_EXACT_COUNT`` and where a mass could underflow.
    A ``requested`` count whose work exceeds ``MAX_REQUESTED_WORK`` is refused.
    """
    rows = distinct_rows(matrix)
    if rows.shape[0] < 2:
        return 0
    smallest = float(np.min(rows[rows > 0]))
    top = min(n, MAX_EXACT_COUNT)
    if requested is not None:
        top = min(top, requested)
        work = enumeration_work(rows.shape[0], rows.shape[1], top, adjacency) if top else 0
        if work > MAX_REQUESTED_WORK:
            raise BudgetError(
                f"exact_counts={requested} would enumerate ~{work:.2g} histogram pairs for one "
                f"count (limit {MAX_REQUESTED_WORK:.0e}); lower exact_counts or leave it None",
                estimate=work,
                budget=MAX_REQUESTED_WORK,
            )
    limit = 0
    for k in range(1, top + 1):
        too_much = enumeration_work(rows.shape[0], rows.shape[1], k, adjacency)
        if requested is None and too_much > MAX_ENUMERATION_WORK:
            break
        if k * math.log(smallest) < SMALLEST_LOG_MASS:
            break
        limit = k
    return limit


def replace_terms(
    matrix: np.ndarray, k: int, rate: float, eps: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(E1) at ``alpha = e^eps``: upper and lower values of the per-count term.

    Parameters
    ----------
    matrix : ndarray
        The randomizer's m x K row-stochastic matrix.
    k : int
        Count of reports, >= 1.
    rate : float
        ``g = k/n`` in (0, 1]; at ``g = 1`` the maximum is over ``y`` (module docstring).
    eps : ndarray
        Where to evaluate, nats, increasing.

    Returns
    -------
    upper, lower : ndarray
        The maximum of (E1) from above and from below (float rounding), in [0, 1].
    """
    rows = distinct_rows(matrix)
    grid = HockeyGrid(eps, k)
    best = grid.floor.copy()
    histograms = Histograms(rows.shape[1], k)
    if rate >= 1:
        views = (
            (0.0, [histograms.add(law, row, k - 1) for row in rows])
            for law in multisets(rows, histograms, k - 1).values()
        )
    else:
        views = (
            ((1 - rate) * whole, [rate * law for law in present])
            for whole, present in groups(rows, histograms, k)
        )
    for absent, present in views:
        for t, t_prime in itertools.permutations(range(rows.shape[0]), 2):
            np.maximum(best, grid.values(present[t] + absent, present[t_prime] + absent), out=best)
    return best[0], best[1]


def add_remove_terms(
    matrix: np.ndarray, k: int, rate: float, eps_a: np.ndarray, eps_b: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(E2): ``A_k`` at ``beta = e^eps_a`` and ``B_k`` at ``e^eps_b``, each as (upper, lower).

    ``rate`` is ``g = k/(n + 1)`` in (0, 1); the other arguments as in :func:`replace_terms`.
    """
    rows = distinct_rows(matrix)
    grid_a, grid_b = HockeyGrid(eps_a, k), HockeyGrid(eps_b, k)
    a, b = grid_a.floor.copy(), grid_b.floor.copy()
    histograms = Histograms(rows.shape[1], k)
    for whole, present in groups(rows, histograms, k):
        for law in present:
            mixed = rate * law + (1 - rate) * whole
            np.maximum(a, grid_a.values(mixed, whole), out=a)
            np.maximum(b, grid_b.values(whole, mixed), out=b)
    return (a[0], a[1]), (b[0], b[1])


def _longest_path(inputs: int, length: int, term: Callable[[tuple], np.ndarray]) -> np.ndarray:
    """``max`` over sequences ``w`` of ``length`` inputs of ``sum_k term(prefix_k(w))``.

    ``term(z)`` for a nondecreasing tuple ``z`` (a multiset, ``1 <= |z| <= length``)
    is an array; the maximum is elementwise, by dynamic programming from the longest
    prefixes down.
    """
    later: dict[tuple, np.ndarray] = {}
    for size in range(length, 0, -1):
        current = {}
        for z in itertools.combinations_with_replacement(range(inputs), size):
            value = term(z)
            if size < length:
                value = value + np.max([later[tuple(sorted((*z, v)))] for v in range(inputs)], 0)
            current[z] = value
        later = current
    return np.max(list(later.values()), axis=0)


def _fits_path(inputs: int, length: int, points: int) -> bool:
    """Whether two levels of the dynamic programme fit ``MAX_PATH_FLOATS``."""
    widest = max((math.comb(inputs + size - 1, size) for size in range(1, length + 1)), default=1)
    return 4 * widest * points <= MAX_PATH_FLOATS


def _fits_datasets(inputs: int, size: int, pairs: int, counts: int) -> bool:
    """Whether enumerating every dataset of ``size`` others fits ``MAX_DATASET_PAIRS``."""
    return math.comb(inputs + size - 1, size) * pairs * counts <= MAX_DATASET_PAIRS


def _replace_datasets(
    rows: np.ndarray, n: int, weights: dict[int, float], grid: HockeyGrid
) -> np.ndarray:
    """(E5): ``max_{t != t', x} sum_k weights[k] H(M_k(x, t) || M_k(x, t'))``, every dataset."""
    top = max(weights)
    histograms = Histograms(rows.shape[1], top)
    laws = all_multisets(rows, histograms, min(top, n - 1))
    best = np.zeros_like(grid.floor)
    for counts in datasets(rows.shape[0], n - 1):
        subsets = {size: subset_law(laws, counts, size) for size in range(min(top, n - 1) + 1)}
        for t, t_prime in itertools.permutations(range(rows.shape[0]), 2):
            total = np.zeros_like(grid.floor)
            for k, weight in weights.items():
                rate = k / n
                absent = (1 - rate) * subsets[k] if k < n else 0.0
                first = rate * histograms.add(subsets[k - 1], rows[t], k - 1) + absent
                second = rate * histograms.add(subsets[k - 1], rows[t_prime], k - 1) + absent
                total += weight * grid.values(first, second)
            np.maximum(best, total, out=best)
    return best


def _add_remove_datasets(
    rows: np.ndarray,
    n: int,
    weights_add: dict[int, float],
    weights: dict[int, float],
    grids_a: dict[int, HockeyGrid],
    grids_b: dict[int, HockeyGrid],
) -> tuple[np.ndarray, np.ndarray]:
    """(E6): both sums of (E4) per dataset of ``n`` others and target input, maximised."""
    top = max(weights)
    histograms = Histograms(rows.shape[1], top)
    laws = all_multisets(rows, histograms, top)
    forward = np.zeros_like(grids_a[top].floor)
    reverse = np.zeros_like(forward)
    for counts in datasets(rows.shape[0], n):
        subsets = {size: subset_law(laws, counts, size) for size in range(top + 1)}
        for t in range(rows.shape[0]):
            total_a = np.zeros_like(forward)
            total_b = np.zeros_like(forward)
            for k in weights:
                rate = k / (n + 1)
                whole = subsets[k]
                mixed = rate * histograms.add(subsets[k - 1], rows[t], k - 1) + (1 - rate) * whole
                total_a += weights_add[k] * grids_a[k].values(mixed, whole)
                total_b += weights[k] * grids_b[k].values(whole, mixed)
            np.maximum(forward, total_a, out=forward)
            np.maximum(reverse, total_b, out=reverse)
    return forward, reverse


def _target_pairs(rows: np.ndarray) -> list[tuple[int, int]]:
    """Ordered pairs of distinct inputs, one per class of relabellings.

    For a symmetric randomizer (square, two values, one of them once in every row
    and column: k-RR up to the order of its outputs) every pair maps to ``(0, 1)``
    by permuting inputs and outputs alike,
    which leaves the matrix, the others' datasets and the histograms' laws as they
    were: one pair is enough. Otherwise every ordered pair.
    """
    size = rows.shape[0]
    levels = np.unique(rows)
    if rows.shape[1] == size and levels.size == 2:
        marked = rows == levels[0]
        for single in (marked, ~marked):
            if np.all(single.sum(axis=0) == 1) and np.all(single.sum(axis=1) == 1):
                return [(0, 1)]
    return list(itertools.permutations(range(size), 2))


def replace_sum(
    matrix: np.ndarray, n: int, weights: dict[int, float], eps: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(E3) at ``alpha = e^eps``: ``max_{t != t', w} sum_k weights[k] h_k(t, t', prefix_k(w))``.

    Parameters
    ----------
    matrix : ndarray
        The randomizer's m x K row-stochastic matrix.
    n : int
        Number of users (the target and ``n - 1`` others), >= 1.
    weights : dict
        Weight of each enumerated count ``1..L`` (``L <= n``).
    eps : ndarray
        Where to evaluate, nats, increasing.

    Returns
    -------
    upper, lower : ndarray
        The maximum from above and from below (float rounding). When the dynamic
        programme would not fit ``MAX_PATH_FLOATS``: the sum of the per-count maxima (E1).
    """
    top = max(weights)
    rows = distinct_rows(matrix)
    inputs = rows.shape[0]
    length = min(top, n - 1)
    if _fits_datasets(inputs, n - 1, inputs * (inputs - 1), len(weights)):
        best = _replace_datasets(rows, n, weights, HockeyGrid(eps, top))
        return best[0], best[1]
    if not _fits_path(inputs, length, len(eps)):
        total = np.zeros((2, len(eps)))
        for k, weight in weights.items():
            total += weight * np.stack(replace_terms(matrix, k, k / n, eps))
        return total[0], total[1]
    grid = HockeyGrid(eps, top)
    histograms = Histograms(rows.shape[1], top)
    laws = all_multisets(rows, histograms, length)

    def full(t: int, t_prime: int, y: tuple) -> np.ndarray:
        """Count ``n``: every user reports, ``H(S(t; y) || S(t'; y))``."""
        law = laws[y]
        first = histograms.add(law, rows[t], n - 1)
        return weights[n] * grid.values(first, histograms.add(law, rows[t_prime], n - 1))

    presents: dict[tuple, list[np.ndarray]] = {}

    def term(z: tuple, t: int, t_prime: int) -> np.ndarray:
        k = len(z)
        rate = k / n
        if z not in presents:
            presents[z] = present_laws(rows, histograms, laws, z)
        present = presents[z]
        absent = (1 - rate) * laws[z]
        value = np.zeros((2, len(eps)))
        if k in weights:  # else a count below the bulk (charged elsewhere)
            value = weights[k] * grid.values(
                rate * present[t] + absent, rate * present[t_prime] + absent
            )
        if k == length and top == n:
            value = value + full(t, t_prime, z)
        return value

    best = np.zeros((2, len(eps)))
    for t, t_prime in _target_pairs(rows):
        if length == 0:
            value = full(t, t_prime, ())
        else:
            value = _longest_path(inputs, length, lambda z, t=t, u=t_prime: term(z, t, u))
        np.maximum(best, value, out=best)
    return best[0], best[1]


def add_remove_sums(
    matrix: np.ndarray,
    n: int,
    weights_add: dict[int, float],
    weights: dict[int, float],
    log_r: dict[int, float],
    eps: np.ndarray,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(E4): ``max_{t, w} sum_k pi'(k) A_k(alpha r_k)`` and ``... pi(k) B_k(alpha / r_k)``.

    ``n`` others; ``weights_add`` and ``weights``: pi'(k) and pi(k) of the enumerated
    counts ``1..L`` (``L <= n``); ``log_r``: ``log r_k``. Returns both sums as (upper,
    lower); the sums of the per-count maxima (E2) when the programme would not fit.
    """
    top = max(weights)
    rows = distinct_rows(matrix)
    inputs = rows.shape[0]
    size = n + 1
    if not _fits_path(inputs, top, len(eps)):
        forward = np.zeros((2, len(eps)))
        reverse = np.zeros((2, len(eps)))
        for k in weights:
            a, b = add_remove_terms(matrix, k, k / size, eps + log_r[k], eps - log_r[k])
            forward += weights_add[k] * np.stack(a)
            reverse += weights[k] * np.stack(b)
        return (forward[0], forward[1]), (reverse[0], reverse[1])
    grids_a = {k: HockeyGrid(eps + log_r[k], top) for k in weights}
    grids_b = {k: HockeyGrid(eps - log_r[k], top) for k in weights}
    if _fits_datasets(inputs, n, 2 * inputs, len(weights)):
        forward, reverse = _add_remove_datasets(rows, n, weights_add, weights, grids_a, grids_b)
        return (forward[0], forward[1]), (reverse[0], reverse[1])
    histograms = Histograms(rows.shape[1], top)
    laws = all_multisets(rows, histograms, top)

    def term(z: tuple, t: int, direction: int) -> np.ndarray:
        k = len(z)
        if k not in weights:  # a count below the bulk (charged elsewhere)
            return np.zeros((2, len(eps)))
        rate = k / size
        whole = laws[z]
        mixed = rate * present_laws(rows, histograms, laws, z)[t] + (1 - rate) * whole
        if direction == 0:
            return weights_add[k] * grids_a[k].values(mixed, whole)
        return weights[k] * grids_b[k].values(whole, mixed)

    forward = np.zeros((2, len(eps)))
    reverse = np.zeros((2, len(eps)))
    for t in range(inputs):
        np.maximum(forward, _longest_path(inputs, top, lambda z, t=t: term(z, t, 0)), out=forward)
        np.maximum(reverse, _longest_path(inputs, top, lambda z, t=t: term(z, t, 1)), out=reverse)
    return (forward[0], forward[1]), (reverse[0], reverse[1])


class ExactCounts:
    """The sums (E3)-(E4) of a finite randomizer over its enumerated counts ``1..limit``.

    Parameters
    ----------
    matrix : ndarray
        The randomizer's m x K row-stochastic matrix.
    limit : int
        Largest count enumerated (:func:`exact_count_limit`), >= 1.
    eps0 : float
        The randomizer's local epsilon, nats: no term has a kink beyond it.
    """

    def __init__(self, matrix: np.ndarray, limit: int, eps0: float) -> None:
        self.matrix = distinct_rows(matrix)
        self.limit = limit
        self.eps0 = eps0
        rows = self.matrix
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = (rows[:, None, :] - rows[None, :, :]) ** 2 / rows[None, :, :]
        self._chi_square = float(np.max(np.nansum(np.where(np.isfinite(terms), terms, 0), -1)))
        self._blanket = float(rows.min(axis=0).sum())

    def reach(self, rate: float) -> float:
        """Largest |loss| of the pairs of (E1)-(E6) at subsampling rate ``rate`` (nats).

        With ``A <= e^eps0 C`` and ``B >= e^-eps0 C`` for the target-present parts
        ``A, B`` and the target-absent part ``C`` (each report is eps0-LDP), ``(g A +
        (1-g) C) / (g B + (1-g) C) <= (1 + g (e^eps0 - 1)) / (1 - g (1 - e^-eps0))``,
        and never above ``e^eps0``. 0 for an infinite eps0 (the grid's end then holds
        the rest of the profile).
        """
        if not math.isfinite(self.eps0):
            return 0.0
        rate = min(rate, 1.0)
        mixed = math.log1p(rate * math.expm1(self.eps0)) - math.log1p(
            -rate * -math.expm1(-self.eps0)
        )
        return min(self.eps0, mixed)

    def chi_square(self, k: int) -> float:
        """Rough chi-square divergence of ``k`` shuffled reports, for choosing a loss grid.

        One report's largest chi-square between two inputs, divided by the expected
        number ``1 + (k - 1) gamma`` of reports that may hide it (gamma: blanket mass).
        """
        return self._chi_square / (1 + (k - 1) * self._blanket)

    def covers(self, low: int, high: int) -> bool:
        """Whether the block ``[low, high]`` is one enumerated count."""
        return low == high <= self.limit

    def replace(
        self, n: int, weights: dict[int, float], eps: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(E3) of the enumerated counts: :func:`replace_sum`."""
        return replace_sum(self.matrix, n, weights, eps)

    def add_remove(
        self,
        n: int,
        weights_add: dict[int, float],
        weights: dict[int, float],
        log_r: dict[int, float],
        eps: np.ndarray,
    ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """(E4) of the enumerated counts: :func:`add_remove_sums`."""
        return add_remove_sums(self.matrix, n, weights_add, weights, log_r, eps)
