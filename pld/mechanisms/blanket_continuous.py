"""Shuffled continuous randomizers (Gaussian, Laplace): the blanket bound and an observer.

Blanket bound (docs/blanket-continuous.md; Balle et al. 2019, seed 002 §5, in the
form of issue "shuffle any local randomizer"): with ``omega_min(y) = min_x
R(x)(y)``, ``gamma = int omega_min``, ``omega = omega_min / gamma`` and
``r_x = R(x) / omega``, the shuffled view of neighbours that differ in one
user's input ``x`` versus ``x'`` satisfies

    delta_{x,x'}(eps) <= (1 / (n gamma)) E[(sum_{i<=n} B_i Z_i)_+],
    B_i ~ Bernoulli(gamma), Y_i ~ omega, Z_i = r_x(Y_i) - e^eps r_{x'}(Y_i).   (1)

For a location family on ``[low, high]`` and the end-point pair, writing
``U = |Y - mid|`` and ``V = r_high(Y) / gamma`` on the side of ``high``,
``Z / gamma`` is ``V - e^eps`` or ``1 - e^eps V`` with probability 1/2 each
(docs/blanket-continuous.md, §2), where under ``omega``

* Gaussian (units of sigma, ``k = Delta / sigma``, ``a = k / 2``): ``V = e^{k U}``,
  ``P(U > u) = Phi(-(u + a)) / Phi(-a)``;
* Laplace (units of b): ``V = e^{2 min(U, a) / b}``, ``U ~ Exp(1/b)``, so
  ``P(V > v) = v^{-1/2}`` on ``[1, e^{Delta/b})`` and an atom of mass ``gamma``
  at ``e^{Delta / b}``.

Worst pair: the end points, for every n and eps (docs/blanket-continuous.md §3:
each input's ratio ``r_x(Y)`` is below ``r_high(Y)`` in convex order, the end
points' ratios are monotone in ``y``, so ``Z_{x,x'}`` is below ``Z_{high,low}`` in
increasing convex order, which sums and ``(.)_+`` preserve). The numerics
(:mod:`pld.mechanisms._blanket_sum`) are rigorous for the end-point pair, hence
for the supremum over all pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr, roots_legendre

from pld import _binomial as binom
from pld import _validate
from pld.mechanisms._blanket_sum import contract_to_grid, positive_part_mean, spread_to_grid
from pld.randomizers.base import Randomizer
from pld.randomizers.continuous import GaussianRandomizer, LaplaceRandomizer
from pld.recipes import refinable

#: Grid steps per standard deviation of one blanket term ``Z / gamma`` (at eps = 0).
STEPS_PER_STD = 64
#: Gaussian tail: ``U`` is cut at ``a + GAUSSIAN_REACH`` sigma; the first moment of
#: ``V`` beyond is ``Phi(-GAUSSIAN_REACH) / Phi(-a)`` (about 1e-19), charged.
GAUSSIAN_REACH = 9.0
#: Largest number of lattice cells of one term per eps.
MAX_CELLS = 2**24
#: Relative error bound of each cell mass (Gauss-Legendre with a remainder below
#: 1e-20 on pieces of width <= 1/8 sigma, plus float round-off of a few dozen ulps).
_MASS_ERROR = 1e-13
#: Relative error bound of each cell's conditional mean offset (same reasons).
_OFFSET_ERROR = 1e-12
_UNIT_ROUNDOFF = math.ulp(1.0) / 2
_GL_NODES, _GL_WEIGHTS = roots_legendre(8)
_GL_PIECE = 0.125
_BLOCK = 2**16  # cells per block of Gauss-Legendre work (bounds the memory)
_MAX_LOG_RATIO = 600.0  # largest log V the lattice accepts (e^600 is still a double)
#: Atoms of V heavier than this are put on the grid (per eps).
_ALIGN_ATOM = 1e-6
#: Loss grid step (nats) of the local mechanism's PLD in :func:`best_profile_bounds`
#: (its bracket there is ~1e-4 relative or better, and it builds in milliseconds).
_LOCAL_LOSS_STEP = 1e-3


@dataclass(frozen=True)
class _VLaw:
    """Law of ``V >= 1`` (see module docstring) on ``[1, v_max]`` plus an atom at ``v_max``.

    ``atom`` is the mass at ``v_max`` (for the Gaussian: all mass beyond the cut,
    moved there); ``tail_moment`` bounds ``E[(V - v_max)_+]`` of the true law.
    """

    kind: str
    parameter: float  # Gaussian: k = Delta / sigma; Laplace: Delta / b
    v_max: float
    atom: float
    tail_moment: float
    gamma: float

    def cells(self, lower: np.ndarray, upper: np.ndarray):
        """For V-intervals ``[lower, upper]``: mass, ``E[V - lower; .]``, ``E[upper - V; .]``."""
        if self.kind == "laplace":
            root_low, root_high = np.sqrt(lower), np.sqrt(upper)
            gap = (upper - lower) / (root_high + root_low)
            return gap / (root_low * root_high), gap**2 / root_high, gap**2 / root_low
        parts = [
            _gaussian_cells(self.parameter, lower[i : i + _BLOCK], upper[i : i + _BLOCK])
            for i in range(0, lower.shape[0], _BLOCK)
        ]
        return tuple(np.concatenate([part[j] for part in parts]) for j in range(3))

    def second_moment_about_one(self) -> float:
        """``E[(V - 1)^2]`` (sets the grid step)."""
        if self.kind == "laplace":
            v = self.v_max
            second = (v**1.5 - 1) / 3 + v**1.5
            first = 2 * math.sqrt(v) - 1
        else:
            a = self.parameter / 2
            second = math.exp(4 * a * a) * ndtr(3 * a) / ndtr(-a)
            first = 1 / ndtr(-a) - 1
        return max(second - 2 * first + 1, 1e-300)


def _gaussian_cells(k: float, lower: np.ndarray, upper: np.ndarray):
    """Gauss-Legendre cell integrals for ``V = e^{kU}``, ``U`` density ``phi(u+a)/Phi(-a)``."""
    a = k / 2
    u_low = np.log(lower) / k
    u_high = np.log(upper) / k
    width = u_high - u_low
    pieces = np.maximum(1, np.ceil(width / _GL_PIECE)).astype(np.int64)
    cell = np.repeat(np.arange(lower.shape[0]), pieces)
    start = np.cumsum(pieces) - pieces
    index = np.arange(cell.shape[0]) - start[cell]
    piece_width = width[cell] / pieces[cell]
    piece_low = index * piece_width  # offset from the cell's u_low
    half = piece_width / 2
    offset = piece_low[:, None] + half[:, None] * (1 + _GL_NODES[None, :])  # u - u_low
    u = u_low[cell][:, None] + offset
    log_density = -0.5 * (u + a) ** 2 - 0.5 * math.log(2 * math.pi) - float(log_ndtr(-a))
    density = np.exp(log_density) * (half[:, None] * _GL_WEIGHTS[None, :])
    above = lower[cell][:, None] * np.expm1(k * offset)
    below = -upper[cell][:, None] * np.expm1(k * (offset - width[cell][:, None]))
    sums = np.stack((density.sum(1), (density * above).sum(1), (density * below).sum(1)))
    totals = np.zeros((3, lower.shape[0]))
    for row in range(3):
        totals[row] = np.bincount(cell, weights=sums[row], minlength=lower.shape[0])
    return totals[0], totals[1], totals[2]


def _v_law(randomizer: Randomizer) -> _VLaw:
    _check_type(randomizer)
    if isinstance(randomizer, GaussianRandomizer):
        ratio = randomizer.sensitivity / randomizer.sigma
        log_v_max = ratio * (ratio / 2 + GAUSSIAN_REACH)
    else:
        log_v_max = randomizer.sensitivity / randomizer.scale
    if not randomizer.blanket_mass > 0 or log_v_max > _MAX_LOG_RATIO:
        raise ValueError(
            f"the randomizer has almost no blanket (gamma = {randomizer.blanket_mass:.3g}: the "
            "noise is negligible against the input interval), so shuffling gives no useful "
            "amplification and the blanket lattice would not fit; use a larger noise scale "
            "(sigma or scale of at least (high - low) / 25)"
        )
    if isinstance(randomizer, GaussianRandomizer):
        k = randomizer.sensitivity / randomizer.sigma
        a = k / 2
        cut = a + GAUSSIAN_REACH
        return _VLaw(
            "gaussian",
            k,
            math.exp(k * cut),
            float(ndtr(-(cut + a)) / ndtr(-a)),
            float(ndtr(-(cut - a)) / ndtr(-a)),
            randomizer.blanket_mass,
        )
    gamma = randomizer.blanket_mass  # Laplace
    return _VLaw("laplace", log_v_max, math.exp(log_v_max), gamma, 0.0, gamma)


def _check_type(randomizer: object) -> None:
    if not isinstance(randomizer, (GaussianRandomizer, LaplaceRandomizer)):
        raise ValueError(
            "randomizer must be a continuous randomizer from pld.randomizers.gaussian or "
            f"pld.randomizers.laplace (got {type(randomizer).__name__})"
        )


@dataclass(frozen=True)
class _Term:
    """One blanket term ``Z / gamma`` at one eps, as cells and atoms in grid units."""

    cell_index: np.ndarray  # grid index j of cell [j h, (j+1) h]
    cell_mass: np.ndarray
    cell_offset: np.ndarray  # conditional mean minus j h, in units of h, in [0, 1]
    atoms: np.ndarray  # positions in units of h (sorted)
    atom_mass: np.ndarray
    position_error: float  # absolute, same units as the grid


def _branches(law: _VLaw, alpha: float, step: float) -> _Term:
    v_max = law.v_max
    # Branch "+": Z = V - alpha on V in [1, v_max].
    j_low = math.floor((1 - alpha) / step)
    j_high = math.ceil((v_max - alpha) / step)
    plus = np.arange(j_low, j_high)
    edges = np.clip(alpha + np.arange(j_low, j_high + 1) * step, 1.0, v_max)
    mass_p, above_p, _ = law.cells(edges[:-1], edges[1:])
    offset_p = (edges[:-1] - alpha - plus * step) + above_p / np.where(mass_p > 0, mass_p, 1)
    # Branch "-": Z = 1 - alpha V on V in [1, v_max].
    i_low = math.floor((1 - alpha * v_max) / step)
    i_high = math.ceil((1 - alpha) / step)
    minus = np.arange(i_low, i_high)
    top = (1 - minus * step) / alpha
    bottom = (1 - (minus + 1) * step) / alpha
    v_top = np.clip(top, 1.0, v_max)
    v_bottom = np.clip(bottom, 1.0, v_max)
    mass_m, _, below_m = law.cells(v_bottom, v_top)
    offset_m = alpha * (top - v_top) + alpha * below_m / np.where(mass_m > 0, mass_m, 1)
    index = np.concatenate((minus, plus))
    mass = 0.5 * np.concatenate((mass_m, mass_p))
    offset = np.clip(np.concatenate((offset_m, offset_p)) / step, 0.0, 1.0)
    keep = mass > 0
    atoms = np.array([(1 - alpha * v_max) / step, (v_max - alpha) / step])
    scale = alpha * v_max + v_max + alpha + 1
    position_error = _OFFSET_ERROR * step + 32 * _UNIT_ROUNDOFF * scale
    return _Term(
        index[keep],
        mass[keep],
        offset[keep],
        atoms,
        np.full(2, 0.5 * law.atom),
        position_error,
    )


def _lattice(term: _Term, gamma: float, bound: str) -> tuple[int, np.ndarray]:
    """Lattice law of ``B Z / gamma`` (``B ~ Bernoulli(gamma)``) for one side."""
    atom_index = np.floor(term.atoms).astype(np.int64)
    if bound == "upper":
        first = int(min(term.cell_index.min(initial=atom_index.min()), atom_index.min(), 0))
        last = int(max(term.cell_index.max(initial=atom_index.max()), atom_index.max(), 0)) + 2
        masses = spread_to_grid(
            np.concatenate((term.cell_index, atom_index)),
            np.concatenate((term.cell_offset, term.atoms - atom_index)),
            np.concatenate((term.cell_mass, term.atom_mass)),
            first,
            last - first,
        )
    else:
        positions = np.concatenate(
            (term.atoms[:1], term.cell_index + term.cell_offset, term.atoms[1:])
        )
        weights = np.concatenate((term.atom_mass[:1], term.cell_mass, term.atom_mass[1:]))
        order = np.argsort(positions, kind="stable")
        first, masses = contract_to_grid(positions[order], weights[order])
        if first > 0 or first + masses.shape[0] <= 0:
            low = min(first, 0)
            grown = np.zeros(max(first + masses.shape[0], 1) - low)
            grown[first - low : first - low + masses.shape[0]] = masses
            first, masses = low, grown
    masses = gamma * masses
    masses[-first] += 1.0 - gamma
    return first, masses


def _check_eps(eps: object) -> np.ndarray:
    values = _validate.real_array("eps", eps)
    if np.any(values < 0):
        raise ValueError("eps must be >= 0 (nats)")
    return values


def default_grid_step(randomizer: Randomizer) -> float:
    """Lattice step for ``Z / gamma``: its standard deviation at eps = 0 over ``STEPS_PER_STD``."""
    law = _v_law(randomizer)
    return math.sqrt(law.second_moment_about_one()) / STEPS_PER_STD


def profile_bounds(
    randomizer: Randomizer, n: int, eps: np.ndarray, *, grid_step: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) of the one-round blanket delta(eps) of a shuffled randomizer.

    Evaluates eq. (1) of the module docstring for the end-point pair
    ``(high, low)`` (by symmetry ``(low, high)`` gives the same values), which
    is the worst ordered pair of inputs in ``[low, high]`` for every n and eps
    (proved in docs/blanket-continuous.md §3). The expectation
    is bracketed by lattice laws
    (mean-preserving spread / contraction, second order in the step) and one
    tilted FFT power per eps, with the aliasing, round-off and truncation terms
    of :mod:`pld.mechanisms._blanket_sum`.

    Parameters
    ----------
    randomizer : GaussianRandomizer or LaplaceRandomizer
        From :func:`pld.randomizers.gaussian` or :func:`pld.randomizers.laplace`.
    n : int
        Number of users, >= 1.
    eps : array_like
        Values of eps >= 0 (nats).
    grid_step : float, optional
        Lattice step for ``Z / gamma`` (default :func:`default_grid_step`);
        the bracket's width shrinks like its square.

    Returns
    -------
    lower, upper : ndarray
        Bounds on ``sup_{x, x'} delta_{x,x'}(eps)`` of eq. (1), in [0, 1]; the
        upper one is non-increasing in eps and the lower one too. For
        composition, extend to negative eps by ``delta(-t) = 1 - e^{-t} +
        e^{-t} delta(t)`` (the supremum over ordered pairs is symmetric) before
        :func:`pld.from_privacy_profile` (docs/blanket-continuous.md §6).

    Raises
    ------
    ValueError
        On bad input, or if one eps needs more than ``MAX_CELLS`` cells (then
        increase ``grid_step``).
    """
    law = _v_law(randomizer)
    n = _validate.integer_at_least("n", n, 1)
    eps = _check_eps(eps)
    step = default_grid_step(randomizer) if grid_step is None else grid_step
    step = _validate.positive("grid_step", step)
    alphas = np.exp(eps)
    cells = float(np.max(alphas + 1) * (law.v_max - 1) / step)
    if cells > MAX_CELLS:
        raise ValueError(
            f"eps up to {float(np.max(eps)):g} needs about {cells:.3g} lattice cells per term "
            f"(limit {MAX_CELLS}); increase grid_step (now {step:g}) or lower eps"
        )
    lower = np.zeros(eps.shape[0])
    upper = np.zeros(eps.shape[0])
    for i, alpha in enumerate(alphas):
        if alpha >= law.v_max:
            upper[i] = 0.5 * law.gamma * law.tail_moment
            continue
        # A heavy atom at the top of Z (the Laplace's) goes exactly on the grid,
        # so that the contraction never has to round it (first order).
        local = step
        if law.atom > _ALIGN_ATOM:
            local = (law.v_max - alpha) / math.ceil((law.v_max - alpha) / step)
        term = _branches(law, float(alpha), local)
        for side, out in (("upper", upper), ("lower", lower)):
            first, masses = _lattice(term, law.gamma, side)
            try:
                out[i] = positive_part_mean(
                    first,
                    masses,
                    n,
                    local,
                    side,
                    mass_error=_MASS_ERROR + 8 * _UNIT_ROUNDOFF,
                    position_error=term.position_error,
                )
            except OverflowError as error:
                raise ValueError(
                    f"the blanket sum overflows at n={n}, eps={float(eps[i]):g}: the law of one "
                    "term spans too many orders of magnitude (sigma below about twice "
                    "high - low); use analysis='best', which falls back to the local "
                    "mechanism, or a larger noise scale"
                ) from error
        upper[i] += 0.5 * law.gamma * law.tail_moment
        lower[i] -= 0.5 * law.gamma * float(alpha) * law.tail_moment
    order = np.argsort(eps, kind="stable")
    upper[order] = np.minimum.accumulate(np.clip(upper[order], 0.0, 1.0))
    lower[order] = np.maximum.accumulate(np.clip(lower[order], 0.0, 1.0)[::-1])[::-1]
    return lower, np.maximum(upper, lower)


def local_mechanism(randomizer: Randomizer, loss_grid_step: float | None = None):
    """The local randomizer's own PLD, a valid bound on the shuffled protocol for every n.

    The shuffled view of two neighbouring datasets is a post-processing of the
    target's report alone (the other reports do not depend on the target's input),
    so the local mechanism's privacy-loss distribution dominates the protocol's:
    the Gaussian mechanism with sensitivity ``high - low`` and noise ``sigma``
    (:func:`pld.gaussian`), or the Laplace mechanism with scale ``b`` (:func:`pld.laplace`,
    which needs ``(high - low) / b <= 50``).

    Returns
    -------
    PLD or None
        None for a Laplace randomizer with ``(high - low) / b > 50``.
    """
    _check_type(randomizer)
    if isinstance(randomizer, GaussianRandomizer):
        from pld.mechanisms.gaussian import gaussian

        return gaussian(
            randomizer.sigma, sensitivity=randomizer.sensitivity, loss_grid_step=loss_grid_step
        )
    if randomizer.eps0 > 50.0:
        return None
    from pld.mechanisms.laplace import laplace

    return laplace(randomizer.scale, randomizer.sensitivity, loss_grid_step=loss_grid_step)


def blanket_available(randomizer: Randomizer, n: int) -> bool:
    """Whether :func:`profile_bounds` evaluates the blanket bound at eps = 0 within its limits."""
    try:
        profile_bounds(randomizer, n, np.zeros(1))
    except ValueError:
        return False
    return True


def best_profile_bounds(
    randomizer: Randomizer, n: int, eps: np.ndarray, *, floor: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of ``min(blanket profile, local mechanism's profile)``, never refused.

    Both are valid upper profiles of the shuffled protocol (the local one by
    post-processing, :func:`local_mechanism`), so their minimum is one too. eps
    values are evaluated in increasing order; from the first one at which the
    blanket bound is refused by its cost limits (a tiny blanket mass, or a
    lattice or Fourier grid beyond ``MAX_CELLS`` / ``MAX_NODES``), or at which its
    upper value is at most ``floor``, the blanket component is replaced by its last
    upper value (the blanket profile is non-increasing, so this is still a valid
    upper profile, and the bracket returned is that of the replaced profile), or by
    1 if there is none.

    Parameters
    ----------
    randomizer : GaussianRandomizer or LaplaceRandomizer
    n : int
        Number of users, >= 1.
    eps : array_like
        Values of eps >= 0 (nats).
    floor : float
        Stop evaluating the blanket bound once its upper value is at most this,
        and return the minimum's first upper value at most this for every larger
        eps (on both sides: a valid, non-increasing upper profile).

    Returns
    -------
    lower, upper : ndarray
        Bracket of the minimum profile, in [0, 1].
    """
    _check_type(randomizer)
    n = _validate.integer_at_least("n", n, 1)
    eps = _check_eps(eps)
    lower = np.ones(eps.shape[0])
    upper = np.ones(eps.shape[0])
    held = None
    for i in np.argsort(eps, kind="stable"):
        if held is None:
            try:
                low, high = profile_bounds(randomizer, n, eps[i : i + 1])
                lower[i], upper[i] = low[0], high[0]
                if upper[i] <= floor:
                    held = float(upper[i])
                continue
            except ValueError:
                held = float(np.min(upper))
        lower[i] = upper[i] = held
    local = local_mechanism(randomizer, _LOCAL_LOSS_STEP)
    if local is not None:
        local_lower, local_upper = local.delta_bounds(eps, rel_accuracy=1.0)  # no refinement
        lower = np.minimum(lower, local_lower)
        upper = np.minimum(upper, local_upper)
    if floor > 0:
        # The minimum, too, is held from its first value at the floor on, so that a
        # grid ending at the floor does not move out with the local profile's tail.
        order = np.argsort(eps, kind="stable")
        at_floor = np.flatnonzero(upper[order] <= floor)
        if at_floor.size:
            rest = order[at_floor[0] :]
            lower[rest] = upper[rest] = upper[order[at_floor[0]]]
    return lower, upper


def _laplace_count_pair(randomizer: LaplaceRandomizer, n: int) -> tuple[np.ndarray, ...]:
    """Exact pmfs of the number of reports above a threshold (see :func:`observer`)."""
    b, delta = randomizer.scale, randomizer.sensitivity

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
def observer(randomizer: Randomizer, n: int, *, loss_grid_step: float | None = None):
    """A PLD whose lower bracket, composed, lower-bounds the shuffled protocol's own delta.

    One concrete pair of neighbouring datasets (one user at ``high`` versus
    ``low``, everybody else at ``low``) seen through a post-processing of the
    shuffled reports, so its divergence is at most the protocol's:

    * Gaussian: the sum of all reports, ``N(sum x_i, n sigma^2)``: the Gaussian
      mechanism with sensitivity ``high - low`` and noise ``sigma sqrt(n)``
      (:func:`pld.gaussian`), for every choice of the other inputs.
    * Laplace: the number of reports above a threshold ``t`` (chosen to
      maximise ``(p_high - p_low) / sqrt(p_low (1 - p_low))``), whose law is
      ``Bin(n - 1, p_low) + Bernoulli(p_x)``, ``p_x = P(x + noise > t)``: exact
      binomial pmfs, with the mass beyond 40 standard deviations charged.

    Parameters
    ----------
    randomizer : GaussianRandomizer or LaplaceRandomizer
    n : int
        Number of users, >= 1.
    loss_grid_step : float, optional
        Loss grid step in nats (default: the mechanism's default).

    Returns
    -------
    PLD
        Its *lower* bracket (after any composition) is a lower bound on the
        protocol's delta; its upper bracket only bounds this observer.
    """
    from pld.construction import from_pmfs
    from pld.mechanisms.gaussian import gaussian

    _check_type(randomizer)
    n = _validate.integer_at_least("n", n, 1)
    if isinstance(randomizer, GaussianRandomizer):
        return gaussian(
            randomizer.sigma * math.sqrt(n),
            sensitivity=randomizer.sensitivity,
            loss_grid_step=loss_grid_step,
        )
    log_p, log_q, outside = _laplace_count_pair(randomizer, n)
    return from_pmfs(
        log_p,
        log_q,
        loss_grid_step=loss_grid_step,
        truncated_mass_p=outside,
        truncated_mass_q=outside,
    )
