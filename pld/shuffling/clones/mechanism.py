"""Shuffled ε0-LDP randomisers: the "clones" pairs of Feldman, McMillan and Talwar.

With A = e^ε0, r = e^-ε0 and a per-side clone probability p in (0, 1/(e^ε0 + 1)],
the pair (docs/clones-validity.md, eq. (1))

    P = (K + Δ, C - K + 1 - Δ),    Q = (K + 1 - Δ, C - K + Δ),
    C ~ Bin(n - 1, 2p),  K | C ~ Bin(C, 1/2),  Δ ~ Bern(A / (A + 1)),

dominates the shuffle of n users whose randomiser R satisfies
R(x) >= p (R(x0) + R(x1)) for every input x (Feldman, McMillan and Talwar (2021), §3;
docs/clones-validity.md, Theorem A). Two values are named (``variant``):

* ``"standard"``, p = e^-ε0 / 2 (C ~ Bin(n - 1, e^-ε0)): Feldman, McMillan and Talwar
  (2021), Thm 3.2; the condition holds for *every* ε0-LDP randomiser, even chosen
  adaptively. The default of :func:`clones`.
* ``"stronger"``, p = 1/(e^ε0 + 1): Feldman, McMillan and Talwar (2023), Thm 3.1;
  Koskela et al. (2023), eq 3.1-3.2 (their Δ2 is 1 - Δ1 at this p). After the erratum
  of Feldman et al. (2023) it is proven for the randomisers with
  (e^ε0 + 1) R(x) >= R(x0) + R(x1) (k-RR, binary randomised response) and, for every
  ε0-LDP randomiser, when the other users share one input (docs/clones-validity.md,
  Theorems A and B); not in general.

Koskela et al. (2023), eq 3.2 also admit p < 1/(e^ε0 + 1) with a third component of
the target (reports counted in neither coordinate). That is the case the erratum
withdraws, and it is wrong for k-RR (docs/clones-validity.md): it is not built here.
(Their Lemma A.2 and Cor A.3 also give its ratio P0/P2 with a spurious factor 2.)

Writing out Δ gives the mixtures, with w = A/(A + 1) = 1/(1 + r),

    P = w P0 + r w P1,   Q = r w P0 + w P1,
    P0 = (K + 1, C - K),  P1 = (K, C - K + 1).

Masses (derived here and checked by brute-force enumeration of C, A, Δ1, Δ2 in
tests/shuffling/test_clones.py). With t = a + b, N = n - 1, ρ = 2p, the other users are
trinomial(N; p, p, 1 - 2p), so P0 = (a, b) has probability
``T(a - 1, b) = Bin(N, ρ)(t - 1) · Bin(t - 1, 1/2)(a - 1)``. This corrects
Koskela et al. (2023), Lemma A.4, whose extra factor 1/2^i and (1 - p)^(n-1-i) are wrong: the
right form is C(n-1, i) C(i, j) p^i (1 - 2p)^(n-1-i). Dividing by w:

    P(a, b) = w · M_t(a) · (a + r b),   Q(a, b) = w · M_t(a) · (r a + b),
    M_t(a) = C(t, a) (n-1)! / (t! (n-t)!) · p^(t-1) (1 - 2p)^(n-t).

The privacy loss

    s(a, b) = log((a + r b) / (r a + b)) = log1p((1 - r)(a - b) / (r a + b))

lies in [-ε0, ε0] (the numerator is at most e^ε0 times the denominator and vice
versa), so ``max_loss = eps0``; Q(a, b) = P(b, a), so the loss of Q/P under Q
has the law of the loss of P/Q under P and the pair is symmetric. For fixed t
the loss is strictly increasing in a, which the construction below uses.

Per row t, with X ~ Bin(t - 1, 1/2) and β = Bin(t - 1, 1/2) pmf,

    P(a, t - a) = w · Bin(N, ρ)(t - 1) · [β(a - 1) + r β(a)],
    Q(a, t - a) = w · Bin(N, ρ)(t - 1) · [r β(a - 1) + β(a)],

so the mass of a range of a is a pair of binomial interval probabilities.

Constructions:

* ``truncation="exact"``: every lattice point (a, b), a + b <= n, in log space
  (gammaln); O(n²) atoms, for small n.
* ``"hoeffding"``: Koskela et al. (2023), Lemma 11 (§3.2 and App B). C is kept in its
  Hoeffding window for Bin(n - 1, 2p) (App B's Lemma 11 writes Bin(n - 1, p): a
  typo, §3.2 has 2p) and A | C in its Hoeffding window for Bin(C, 1/2), each
  with τ/4 per tail. The lemma sums only P0-shaped points (j + 1, i - j); P1
  shifts the lattice point by one, so each row t = C + 1 keeps the window of A
  widened by one point, which keeps both components.
* ``"quantile"`` (default): the same rule with exact binomial tail quantiles
  (scipy) in place of Hoeffding's bound: same guarantee, fewer points.

In both truncations the P- and Q-mass outside the kept region is computed
exactly from binomial tails (it is at most ``tail_mass``) and charged to the
upper bound at loss ε0 (Koskela et al. 2023, App B: δ(∞) = 1 - Π(1 - τ_i) after
composition). The kept points are never all materialised: a numba kernel (or,
for few rows, a vectorised numpy pass) walks each row, where the loss is monotone
in a, and adds the P- and Q-mass of the points whose loss lies in each grid cell
[k h, (k+1) h) into one merged atom per cell (docs/architecture.md, "Merged
atoms"). Memory is O(row width + ε0/h) (numpy pass: O(rows x row width)). Where a
cell holds many points of a row (large n: 140 at n = 10^9, ε0 = 1), the cells'
binomial sums are instead carried from row to row by Pascal's rule
(:mod:`pld.shuffling.clones.recurrence`, docs/large-populations.md §1): O(rows x
cells) work, an error bound carried with the sums, independent of n; the same
recurrence gives the grid-free δ(ε) of :func:`clones_delta_bounds`. The
default grid follows the engine's rule for the loss's standard deviation
(:func:`pld.engine.choose_loss_grid_step`), measured on a probe pass.

Binomial probabilities: Boost's pmf/cdf/sf (those of ``scipy.stats.binom``, called
through :mod:`pld.numerics.binomial`) for the windows and the walk, which agree with
30-digit values to ~1e-12 relative at n = 5e6 (2e-11 at 5.4e8);
``scipy.special.bdtr`` (Cephes) and ``binom.logpmf`` were off by ~5e-9 there. The
recurrence and the grid-free δ use Loader's pmf (:mod:`pld.numerics.binomial_pmf`),
whose error does not grow with n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pld import validation
from pld.distribution import PLD, from_symmetric_pair, refinable
from pld.engine import check_grid_points
from pld.shuffling.clones.cells import (
    ClonesCells,
    _cells,
    _check_work,
)
from pld.shuffling.clones.pair import (
    EXACT_MAX_N,
    MAX_EPS0,
    VARIANTS,
    _clone_cdf,
    _clone_quantiles,
    _clone_sf,
    _ClonesPair,
    _lattice_log_pmfs,
    _lattice_mass_error,
    _pair,
    _row_weights,
)

__all__ = [
    "EXACT_MAX_N",
    "MAX_EPS0",
    "TRUNCATIONS",
    "VARIANTS",
    "ClonesCells",
    "clones",
    "clones_cells",
    "clones_delta_bounds",
    "clones_epsilon_bounds",
    "clones_pmfs",
]

#: Mass of C ~ Bin(n - 1, 2p) left out, per tail, by the grid-free delta of
#: :func:`clones_delta_bounds` (it widens the bracket by twice this).
_HOCKEY_STICK_TAIL = 1e-18


TRUNCATIONS = ("quantile", "hoeffding", "exact")

#: A row of the grid-free hockey stick costs about this many grid points of
#: work per eps (one recurrence step, about 10 ns).
HOCKEY_STICK_ROW_COST = 1


def clones_pmfs(
    n: int, eps0: float, p: float | None = None, *, variant: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-pmfs of a clones pair (module docstring) on its whole lattice.

    The outcome (a, b), a + b = t <= n, is at index ``t (t + 1) / 2 + a`` (rows of
    increasing t, a increasing within a row); there are (n+1)(n+2)/2 outcomes.
    Masses follow the module docstring (Koskela et al. (2023), §3.1 and App A with
    Lemma A.4's 1/2^i removed), evaluated in log space.

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= ``EXACT_MAX_N``.
    eps0, p, variant
        As in :func:`clones`.

    Returns
    -------
    log_p, log_q : ndarray
        Natural logs of P and Q at each outcome (``-inf`` where the mass is 0).
    """
    pair = _pair(n, eps0, p, variant)
    if pair.n > EXACT_MAX_N:
        raise ValueError(f"n must be an integer <= {EXACT_MAX_N} for the exact lattice (got {n!r})")
    return _lattice_log_pmfs(pair)


def check_clones_work(
    n: int, eps0: float, *, tail_mass: float = 1e-12, variant: str | None = None
) -> None:
    """Refuse up front, as :func:`clones` would, ``n`` users beyond the work budget.

    For callers that build many clones pairs (``pld.checkin``): the quantile
    truncation and the default grid of :func:`clones`, nothing allocated.

    Raises
    ------
    ValueError
        With the estimate, if ``clones(n, eps0, variant=variant, tail_mass=tail_mass)``
        would be refused.
    """
    _check_work(_pair(n, eps0, None, variant), "quantile", tail_mass, None)


def _options(
    truncation: object, tail_mass: object, loss_grid_step: object
) -> tuple[str, float, float | None]:
    """Validated ``(truncation, tail_mass, loss_grid_step)``; "exact" does not read tail_mass."""
    truncation = validation.one_of("truncation", truncation, TRUNCATIONS)
    if truncation != "exact":
        tail_mass = validation.in_interval("tail_mass", tail_mass, 0.0, 1e-3, low_open=True)
    return truncation, tail_mass, validation.optional_loss_grid_step(loss_grid_step)


def clones_cells(
    n: int,
    eps0: float,
    p: float | None = None,
    *,
    variant: str | None = None,
    truncation: str = "quantile",
    tail_mass: float = 1e-12,
    loss_grid_step: float | None = None,
) -> ClonesCells:
    """The truncated clones pair merged per loss-grid cell, without building a PLD.

    This is what :func:`clones` hands to ``pld.from_pmfs``; see the module
    docstring for the construction (Koskela et al. 2023, §3.2 and Lemma 11).

    Parameters
    ----------
    n, eps0, p, variant
        As in :func:`clones`.
    truncation : {"quantile", "hoeffding"}
        Window rule: exact binomial tail quantiles, or Hoeffding's bound (Lemma 11).
    tail_mass : float
        Bound τ on the P-mass left out, in (0, 1e-3].
    loss_grid_step : float, optional
        Cell width h in nats, in (0, 1]; default: the engine's rule
        (:func:`pld.engine.choose_loss_grid_step`) for this pair's loss.
    """
    pair = _pair(n, eps0, p, variant)
    truncation, tail_mass, loss_grid_step = _options(truncation, tail_mass, loss_grid_step)
    if truncation == "exact":
        raise ValueError("truncation must be 'quantile' or 'hoeffding' for clones_cells")
    return _cells(pair, truncation, tail_mass, loss_grid_step)


@refinable
def clones(
    n: int | Sequence[tuple[float, int]],
    eps0: float | None = None,
    p: float | None = None,
    *,
    variant: str | None = None,
    truncation: str = "quantile",
    tail_mass: float = 1e-12,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of shuffling n users' ε0-LDP reports: the PLD of a clones pair.

    By default the **standard** pair of Feldman, McMillan and Talwar (2021), Thm 3.2
    (clone probability e^-ε0 per user), which dominates the shuffle of *any* ε0-LDP
    randomisers, even chosen adaptively. ``variant="stronger"`` is the pair of
    Feldman, McMillan and Talwar (2023), Thm 3.1 (Koskela et al. (2023), eq 3.1-3.2;
    clone probability 2/(e^ε0 + 1)): tighter (at n = 10^4, ε0 = 1, 100 rounds,
    δ = 1e-6: ε = 0.508 against 0.623), but after that paper's erratum proven only
    for randomisers with (e^ε0 + 1) R(x) >= R(x0) + R(x1) for all inputs x, x0, x1
    (k-RR, binary randomised response; ``FiniteRandomizer.admits_stronger_clones``),
    or when every other user holds the same input (docs/clones-validity.md, Theorems
    A and B). For a specific randomiser ``pld.shuffle`` picks the pair it is proven
    for.
    Rounds with different (n, ε0) compose with ``pld.compose`` (Koskela et al. 2023,
    Cor 10 and the remark after it).

    Groups of users with different local epsilons, ``clones([(eps0_1, n_1), ...])``:
    the pair with per-user clone probabilities (docs/shuffle-groups.md, Theorem 4 and
    §4.3; :func:`pld.shuffling.clones.clones_population`), the largest bound over the
    target's group. "standard": ``e^-max(eps_i, eps_target) / 2``, for users whose
    randomisers are mutually LDP (``R_i(x) >= e^-max(eps_i, eps_j) R_j(x')``);
    "stronger": ``1/(e^max(eps_i, eps_target) + 1)``, only where also
    ``(e^max(eps_i, eps_j) + 1) R_i(x) >= R_j(x0) + R_j(x1)`` for all users i, j (k-RR
    groups with a common k); for finite randomizers ``pld.shuffle`` of the groups
    computes the clone probabilities from the matrices instead.

    Parameters
    ----------
    n : int or list of (float, int)
        Number of users, >= 1 (n = 1: no amplification, ε0-randomised response); or
        the groups as (eps0, number of users) pairs (then ``eps0`` and ``p`` are omitted).
    eps0 : float
        Local privacy parameter of every user's randomiser, in nats, in (0, 50].
    p : float, optional
        Per-side clone probability in (0, 1/(e^ε0 + 1)], instead of ``variant``:
        valid for randomisers with R(x) >= p (R(x0) + R(x1)) for all inputs
        (:attr:`pld.randomizers.FiniteRandomizer.clone_probability` is the largest such
        p); every ε0-LDP randomiser allows p <= e^-ε0 / 2.
    variant : {"standard", "stronger"}, optional
        The named pair (default "standard", above); not together with ``p``. With
        groups: the clone probabilities of every user (above).
    truncation : {"quantile", "hoeffding", "exact"}
        "quantile" (default, fastest): keep the points inside exact binomial
        tail quantiles of C and A | C. "hoeffding": Hoeffding windows (Koskela et al.
        2023, Lemma 11). "exact": every lattice point, no truncation; O(n²) atoms,
        n <= ``EXACT_MAX_N``.
    tail_mass : float
        Bound τ on the P-mass the truncation leaves out, in (0, 1e-3]; the exact
        left-out mass (<= τ) is charged to the upper bound at loss ε0. Ignored by
        "exact".
    loss_grid_step : float, optional
        Grid spacing in nats, in (0, 1]; default: the engine's rule
        (:func:`pld.engine.choose_loss_grid_step`, a power-of-two refinement of
        ``pld.engine.DEFAULT_LOSS_GRID_STEP``) for this pair's loss.

    Returns
    -------
    PLD
        Symmetric one-round PLD with privacy loss in [-ε0, ε0].
    """
    if isinstance(n, list | tuple):
        from pld.shuffling.clones.counts import clones_population

        if eps0 is not None or p is not None:
            raise ValueError("eps0 and p must not be given with groups of (eps0, count) pairs")
        return clones_population(
            n, variant, loss_grid_step=validation.optional_loss_grid_step(loss_grid_step)
        )
    if eps0 is None:
        raise ValueError("eps0 (the local epsilon, nats, in (0, 50]) must be given")
    pair = _pair(n, eps0, p, variant)
    truncation, tail_mass, loss_grid_step = _options(truncation, tail_mass, loss_grid_step)
    if truncation == "exact":
        if pair.n > EXACT_MAX_N:
            raise ValueError(
                f"n must be an integer <= {EXACT_MAX_N} with truncation='exact' (got {n!r}); "
                "use truncation='quantile'"
            )
        log_p, log_q = _lattice_log_pmfs(pair)
        return from_symmetric_pair(
            log_p,
            log_q,
            loss_grid_step=loss_grid_step,
            max_loss=pair.eps0,
            mass_relative_error=_lattice_mass_error(pair),
        )
    merged = _cells(pair, truncation, tail_mass, loss_grid_step)
    return from_symmetric_pair(
        merged.log_p,
        merged.log_q,
        loss_grid_step=merged.step,
        truncated_mass_p=merged.truncated_mass,
        truncated_mass_q=merged.truncated_mass,
        max_loss=pair.eps0,
        mass_relative_error=merged.mass_error,
    )


# -- grid-free one-round delta -----------------------------------------------------


def _hockey_stick(pair: _ClonesPair, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bracket on H_{e^eps}(P || Q) by exact row sums (the method of Feldman et al. 2021).

    The rows' binomial tails are carried from row to row
    (:func:`pld.shuffling.clones.recurrence.hockey_stick_rows`, with its error bound);
    the row weights come from Loader's pmf (:mod:`pld.numerics.binomial_pmf`).
    """
    from pld.shuffling.clones.recurrence import hockey_stick_rows

    c_lo, c_hi = _clone_quantiles(pair, _HOCKEY_STICK_TAIL)
    check_grid_points(
        (c_hi - c_lo + 2.0) * HOCKEY_STICK_ROW_COST * max(eps.size, 1),
        f"the grid-free delta of clones(n={pair.n}, eps0={pair.eps0:g}) at {eps.size} eps "
        f"values ({c_hi - c_lo + 2} rows each)",
        "use a smaller n or fewer eps values",
    )
    totals = np.arange(max(c_lo, 1), c_hi + 2, dtype=np.int64)
    row_weight, weight_error = _row_weights(pair, totals)
    # Mass of the rows left out (row T = C + 1); Boost's tails of C, with margin.
    outside = (_clone_cdf(pair, c_lo - 2) + _clone_sf(pair, c_hi)) * (1.0 + 1e-9)
    lower = np.empty(eps.size)
    upper = np.empty(eps.size)
    for index, value in enumerate(eps):
        total, slack = hockey_stick_rows(
            float(value),
            int(totals[0]),
            row_weight,
            weight_error,
            pair.r,
            pair.one_minus_r,
            pair.eps0,
        )
        lower[index] = max(0.0, total - slack)
        upper[index] = min(1.0, total + slack + outside)
    return lower, upper


def clones_delta_bounds(
    n: int,
    eps0: float,
    eps: float | np.ndarray,
    p: float | None = None,
    *,
    variant: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Grid-free bracket on the one-round δ(ε) = H_{e^ε}(P || Q) of the clones pair.

    The method of Feldman, McMillan and Talwar (2021): for each row t = a + b the
    loss increases with a, so the points with loss above ε form a range
    a >= a_ε(t) whose P- and Q-mass are binomial tails (module docstring). Rows
    whose C-probability is below 1e-18 per tail are left out and their mass is
    added to the upper value. The rows' binomial tails are carried from row to row
    with an error bound that does not grow with n (docs/large-populations.md §1).
    An independent check of :func:`clones` (no grid, no FFT), for one round only.

    Parameters
    ----------
    n, eps0, p, variant
        As in :func:`clones` (default: the standard pair).
    eps : float or array_like
        Values of ε in nats.

    Returns
    -------
    lower, upper : ndarray
        Bounds on δ(ε) at each ε (the pair is symmetric, so this is also H(Q || P)).
    """
    pair = _pair(n, eps0, p, variant)
    return _hockey_stick(pair, validation.real_array("eps", eps))


def clones_epsilon_bounds(
    n: int, eps0: float, delta: float, p: float | None = None, *, variant: str | None = None
) -> tuple[float, float]:
    """Grid-free bracket on the one-round ε(δ) of the clones pair, from :func:`clones_delta_bounds`.

    Brent's method on each side of the δ(ε) bracket, then a nudge so that the
    upper ε has upper δ <= delta and the lower ε has lower δ > delta (or is 0).

    Parameters
    ----------
    n, eps0, p, variant
        As in :func:`clones`.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    lower, upper : float
        Bounds on min{ε >= 0 : δ(ε) <= delta}; ``upper`` is ``inf`` when even
        δ(ε0), which is at most the left-out mass, exceeds ``delta``.
    """
    pair = _pair(n, eps0, p, variant)
    delta = validation.in_interval("delta", delta, 0.0, 1.0, low_open=True, high_open=True)

    def excess(eps: float, side: int) -> float:
        return float(_hockey_stick(pair, np.array([eps]))[side][0]) - delta

    def smallest(side: int) -> float:
        from scipy.optimize import brentq  # scipy.optimize takes 0.15 s to import

        if excess(0.0, side) <= 0.0:
            return 0.0
        if excess(pair.eps0, side) > 0.0:
            return math.inf if side == 1 else pair.eps0
        root = float(brentq(excess, 0.0, pair.eps0, args=(side,), xtol=1e-14, rtol=1e-12))
        nudge = 1e-12 * max(1.0, root)
        if side == 1:
            while excess(root, side) > 0.0:
                root = min(root + nudge, pair.eps0)
        else:
            while root > 0.0 and excess(root, side) <= 0.0:
                root = max(root - nudge, 0.0)
        return root

    return smallest(0), smallest(1)
