"""Rigorous brackets on E[(W_1 + ... + W_n)_+] / n for i.i.d. finite W (the blanket divergence).

For a finite randomizer and an ordered pair of inputs (x, x'), the blanket
divergence of the shuffled protocol (issue text of :mod:`pld.mechanisms.blanket`,
Balle et al. 2019, seed 002 §5) is

    delta(eps) = (1/n) E[(sum_{i=1..n} W_i)_+],   W = rho_x(Y) - e^eps rho_x'(Y) w.p. omega_min(Y),
                                                  W = 0 w.p. 1 - gamma,

with ``rho_x(y) = R(x)(y) / omega_min(y)``: the ``(1 / (n gamma)) E[(sum B_i Z_i)_+]``
of the blanket analysis with ``Z = gamma (rho_x - e^eps rho_x')``. W takes one value
per class of outputs (:meth:`pld.randomizers.finite.FiniteRandomizer.blanket_classes`).

Exact path (small n): every count vector of the n users over the classes (plus
the zero class) is enumerated; the masses are multinomial probabilities.

Block path (large n): the law of a block S_m = W_1 + ... + W_m is enumerated
exactly (its atoms are dense on the scale of the lattice below), then put on a
lattice of step h in two ways:

* upper: each atom's mass is split between the two lattice points around it with
  its mean preserved (a mean-preserving spread). Convex order is preserved by
  sums of independent variables and ``(.)_+`` is convex, so the n-fold value can
  only grow; the error is second order in h (a variance inflation of h^2/4 per
  block).
* lower: a left-to-right sweep merges the carried mass with just enough of the
  next atom to land exactly on the lattice point between them (a contraction:
  conditional expectations), merging whole atoms when that is not possible;
  the last carry is moved down to the lattice point below (``(.)_+`` is
  non-decreasing). Every merge is a contraction, so the value can only shrink.

Both lattice laws are exponentially tilted by ``e^(theta s)`` with the saddle
point theta of W (mean zero after tilting), so that the FFT window only needs to
hold the bulk of the tilted law: ``E[S_+] = M(theta)^n E_theta[S_+ e^(-theta S)]``.
The window's left-out tilted mass is bounded by Chernoff bounds and charged
(upper: the largest weight ``s e^(-theta s)`` beyond the window; lower: the largest
weight anywhere, for mass folded in by the circular convolution); the FFT
round-off is bounded bin by bin as in :mod:`pld.engine.compose`
(docs/error-bounds.md §4). Computed positions are moved by a relative 1e-10
(up for the upper, down for the lower side) to cover their float error.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from scipy.special import gammaln, logsumexp

from pld.engine import fft

#: Largest number of count vectors enumerated for one block (or the exact path).
BLOCK_ATOMS = 60_000

#: Lattice steps per standard deviation of one tilted block.
STEPS_PER_BLOCK_STD = 32

#: Where the Chernoff bound on delta is below this, it is the upper value (lower 0).
NEGLIGIBLE = 1e-40

#: Largest number of lattice cells of one block.
MAX_BLOCK_CELLS = 2**20

#: Longest FFT of one evaluation; a longer window makes the lattice coarser (the
#: bracket widens, it stays rigorous).
MAX_FFT_LENGTH = 2**22

#: Target bound on the tilted mass outside the FFT window, per side.
WINDOW_TAIL = 1e-18

#: Relative error claimed for each enumerated multinomial mass (gammaln sums).
ATOM_MASS_ERROR = 1e-12

#: Relative displacement covering the float error of computed positions.
POSITION_ERROR = 1e-10

_U = 2.0**-53


def compositions(total: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative integers summing to ``total`` (one per row)."""
    rows = np.zeros((1, 0), dtype=np.int64)
    remaining = np.array([total], dtype=np.int64)
    for _ in range(parts - 1):
        sizes = remaining + 1
        parent = np.repeat(np.arange(rows.shape[0]), sizes)
        starts = np.cumsum(sizes) - sizes
        value = np.arange(parent.size) - np.repeat(starts, sizes)
        rows = np.column_stack((rows[parent], value))
        remaining = remaining[parent] - value
    return np.column_stack((rows, remaining))


def count_compositions(total: int, parts: int) -> int:
    """Number of rows of :func:`compositions`: ``C(total + parts - 1, parts - 1)``."""
    return math.comb(total + parts - 1, parts - 1)


class _Block:
    """The exact law of S_m as (U, V, mass): S_m = U - e^eps V for every eps."""

    def __init__(self, rho_x: np.ndarray, rho_y: np.ndarray, mass: np.ndarray, size: int):
        gamma = float(mass.sum())
        log_p = np.concatenate((np.log(mass), [math.log1p(-gamma) if gamma < 1 else -np.inf]))
        counts = compositions(size, mass.size + 1)
        with np.errstate(invalid="ignore"):
            terms = np.where(counts > 0, counts * log_p[None, :], 0.0)
        log_mass = gammaln(size + 1.0) - gammaln(counts + 1.0).sum(axis=1) + terms.sum(axis=1)
        keep = log_mass > -745.0
        self.size = size
        self.u = counts[keep, :-1] @ rho_x
        self.v = counts[keep, :-1] @ rho_y
        self.mass = np.exp(log_mass[keep])
        self.dropped = max(0.0, 1.0 - math.fsum(self.mass)) if not keep.all() else 0.0

    def positions(self, eps: float) -> tuple[np.ndarray, float]:
        """Atoms ``U - e^eps V`` and a bound on their float error."""
        scale = math.exp(eps)
        values = self.u - scale * self.v
        error = POSITION_ERROR * float(np.max(np.abs(self.u) + scale * np.abs(self.v), initial=0))
        return values, error


_BLOCKS: dict[bytes, _Block] = {}

#: Blocks kept by :func:`_block` (the most recently built ones).
_CACHED_BLOCKS = 8


def _block(rho_x: np.ndarray, rho_y: np.ndarray, mass: np.ndarray, size: int) -> _Block:
    """:class:`_Block`, cached: one shuffle evaluates the same classes many times."""
    key = b"".join((rho_x.tobytes(), rho_y.tobytes(), mass.tobytes(), str(size).encode()))
    if key not in _BLOCKS:
        while len(_BLOCKS) >= _CACHED_BLOCKS:
            _BLOCKS.pop(next(iter(_BLOCKS)))
        _BLOCKS[key] = _Block(rho_x, rho_y, mass, size)
    return _BLOCKS[key]


def _exact(block: _Block, eps: float) -> tuple[float, float]:
    values, error = block.positions(eps)
    upper = float(np.dot(block.mass, np.maximum(values + error, 0.0)))
    lower = float(np.dot(block.mass, np.maximum(values - error, 0.0)))
    total = block.size
    top = float(np.max(np.abs(values), initial=0)) + error
    return (
        lower * (1 - ATOM_MASS_ERROR) / total,
        (upper * (1 + ATOM_MASS_ERROR) + block.dropped * top) / total,
    )


def _spread(values: np.ndarray, mass: np.ndarray, step: float) -> tuple[int, np.ndarray]:
    """Mean-preserving split of each atom onto the lattice ``k * step``."""
    scaled = values / step
    cell = np.floor(scaled)
    frac = scaled - cell
    first = int(cell.min())
    index = (cell - first).astype(np.int64)
    out = np.bincount(index, weights=mass * (1 - frac), minlength=int(index.max()) + 2)
    out += np.bincount(index + 1, weights=mass * frac, minlength=out.size)
    return first, out


@numba.njit(cache=True)
def _contract_sorted(values, mass, step, first, out):  # pragma: no cover
    """Contraction of sorted atoms onto the lattice (module docstring); adds into ``out``."""
    carry = 0.0
    where = 0.0
    for i in range(values.shape[0]):
        w = mass[i]
        s = values[i]
        if w <= 0.0:
            continue
        if carry == 0.0:
            carry = w
            where = s
            continue
        grid = math.ceil(where / step) * step
        if s > grid:
            need = carry * (grid - where) / (s - grid)
            if need <= w:
                out[int(round(grid / step)) - first] += carry + need
                carry = w - need
                where = s
                continue
        total = carry + w
        where = (carry * where + w * s) / total
        carry = total
    if carry > 0.0:
        out[int(math.floor(where / step)) - first] += carry


def _contract(values: np.ndarray, mass: np.ndarray, step: float) -> tuple[int, np.ndarray]:
    order = np.argsort(values, kind="stable")
    first = int(math.floor(values.min() / step))
    out = np.zeros(int(math.floor(values.max() / step)) - first + 2)
    _contract_sorted(values[order], mass[order], step, first, out)
    return first, out


def _saddle(values: np.ndarray, mass: np.ndarray) -> float:
    """theta >= 0 with sum mass * v * e^(theta v) = 0 (0 if the mean is >= 0)."""
    top = float(values.max())
    log_mass = np.log(mass)

    def slope(theta: float) -> float:
        weights = np.exp(log_mass + theta * (values - top))
        return float(np.dot(weights, values))

    if slope(0.0) >= 0.0:
        return 0.0

    high = 1.0 / max(top, 1e-300)
    while slope(high) <= 0.0:
        high *= 2.0
    from scipy.optimize import brentq  # scipy.optimize takes 0.15 s to import

    return float(brentq(slope, 0.0, high, xtol=1e-14 * high, rtol=1e-12))


class _Lattice:
    """A lattice law tilted by e^(theta k step): masses ``t`` at ``first + j``, log M."""

    def __init__(self, first: int, masses: np.ndarray, step: float, theta: float):
        keep = np.flatnonzero(masses > 0)
        lo, hi = int(keep[0]), int(keep[-1])
        masses = masses[lo : hi + 1]
        self.first = first + lo
        index = self.first + np.arange(masses.size)
        with np.errstate(divide="ignore"):
            log_t = np.log(masses) + theta * step * index
        self.log_norm = float(logsumexp(log_t))
        self.t = np.exp(log_t - self.log_norm)
        self.t /= self.t.sum()
        offsets = np.arange(masses.size, dtype=np.float64)
        self.mean = float(np.dot(self.t, offsets)) + self.first
        self.var = float(np.dot(self.t, (offsets + self.first - self.mean) ** 2))

    def log_mgf(self, tau: np.ndarray) -> np.ndarray:
        """log E[e^(tau (J - mean))] for each tau (J the lattice index)."""
        offsets = self.first + np.arange(self.t.size) - self.mean
        keep = self.t > 0
        exponent = np.log(self.t[keep])[None, :] + tau[:, None] * offsets[keep][None, :]
        top = exponent.max(axis=1)
        return top + np.log(np.exp(exponent - top[:, None]).sum(axis=1))


class _Tails:
    """Chernoff bounds on the tilted sum: ``P(|S - mean| >= d) <= exp(K(tau) - |tau| d)``."""

    def __init__(self, parts: list[tuple[_Lattice, int]]):
        var = sum(c * p.var for p, c in parts)
        # The window's half-width is >= 8 standard deviations: the optimal tau times
        # the standard deviation is about the half-width over it (Gaussian case).
        scale = np.geomspace(1.0, 80.0, 20) / math.sqrt(max(var, 1e-300))
        self.tau = np.concatenate((scale, -scale))
        self.cumulant = sum(c * p.log_mgf(self.tau) for p, c in parts)

    def bound(self, distance: float) -> float:
        """The larger of the two one-sided bounds at distance ``distance``."""
        half = self.tau.size // 2
        log_bound = self.cumulant - np.abs(self.tau) * distance
        return math.exp(min(0.0, max(log_bound[:half].min(), log_bound[half:].min())))


def _lattice_expectation(
    parts: list[tuple[_Lattice, int]], step: float, theta: float, side: str
) -> float:
    """``E_theta[S_+ e^(-theta S)]`` of the sum of the parts, bounded on ``side``."""
    mean = sum(c * p.mean for p, c in parts)
    var = sum(c * p.var for p, c in parts)
    low_support = sum(c * p.first for p, c in parts)
    high_support = sum(c * (p.first + p.t.size - 1) for p, c in parts)
    width = 8.0 * math.sqrt(var) + 2.0
    tails = _Tails(parts)
    while True:
        tail = tails.bound(width)
        if tail <= WINDOW_TAIL or width > high_support - low_support:
            break
        width *= 1.25
    low = max(low_support, math.floor(mean - width))
    high = min(high_support, math.ceil(mean + width))
    low = min(low, 0)  # the weight s e^(-theta s) lives on s > 0: keep 0 in the window
    high = max(high, 1)
    if high - low > high_support - low_support:
        tail = 0.0
    length = fft.fast_length(high - low + 1)
    if length > MAX_FFT_LENGTH:
        raise _TooLong(length)
    levels = math.log2(length)
    forward = 8.0 * _U * levels
    spectrum = None
    log_bound = np.zeros(length // 2 + 1)
    spread_error = np.zeros(length // 2 + 1)
    products = 0.0
    for lattice, count in parts:
        positions = (lattice.first + np.arange(lattice.t.size)) % length
        folded = np.bincount(positions, weights=lattice.t, minlength=length)
        x = fft.rfft(folded)
        magnitude = np.abs(x) * (1 + _U) + forward
        log_bound += count * np.log(magnitude)
        spread_error += count * forward / magnitude
        products += 3.0 * (2 * count + count.bit_length())
        powered = x.copy()
        result = None
        exponent = count
        while exponent:
            if exponent & 1:
                result = powered.copy() if result is None else result * powered
            exponent >>= 1
            if exponent:
                powered = powered * powered
        spectrum = result if spectrum is None else spectrum * result
    bound = np.exp(log_bound)
    bin_error = bound * (spread_error + (products + 3.0) * _U)
    weights = np.full(length // 2 + 1, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    error_max = (
        float(np.dot(weights, bin_error)) + forward * float(np.dot(weights, bound))
    ) / length
    circular = fft.irfft(spectrum, length)
    index = np.arange(1, high + 1)  # lattice points with s > 0 inside the window
    masses = np.maximum(circular[index % length], 0.0)
    position = index * step
    weight = position * np.exp(-theta * position)
    value = float(np.dot(weight, masses))
    roundoff = error_max * float(weight.sum())
    top_weight = 1.0 / (math.e * theta)
    if side == "upper":
        edge = (high + 1) * step
        beyond = edge * math.exp(-theta * edge) if theta * edge >= 1 else top_weight
        return value + roundoff + beyond * tail
    return max(0.0, value - roundoff - top_weight * 2.0 * tail)


class _TooLong(Exception):
    """The FFT window would exceed ``MAX_FFT_LENGTH`` points (``args[0]``: the length)."""


def _block_plan(n: int, classes: int, budget: int) -> int:
    """Largest block size m <= n whose count vectors number at most ``budget``."""
    size = 1
    while size < n and count_compositions(size + 1, classes + 1) <= budget:
        size += 1
    return size


def positive_part_bounds(
    rho_x: np.ndarray,
    rho_y: np.ndarray,
    mass: np.ndarray,
    n: int,
    eps: np.ndarray,
    *,
    budget: int = BLOCK_ATOMS,
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) on ``(1/n) E[(W_1 + ... + W_n)_+]`` at each eps (module docstring).

    Parameters
    ----------
    rho_x, rho_y : ndarray
        Ratios ``R(x)(y) / omega_min(y)`` and ``R(x')(y) / omega_min(y)`` of each class.
    mass : ndarray
        Blanket mass ``sum_y omega_min(y)`` of each class (positive; sum gamma <= 1).
    n : int
        Number of users, >= 1.
    eps : ndarray
        Values of eps (nats).
    budget : int
        Largest number of atoms enumerated for one block.
    """
    classes = mass.size
    exact = count_compositions(n, classes + 1) <= budget
    size = n if exact else _block_plan(n, classes, budget)
    block = _block(rho_x, rho_y, mass, size)
    blocks, rest = divmod(n, size)
    remainder = _block(rho_x, rho_y, mass, rest) if rest and not exact else None
    w_values = np.append(rho_x, 0.0)
    w_mass = np.append(mass, max(0.0, 1.0 - float(mass.sum())))
    keep = w_mass > 0
    lower = np.zeros(eps.size)
    upper = np.zeros(eps.size)
    for i, value in enumerate(eps):
        z = rho_x - math.exp(value) * rho_y
        if float(z.max()) <= 0.0:
            continue
        if exact:
            lower[i], upper[i] = _exact(block, float(value))
            continue
        w_values[:-1] = z
        theta = _saddle(w_values[keep], w_mass[keep])
        # Any theta > 0 gives an exact identity; at the saddle 0 (eps = 0) a small one
        # keeps the weight s e^(-theta s) bounded.
        theta = max(theta, 0.1 / math.sqrt(n * _tilted_variance(w_values[keep], w_mass[keep], 0)))
        # Chernoff: s_+ <= e^(theta s) / (e theta), so delta <= M(theta)^n / (e theta n).
        log_mgf = float(logsumexp(np.log(w_mass[keep]) + theta * w_values[keep]))
        log_chernoff = n * log_mgf - math.log(math.e * theta * n)
        if log_chernoff < math.log(NEGLIGIBLE):
            upper[i] = math.exp(log_chernoff) * (1 + 1e-6)
            continue
        tilted_var = _tilted_variance(w_values[keep], w_mass[keep], theta)
        step = math.sqrt(size * tilted_var) / STEPS_PER_BLOCK_STD
        # A large theta (eps near the largest loss) concentrates the tilted law; keep
        # the block's lattice within MAX_BLOCK_CELLS cells.
        span = size * (float(w_values[keep].max()) - float(w_values[keep].min()))
        step = max(step, span / MAX_BLOCK_CELLS)
        for side in ("lower", "upper"):
            side_step = step
            while True:
                try:
                    expectation, log_norm = _side(
                        block, blocks, remainder, value, side_step, theta, side
                    )
                    break
                except _TooLong as error:
                    side_step *= 2.0 * error.args[0] / MAX_FFT_LENGTH
            mass_factor = (blocks + 1) * ATOM_MASS_ERROR
            if side == "upper":
                charge = (blocks * block.dropped + (remainder.dropped if remainder else 0.0)) * (
                    n * float(np.max(np.abs(rho_x) + math.exp(value) * np.abs(rho_y)))
                )
                upper[i] = (math.exp(log_norm) * expectation * math.exp(mass_factor) + charge) / n
            else:
                lower[i] = math.exp(log_norm) * expectation * math.exp(-mass_factor) / n
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _side(
    block: _Block,
    blocks: int,
    remainder: _Block | None,
    eps: float,
    step: float,
    theta: float,
    side: str,
) -> tuple[float, float]:
    """``E_theta[S_+ e^(-theta S)]`` on one side and ``log M(theta)`` of the lattice laws."""
    parts, log_norm = [], 0.0
    for item, count in ((block, blocks), (remainder, 1)):
        if item is None:
            continue
        values, error = item.positions(eps)
        if side == "upper":
            first, masses = _spread(values + error, item.mass, step)
        else:
            first, masses = _contract(values - error, item.mass, step)
        lattice = _Lattice(first, masses, step, theta)
        parts.append((lattice, count))
        log_norm += count * lattice.log_norm
    return _lattice_expectation(parts, step, theta, side), log_norm


def chernoff_upper(
    rho_x: np.ndarray, rho_y: np.ndarray, mass: np.ndarray, n: int, eps: np.ndarray
) -> np.ndarray:
    """Analytic upper bound ``min_theta M(theta)^n / (e theta n)`` on the same delta(eps).

    From ``s_+ <= e^(theta s) / (e theta)`` for theta > 0, at the saddle point of W;
    cheap (no enumeration), loose by a polynomial factor in n.
    """
    w_mass = np.append(mass, max(0.0, 1.0 - float(mass.sum())))
    keep = w_mass > 0
    out = np.zeros(eps.size)
    for i, value in enumerate(eps):
        z = np.append(rho_x - math.exp(value) * rho_y, 0.0)[keep]
        if float(z.max()) <= 0.0:
            continue
        theta = _saddle(z, w_mass[keep])
        theta = max(theta, 0.1 / math.sqrt(n * _tilted_variance(z, w_mass[keep], 0)))
        log_mgf = float(logsumexp(np.log(w_mass[keep]) + theta * z))
        out[i] = min(1.0, math.exp(n * log_mgf - math.log(math.e * theta * n)) * (1 + 1e-6))
    return out


def _tilted_variance(values: np.ndarray, mass: np.ndarray, theta: float) -> float:
    log_w = np.log(mass) + theta * (values - values.max())
    weights = np.exp(log_w - logsumexp(log_w))
    mean = float(np.dot(weights, values))
    return float(np.dot(weights, (values - mean) ** 2))
