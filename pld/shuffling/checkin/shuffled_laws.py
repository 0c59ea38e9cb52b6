"""Exact laws of a few shuffled reports of a finite randomizer, and their hockey-stick values.

The building blocks of :mod:`pld.shuffling.checkin.exact`: histograms of ``k``
reports and where one more report takes them, the laws of the shuffled reports of
every multiset of inputs (and of uniform subsets of a dataset), and
``H_alpha(P || Q)`` of two such laws on a grid of ``log alpha``, raised and lowered
by a float margin so that the upper value is never below the exact one.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from pld.numerics import UNIT_ROUNDOFF

#: Relative rounding per report of a histogram mass and of its hockey-stick sum:
#: 64 units of float64 roundoff, far above the few roundings each mass sees.
ROUNDING = 64 * UNIT_ROUNDOFF

#: Absolute error allowed for a computed loss ``log(P/Q)`` of a histogram (nats): the
#: masses carry ``<= (2k + 1)`` roundings and the logarithm one more, ~1e-14 at most.
LOSS_TOLERANCE = 1e-12


def distinct_rows(matrix: np.ndarray) -> np.ndarray:
    """The distinct rows of a row-stochastic matrix (inputs with equal laws are one input)."""
    return np.unique(np.asarray(matrix, dtype=np.float64), axis=0)


class Histograms:
    """Histograms of ``j`` reports over the outputs, and where one more report takes them."""

    def __init__(self, outputs: int, top: int) -> None:
        levels = [np.zeros((1, outputs), dtype=np.int64)]
        successors = []
        for _ in range(top):
            current = levels[-1]
            grown: dict[tuple[int, ...], int] = {}
            table = np.empty((current.shape[0], outputs), dtype=np.int64)
            for row, histogram in enumerate(current):
                for y in range(outputs):
                    bumped = list(histogram)
                    bumped[y] += 1
                    key = tuple(bumped)
                    table[row, y] = grown.setdefault(key, len(grown))
            successors.append(table)
            levels.append(np.array(list(grown), dtype=np.int64))
        self.sizes = [level.shape[0] for level in levels]
        self.successors = successors

    def add(self, law: np.ndarray, row: np.ndarray, level: int) -> np.ndarray:
        """Law of the histogram after one more report drawn from ``row``."""
        weights = (law[:, None] * row[None, :]).ravel()
        table = self.successors[level].ravel()
        return np.bincount(table, weights=weights, minlength=self.sizes[level + 1])


def multisets(rows: np.ndarray, histograms: Histograms, size: int) -> dict[tuple, np.ndarray]:
    """Law of the histogram of every multiset of ``size`` inputs (keys: nondecreasing tuples)."""
    laws = {(): np.ones(1)}
    for combo in itertools.combinations_with_replacement(range(rows.shape[0]), size):
        for depth in range(1, size + 1):
            prefix = combo[:depth]
            if prefix not in laws:
                laws[prefix] = histograms.add(laws[prefix[:-1]], rows[prefix[-1]], depth - 1)
    return {key: law for key, law in laws.items() if len(key) == size}


def groups(rows: np.ndarray, histograms: Histograms, k: int):
    """Per multiset ``z`` of ``k`` inputs: ``Sh(z)`` and ``avg_{j in z} S(t; z - j)`` for each t.

    ``Sh(z)`` is the law of the histogram of the ``k`` reports of ``z``; the average
    is over the ``k`` members ``j`` of ``z`` (with multiplicity).
    """
    smaller = multisets(rows, histograms, k - 1)
    for z in itertools.combinations_with_replacement(range(rows.shape[0]), k):
        whole = histograms.add(smaller[z[:-1]], rows[z[-1]], k - 1)
        rest = np.zeros(histograms.sizes[k - 1])
        for j in set(z):
            position = z.index(j)
            rest += z.count(j) / k * smaller[z[:position] + z[position + 1 :]]
        yield whole, [histograms.add(rest, row, k - 1) for row in rows]


class HockeyGrid:
    """``H_alpha(P || Q)`` of one pair of laws on a sorted grid of ``log alpha``, from both sides.

    Each value is raised (upper) or lowered (lower) by ``margin (P + alpha Q)``
    summed over the outputs counted, and the outputs counted are those whose
    computed loss exceeds ``log alpha - LOSS_TOLERANCE`` (upper) or ``log alpha +
    LOSS_TOLERANCE`` (lower): the computed losses are within it of the true ones,
    and a wrongly counted output moves the sum by at most ``(e^tol - 1) alpha Q``,
    inside the margin. Below a pair's smallest loss its value is ``1 - alpha``
    exactly and above its largest 0, so only the window between is evaluated;
    below it the value is ``floor``: ``(1 - alpha)_+`` raised and lowered by the margin.
    """

    def __init__(self, log_alpha: np.ndarray, k: int) -> None:
        self.log_alpha = np.asarray(log_alpha, dtype=np.float64)
        self.alpha = np.exp(self.log_alpha)
        self.margin = ROUNDING * (k + 2) + 2 * LOSS_TOLERANCE
        spread = self.margin * (1 + self.alpha)
        self.floor = np.stack(
            (np.clip(1 - self.alpha + spread, 0.0, 1.0), np.clip(1 - self.alpha - spread, 0.0, 1.0))
        )

    def values(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Upper and lower ``H_alpha(first || second)`` (laws on the same histograms), (2, grid)."""
        used = first > 0
        first, second = first[used], second[used]
        with np.errstate(divide="ignore"):
            loss = np.log(first / second)
        order = np.argsort(-loss, kind="stable")
        descending = -loss[order]
        cum_first = np.concatenate(([0.0], np.cumsum(first[order])))
        cum_second = np.concatenate(([0.0], np.cumsum(second[order])))
        start = np.searchsorted(self.log_alpha, -descending[-1] - LOSS_TOLERANCE, side="left")
        stop = np.searchsorted(self.log_alpha, -descending[0] + LOSS_TOLERANCE, side="left")
        out = np.zeros_like(self.floor)
        out[:, :start] = self.floor[:, :start]
        window = slice(start, stop)
        log_alpha, alpha = self.log_alpha[window], self.alpha[window]
        for side, sign in ((0, 1), (1, -1)):
            shifted = log_alpha - sign * LOSS_TOLERANCE
            count = np.searchsorted(descending, -shifted, side="left")
            top = cum_first[count]
            bottom = alpha * cum_second[count]
            out[side, window] = np.clip(top - bottom + sign * self.margin * (top + bottom), 0, 1)
        return out


def present_laws(
    rows: np.ndarray, histograms: Histograms, laws: dict, z: tuple
) -> list[np.ndarray]:
    """``avg_{j in z} S(t; z - j)`` for each input t: the target and ``|z| - 1`` of ``z``."""
    k = len(z)
    rest = np.zeros(histograms.sizes[k - 1])
    for j in set(z):
        position = z.index(j)
        rest += z.count(j) / k * laws[z[:position] + z[position + 1 :]]
    return [histograms.add(rest, row, k - 1) for row in rows]


def all_multisets(rows: np.ndarray, histograms: Histograms, top: int) -> dict:
    """Laws of the histograms of every multiset of at most ``top`` inputs."""
    laws: dict[tuple, np.ndarray] = {}
    for size in range(top + 1):
        laws.update(multisets(rows, histograms, size))
    return laws


def subset_law(laws: dict, counts: tuple, size: int) -> np.ndarray:
    """Law of the histogram of a uniform ``size``-subset of the dataset with value ``counts``.

    Multivariate hypergeometric weights over the sub-multisets ``z`` of the dataset.
    """
    total = math.comb(sum(counts), size)
    law = None
    for key in itertools.combinations_with_replacement(range(len(counts)), size):
        z = [key.count(v) for v in range(len(counts))]
        if any(zi > c for zi, c in zip(z, counts, strict=True)):
            continue
        weight = math.prod(math.comb(c, zi) for c, zi in zip(counts, z, strict=True)) / total
        law = weight * laws[key] if law is None else law + weight * laws[key]
    return law


def datasets(inputs: int, size: int):
    """Every dataset of ``size`` others, as counts per input."""
    for combo in itertools.combinations_with_replacement(range(inputs), size):
        yield tuple(combo.count(v) for v in range(inputs))
