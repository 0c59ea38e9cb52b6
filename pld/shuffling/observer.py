"""The protocol's own lower bound: the exact PLD of one concrete pair of neighbouring datasets.

:func:`shuffle_observer` asks the randomizer for its observer
(:meth:`pld.randomizers.Randomizer.observer`): one concrete neighbouring pair seen through
a post-processing of the shuffled reports, so its divergence is at most the protocol's.
This module holds the observers' kernels:

* finite randomizers (:func:`observer_pmfs`): every other user holds one fixed value (x',
  or a third input), the target x or x' (the candidate with the largest one-round lower
  curve is kept; with a third input z, a second grouping sets aside the reports more
  likely under z than under x or x',
  :meth:`pld.randomizers.FiniteRandomizer.observer_groups`). The outputs are grouped by
  the sign of ``log R(x)(y) / R(x')(y)`` (a post-processing: lossless when the ratio takes
  only the values c, 1/c and 1, as for all presets) and the histogram of the groups is
  enumerated exactly (binomial windows for large n, the dropped mass charged only to the
  upper side);
* the Laplace randomizer (:func:`laplace_count_pmfs`): the number of reports above a
  threshold;
* the Gaussian randomizer: the sum of all reports, the Gaussian mechanism with noise
  ``sigma sqrt(n)`` (``GaussianRandomizer.observer``).

Only the LOWER bracket of an observer, composed, is a statement about the protocol: it
lower-bounds the protocol's own delta.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pld import validation
from pld.distribution import PLD, from_pmfs, refinable
from pld.engine import check_grid_points
from pld.numerics import binomial as binom
from pld.randomizers import Randomizer, check_randomizer

#: Tail mass per side of each binomial window of :func:`observer_pmfs`.
OBSERVER_TAIL = 1e-14

#: eps values (nats) at which candidate dataset pairs of a finite observer are compared.
OBSERVER_SCORE_EPS = np.linspace(0.0, 2.0, 41)

#: Largest number of histogram cells :func:`observer_pmfs` enumerates in 2-d;
#: beyond it the "below 1" group is merged into the rest (a post-processing).
OBSERVER_MAX_ATOMS = 20_000_000


def _log_multinomial(total: int, a: np.ndarray, b: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Log multinomial masses of the counts (a_i, b_j, total - a_i - b_j), row-major in (i, j).

    As Bin(total, pi_0)(a) Bin(total - a, pi_1 / (1 - pi_0))(b), both by Loader's pmf
    (:mod:`pld.numerics.binomial_pmf`): a few ulps of the log whatever ``total``
    (differences of log-factorials lose ulps of log total!, 2e-7 at total = 10^8).
    Counts off the support get -inf.
    """
    from pld.numerics.binomial_pmf import log_pmfs

    first = log_pmfs(a.astype(np.float64), np.full(a.size, float(total)), np.full(a.size, pi[0]))
    conditional = min(1.0, pi[1] / (1.0 - pi[0])) if pi[0] < 1.0 else 0.0
    rows = np.repeat(a, b.size)
    second = log_pmfs(
        np.tile(b, a.size).astype(np.float64),
        (total - rows).astype(np.float64),
        np.full(rows.size, conditional),
    )
    return np.repeat(first, b.size) + second


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
    """The binomial window of ``OBSERVER_TAIL`` per side, widened by one count each way."""
    if prob <= 0:
        return 0, min(1, trials)
    lo, hi = binom.window(OBSERVER_TAIL, trials, prob)
    return max(0, int(lo) - 1), min(trials, int(hi) + 1)


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
    check_grid_points(
        float(a_hi - a_lo + 1) * (b_hi - b_lo + 1),
        f"shuffle_observer(n={n}): {a_hi - a_lo + 1} x {b_hi - b_lo + 1} histogram cells",
        "use fewer users (the observer bounds these n from below only)",
    )
    with np.errstate(divide="ignore"):
        log_x, log_y = np.log(pi_x), np.log(pi_y)
    a, b = np.arange(a_lo, a_hi + 1), np.arange(b_lo, b_hi + 1)
    shifts = ((1, 0), (0, 1), (0, 0))
    others = [_log_multinomial(n - 1, a - s, b - t, pi_others) for s, t in shifts]
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


def finite_observer(
    groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n: int, loss_grid_step: float | None
) -> PLD:
    """The observer PLD of a finite randomizer: the best of its candidate dataset pairs.

    Parameters
    ----------
    groups : list of (pi_x, pi_x', pi_others)
        Candidate pairs as group probabilities
        (:meth:`pld.randomizers.FiniteRandomizer.observer_groups`).
    n : int
        Number of users, >= 1 (the histogram's windows grow like sqrt(n); beyond
        ``OBSERVER_MAX_ATOMS`` cells a group is merged, so the work stays near
        ``sqrt(n)``: 10^8 users in about a second).
    loss_grid_step : float, optional
        Loss grid spacing in nats.
    """
    best, score = None, -1.0
    for pi_x, pi_y, pi_others in groups:
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


def laplace_count_pmfs(scale: float, sensitivity: float, n: int) -> tuple[np.ndarray, ...]:
    """(log P, log Q, dropped mass) of the number of reports above a threshold.

    One user at ``high`` (P) or ``low`` (Q), everybody else at ``low``, Laplace noise of
    scale ``b``: the count above ``t`` is ``Bin(n - 1, p_low) + Bernoulli(p_x)``,
    ``p_x = P(x + noise > t)``, with ``t`` maximising
    ``(p_high - p_low) / sqrt(p_low (1 - p_low))``; exact binomial pmfs, the mass beyond
    40 standard deviations returned to be charged.
    """
    b, delta = scale, sensitivity

    def survival(s: np.ndarray) -> np.ndarray:
        return np.where(s >= 0, 0.5 * np.exp(-np.abs(s) / b), 1 - 0.5 * np.exp(-np.abs(s) / b))

    taus = np.linspace(-4 * b, delta + 4 * b, 801)
    p_low, p_high = survival(taus), survival(taus - delta)
    snr = (p_high - p_low) / np.sqrt(p_low * (1 - p_low))
    tau = float(taus[int(np.argmax(snr))])
    p_low, p_high = float(survival(np.array(tau))), float(survival(np.array(tau - delta)))
    mean, sd = (n - 1) * p_low, math.sqrt(max((n - 1) * p_low * (1 - p_low), 1.0))
    first = max(0, math.floor(mean - 40 * sd))
    last = min(n, math.ceil(mean + 40 * sd) + 1)
    counts = np.arange(first, last + 1)
    base = binom.logpmf(counts, n - 1, p_low)
    shifted = binom.logpmf(counts - 1, n - 1, p_low)
    log_p = np.logaddexp(math.log1p(-p_high) + base, math.log(p_high) + shifted)
    log_q = np.logaddexp(math.log1p(-p_low) + base, math.log(p_low) + shifted)
    outside = float(binom.cdf(first - 2, n - 1, p_low) + binom.sf(last, n - 1, p_low))
    return log_p, log_q, outside


@refinable
def shuffle_observer(
    randomizer: Randomizer | Sequence[tuple[Randomizer, int]],
    n: int | None = None,
    loss_grid_step: float | None = None,
) -> PLD:
    """The exact PLD of one concrete neighbouring pair: a lower bound on the protocol.

    The randomizer's observer (:meth:`pld.randomizers.Randomizer.observer`, module
    docstring): for a finite randomizer every other user holds one fixed value (x' or a
    third input, whichever gives the larger one-round curve), the target x (P) or x'
    (Q), and the view is the histogram of the reports grouped by the sign of
    ``log R(x)(y) / R(x')(y)``. Only its LOWER bracket is a statement about the
    protocol: composed T times, ``delta_lower`` is at most the protocol's own T-round
    delta.

    For a population ``shuffle_observer([(randomizer_1, n_1), ...])``: one concrete pair
    of it seen through counts (:func:`pld.shuffling.population.population_observer`).

    Parameters
    ----------
    randomizer : Randomizer or list of (Randomizer, int)
        The local randomizer, or the groups of a population (then ``n`` is omitted).
    n : int
        Number of users, in [1, 2**40].
    loss_grid_step : float, optional
        Loss grid spacing in nats (default: the engine's rule).
    """
    if isinstance(randomizer, list | tuple):
        from pld.shuffling.population import check_population, population_observer

        if n is not None:
            raise ValueError("n must not be given with a list of groups")
        population = check_population(randomizer)
        if len(population.randomizers) > 1:
            return population_observer(population, loss_grid_step)
        randomizer, n = population.randomizers[0], population.size
    randomizer = check_randomizer(randomizer)
    if n is None:
        raise ValueError("n (the number of users, >= 1) must be given with one randomizer")
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    return randomizer.observer(n, loss_grid_step)
