"""One blanket term of a shuffled continuous randomizer at one eps, on a lattice.

The core of ``Z / gamma`` as cells and atoms in grid units (spread upwards for the upper
bound, contracted for the lower one), its closed-form tails beyond the core and the
Chernoff bound on the negative part (docs/blanket-continuous.md §4, §4b).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pld.numerics import UNIT_ROUNDOFF
from pld.numerics.iid_sums import log_sum_exp, mgf_log_error
from pld.shuffling.blanket.continuous_law import VLaw
from pld.shuffling.blanket.continuous_sum import (
    contract_to_grid,
    spread_to_grid,
    with_zero_atom,
)

#: Relative error bound of each cell mass (Gauss-Legendre with a remainder below
#: 1e-20 on pieces of width <= 1/8 sigma, plus float round-off of a few dozen ulps).
MASS_ERROR = 1e-13
#: Relative error bound of the closed-form tail masses and moments (scipy's log_ndtr).
CLOSED_FORM_ERROR = 1e-12
#: Relative error bound of each cell's conditional mean offset (same reasons).
_OFFSET_ERROR = 1e-12


#: Blocks of atoms on which :func:`chernoff_negative` searches its exponent.
_CHERNOFF_BLOCKS = 4096


@dataclass(frozen=True)
class Term:
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


def branches(law: VLaw, alpha: float, step: float, cuts: tuple[float, float, float]) -> Term:
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
    position_error = _OFFSET_ERROR * step + 32 * UNIT_ROUNDOFF * scale
    return Term(
        index[keep],
        mass[keep],
        offset[keep],
        atoms,
        true_atoms + clipped,
        true_atoms,
        position_error,
    )


def lattice(term: Term, gamma: float, bound: str) -> tuple[int, np.ndarray]:
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
    return with_zero_atom(first, masses, gamma)


@dataclass(frozen=True)
class Tails:
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
    def of(cls, law: VLaw, alpha: float, cuts: tuple[float, float, float]) -> Tails:
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
        tail_error = CLOSED_FORM_ERROR * half * (moment_plus + alpha * survival_plus)
        core_error = CLOSED_FORM_ERROR * size + 8 * UNIT_ROUNDOFF * (abs(1.0 - alpha) + size)
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


def chernoff_negative(z: np.ndarray, log_mass: np.ndarray, count: int, shift: float) -> float:
    """Bound on ``E[(shift + W_1 + ... + W_count)_-]`` for i.i.d. ``W`` with atoms ``(z, mass)``.

    Chernoff: ``x_- <= e^{-theta x - 1} / theta`` for every ``theta > 0``; the masses'
    relative error ``MASS_ERROR`` and the sums' round-off are charged per term. Any
    ``theta`` gives a valid bound: it is searched on the atoms merged into
    ``_CHERNOFF_BLOCKS`` blocks at their lowest point (an upper bound on the MGF of
    ``-W``), then refined near the best on the atoms themselves.
    """
    if count == 0:
        return max(-shift, 0.0)
    from scipy.optimize import minimize_scalar  # scipy.optimize takes 0.15 s to import

    slack = count * math.log1p(MASS_ERROR + mgf_log_error(z.shape[0]))
    scale = max(float(np.max(np.abs(z))), 1e-300)
    order = np.argsort(z, kind="stable")
    # The lowest point of each block: e^{-theta z} largest there.
    block_z, block_mass = _merged_blocks(z[order], log_mass[order], "lowest")

    def log_bound(log_theta: float, points: np.ndarray, logs: np.ndarray) -> float:
        theta = math.exp(log_theta)
        log_mgf = float(log_sum_exp(logs - theta * points))
        return -theta * shift - 1.0 - log_theta + count * log_mgf + slack

    low, high = math.log(1e-6 / (scale * count)), math.log(700.0 / scale)
    coarse = minimize_scalar(
        log_bound,
        bounds=(low, high),
        args=(block_z, block_mass),
        method="bounded",
        options={"xatol": 1e-2},
    )
    near = (max(low, float(coarse.x) - 0.5), min(high, float(coarse.x) + 0.5))
    best = minimize_scalar(
        log_bound, bounds=near, args=(z, log_mass), method="bounded", options={"xatol": 1e-3}
    )
    value = min(float(best.fun), log_bound(low, z, log_mass), log_bound(high, z, log_mass))
    return math.exp(min(value, 700.0))


def _merged_blocks(z: np.ndarray, log_mass: np.ndarray, end: str) -> tuple[np.ndarray, np.ndarray]:
    """Ascending atoms ``(z, log mass)`` merged into at most ``_CHERNOFF_BLOCKS`` blocks of
    consecutive atoms, each at its ``end`` ("lowest" or "highest") point: the MGF at
    negative (positive) exponents can only rise."""
    width = max(1, -(-z.shape[0] // _CHERNOFF_BLOCKS))
    size = -(-z.shape[0] // width) * width
    padded_mass = np.full(size, -np.inf)
    padded_mass[: z.shape[0]] = log_mass
    padded_z = np.full(size, float(z[-1]))
    padded_z[: z.shape[0]] = z
    with np.errstate(divide="ignore"):  # blocks of padding only: log 0 = -inf
        block_mass = log_sum_exp(padded_mass.reshape(-1, width), axis=1)
    return padded_z.reshape(-1, width)[:, 0 if end == "lowest" else -1], block_mass


def atoms(first: int, masses: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    keep = np.flatnonzero(masses > 0)
    return (first + keep) * step, np.log(masses[keep])


def negative_part(first: int, masses: np.ndarray, step: float, others: int, t: float, p: float):
    """Bound on ``E[(t + W_1 + ... + W_others)_-]``, ``W`` = the lattice law plus ``p`` at ``t``.

    The upper lattice (a mean-preserving spread) bounds ``E[e^{-theta W}]`` from
    above (convexity), so :func:`chernoff_negative` applies to it.
    """
    z, log_mass = atoms(first, masses, step)
    if p > 0:
        z, log_mass = np.append(z, t), np.append(log_mass, math.log(p))
    return chernoff_negative(z, log_mass, others, t)


#: Exponents of :func:`one_jump_upper` (log-spaced; any exponent gives a valid bound).
_JUMP_EXPONENTS = 96
#: Ratio between consecutive bucket ends of ``V`` in :func:`one_jump_upper`.
_JUMP_RATIO = 1.02


def one_jump_upper(
    law: VLaw,
    alpha: float,
    v_plus: float,
    v_cap: float,
    first: int,
    masses: np.ndarray,
    step: float,
    n: int,
    tails: Tails,
) -> float:
    """Bound on ``(1/n) E[(S')_+; K_P >= 1]`` one jump at a time (docs/blanket-continuous.md §4d).

    On ``{i in P}``, ``S' = X_i + R_i + sum_{j != i, j in P} X_j`` with ``R_i`` the other
    users' terms with their ``P`` values set to 0, and the ``P`` values positive, so
    ``(S')_+ <= (X_i + R_i)_+ + sum_{j != i, j in P} X_j``; summing over ``i`` (the
    indicator of ``K_P >= 1`` is at most ``sum_i 1{i in P}``) and dividing by ``n``:

        (1/n) E[(S')_+; K_P >= 1] <= E[G(X); X in P] + (n - 1) p e_P,
        G(x) = E[(x + R)_+],  R = W'_1 + ... + W'_{n-1},

    ``W'`` the upper lattice law of the core and ``N`` (``masses`` from ``first``,
    grid ``step``; its atoms merged into blocks at their highest point, which raises
    its MGF at positive exponents) plus the mass ``p`` at 0. ``G`` is non-decreasing, so on the
    bucket ``V in (v_k, v_{k+1}]`` of ``P`` (ratio ``_JUMP_RATIO``, from ``v_plus``
    to ``v_cap``) it is at most ``G(v_{k+1} - alpha)``, which is at most ``x + G(0)``
    (``(x + r)_+ <= x + r_+`` for ``x >= 0``) and, by Chernoff (``y_+ <= e^{theta y -
    1} / theta``), at most ``min_theta e^{theta x - 1 + (n-1) log M(theta)} / theta``
    with ``M`` the MGF of the upper lattice law (a mean-preserving spread raises it),
    on a grid of exponents. Beyond ``v_cap``, ``G(x) <= x + G(0)``. Where the other
    users' drift is far below zero (small noise, large eps) this replaces the
    remainder of §4b, which there cancels against ``E[S'; K_P >= 1]`` and leaves the
    bracket wide.
    """
    if n == 1:
        return tails.e_p
    z, log_mass = atoms(first, masses, step)
    size = z.shape[0]
    # An upper bound on M(theta), theta > 0, at a few thousand terms.
    z, log_mass = _merged_blocks(z, log_mass, "highest")
    if tails.p > 0:
        z, log_mass = np.append(z, 0.0), np.append(log_mass, math.log(tails.p))
    others = n - 1
    slack = others * math.log1p(MASS_ERROR + mgf_log_error(size + 1))
    scale = max(float(np.max(np.abs(z))), 1e-300)
    smallest = min(1e-6 / (scale * others), 1.0 / max(v_cap, 1.0))
    theta = np.exp(np.linspace(math.log(smallest), math.log(700.0 / scale), _JUMP_EXPONENTS))
    log_mgf = log_sum_exp(log_mass[np.newaxis, :] + theta[:, np.newaxis] * z, axis=1)
    base = others * log_mgf + slack - 1.0 - np.log(theta)
    half = 0.5 * law.gamma
    count = max(1, math.ceil(math.log(max(v_cap / v_plus, 1.0)) / math.log(_JUMP_RATIO)))
    ends = v_plus * _JUMP_RATIO ** np.arange(count + 1)
    ends[-1] = max(v_cap, v_plus)
    survival = np.array([law.survival(float(v)) for v in ends])
    with np.errstate(over="ignore"):
        log_g = np.min(base[np.newaxis, :] + (ends[1:, np.newaxis] - alpha) * theta, axis=1)
        g_zero = math.exp(min(float(np.min(base)), 700.0))
        g = np.minimum(np.exp(np.minimum(log_g, 700.0)), ends[1:] - alpha + g_zero)
    bucket = np.maximum(survival[:-1] - survival[1:], 0.0) + 2 * CLOSED_FORM_ERROR * survival[:-1]
    inside = half * float(np.sum(bucket * g))
    top = ends[-1]
    beyond = half * (law.moment_above(top) + (g_zero - alpha) * law.survival(top))
    beyond = max(beyond, 0.0) * (1 + 2 * CLOSED_FORM_ERROR)
    jumps = others * tails.p * (tails.e_p + tails.tail_error)
    total = (inside + beyond + jumps) * (1 + 8 * UNIT_ROUNDOFF * (count + 4))
    return total


def one_jump_lower(law: VLaw, alpha: float, v_plus: float, n: int, tails: Tails) -> float:
    """Lower bound on ``(1/n) E[(S)_+; K_P = 1, K_N = 0]`` (docs/blanket-continuous.md §4d).

    On ``{i in P, every other user in the core}``, ``S = X_i + R_i`` with ``R_i`` a sum
    of ``n - 1`` core terms; by Jensen given ``X_i``, ``E[(X_i + R_i)_+ | X_i] >= (X_i +
    m)_+`` with ``m = (n - 1) e_core / (1 - p - q)`` their conditional mean, so the
    value is at least ``(1 - p - q)^(n - 1) E[(X + m)_+; X in P]``, a closed form:
    ``(gamma / 2) (E[V; V > v] - (alpha - m) P(V > v))`` at ``v = max(v_plus, alpha -
    m)``. Where one report far beyond the others' drift makes the positive part (small
    noise, large eps) this is close to the upper bound of :func:`one_jump_upper`.
    """
    core = 1.0 - tails.p - tails.q
    if core <= 0.0 or n == 1:
        return max(tails.e_p, 0.0) if n == 1 else 0.0
    mean = (n - 1) * (tails.e_core - tails.core_error) / core
    v = max(v_plus, alpha - mean)
    moment, survival = law.moment_above(v), law.survival(v)
    size = moment + (alpha - mean) * survival
    value = 0.5 * law.gamma * (moment - (alpha - mean) * survival - 2 * CLOSED_FORM_ERROR * size)
    weight = math.exp((n - 1) * math.log(core)) * (1 - 4 * UNIT_ROUNDOFF * n)
    return max(value * weight, 0.0)
