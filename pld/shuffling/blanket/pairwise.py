"""The pairwise blanket of a shuffled Gaussian randomizer, every shortfall charged (any dimension).

Bound B of docs/vector-gaussian.md §2 (Theorem B). Users add ``N(0, sigma^2 I_d)`` to
inputs in a set of diameter ``Delta`` (an L2 ball of radius ``Delta / 2`` for the
clipped vector Gaussian); in units of sigma ``s = Delta / sigma``. For every ``n >= 1``,
``eps >= 0`` and clone probability ``q in (0, 1]``:

    delta(eps) <= D_n(eps; q) + (1 + e^eps) (n - 1) q delta_G(log(1/q); s),
    D_n(eps; q) = (1/(n q)) E[(sum_{i<=n} B_i Z_i)_+],  B_i ~ Bernoulli(q),
    Z = (1 - alpha) + (1 + alpha) tanh(s Y / 2),  Y ~ (N(s/2, 1) + N(-s/2, 1)) / 2,

``alpha = e^eps``, ``delta_G`` the Gaussian mechanism's profile (Balle and Wang 2018,
Thm 8). It is the blanket formula of Balle et al. (2019, §5) with the target pair's own
mixture ``omega = (R(x) + R(x'))/2`` as the blanket (the clone decomposition of
Feldman, McMillan and Talwar (2021), Thm 3.1, evaluated with the exact likelihood
ratio), after every other user's report law has been replaced by one that contains
``q omega``, at a total-variation cost ``tau_j <= q delta_G(log(1/q); s)`` charged to
both hypotheses. The worst pair of inputs is at distance ``Delta`` (a Gaussian garbling
maps that pair to any nearer one) whatever the dimension, so the bound does not depend
on d.

Numerics (rigorous): ``Z`` is increasing in ``y`` with values in ``(-2 alpha, 2)``.
Lattice cells ``[j h, (j+1) h]`` map to ``y``-intervals whose masses and first
moments are closed forms (``omega r = N(s/2, 1)``, so ``E[Z; I] = P_+(I) - alpha
P_-(I)``); the upper lattice spreads each cell onto its end points, the lower one
contracts the cells' barycentres (:mod:`pld.shuffling.blanket.continuous_sum`); the
n-fold sum is evaluated on a Chernoff window
(:mod:`pld.shuffling.blanket.continuous_window`, which charges round-off, aliasing,
the window's ends and the declared relative mass error). The whole range of ``Z`` is
covered: no tail term.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from pld.central import gaussian_delta, log_normal_cell_masses, log_normal_interval_mass
from pld.engine import BudgetError
from pld.progress import track
from pld.shuffling.blanket.continuous_sum import contract_to_grid, spread_to_grid, with_zero_atom
from pld.shuffling.blanket.continuous_window import positive_part_window

#: Lattice steps per standard deviation of ``Z`` at eps = 0.
PAIRWISE_STEPS_PER_STD = 64
#: Relative error bound of each cell's mass and first moment: normal interval masses in
#: log space, ``exp(log_big) (1 - exp(log_small - log_big))``, err by about
#: ``u |log_big| / |log_small - log_big|``: at most ~1e-12 for cells within ``Y_REACH``
#: and at least 1/64 of a standard deviation of ``Z`` wide, for ``s <= PAIRWISE_MAX_RATIO``
#: (tested against mpmath, margin 10).
MASS_ERROR = 1e-11
#: The cells cover ``|y| <= s/2 + Y_REACH``.
Y_REACH = 14.0
#: Largest ``s = Delta / sigma`` bound B is evaluated for (beyond, the local mechanism
#: is better in every case we measured, and the mass error above is not checked).
PAIRWISE_MAX_RATIO = 3.0
#: Relative error charged on the shortfall term (its two normal tails nearly cancel
#: for small s: about 1e2 ulps at s = 0.1, a few 1e3 at s = 0.01).
CHARGE_ERROR = 1e-9
#: Cells lighter than this are moved to their top end (upper side) or dropped (lower
#: side: a defective law lowers ``E[(S)_+]``).
_TINY = 1e-200
#: Largest number of lattice cells of ``Z`` per eps.
MAX_CELLS = 2**22
#: Clone probabilities come from the ladder ``LADDER_BASE^k``, k = 0 .. ``LADDER_STEPS``.
LADDER_BASE = 2.0 ** (-1.0 / 8.0)
LADDER_STEPS = 96
#: At most this many clone probabilities (components of the best-of profile).
MAX_COMPONENTS = 3
#: Probe points on [0, eps_probe_top] where the best ladder value is searched.
_PROBES = 9
#: The probes stop at the first whose best upper value is below this.
_RELEVANT = 1e-20
_HERMITE = np.polynomial.hermite_e.hermegauss(80)


def z_deviation(s: float) -> float:
    """Standard deviation of ``Z = 2 tanh(s Y / 2)`` at eps = 0 (Gauss-Hermite, 80 nodes)."""
    nodes, weights = _HERMITE
    weights = weights / weights.sum()
    values = np.tanh(s * (nodes + s / 2) / 2)  # the mixture is symmetric: one component
    return float(2.0 * math.sqrt(float(np.dot(weights, values**2))))


def default_grid_step(s: float, steps_per_std: float = PAIRWISE_STEPS_PER_STD) -> float:
    """Lattice step of ``Z``: its standard deviation at eps = 0 over ``steps_per_std``."""
    return z_deviation(s) / steps_per_std


def _z_of(y: float, s: float, alpha: float) -> float:
    return (1.0 - alpha) + (1.0 + alpha) * math.tanh(s * y / 2.0)


def _cells(s: float, alpha: float, step: float, n: int):
    """Grid index, mass and first moment of every lattice cell of ``Z`` (closed forms),
    and the masses left out below and above.

    The cells cover ``|y| <= s/2 + Y_REACH`` (beyond, less than 1e-44 per side), so every
    normal tail taken is above ``exp(-(s + Y_REACH)^2/2)`` and its log is accurate to
    a few hundred ulps. Values of ``Z`` below ``-2 n - 2`` are left out too: one term
    there makes the sum negative (the others are below 2), whether it is raised to the
    lowest cell or dropped, so the caller raises it (upper side) or drops it (lower side).
    """
    reach = s / 2.0 + Y_REACH
    first = math.floor(max(_z_of(-reach, s, alpha), -2.0 * n - 2.0) / step)
    last = math.ceil(_z_of(reach, s, alpha) / step)
    if last - first > MAX_CELLS:
        raise BudgetError(f"bound B needs {last - first} lattice cells (limit {MAX_CELLS})")
    index = np.arange(first, last)
    # Edges are grid points (or an end of Z's range, where y is infinite).
    u = np.clip((np.arange(first, last + 1) * step - (1.0 - alpha)) / (1.0 + alpha), -1.0, 1.0)
    with np.errstate(divide="ignore"):
        y = (2.0 / s) * np.arctanh(u)
    plus = np.exp(log_normal_cell_masses(y - s / 2))
    minus = np.exp(log_normal_cell_masses(y + s / 2))
    outside = []
    for low, high in ((-np.inf, y[0]), (y[-1], np.inf)):
        bounds = (np.array([low - s / 2, low + s / 2]), np.array([high - s / 2, high + s / 2]))
        outside.append(0.5 * float(np.sum(np.exp(log_normal_interval_mass(*bounds)))))
    mass = 0.5 * (plus + minus)
    keep = mass > 0
    return index[keep], mass[keep], (plus - alpha * minus)[keep], outside[0], outside[1]


def ideal_term(n: int, s: float, alpha: float, q: float, step: float, side: str) -> float:
    """One side (``"upper"`` or ``"lower"``) of ``D_n(eps; q)``.

    The lattice step is ``step (1 + alpha) / 2`` (``Z`` spreads like ``1 + alpha``, so
    every cell spans about the same width in ``y``). The mass above the cells is put at
    the top edge and its excess charged: ``(a + b)_+ <= a_+ + b`` for ``b >= 0`` gives
    ``D_n <= D_n' + above (2 - z_top)``. Lower side: the masses outside are dropped.
    """
    step = step * (1.0 + alpha) / 2.0
    index, mass, moment, below, above = _cells(s, alpha, step, n)
    if index.size == 0:  # every term is below -2n - 2 when present: the sum is never > 0
        return 0.0
    tiny = mass < _TINY
    safe = np.where(tiny, 1.0, mass)
    # Barycentres in grid units, clipped into their cell (float error only, charged
    # below as the position error).
    centre = np.where(tiny, index + 1.0, np.clip(moment / safe / step, index, index + 1.0))
    if side == "upper":
        first = int(min(index.min(), 0))
        size = int(max(index.max() + 2, 1)) - first
        masses = spread_to_grid(index, centre - index, mass, first, size)
        masses[index.min() + 1 - first] += below  # raised: see _cells
        masses[index.max() + 1 - first] += above  # lowered to the top edge, charged below
        excess = above * (2.0 - (index.max() + 1) * step)
    else:
        excess = 0.0
        order = np.argsort(centre[~tiny], kind="stable")
        first, masses = contract_to_grid(centre[~tiny][order], mass[~tiny][order])
    first, masses = with_zero_atom(first, masses, q)
    # A barycentre is a ratio of closed forms with relative error MASS_ERROR each,
    # |Z| <= 2 alpha and P_+ / omega <= 2: at most 8 (1 + alpha) MASS_ERROR off.
    position_error = 8.0 * (1.0 + alpha) * MASS_ERROR
    value = positive_part_window(
        first, masses, n, step, side, mass_error=MASS_ERROR, position_error=position_error
    )
    return max(value, 0.0) / q + (excess if side == "upper" else 0.0)


def shortfall_charge(n: int, s: float, alpha: float, q: float, side: str) -> float:
    """``(1 + alpha)(n - 1) q delta_G(log(1/q); s)``, rounded towards ``side``."""
    if n == 1:
        return 0.0
    value = (1.0 + alpha) * (n - 1) * q * float(gaussian_delta(-math.log(q), 1.0, s))
    return value * (1.0 + CHARGE_ERROR if side == "upper" else 1.0 - CHARGE_ERROR)


def pairwise_profile_bounds(
    s: float,
    n: int,
    eps: np.ndarray,
    q: float,
    *,
    lower_side: bool = True,
    steps_per_std: float = PAIRWISE_STEPS_PER_STD,
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) of bound B (module docstring) at clone probability ``q``.

    Parameters
    ----------
    s : float
        Diameter of the input set over sigma (``2 clip / sigma``), > 0.
    n : int
        Number of users, >= 1 (validated by the caller).
    eps : ndarray
        Values of eps >= 0 (nats).
    q : float
        Clone probability in (0, 1].
    lower_side : bool
        False: only upper values (the lower ones are then 0).
    steps_per_std : float
        Lattice steps of ``Z`` per its standard deviation at eps = 0 (default
        ``PAIRWISE_STEPS_PER_STD``, :func:`default_grid_step`); the bracket's width shrinks like
        the square of the step.

    Returns
    -------
    lower, upper : ndarray
        In [0, 1], around the running minimum over smaller eps of bound B, which
        is convex in ``e^eps`` (the bound is an expectation of ``(A - e^eps B)_+``
        plus a term linear in ``e^eps``, and a convex function's running minimum is
        convex).
    """
    step = default_grid_step(s, steps_per_std)
    lower = np.zeros(eps.shape[0])
    upper = np.ones(eps.shape[0])
    # The true profile is non-increasing, so the running minimum of the bound over
    # smaller eps is a bound too; the bound itself is convex in e^eps (a decreasing
    # ideal term plus an increasing charge), so once it rises it keeps rising: from
    # there on the running minimum is held, and the lower values are the running
    # minimum of the lower values and the charge there (the exact bound is at least
    # the charge, which only grows).
    held = None
    last_upper, last_alpha = math.inf, 1.0
    for i in track(np.argsort(eps, kind="stable"), desc="pairwise blanket profile"):
        alpha = math.exp(float(eps[i]))
        if held is None:
            try:
                high = ideal_term(n, s, alpha, q, step, "upper")
                high += shortfall_charge(n, s, alpha, q, "upper")
            except BudgetError:  # too many cells: held like a rise
                high = math.inf
            if high > last_upper or not math.isfinite(high):
                held = (last_upper, shortfall_charge(n, s, last_alpha, q, "lower"))
            else:
                upper[i] = last_upper = min(high, 1.0)
                last_alpha = alpha
                if lower_side:
                    lower[i] = shortfall_charge(n, s, alpha, q, "lower")
                    try:
                        lower[i] += ideal_term(n, s, alpha, q, step, "lower")
                    except BudgetError:  # too long a sum: the charge alone is below the bound
                        pass
                continue
        upper[i] = held[0]
        lower[i] = held[1] if lower_side else 0.0
    order = np.argsort(eps, kind="stable")
    lower[order] = np.minimum.accumulate(lower[order])
    return np.clip(lower, 0.0, 1.0), np.clip(np.maximum(upper, lower), 0.0, 1.0)


def _best_rung(s: float, n: int, alpha: float, step: float) -> tuple[int, float]:
    """The ladder index k minimising bound B's upper value at ``alpha``, and that value.

    A ternary search over k (the total is unimodal in practice; any k is valid).
    """
    cache: dict[int, float] = {}

    def total(k: int) -> float:
        if k not in cache:
            q = LADDER_BASE**k
            try:
                cache[k] = ideal_term(n, s, alpha, q, step, "upper")
            except BudgetError:
                cache[k] = math.inf
            cache[k] += shortfall_charge(n, s, alpha, q, "upper")
        return cache[k]

    low, high = 0, LADDER_STEPS
    while high - low > 2:
        first = low + (high - low) // 3
        second = high - (high - low) // 3
        if total(first) <= total(second):
            high = second
        else:
            low = first
    best = min(range(low, high + 1), key=total)
    return best, total(best)


def clone_probabilities(s: float, n: int) -> tuple[float, ...]:
    """At most ``MAX_COMPONENTS`` ladder values of ``q`` for the best-of profile at (s, n).

    Chosen for the n of the ladder ``2^(j/8)`` next below ``n`` (cached: the check-in
    builds bases for many nearby counts; any q is valid).

    The best ladder value is searched at ``_PROBES`` eps, ``e_top (k / 8)^2``, with
    ``e_top = 8 s sqrt(log(1e20) / n) + s^2`` (about where the bound falls below
    1e-20); the components span the best values at the probes whose bound is above
    ``_RELEVANT`` and the first probe below it (so that the minimum reaches the
    grid's floor). Any choice is valid: this only decides which minimum is reported.
    """
    return _clone_probabilities(s, max(1, int(2.0 ** (math.floor(8 * math.log2(n)) / 8))))


@lru_cache(maxsize=64)
def _clone_probabilities(s: float, n: int) -> tuple[float, ...]:
    step = default_grid_step(s)
    top = 8.0 * s * math.sqrt(math.log(1e20) / n) + s * s
    rungs = []
    for value in top * np.linspace(0.0, 1.0, _PROBES) ** 2:  # finer where delta is large
        rung, bound = _best_rung(s, n, math.exp(float(value)), step)
        rungs.append(rung)
        if bound <= _RELEVANT:  # this rung takes the profile below the grid's floor
            break
    # The rungs of the first probes (largest delta, where users query), and the last
    # one (it takes the minimum below the floor).
    distinct = list(dict.fromkeys(rungs))
    chosen = distinct[: MAX_COMPONENTS - 1] + distinct[-1:]
    chosen = sorted(set(chosen))
    return tuple(LADDER_BASE**k for k in chosen)
