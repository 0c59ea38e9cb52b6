"""Shuffled k-ary randomised response against the strong and the weak adversary.

Each of n users holds x_i in [k] and reports it truthfully with probability 1 - gamma
(blanket bit beta_i = 0) or a uniform value of [k] with probability gamma
(beta_i = 1); a shuffler releases the reports in random order, i.e. their histogram
(Balle et al. 2019; Koskela et al. 2023, §4). The neighbouring datasets differ
in the last user, x_n = 1 under X and x_n = 2 under X'. The adversary knows
x_1..x_{n-1} and

* ``"strong"`` (Koskela et al. 2023, Def. 12): every blanket bit beta_1..beta_n;
* ``"weak"`` (Koskela et al. 2023, Def. 14): the blanket bits of the first n - 1 users only.

Removing the known truthful reports leaves, besides b = #blanket members among the
first n - 1 users, counts h1 and h2 of the values 1 and 2. Both views reduce to one
family of pairs on h1 in {0..s} (derived below, checked by brute force in
tests/shuffling/test_krr.py against tests/oracles/krr_views.py):

    F(s, c):  P(h1) = Bin(s, 1/2)(h1) (h1 + c) / (s/2 + c),
              Q(h1) = Bin(s, 1/2)(h1) (s - h1 + c) / (s/2 + c),
              privacy loss log((h1 + c) / (s - h1 + c)).

The adversary also observes s = h1 + h2, whose law is the same under X and X', so
the view is a disjoint union ("component") of pairs F(s, c) with common weights:

* strong: with probability gamma the target itself answered randomly and the two
  views coincide (loss 0). Otherwise its report is 1 (X) or 2 (X'), the random
  reports of the others falling in {1, 2} number S ~ Bin(n - 1, 2 gamma / k), split
  evenly between 1 and 2 given S, so the component is F(S + 1, 0): P = 1 + Bin(S, 1/2),
  Q = Bin(S, 1/2) and the loss is log(N1 / N2) (Balle et al. 2019, Thm 3.1; Koskela et al. 2023,
  eq. 4.2). N1 and N2 come from one multinomial draw: eq. 4.3 / C.7, which makes them
  independent, is not the law of the view (read that way, P(N1/N2 >= e^eps) falls
  below the tight delta, see :func:`krr_tail_delta`).
* weak: the law of the view (b, h1, h2) under X is (Koskela et al. 2023, eq. C.2)

      Bin(n - 1, gamma)(b) · Mult(b + 1; 1/k, 1/k, 1 - 2/k)(h1, h2)
                           · [k h1 (1 - gamma) / (b + 1) + gamma]

  and under X' the same with h2 in the bracket (re-derived: the residual histogram is
  b uniform reports plus the target's, and Mult(b)(h - e_i) = Mult(b + 1)(h) k h_i / (b + 1)).
  Writing m = b + 1, a = k (1 - gamma) and c = gamma m / a, and splitting the
  trinomial as Bin(m, 2/k)(s) · Bin(s, 1/2)(h1), the component (b, s) is F(s, c)
  with weight Bin(n - 1, gamma)(b) [(1 - gamma) Bin(b, 2/k)(s - 1) + gamma Bin(m, 2/k)(s)].
  Its privacy loss is bounded by eps0 = log(((1 - gamma) k + gamma) / gamma).

Koskela et al. (2023), Thms 13 and 16, write delta(eps) = P(sum_i Z_i >= eps), a tail
probability of the loss. That is an upper bound on the tight hockey-stick value; :func:`krr` returns
the PLD whose delta is the hockey stick, and :func:`krr_tail_delta` the tail form,
for comparison only.

Large n. The components are truncated to binomial windows, the dropped mass being
charged to the upper bound, and each component's atoms are summed per loss-grid cell
before they reach :func:`pld.from_pmfs` (docs/architecture.md, "Merged atoms"). When
the atoms exceed the budget ``max_atoms`` the components are grouped into blocks, using
two facts about F: F(s + 1, lambda) is F(s, lambda) post-processed by adding a fair
coin to h1, and F(s, lambda') for lambda' < lambda is F(s, lambda) post-processed by
replacing the output, with probability 1 - lambda'/lambda, by a fresh Bin(s, 1/2) draw,
where lambda = (s/2) / (s/2 + c) (so P = lambda (1 + Bin(s - 1, 1/2)) +
(1 - lambda) Bin(s, 1/2)). Hence F(s1, c1) dominates F(s2, c2) whenever s1 <= s2
and c1/s1 <= c2/s2. A block is replaced by (min s, min c/s) for the upper bound and
by (max s, max c/s) for the lower bound; since the component is observed, the
hockey stick of the view is the weighted mean of the components' hockey sticks, and
the replacement dominates (resp. is dominated by) the true pair in every composition.

Float accuracy. Every run of binomial masses starts from scipy's ``binom.pmf`` at the
mode (accurate to ~1e-15; its ``logpmf``, like sums of ``lgamma``, loses 1e-9 at
n = 10^6) and proceeds by ratio recurrences; the resulting relative error of each
merged mass (anchors, three roundings per step, one per summed term) is passed to
:func:`pld.from_pmfs` as ``mass_relative_error`` (about 1e-11 at n = 10^6).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import gammaln, xlogy

from pld import validation
from pld.distribution import PLD, from_bounds, from_pmfs, from_symmetric_pair, refinable
from pld.engine import DEFAULT_LOSS_GRID_STEP, SNAP_RELATIVE, BudgetError
from pld.numerics import UNIT_ROUNDOFF
from pld.numerics import binomial as binom
from pld.shuffling.krr.cells import (
    _cell_of,
    _Cells,
    _merge,
    _merge_on_default_grid,
    _pld_from_cells,
)
from pld.shuffling.krr.components import (
    _ANCHOR_RELATIVE_ERROR,
    _anchors,
    _binomial_run,
    _components,
)

ADVERSARIES = ("strong", "weak")

#: Default probability mass (same under P and Q) that truncation may drop; it is
#: charged to the upper bound at the largest loss.
KRR_TAIL_MASS = 1e-12

#: Default budget of atoms (outcomes h1 summed over the components) enumerated
#: by :func:`krr`, 10-20 ns each on the reference machine; beyond it the
#: components are grouped into blocks (module docstring).
KRR_MAX_ATOMS = 30_000_000

#: Largest number of outcomes that :func:`krr_view_pmfs` enumerates.
MAX_EXACT_OUTCOMES = 5_000_000

#: Largest number of atoms that :func:`krr_tail_delta` enumerates (it never blocks).
MAX_TAIL_ATOMS = 200_000_000

_TAIL_MASS_RANGE = (1e-100, 1e-3)


# -- validation ----------------------------------------------------------------


#: Largest n accepted: the work of the blocked weak-adversary rows and of the binomial
#: quantiles grows slowly with n but reaches about 9 s at 1e9 (72 s at 2^40) on the
#: 2-core machine, past the time a call may take without a knob.
MAX_USERS = 10**9


def _check(n: object, k: object, gamma: object, adversary: object) -> tuple[int, int, float, str]:
    n = validation.integer_at_least("n", n, 1, MAX_USERS)
    k = validation.integer_at_least("k", k, 2)
    gamma = validation.in_interval("gamma", gamma, 0.0, 1.0, low_open=True)
    adversary = validation.one_of("adversary", adversary, ADVERSARIES)
    return n, k, gamma, adversary


def _check_tail_mass(tail_mass: object) -> float:
    return validation.in_interval("tail_mass", tail_mass, *_TAIL_MASS_RANGE)


def ldp_epsilon(k: int, gamma: float) -> float:
    """Local privacy parameter of k-RR: eps0 = log(((1 - gamma) k + gamma) / gamma), nats.

    Koskela et al. (2023), caption of Fig. 4. It bounds the weak adversary's privacy loss.
    """
    k = validation.integer_at_least("k", k, 2)
    gamma = validation.in_interval("gamma", gamma, 0.0, 1.0, low_open=True)
    return math.log1p((1.0 - gamma) * k / gamma)


# -- exact pmfs (small n) ----------------------------------------------------------


def _log_trinomial(m: np.ndarray, x1: np.ndarray, x2: np.ndarray, prob: float) -> np.ndarray:
    """log Mult(m; prob, prob, 1 - 2 prob)(x1, x2); -inf outside the support."""
    valid = (x1 >= 0) & (x2 >= 0) & (x1 + x2 <= m)
    x1c, x2c = np.where(valid, x1, 0), np.where(valid, x2, 0)
    rest = m - x1c - x2c
    with np.errstate(divide="ignore"):
        value = (
            gammaln(m + 1.0)
            - gammaln(x1c + 1.0)
            - gammaln(x2c + 1.0)
            - gammaln(rest + 1.0)
            + xlogy(x1c + x2c, prob)
            + xlogy(rest, 1.0 - 2.0 * prob)
        )
    return np.where(valid, value, -np.inf)


def krr_view_pmfs(
    n: int, k: int, gamma: float, adversary: str = "strong"
) -> tuple[np.ndarray, np.ndarray]:
    """Exact pmf pair (log P, log Q) of a sufficient statistic of the adversary's view.

    No truncation; for small n (the number of outcomes grows like n^2 for the strong
    adversary and n^3 for the weak one, and is limited to ``MAX_EXACT_OUTCOMES``).
    The log-masses come from ``gammaln`` sums, accurate to about 1e-12 for n <= 300.

    Parameters
    ----------
    n : int
        Number of users, >= 1.
    k : int
        Domain size, >= 2.
    gamma : float
        Probability that a user answers uniformly at random, in (0, 1].
    adversary : {"strong", "weak"}
        The adversary of Koskela et al. (2023), Def. 12 or Def. 14.

    Returns
    -------
    log_p, log_q : ndarray
        Natural logs of the probabilities under X (x_n = 1) and X' (x_n = 2), in
        this order of outcomes:

        * strong: outcome 0 is "the target answered randomly" (probability gamma
          under both); then, for s = 1..n and h1 = 0..s, the target answered
          truthfully and the counts of 1 and 2 left after removing the known
          truthful reports are (h1, s - h1): log P = log(1 - gamma) +
          log Mult(n - 1; gamma/k, gamma/k)(h1 - 1, s - h1) (Balle et al. 2019,
          Thm 3.1; the two counts from one multinomial draw) and log Q the same at
          (h1, s - h1 - 1). The blanket size b is summed out: the likelihood ratio
          h1 / h2 does not depend on it.
        * weak: for b = 0..n-1, s = 0..b+1 and h1 = 0..s, the outcome (b, h1, s - h1),
          with the law of Koskela et al. (2023), eq. C.2 / C.3 (module docstring).

        Views merged into one outcome share one likelihood ratio, so the pair has
        the privacy-loss distribution of the full view.
    """
    n, k, gamma, adversary = _check(n, k, gamma, adversary)
    if adversary == "strong":
        count = 1 + (n * (n + 3)) // 2
    else:
        count = sum((m + 1) * (m + 2) // 2 for m in range(1, n + 1))
    if count > MAX_EXACT_OUTCOMES:
        raise BudgetError(
            f"n = {n} gives {count} outcomes, more than the exact limit {MAX_EXACT_OUTCOMES}; "
            "use pld.krr, which truncates and merges them",
            estimate=count,
            budget=MAX_EXACT_OUTCOMES,
        )
    if adversary == "strong":
        size = np.repeat(np.arange(1, n + 1), np.arange(2, n + 2))
        h1 = np.concatenate([np.arange(s + 1) for s in range(1, n + 1)])
        h2 = size - h1
        with np.errstate(divide="ignore"):
            log_truthful = math.log1p(-gamma) if gamma < 1 else -math.inf
        log_p = log_truthful + _log_trinomial(n - 1, h1 - 1, h2, gamma / k)
        log_q = log_truthful + _log_trinomial(n - 1, h1, h2 - 1, gamma / k)
        log_gamma = math.log(gamma)
        return np.concatenate(([log_gamma], log_p)), np.concatenate(([log_gamma], log_q))
    blanket, h1, h2 = [], [], []
    for b in range(n):
        for s in range(b + 2):
            blanket.append(np.full(s + 1, b))
            h1.append(np.arange(s + 1))
            h2.append(s - np.arange(s + 1))
    b_arr, h1_arr, h2_arr = np.concatenate(blanket), np.concatenate(h1), np.concatenate(h2)
    m = b_arr + 1
    log_common = binom.logpmf(b_arr, n - 1, gamma) + _log_trinomial(m, h1_arr, h2_arr, 1.0 / k)
    spread = k * (1.0 - gamma) / m
    with np.errstate(divide="ignore"):
        log_p = log_common + np.log(spread * h1_arr + gamma)
        log_q = log_common + np.log(spread * h2_arr + gamma)
    return log_p, log_q


# -- public API ----------------------------------------------------------------------


@refinable
def krr(
    n: int,
    k: int,
    gamma: float,
    adversary: str = "strong",
    *,
    tail_mass: float = KRR_TAIL_MASS,
    loss_grid_step: float | None = None,
    max_atoms: int = KRR_MAX_ATOMS,
) -> PLD:
    """One round of shuffled k-ary randomised response, as a PLD (Koskela et al. 2023, §4).

    The pair is symmetric (swapping the values 1 and 2 exchanges P and Q), so one
    direction is computed. delta(eps) is the tight hockey-stick divergence of the
    adversary's view (not the tail form of Koskela et al. (2023), Thm 13 / 16; see
    :func:`krr_tail_delta`).

    Parameters
    ----------
    n : int
        Number of users, >= 1 (the target included).
    k : int
        Domain size, >= 2.
    gamma : float
        Probability that a user answers uniformly at random, in (0, 1].
    adversary : {"strong", "weak"}
        ``"strong"`` knows every user's blanket bit (Koskela et al. 2023, Def. 12; Balle et al.
        2019, Thm 3.1); ``"weak"`` those of the other n - 1 users only (Def. 14).
    tail_mass : float
        Probability mass, in [1e-100, 1e-3], that truncation may drop; the mass
        actually dropped is computed exactly and charged to the upper bound (at
        +inf for the strong adversary, at eps0 for the weak one).
    loss_grid_step : float, optional
        Grid spacing in nats, in (0, 1]. Default: ``pld.engine.choose_loss_grid_step``
        of the one-round loss's standard deviation (``DEFAULT_LOSS_GRID_STEP`` when
        the loss can be infinite, as for the strong adversary at small n); PLDs
        composed together need the same step.
    max_atoms : int
        Work budget, >= 1: the number of atoms (values of h1, summed over the
        components, i.e. the observed counts S for the strong adversary and (b, s)
        for the weak one) enumerated. Beyond it the components are grouped into
        blocks that dominate (upper bound) and are dominated by (lower bound) the
        true pair, so the result stays a rigorous bracket, somewhat wider (module
        docstring). The default keeps the strong adversary exact up to n = 10^6
        and the weak one up to n = 5000 (k = 4, gamma = 0.25).

    Returns
    -------
    PLD
        One round of the mechanism; compose with ``self_compose``.
    """
    n, k, gamma, adversary = _check(n, k, gamma, adversary)
    tail_mass = _check_tail_mass(tail_mass)
    max_atoms = validation.integer_at_least("max_atoms", max_atoms, 1)
    loss_grid_step = validation.optional_loss_grid_step(loss_grid_step)
    if gamma == 1.0:
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        return from_symmetric_pair([0.0], [0.0], loss_grid_step=step)
    max_loss = ldp_epsilon(k, gamma) if adversary == "weak" else None
    upper, lower = _components(n, k, gamma, adversary, tail_mass, max_atoms)
    cells, step = _merge_on_default_grid(upper, loss_grid_step, tail_mass)
    upper_pld = _pld_from_cells(cells, step, max_loss)
    if lower is None:
        return upper_pld
    lower_pld = _pld_from_cells(_merge(lower, step, tail_mass), step, max_loss)
    return from_bounds(upper=upper_pld, lower=lower_pld)


# -- the paper's tail form (comparison only) ------------------------------------------


@numba.njit(cache=True)
def _independent_cells(pmf, first_count, step, snap, first_cell, n_cells):  # pragma: no cover
    """P-mass per loss cell of log((M1 + 1) / M2) for independent M1, M2 with pmf ``pmf``.

    ``pmf[i]`` is the probability of the count ``first_count + i``. Returns the
    cells, the mass at +inf (M2 = 0) and the most terms summed into one cell.
    """
    cells = np.zeros(n_cells)
    terms = np.zeros(n_cells, dtype=np.int64)
    infinite = 0.0
    for i in range(pmf.shape[0]):
        for j in range(pmf.shape[0]):
            mass = pmf[i] * pmf[j]
            count_2 = first_count + j
            if count_2 == 0:
                infinite += mass
                continue
            cell = _cell_of(math.log((first_count + i + 1.0) / count_2), step, snap) - first_cell
            cells[cell] += mass
            terms[cell] += 1
    return cells, infinite, int(terms.max())


def _independent_loss_cells(n: int, k: int, gamma: float, step: float, tail_mass: float) -> _Cells:
    """Koskela et al. (2023), eq. 4.3 read literally (see the body).

    N1 = 1 + M1, N2 = M2, M1, M2 iid Bin(n - 1, gamma/k).

    Only the P-masses (``p``, ``p_infinite``) are meaningful.
    """
    trials, prob = n - 1, gamma / k
    lo, hi = (int(v) for v in binom.window(tail_mass / 4, trials, prob))
    anchor, anchor_value = _anchors(trials, prob, lo, hi)
    pmf = np.empty(hi - lo + 1)
    _binomial_run(trials, prob, lo, hi, int(anchor), float(anchor_value), pmf)
    outside = float(binom.cdf(lo - 1, trials, prob) + binom.sf(hi, trials, prob))
    dropped = -math.expm1(2 * math.log1p(-outside))
    smallest = math.log((lo + 1.0) / max(hi, 1))
    largest = math.log((hi + 1.0) / max(lo, 1))
    first = math.floor(smallest / step) - 1
    n_cells = math.floor(largest / step) + 2 - first
    cells, infinite, terms = _independent_cells(pmf, lo, step, SNAP_RELATIVE, first, n_cells)
    mass_error = 2 * _ANCHOR_RELATIVE_ERROR + UNIT_ROUNDOFF * (6 * (hi - lo) + terms + 16)
    return _Cells(first, cells, np.zeros(0), infinite, 0.0, dropped, mass_error)


def krr_tail_delta(
    n: int,
    k: int,
    gamma: float,
    adversary: str,
    eps: float | np.ndarray,
    rounds: int = 1,
    *,
    counts: str = "joint",
    tail_mass: float = KRR_TAIL_MASS,
    loss_grid_step: float | None = None,
) -> np.ndarray:
    """The paper's tail form P(Z_1 + ... + Z_T >= eps), for comparison only.

    Koskela et al. (2023), Thm 13 (strong) and Thm 16 (weak) state delta(eps) = P(sum_i Z_i >= eps)
    with Z_i iid copies of the privacy loss under P. With the true law of the view
    (``counts="joint"``) this is an upper bound on the tight delta that :func:`krr`
    computes, looser by a factor of about 4 to 1000 in the settings tested. With
    ``counts="independent"`` (strong adversary only) Z = log(N1 / N2) with N1 - 1
    and N2 independent Bin(n - 1, gamma / k), as eq. 4.3 / C.7 read literally (no
    blanket bit of the target either): that is not even an upper bound on the tight
    delta (tests/shuffling/test_krr.py shows it below the truth). Do not report either as a
    privacy guarantee.

    Parameters
    ----------
    n, k, gamma, adversary
        As in :func:`krr`.
    eps : float or array_like
        Thresholds, in nats.
    rounds : int
        Number of compositions T >= 1.
    counts : {"joint", "independent"}
        Law of the counts (see above).
    tail_mass : float
        Truncated mass, in [1e-100, 1e-3], charged to the tail (+inf).
    loss_grid_step : float, optional
        Grid spacing in nats (default as in :func:`krr`); each loss is rounded up to
        the grid, which can only raise the tail.

    Returns
    -------
    ndarray
        An upper bound on P(sum_i Z_i >= eps), one value per eps (exact up to the
        grid rounding, the truncation and the float round-off).
    """
    n, k, gamma, adversary = _check(n, k, gamma, adversary)
    eps = validation.real_array("eps", eps)
    rounds = validation.integer_at_least("rounds", rounds, 1)
    tail_mass = _check_tail_mass(tail_mass)
    loss_grid_step = validation.optional_loss_grid_step(loss_grid_step)
    if counts not in ("joint", "independent"):
        raise ValueError(f"counts must be 'joint' or 'independent' (got {counts!r})")
    if counts == "independent" and adversary != "strong":
        raise ValueError(
            "counts='independent' (Koskela et al. 2023, eq. 4.3) exists for adversary='strong'"
        )
    if counts == "independent":
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        cells = _independent_loss_cells(n, k, gamma, step, tail_mass)
    elif gamma == 1.0:
        step = DEFAULT_LOSS_GRID_STEP if loss_grid_step is None else loss_grid_step
        cells = _Cells(0, np.ones(1), np.ones(1), 0.0, 0.0, 0.0, 0.0)
    else:
        exact, blocked = _components(n, k, gamma, adversary, tail_mass, MAX_TAIL_ATOMS)
        if blocked is not None:
            raise BudgetError(
                f"n = {n} is too large for the exact tail comparison "
                f"(more than {MAX_TAIL_ATOMS} atoms)",
                budget=MAX_TAIL_ATOMS,
            )
        cells, step = _merge_on_default_grid(exact, loss_grid_step, tail_mass)
    # P-law of the loss rounded up to the grid: cell j goes to (j + 1) h. As a pair
    # for the engine: Q-mass p e^-loss on each atom, the rest of Q where P is 0.
    losses = (cells.first_cell + 1 + np.arange(cells.p.size)) * step
    with np.errstate(divide="ignore"):
        log_p = np.log(cells.p)
    q_rest = max(0.0, 1.0 - math.fsum((cells.p * np.exp(-losses)).tolist()))
    one_round = from_pmfs(
        np.append(log_p, -np.inf),
        np.append(log_p - losses, math.log(q_rest) if q_rest > 0 else -np.inf),
        loss_grid_step=step,
        truncated_mass_p=cells.p_infinite + cells.dropped,
        mass_relative_error=cells.mass_error,
    )
    composed = one_round.self_compose(rounds) if rounds > 1 else one_round
    atoms = composed.atoms("upper")[0]
    at_or_above = np.concatenate((np.cumsum(atoms.mass[::-1])[::-1], [0.0]))
    slack = SNAP_RELATIVE * np.maximum(np.abs(eps), step) + atoms.loss_error
    index = np.searchsorted(atoms.loss, eps - slack)
    tail = (
        at_or_above[index] * (1.0 + atoms.mass_error) + atoms.infinity_mass + composed.error_floor
    )
    return np.clip(tail, 0.0, 1.0)
