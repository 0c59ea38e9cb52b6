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
from scipy.special import log_ndtr, ndtr, ndtri_exp, roots_legendre

from pld import _binomial as binom
from pld import _validate
from pld.mechanisms._blanket_sum import (
    FourierNodesError,
    contract_to_grid,
    positive_part_mean,
    spread_to_grid,
)
from pld.randomizers.base import Randomizer
from pld.randomizers.continuous import GaussianRandomizer, LaplaceRandomizer
from pld.recipes import refinable

#: Grid steps per standard deviation of the bulk of ``V`` (:func:`default_grid_step`).
STEPS_PER_STD = 64
#: The bulk of ``V``: below its quantile of this upper tail mass.
_BULK_TAIL = 1e-4
#: Initial reach of the core: the other users' drift plus this many standard deviations.
_REACH_SDS = 10.0
#: The reach grows until the Chernoff remainder is at most this share of the lower
#: bound (or below ``_REMAINDER_FLOOR``); the core has at most ``GROWTH_CELLS`` cells.
REMAINDER_SHARE = 1e-3
_REMAINDER_FLOOR = 1e-20
#: The first reach aims at an estimated remainder below this (then ``REMAINDER_SHARE``).
_FIRST_TARGET = 1e-9
#: The core never reaches beyond the quantile of ``V`` of this upper tail mass.
_NEGLIGIBLE = 1e-30
GROWTH_CELLS = 2**17
#: Beyond ``GROWTH_CELLS`` cells the reach still grows, with a step up to this many
#: times the default (the lattice error grows like its square).
_COARSENING = 8.0
_ATTEMPTS = 4
#: Relative error bound of the closed-form tail masses and moments (scipy's log_ndtr).
_CLOSED_FORM_ERROR = 1e-12
#: Largest rise of the tilted sum's normaliser ``n log M(theta)`` above its minimum
#: (``pld.mechanisms._blanket_sum``): the core's far upper tail must not dominate.
_TILT_GROWTH = 4.0
#: ``pld.shuffle``'s default evaluates the Gaussian's blanket bound only for
#: ``(high - low) / sigma`` up to this (:func:`blanket_available`).
BEST_MAX_RATIO = 1.5
#: Smallest blanket mass accepted (below it, 1 / gamma overflows).
_MIN_BLANKET = 1e-300
#: Largest number of lattice cells of one term per eps.
MAX_CELLS = 2**24
#: Largest number of Fourier nodes of the blanket sum per eps (beyond: a Chernoff bound).
MAX_NODES = 2**20
#: Where a Chernoff bound on the whole upper value is below this, it is the upper value
#: (and the closed-form part the lower one): no Fourier sum.
_NEGLIGIBLE_DELTA = 1e-19
#: Relative error bound of each cell mass (Gauss-Legendre with a remainder below
#: 1e-20 on pieces of width <= 1/8 sigma, plus float round-off of a few dozen ulps).
_MASS_ERROR = 1e-13
#: Relative error bound of each cell's conditional mean offset (same reasons).
_OFFSET_ERROR = 1e-12
_UNIT_ROUNDOFF = math.ulp(1.0) / 2
_GL_NODES, _GL_WEIGHTS = roots_legendre(8)
_GL_PIECE = 0.125
_BLOCK = 2**16  # cells per block of Gauss-Legendre work (bounds the memory)
#: Atoms of V heavier than this are put on the grid (per eps).
_ALIGN_ATOM = 1e-6
#: Loss grid step (nats) of the local mechanism's PLD in :func:`best_profile_bounds`
#: (its bracket there is ~1e-4 relative or better, and it builds in milliseconds).
_LOCAL_LOSS_STEP = 1e-3


@dataclass(frozen=True)
class _VLaw:
    """Law of ``V >= 1`` (module docstring): a density on ``[1, v_max)`` and an atom at ``v_max``.

    Gaussian: ``v_max = inf`` and no atom; Laplace: ``v_max = e^{Delta/b}`` and the
    atom ``gamma``. Tails, moments and cell integrals are closed forms or
    Gauss-Legendre sums (docs/blanket-continuous.md §4).
    """

    kind: str
    parameter: float  # Gaussian: k = Delta / sigma; Laplace: Delta / b
    v_max: float
    atom: float
    gamma: float

    def cells(self, lower: np.ndarray, upper: np.ndarray):
        """For V-intervals ``[lower, upper]``: mass, ``E[V - lower; .]``, ``E[upper - V; .]``."""
        if self.kind == "laplace":
            root_low, root_high = np.sqrt(lower), np.sqrt(upper)
            gap = (upper - lower) / (root_high + root_low)
            return gap / (root_low * root_high), gap**2 / root_high, gap**2 / root_low
        if lower.shape[0] == 0:
            return lower, lower, lower
        parts = [
            _gaussian_cells(self.parameter, lower[i : i + _BLOCK], upper[i : i + _BLOCK])
            for i in range(0, lower.shape[0], _BLOCK)
        ]
        return tuple(np.concatenate([part[j] for part in parts]) for j in range(3))

    def _log_u(self, v: float) -> float:
        return math.log(v) / self.parameter

    def survival(self, v: float) -> float:
        """``P(V > v)``."""
        if v >= self.v_max:
            return 0.0
        if v <= 1.0:
            return 1.0
        if self.kind == "laplace":
            return v**-0.5
        a = self.parameter / 2
        return math.exp(float(log_ndtr(-(self._log_u(v) + a)) - log_ndtr(-a)))

    def moment_above(self, v: float) -> float:
        """``E[V; V > v]`` (uses ``e^{k u} phi(u + a) = phi(u - a)`` for the Gaussian)."""
        if v >= self.v_max:
            return 0.0
        v = max(v, 1.0)
        if self.kind == "laplace":
            return 2.0 * math.sqrt(self.v_max) - math.sqrt(v)
        a = self.parameter / 2
        return math.exp(float(log_ndtr(a - self._log_u(v)) - log_ndtr(-a)))

    def second_moment_below(self, v: float) -> float:
        """``E[V^2; V <= v]`` (Gaussian: ``e^{2ku} phi(u + a) = e^{k^2} phi(u - 3a)``)."""
        if self.kind == "laplace":
            top = min(v, self.v_max)
            value = (top**1.5 - 1.0) / 3.0
            return value + (self.v_max**2 * self.atom if v >= self.v_max else 0.0)
        k = self.parameter
        a = k / 2
        high = float(log_ndtr(self._log_u(max(v, 1.0)) - 3 * a))
        low = float(log_ndtr(-3 * a))
        if high <= low:
            return 0.0
        log_value = k * k + high + math.log1p(-math.exp(low - high)) - float(log_ndtr(-a))
        return math.exp(min(log_value, 700.0))

    def quantile_above(self, mass: float) -> float:
        """The ``v`` with ``P(V > v) = mass`` (at most ``v_max``)."""
        if self.kind == "laplace":
            return min(mass**-2.0, self.v_max)
        a = self.parameter / 2
        u = -float(ndtri_exp(math.log(mass) + float(log_ndtr(-a)))) - a
        return math.exp(self.parameter * max(u, 0.0))

    def moment_quantile(self, moment: float) -> float:
        """The ``v`` with ``E[V; V > v] = moment`` (Gaussian; ``v_max`` for the Laplace)."""
        if self.kind == "laplace":
            return self.v_max
        a = self.parameter / 2
        u = a - float(ndtri_exp(math.log(moment) + float(log_ndtr(-a))))
        return math.exp(self.parameter * max(u, 0.0))

    def bulk_deviation(self) -> float:
        """Standard deviation of ``V`` given ``P(V > v) >= _BULK_TAIL`` (sets the grid step)."""
        top = self.quantile_above(_BULK_TAIL)
        kept = 1.0 - self.survival(top) if top < self.v_max else 1.0
        if self.kind == "laplace":
            mean = (2.0 / self.gamma - 1.0 - self.moment_above(top)) / kept
        else:  # E[V; U <= u] = (Phi(u - a) - Phi(-a)) / Phi(-a), free of cancellation
            a = self.parameter / 2
            high, low = float(log_ndtr(self._log_u(top) - a)), float(log_ndtr(-a))
            mean = math.exp(high - low) * -math.expm1(low - high) / kept
        variance = self.second_moment_below(top) / kept - mean * mean
        return math.sqrt(variance) if variance > (1e-6 * mean) ** 2 else mean


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
    gamma = randomizer.blanket_mass
    if isinstance(randomizer, GaussianRandomizer):
        ratio = randomizer.sensitivity / randomizer.sigma
    else:
        ratio = randomizer.sensitivity / randomizer.scale
    if not gamma > _MIN_BLANKET or (isinstance(randomizer, LaplaceRandomizer) and ratio > 700):
        raise ValueError(
            f"the randomizer has almost no blanket (gamma = {gamma:.3g}: the noise is "
            "negligible against the input interval), so shuffling gives no amplification; "
            "use a larger noise scale (sigma of at least (high - low) / 75, or a Laplace "
            "scale of at least (high - low) / 700)"
        )
    if isinstance(randomizer, GaussianRandomizer):
        return _VLaw("gaussian", ratio, math.inf, 0.0, gamma)
    return _VLaw("laplace", ratio, math.exp(ratio), gamma, gamma)


def _check_type(randomizer: object) -> None:
    if not isinstance(randomizer, (GaussianRandomizer, LaplaceRandomizer)):
        raise ValueError(
            "randomizer must be a continuous randomizer from pld.randomizers.gaussian or "
            f"pld.randomizers.laplace (got {type(randomizer).__name__})"
        )


@dataclass(frozen=True)
class _Term:
    """The core of one blanket term ``Z / gamma`` at one eps, as cells and atoms in grid units.

    The core is ``v_low <= V <= v_plus`` on the branch ``Z = V - alpha`` and
    ``V <= v_minus`` on the branch ``Z = 1 - alpha V``. ``atom_mass`` are the upper
    side's atoms (the lower end one carries the part below the core, moved up to
    ``1 - alpha v_minus``); ``lower_atom_mass`` the lower side's (the law's own atoms).
    """

    cell_index: np.ndarray  # grid index j of cell [j h, (j+1) h]
    cell_mass: np.ndarray
    cell_offset: np.ndarray  # conditional mean minus j h, in units of h, in [0, 1]
    atoms: np.ndarray  # positions in units of h (sorted)
    atom_mass: np.ndarray
    lower_atom_mass: np.ndarray
    position_error: float  # absolute, same units as the grid


def _branches(law: _VLaw, alpha: float, step: float, cuts: tuple[float, float, float]) -> _Term:
    v_low, v_plus, v_minus = cuts
    # Branch "+": Z = V - alpha on V in [v_low, v_plus].
    j_low = math.floor((v_low - alpha) / step)
    j_high = math.ceil((v_plus - alpha) / step)
    plus = np.arange(j_low, j_high)
    edges = np.clip(alpha + np.arange(j_low, j_high + 1) * step, v_low, v_plus)
    mass_p, above_p, _ = law.cells(edges[:-1], edges[1:])
    offset_p = (edges[:-1] - alpha - plus * step) + above_p / np.where(mass_p > 0, mass_p, 1)
    # Branch "-": Z = 1 - alpha V on V in [1, v_minus].
    i_low = math.floor((1 - alpha * v_minus) / step)
    i_high = math.ceil((1 - alpha) / step)
    minus = np.arange(i_low, i_high)
    top = (1 - minus * step) / alpha
    bottom = (1 - (minus + 1) * step) / alpha
    v_top = np.clip(top, 1.0, v_minus)
    v_bottom = np.clip(bottom, 1.0, v_minus)
    mass_m, _, below_m = law.cells(v_bottom, v_top)
    offset_m = alpha * (top - v_top) + alpha * below_m / np.where(mass_m > 0, mass_m, 1)
    index = np.concatenate((minus, plus))
    mass = 0.5 * np.concatenate((mass_m, mass_p))
    offset = np.clip(np.concatenate((offset_m, offset_p)) / step, 0.0, 1.0)
    keep = mass > 0
    # The law's own atom at v_max lies in the core on a branch cut at v_max.
    true_atoms = 0.5 * law.atom * np.array([v_minus >= law.v_max, v_plus >= law.v_max])
    clipped = np.array([0.5 * (law.survival(v_minus) + 1.0 - law.survival(v_low)), 0.0])
    atoms = np.array([(1 - alpha * v_minus) / step, (v_plus - alpha) / step])
    atoms[true_atoms + clipped == 0] = 0.0  # massless: kept out of the lattice's span
    scale = alpha * v_minus + v_plus + alpha + 1
    position_error = _OFFSET_ERROR * step + 32 * _UNIT_ROUNDOFF * scale
    return _Term(
        index[keep],
        mass[keep],
        offset[keep],
        atoms,
        true_atoms + clipped,
        true_atoms,
        position_error,
    )


def _lattice(term: _Term, gamma: float, bound: str) -> tuple[int, np.ndarray]:
    """Lattice law of ``B Z / gamma`` on the core (``B ~ Bernoulli(gamma)``) for one side."""
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
        weights = np.concatenate(
            (term.lower_atom_mass[:1], term.cell_mass, term.lower_atom_mass[1:])
        )
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


@dataclass(frozen=True)
class _Tails:
    """Closed forms of the parts of one term ``B Z / gamma`` beyond the core (module docstring).

    ``P``: ``Z = V - alpha`` with ``V > v_plus`` (``Z > t``); ``N``: ``Z = 1 - alpha V``
    with ``V > v_minus``, or ``Z = V - alpha`` with ``V < v_low``. Masses ``p``, ``q``
    and first moments ``e_p``, ``e_n`` of ``B Z / gamma`` on them; ``e_core`` on the
    core (``E[B Z / gamma] = 1 - alpha``).
    """

    p: float
    q: float
    e_p: float
    e_n: float
    e_core: float
    cut: float  # (1 - alpha v_minus): where the upper side puts N
    tail_error: float  # float error bounds (absolute) of e_p and of e_core
    core_error: float

    @classmethod
    def of(cls, law: _VLaw, alpha: float, cuts: tuple[float, float, float]) -> _Tails:
        v_low, v_plus, v_minus = cuts
        half = 0.5 * law.gamma
        survival_plus, survival_minus = law.survival(v_plus), law.survival(v_minus)
        moment_plus, moment_minus = law.moment_above(v_plus), law.moment_above(v_minus)
        below = 1.0 - law.survival(v_low)
        moment_below = (2.0 / law.gamma - 1.0 - law.moment_above(v_low)) if below > 0 else 0.0
        e_p = half * (moment_plus - alpha * survival_plus)
        e_n = half * (survival_minus - alpha * moment_minus + moment_below - alpha * below)
        e_core = (1.0 - alpha) - e_p - e_n
        size = half * (moment_plus + alpha * survival_plus + survival_minus + alpha * moment_minus)
        size += half * (moment_below + alpha * below + 2.0 / law.gamma)
        tail_error = _CLOSED_FORM_ERROR * half * (moment_plus + alpha * survival_plus)
        core_error = _CLOSED_FORM_ERROR * size + 8 * _UNIT_ROUNDOFF * (abs(1.0 - alpha) + size)
        return cls(
            half * survival_plus,
            half * (survival_minus + below),
            e_p,
            e_n,
            e_core,
            1.0 - alpha * v_minus,
            tail_error,
            core_error,
        )

    def _others_with_p(self, n: int, without: float) -> float:
        """``1 - (1 - p / (1 - without))^(n - 1)``: some other user has P (given none has N)."""
        return -math.expm1((n - 1) * math.log1p(-self.p / (1.0 - without)))

    def upper_term(self, n: int) -> float:
        """``(1/n) E[S; K_P >= 1]`` with N moved up to ``cut`` (closed form, plus its error)."""
        mean_rest = self.e_core + self.q * self.cut
        weight = self._others_with_p(n, 0.0)
        error = self.tail_error + weight * (self.core_error + 1e-12 * abs(mean_rest))
        return weight * mean_rest + self.e_p + error

    def lower_term(self, n: int) -> float:
        """``(1/n) E[S; K_P >= 1, K_N = 0]`` (``(.)_+ >= .``), less its error."""
        none_n = math.exp((n - 1) * math.log1p(-self.q)) if self.q < 1 else 0.0
        weight = self._others_with_p(n, self.q)
        error = self.tail_error + weight * (self.core_error + 1e-12 * abs(self.e_core))
        return none_n * (weight * self.e_core + self.e_p - error)


def _chernoff_negative(z: np.ndarray, log_mass: np.ndarray, count: int, shift: float) -> float:
    """Bound on ``E[(shift + W_1 + ... + W_count)_-]`` for i.i.d. ``W`` with atoms ``(z, mass)``.

    Chernoff: ``x_- <= e^{-theta x - 1} / theta`` for every ``theta > 0``; the masses'
    relative error ``_MASS_ERROR`` and the sums' round-off are charged per term.
    """
    if count == 0:
        return max(-shift, 0.0)
    from scipy.optimize import minimize_scalar  # scipy.optimize takes 0.15 s to import

    slack = count * math.log1p(_MASS_ERROR + 64 * _UNIT_ROUNDOFF * math.log2(z.shape[0] + 2))
    scale = max(float(np.max(np.abs(z))), 1e-300)

    def log_bound(log_theta: float) -> float:
        theta = math.exp(log_theta)
        values = log_mass - theta * z
        top = float(np.max(values))
        log_mgf = top + math.log(float(np.sum(np.exp(values - top))))
        return -theta * shift - 1.0 - log_theta + count * log_mgf + slack

    low, high = math.log(1e-6 / (scale * count)), math.log(700.0 / scale)
    best = minimize_scalar(log_bound, bounds=(low, high), method="bounded", options={"xatol": 1e-3})
    value = min(float(best.fun), log_bound(low), log_bound(high))
    return math.exp(min(value, 700.0))


def _atoms(first: int, masses: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    keep = np.flatnonzero(masses > 0)
    return (first + keep) * step, np.log(masses[keep])


def _negative_part(first: int, masses: np.ndarray, step: float, others: int, t: float, p: float):
    """Bound on ``E[(t + W_1 + ... + W_others)_-]``, ``W`` = the lattice law plus ``p`` at ``t``.

    The upper lattice (a mean-preserving spread) bounds ``E[e^{-theta W}]`` from
    above (convexity), so :func:`_chernoff_negative` applies to it.
    """
    z, log_mass = _atoms(first, masses, step)
    if p > 0:
        z, log_mass = np.append(z, t), np.append(log_mass, math.log(p))
    return _chernoff_negative(z, log_mass, others, t)


def _check_eps(eps: object) -> np.ndarray:
    values = _validate.real_array("eps", eps)
    if np.any(values < 0):
        raise ValueError("eps must be >= 0 (nats)")
    return values


def default_grid_step(randomizer: Randomizer) -> float:
    """Lattice step for ``Z / gamma``: the deviation of ``V``'s bulk over ``STEPS_PER_STD``.

    The bulk is ``V`` below its ``1 - _BULK_TAIL`` quantile: for small noise the
    full variance of ``V`` (log-normal tails) is set by values that almost never occur.
    """
    return _v_law(randomizer).bulk_deviation() / STEPS_PER_STD


def _cut_for(law: _VLaw, n: int, alpha: float, t: float, largest: float, target: float) -> float:
    """A core reach from ``t`` up (at most ``largest``): the first on a geometric ladder
    whose estimated remainder ``p(t) E[(t + W_1 + ... + W_{n-1})_-]`` (a normal
    approximation of the sum) is below ``target``; the rigorous remainder is
    computed afterwards (:func:`_one_eps`)."""
    t = min(t, largest)
    while t < largest:
        v = alpha + t
        p = 0.5 * law.gamma * law.survival(v)
        second = law.second_moment_below(v) - 2 * (2 / law.gamma - 1) + 1  # E[(V - 1)^2; core]
        spread = math.sqrt(max((n - 1) * 0.5 * law.gamma * (1 + alpha * alpha) * second, 1e-300))
        mean = t + (n - 1) * (1 - alpha)
        ratio = min(abs(mean / spread), 1e100)
        negative = spread * math.exp(-0.5 * ratio * ratio) / math.sqrt(2 * math.pi)
        negative -= mean * float(ndtr(-mean / spread))
        if p * max(negative, 0.0) <= target:
            break
        t = min(1.5 * t, largest)
    return t


def profile_bounds(
    randomizer: Randomizer,
    n: int,
    eps: np.ndarray,
    *,
    grid_step: float | None = None,
    chernoff_only: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) of the one-round blanket delta(eps) of a shuffled randomizer.

    Evaluates eq. (1) of the module docstring for the end-point pair
    ``(high, low)`` (by symmetry ``(low, high)`` gives the same values), which
    is the worst ordered pair of inputs in ``[low, high]`` for every n and eps
    (proved in docs/blanket-continuous.md §3). Each term is split at a reach ``t``
    (docs/blanket-continuous.md §4b): its core is bracketed by lattice laws
    (mean-preserving spread / contraction, second order in the step) and one
    tilted characteristic-function sum per eps, with the aliasing, round-off and
    truncation terms of :mod:`pld.mechanisms._blanket_sum`; the users whose term
    exceeds ``t`` enter by the exact closed form of ``E[S; some term > t]`` (Gaussian
    tail functions) and a Chernoff bound on the negative part there, which is kept
    below ``REMAINDER_SHARE`` of the result (``t`` grows until it is, within
    ``GROWTH_CELLS`` cells).

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
    chernoff_only : bool
        Only a quick upper value (a Chernoff bound on the core instead of the Fourier
        sum; lower values 0): for choosing grids.

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
    lower = np.zeros(eps.shape[0])
    upper = np.zeros(eps.shape[0])
    smallest = _REACH_SDS * law.bulk_deviation()
    if 2 * smallest / step > MAX_CELLS:
        raise ValueError(
            f"grid_step = {step:g} is too small: a term's core needs about "
            f"{2 * smallest / step:.3g} lattice cells (limit {MAX_CELLS}); increase grid_step"
        )
    for i, alpha in enumerate(np.exp(eps)):
        alpha = float(alpha)
        if alpha >= law.v_max:  # the Laplace's Z <= 0
            continue
        largest = GROWTH_CELLS * step / 2
        # Where the whole tail beyond v has E[V; V > v] negligible and v is affordable,
        # the core reaches v (one attempt); else the reach is fitted to the drift.
        short = law.moment_quantile(_NEGLIGIBLE_DELTA / law.gamma) - alpha
        if smallest <= short <= largest:
            t = short
        else:
            t = _cut_for(law, n, alpha, smallest, largest, _FIRST_TARGET)
        local = step
        lower[i], upper[i] = 0.0, math.inf
        # Every (reach, step) gives a valid bracket: keep the best of both sides.
        for _ in range(_ATTEMPTS):
            low, high, remainder, failed = _one_eps(law, n, alpha, local, t, chernoff_only)
            lower[i], upper[i] = max(lower[i], low), min(upper[i], high)
            wanted = max(REMAINDER_SHARE * lower[i], _REMAINDER_FLOOR)
            if failed and local < _COARSENING * step:  # Fourier grid too large: coarser
                local *= 2
            elif remainder > wanted and t < _COARSENING * largest:  # reach further
                t = _cut_for(law, n, alpha, 2 * t, _COARSENING * largest, wanted / 8)
                local = max(local, 2 * t / GROWTH_CELLS)
            else:
                break
    order = np.argsort(eps, kind="stable")
    upper[order] = np.minimum.accumulate(np.clip(upper[order], 0.0, 1.0))
    lower[order] = np.maximum.accumulate(np.clip(lower[order], 0.0, 1.0)[::-1])[::-1]
    return lower, np.maximum(upper, lower)


def _one_eps(law: _VLaw, n: int, alpha: float, step: float, t: float, chernoff_only: bool):
    """(lower, upper, remainder, failed) at one eps with the core reach ``t`` (remainder 0:
    no use in growing ``t``, the core already reaches the law's negligible tail; failed:
    the Fourier grid was too large, a Chernoff bound stands in)."""
    v_cap = min(law.quantile_above(_NEGLIGIBLE), law.v_max)
    v_plus = min(alpha + t, v_cap)
    v_minus = min((1 + t) / alpha, v_cap)
    cuts = (min(max(1.0, alpha - t), v_plus), v_plus, v_minus)
    local = step
    # A heavy atom at the top of Z (the Laplace's) goes exactly on the grid,
    # so that the contraction never has to round it (first order).
    if law.atom > _ALIGN_ATOM and v_plus >= law.v_max:
        local = (law.v_max - alpha) / math.ceil((law.v_max - alpha) / step)
    term = _branches(law, alpha, local, cuts)
    tails = _Tails.of(law, alpha, cuts)
    out = {}
    failed = False
    first, masses = _lattice(term, law.gamma, "upper")
    remainder = tails.p * _negative_part(first, masses, local, n - 1, v_plus - alpha, tails.p)
    z, log_mass = _atoms(first, masses, local)
    # E[(S)_+] = E[(-S)_-]: a Chernoff bound first; where it is negligible, no Fourier sum.
    cheap = _chernoff_negative(-z, log_mass, n, 0.0) / n
    if chernoff_only or cheap + max(tails.upper_term(n), 0.0) + remainder <= _NEGLIGIBLE_DELTA:
        upper = cheap + tails.upper_term(n) + remainder
        return max(tails.lower_term(n), 0.0), upper, 0.0, False
    for side in ("upper", "lower"):
        if side == "lower":
            first, masses = _lattice(term, law.gamma, side)
        try:
            out[side] = positive_part_mean(
                first,
                masses,
                n,
                local,
                side,
                mass_error=_MASS_ERROR + 8 * _UNIT_ROUNDOFF,
                position_error=term.position_error,
                tilt_growth=_TILT_GROWTH,
                max_nodes=MAX_NODES,
            )
        except FourierNodesError:
            # Too wide a sum for the Fourier grid: the Chernoff bound for the upper
            # side, nothing for the lower one.
            out[side] = cheap if side == "upper" else 0.0
            failed = True
    out["upper"] = min(out["upper"], cheap)
    upper = out["upper"] + tails.upper_term(n) + remainder
    lower = out["lower"] + tails.lower_term(n)
    saturated = v_plus >= v_cap and v_minus >= v_cap and cuts[0] == 1.0
    return lower, upper, remainder if not saturated else 0.0, failed


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
    """Whether ``pld.shuffle``'s default uses the blanket bound of a Gaussian randomizer.

    Only for ``(high - low) / sigma <= BEST_MAX_RATIO`` (below, the law of a term
    spans so many orders of magnitude that the evaluation takes minutes; the local
    mechanism is then returned), and where :func:`profile_bounds` evaluates eps = 0.
    """
    if isinstance(randomizer, GaussianRandomizer):
        if randomizer.sensitivity / randomizer.sigma > BEST_MAX_RATIO:
            return False
    try:
        profile_bounds(randomizer, n, np.zeros(1))
    except ValueError:
        return False
    return True


def best_profile_bounds(
    randomizer: Randomizer,
    n: int,
    eps: np.ndarray,
    *,
    floor: float = 0.0,
    chernoff_only: bool = False,
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
    chernoff_only : bool
        The blanket component's quick upper values (:func:`profile_bounds`).

    Returns
    -------
    lower, upper : ndarray
        Bracket of the minimum profile, in [0, 1].
    """
    components, _ = best_profile_components(
        randomizer, n, eps, floor=floor, chernoff_only=chernoff_only
    )
    eps = _check_eps(eps)
    lower = np.minimum.reduce([low for low, _ in components])
    upper = np.minimum.reduce([high for _, high in components])
    if floor > 0:
        # The minimum, too, is held from its first value at the floor on, so that a
        # grid ending at the floor does not move out with the local profile's tail.
        order = np.argsort(eps, kind="stable")
        at_floor = np.flatnonzero(upper[order] <= floor)
        if at_floor.size:
            rest = order[at_floor[0] :]
            lower[rest] = upper[rest] = upper[order[at_floor[0]]]
    return lower, upper


def best_profile_components(
    randomizer: Randomizer,
    n: int,
    eps: np.ndarray,
    *,
    floor: float = 0.0,
    chernoff_only: bool = False,
) -> tuple[list[tuple[np.ndarray, np.ndarray]], bool]:
    """The (lower, upper) brackets of the profiles whose minimum :func:`best_profile_bounds` is.

    The blanket profile's bracket (held from the first refused or floor value on,
    as described there) and, where it exists, the local mechanism's. The flag says
    whether nothing was held: then each bracket is that of a convex privacy profile
    (the blanket term is ``E[(A - e^eps B)_+]``, convex in ``e^eps``; the local
    mechanism's is a hockey-stick divergence), so a lower curve below every profile
    between grid points can be built from them (``profile.below_every_profile``).

    Parameters
    ----------
    randomizer : GaussianRandomizer or LaplaceRandomizer
    n : int
        Number of users, >= 1.
    eps : array_like
        Values of eps >= 0 (nats).
    floor, chernoff_only
        As in :func:`best_profile_bounds`.

    Returns
    -------
    components : list of (lower, upper)
        Brackets in [0, 1] at ``eps``.
    convex : bool
        True when no blanket value was held.
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
                low, high = profile_bounds(
                    randomizer, n, eps[i : i + 1], chernoff_only=chernoff_only
                )
                lower[i], upper[i] = low[0], high[0]
                if upper[i] <= floor:
                    held = float(upper[i])
                continue
            except ValueError:
                held = float(np.min(upper))
        lower[i] = upper[i] = held
    components = [(lower, upper)]
    local = local_mechanism(randomizer, _LOCAL_LOSS_STEP)
    if local is not None:
        components.append(local.delta_bounds(eps, rel_accuracy=1.0))  # no refinement
    return components, held is None


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
