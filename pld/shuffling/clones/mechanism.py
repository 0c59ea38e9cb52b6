"""Shuffled ε0-LDP randomisers: the "clones" dominating pair of Feldman, McMillan and Talwar.

The shuffle of n users who each run an ε0-LDP randomiser (any randomiser, even
chosen adaptively) is dominated by the pair of Feldman, McMillan and Talwar (2023), Thm 3.1,
as written by Koskela et al. (2023), eqs 3.1-3.2,

    P = (A + Δ1, C - A + Δ2),    Q = (A + Δ2, C - A + Δ1),
    C ~ Bin(n - 1, 2p),  A | C ~ Bin(C, 1/2),
    Δ1 ~ Bern(e^ε0 p),   Δ2 ~ Bin(1 - Δ1, p / (1 - e^ε0 p)),

with p = 1/(e^ε0 + 1) by default (Koskela et al. 2023, Lemma 8 and Cor 9). A smaller p needs
the randomiser's own decomposition: the authors' erratum to Feldman, McMillan and Talwar
(2023) withdraws the general proof of their Lemma 3.5 for p < 1/(e^ε0 + 1)
(docs/references.md, errata). Writing out Δ1, Δ2
(Koskela et al. 2023, §3.1) gives the mixtures, with q = e^ε0 p,

    P = q P0 + p P1 + w2 P2,   Q = p P0 + q P1 + w2 P2,   w2 = 1 - q - p = 1 - p/p_max,
    P0 = (A + 1, C - A),  P1 = (A, C - A + 1),  P2 = (A, C - A).

((1 - q) q~ = p and (1 - q)(1 - q~) = 1 - q - p with q~ = p/(1 - q).) With the
default p the third weight w2 is exactly 0: the code sets it to 0 instead of
computing p/(1 - e^ε0 p), which float64 can round to 1 + 2e-16.

Masses (derived here and checked by brute-force enumeration of C, A, Δ1, Δ2 in
tests/shuffling/test_clones.py). With t = a + b, N = n - 1, ρ = 2p, the other users are
trinomial(N; p, p, 1 - 2p), so P0 = (a, b) has probability
``T(a - 1, b) = Bin(N, ρ)(t - 1) · Bin(t - 1, 1/2)(a - 1)``. This corrects
Koskela et al. (2023), Lemma A.4, whose extra factor 1/2^i and (1 - p)^(n-1-i) are wrong: the
right form is C(n-1, i) C(i, j) p^i (1 - 2p)^(n-1-i). Dividing by q:

    P(a, b) = q · M_t(a) · (a + r b + c_t),   Q(a, b) = q · M_t(a) · (r a + b + c_t),
    M_t(a) = C(t, a) (n-1)! / (t! (n-t)!) · p^(t-1) (1 - 2p)^(n-t),
    r = e^-ε0,   c_t = (n - t) · w2 r / (1 - 2p).

The ratio P0/P2 at (a, b) is (1 - 2p) a / ((n - a - b) p): Koskela et al. (2023), Lemma A.2
(and Cor A.3 after it) carry a spurious factor 2. The privacy loss

    s(a, b) = log((a + r b + c_t) / (r a + b + c_t)) = log1p((1 - r)(a - b) / (r a + b + c_t))

lies in [-ε0, ε0] (the numerator is at most e^ε0 times the denominator and vice
versa), so ``max_loss = eps0``; Q(a, b) = P(b, a), so the loss of Q/P under Q
has the law of the loss of P/Q under P and the pair is symmetric. For fixed t
the loss is strictly increasing in a, which the construction below uses.

Per row t, with X ~ Bin(t - 1, 1/2) and β = Bin(t - 1, 1/2) pmf,

    P(a, t - a) = q · Bin(N, ρ)(t - 1) · [β(a - 1) + r β(a) + γ_t (β(a - 1) + β(a))],
    Q(a, t - a) = q · Bin(N, ρ)(t - 1) · [r β(a - 1) + β(a) + γ_t (β(a - 1) + β(a))],

with γ_t = c_t / t, so the mass of a range of a is a pair of binomial interval
probabilities.

Constructions:

* ``truncation="exact"``: every lattice point (a, b), a + b <= n, in log space
  (gammaln); O(n²) atoms, for small n.
* ``"hoeffding"``: Koskela et al. (2023), Lemma 11 (§3.2 and App B). C is kept in its
  Hoeffding window for Bin(n - 1, 2p) (App B's Lemma 11 writes Bin(n - 1, p): a
  typo, §3.2 has 2p) and A | C in its Hoeffding window for Bin(C, 1/2), each
  with τ/4 per tail. The lemma sums only P0-shaped points (j + 1, i - j); P1
  and P2 shift the lattice point by one, so each row t keeps the hull of the
  windows of C = t - 1 and C = t, which keeps all three components.
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

import numpy as np

from pld import validation
from pld.distribution import PLD, from_symmetric_pair, refinable
from pld.engine import check_grid_points
from pld.numerics import UNIT_ROUNDOFF
from pld.shuffling.clones.cells import (
    ClonesCells,
    _cells,
    _check_work,
)
from pld.shuffling.clones.pair import (
    EXACT_MAX_N,
    MAX_EPS0,
    _analysed_pair,
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


def clones_pmfs(n: int, eps0: float, p: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-pmfs of the clones pair (Koskela et al. 2023, eq 3.1-3.2) on its whole lattice.

    The outcome (a, b), a + b = t <= n, is at index ``t (t + 1) / 2 + a`` (rows of
    increasing t, a increasing within a row); there are (n+1)(n+2)/2 outcomes.
    Masses follow the module docstring (Koskela et al. 2023, §3.1 and App A with Lemma A.2's
    factor 2 and Lemma A.4's 1/2^i removed), evaluated in log space.

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= ``EXACT_MAX_N``.
    eps0 : float
        Local privacy parameter in nats, in (0, 50].
    p : float, optional
        Clone probability parameter in (0, 1/(e^ε0 + 1)]; default 1/(e^ε0 + 1).

    Returns
    -------
    log_p, log_q : ndarray
        Natural logs of P and Q at each outcome (``-inf`` where the mass is 0).
    """
    pair = _pair(n, eps0, p)
    if pair.n > EXACT_MAX_N:
        raise ValueError(f"n must be an integer <= {EXACT_MAX_N} for the exact lattice (got {n!r})")
    return _lattice_log_pmfs(pair)


def check_clones_work(n: int, eps0: float, *, tail_mass: float = 1e-12) -> None:
    """Refuse up front, as :func:`clones` would, ``n`` users beyond the work budget.

    For callers that build many clones pairs (``pld.checkin``): the quantile
    truncation and the default grid of :func:`clones`, nothing allocated.

    Raises
    ------
    ValueError
        With the estimate, if ``clones(n, eps0, tail_mass=tail_mass)`` would be refused.
    """
    _check_work(_pair(n, eps0, None), "quantile", tail_mass, None)


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
    truncation: str = "quantile",
    tail_mass: float = 1e-12,
    loss_grid_step: float | None = None,
) -> ClonesCells:
    """The truncated clones pair merged per loss-grid cell, without building a PLD.

    This is what :func:`clones` hands to ``pld.from_pmfs``; see the module
    docstring for the construction (Koskela et al. 2023, §3.2 and Lemma 11).

    Parameters
    ----------
    n, eps0, p
        As in :func:`clones`.
    truncation : {"quantile", "hoeffding"}
        Window rule: exact binomial tail quantiles, or Hoeffding's bound (Lemma 11).
    tail_mass : float
        Bound τ on the P-mass left out, in (0, 1e-3].
    loss_grid_step : float, optional
        Cell width h in nats, in (0, 1]; default: the engine's rule
        (:func:`pld.engine.choose_loss_grid_step`) for this pair's loss.
    """
    pair = _pair(n, eps0, p)
    truncation, tail_mass, loss_grid_step = _options(truncation, tail_mass, loss_grid_step)
    if truncation == "exact":
        raise ValueError("truncation must be 'quantile' or 'hoeffding' for clones_cells")
    return _cells(pair, truncation, tail_mass, loss_grid_step)


@refinable
def clones(
    n: int,
    eps0: float,
    p: float | None = None,
    *,
    truncation: str = "quantile",
    tail_mass: float = 1e-12,
    loss_grid_step: float | None = None,
) -> PLD:
    """One round of shuffling n users' ε0-LDP reports: the PLD of the clones pair.

    The dominating pair of Feldman, McMillan and Talwar (Koskela et al. 2023, eq 3.1-3.2,
    Lemma 8, Cor 9) holds for any ε0-LDP randomisers, even adaptive ones; rounds
    with different (n, ε0) compose with ``pld.compose`` (Koskela et al. 2023, Cor 10 and the
    remark after it).

    Parameters
    ----------
    n : int
        Number of users, >= 1 (n = 1: no amplification, ε0-randomised response).
    eps0 : float
        Local privacy parameter of every user's randomiser, in nats, in (0, 50].
    p : float, optional
        Clone probability parameter in (0, 1/(e^ε0 + 1)]. Default 1/(e^ε0 + 1),
        valid for every ε0-LDP randomiser; a smaller p is for randomisers known
        to allow it and makes the third mixture component P2 (Koskela et al. 2023, §3.1)
        non-zero. The caller vouches for that: the general proof for p < 1/(e^ε0 + 1)
        (Feldman, McMillan and Talwar 2023, Lemma 3.5) is withdrawn by the authors'
        erratum (docs/references.md, errata; ``Randomizer.clone_probability``).
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
    pair = _pair(n, eps0, p)
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

    trials = pair.n - 1
    c_lo, c_hi = _clone_quantiles(pair, _HOCKEY_STICK_TAIL)
    check_grid_points(
        (c_hi - c_lo + 2.0) * HOCKEY_STICK_ROW_COST * max(eps.size, 1),
        f"the grid-free delta of clones(n={pair.n}, eps0={pair.eps0:g}) at {eps.size} eps "
        f"values ({c_hi - c_lo + 2} rows each)",
        "use a smaller n or fewer eps values",
    )
    totals = np.arange(max(c_lo, 1), c_hi + 2, dtype=np.int64)
    row_weight, weight_error = _row_weights(pair, totals)
    # Mass of the rows left out: T = C + 1 w.p. 1 - w2, T = C w.p. w2 (row 0 is loss 0).
    outside = (1.0 - pair.w2) * (_clone_cdf(pair, c_lo - 2) + _clone_sf(pair, c_hi))
    origin = pair.w2 * math.exp(trials * pair.log_one_minus_rho)
    if pair.w2 > 0.0:
        outside += pair.w2 * (_clone_sf(pair, c_hi + 1) + _clone_cdf(pair, c_lo - 1))
    outside *= 1.0 + 1e-9  # Boost's tails of C, with margin
    lower = np.empty(eps.size)
    upper = np.empty(eps.size)
    for index, value in enumerate(eps):
        total, slack = hockey_stick_rows(
            float(value),
            int(totals[0]),
            row_weight,
            weight_error,
            pair.n,
            pair.r,
            pair.one_minus_r,
            pair.blanket,
            pair.eps0,
        )
        if c_lo == 0:
            total += origin * max(0.0, -math.expm1(value))
            slack += 4.0 * UNIT_ROUNDOFF * origin
        lower[index] = max(0.0, total - slack)
        upper[index] = min(1.0, total + slack + outside)
    return lower, upper


def clones_delta_bounds(
    n: int,
    eps0: float,
    eps: float | np.ndarray,
    p: float | None = None,
    *,
    analysis: str = "2022",
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
    n, eps0, p
        As in :func:`clones`.
    eps : float or array_like
        Values of ε in nats.
    analysis : {"2022", "2021"}
        The pair of Koskela et al. (2023), eq 3.1-3.2 (the one :func:`clones` uses), or the
        earlier, weaker pair of Feldman et al. 2021 (C ~ Bin(n-1, e^-ε0)) for
        comparison with their published numbers.

    Returns
    -------
    lower, upper : ndarray
        Bounds on δ(ε) at each ε (the pair is symmetric, so this is also H(Q || P)).
    """
    pair = _analysed_pair(n, eps0, p, analysis)
    return _hockey_stick(pair, validation.real_array("eps", eps))


def clones_epsilon_bounds(
    n: int, eps0: float, delta: float, p: float | None = None, *, analysis: str = "2022"
) -> tuple[float, float]:
    """Grid-free bracket on the one-round ε(δ) of the clones pair, from :func:`clones_delta_bounds`.

    Brent's method on each side of the δ(ε) bracket, then a nudge so that the
    upper ε has upper δ <= delta and the lower ε has lower δ > delta (or is 0).

    Parameters
    ----------
    n, eps0, p
        As in :func:`clones`.
    delta : float
        Target δ in (0, 1).
    analysis : {"2022", "2021"}
        As in :func:`clones_delta_bounds`.

    Returns
    -------
    lower, upper : float
        Bounds on min{ε >= 0 : δ(ε) <= delta}; ``upper`` is ``inf`` when even
        δ(ε0), which is at most the left-out mass, exceeds ``delta``.
    """
    pair = _analysed_pair(n, eps0, p, analysis)
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
