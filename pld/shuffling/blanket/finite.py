"""Rigorous brackets on E[(W_1 + ... + W_n)_+] / n for i.i.d. finite W (the blanket divergence).

For a finite randomizer and an ordered pair of inputs (x, x'), the blanket
divergence of the shuffled protocol (issue text of :mod:`pld.shuffling.shuffler`,
Balle et al. (2019), §5) is

    delta(eps) = (1/n) E[(sum_{i=1..n} W_i)_+],   W = rho_x(Y) - e^eps rho_x'(Y) w.p. omega_min(Y),
                                                  W = 0 w.p. 1 - gamma,

with ``rho_x(y) = R(x)(y) / omega_min(y)``: the ``(1 / (n gamma)) E[(sum B_i Z_i)_+]``
of the blanket analysis with ``Z = gamma (rho_x - e^eps rho_x')``. W takes one value
per class of outputs (:meth:`pld.randomizers.finite.FiniteRandomizer.blanket_classes`).

Exact path (small n): every count vector of the n users over the classes (plus
the zero class) is enumerated; the masses are multinomial probabilities.

Large n: W's exact characteristic function with smoothed kernels
(:func:`pld.shuffling.blanket.smooth.smoothed_bounds`): no lattice, so the
bracket stays second order even where W is very discrete (a few rare outputs
with ratios in the thousands, e.g. Hadamard response or local hashing at
eps0 = 8, whose lattice contraction had been first order). Computed positions
are moved by a relative 1e-11 (up for the upper, down for the lower side) to
cover their float error.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from pld.numerics.iid_sums import tilt_roots, tilted_moments
from pld.shuffling.blanket.smooth import SmoothingError, chernoff_log_bound, smoothed_bounds

#: Largest number of count vectors enumerated for one block (or the exact path).
BLOCK_ATOMS = 60_000

#: Where the Chernoff bound on delta is below this, it is the upper value (lower 0).
NEGLIGIBLE = 1e-40

#: Relative error claimed for each enumerated multinomial mass (gammaln sums).
ATOM_MASS_ERROR = 1e-12

#: Relative displacement covering the float error of computed positions: classes merge
#: ratios whose logs agree within 1e-12 (:func:`pld.randomizers.finite._classes`), and
#: ``rho_x - e^eps rho_x'`` adds a few ulps of ``|rho_x| + e^eps |rho_x'|``; 10 times that.
POSITION_ERROR = 1e-11


def merge_classes(
    ratio_x: np.ndarray, ratio_y: np.ndarray, mass: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge outputs with equal (ratio_x, ratio_y); drop outputs of zero blanket mass.

    Ratios equal up to float round-off (log-ratios within ~1e-12) are merged and
    take the first member's values: the analyses cover a relative displacement of
    1e-11 of every position (``pld.shuffling.blanket.finite.POSITION_ERROR``).
    """
    keep = mass > 0
    ratio_x, ratio_y, mass = ratio_x[keep], ratio_y[keep], mass[keep]
    keys = np.column_stack((np.rint(np.log(ratio_x) * 1e12), np.rint(np.log(ratio_y) * 1e12)))
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    merged = np.bincount(inverse.ravel(), weights=mass, minlength=first.size)
    return ratio_x[first].copy(), ratio_y[first].copy(), merged


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


def _saddles(values: np.ndarray, mass: np.ndarray) -> np.ndarray:
    """Per row of ``values``: theta >= 0 with ``sum_k mass_k v_k e^(theta v_k) = 0``.

    0 where the mean is >= 0; rows need a positive value (the mean then rises to
    a positive limit, so a root exists where the mean at 0 is negative).
    """
    log_mass = np.log(mass)
    theta = np.zeros(values.shape[0])
    negative = (values @ mass < 0.0) & (values.max(axis=1) > 0.0)
    if not np.any(negative):
        return theta
    rows = values[negative]
    high = 1.0 / np.maximum(rows.max(axis=1), 1e-300)

    growing = tilted_moments(rows, log_mass, high)[0] <= 0.0
    while np.any(growing):
        high[growing] *= 2.0
        growing[growing] = tilted_moments(rows[growing], log_mass, high[growing])[0] <= 0.0
    theta[negative] = tilt_roots(rows, log_mass, np.zeros(rows.shape[0]), high)
    return theta


def positive_part_bounds(
    rho_x: np.ndarray,
    rho_y: np.ndarray,
    mass: np.ndarray,
    n: int,
    eps: np.ndarray,
    *,
    budget: int = BLOCK_ATOMS,
    lower_side: bool = True,
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
        Largest number of count vectors enumerated by the exact path.
    lower_side : bool
        False: only the upper values (lower 0) where the characteristic function is
        used (the exact path gives both).
    """
    classes = mass.size
    exact = count_compositions(n, classes + 1) <= budget
    block = _block(rho_x, rho_y, mass, n) if exact else None
    w_values = np.append(rho_x, 0.0)
    w_mass = np.append(mass, max(0.0, 1.0 - float(mass.sum())))
    keep = w_mass > 0
    log_mass = np.log(w_mass[keep])
    # The classes' masses are known to ATOM_MASS_ERROR; the mass at 0 (the reports
    # outside the blanket) absorbs their errors (smooth.py, "masses and positions").
    mass_error = ATOM_MASS_ERROR
    lower = np.zeros(eps.size)
    upper = np.zeros(eps.size)
    roots, thetas = (None, None) if exact else _tilts(rho_x, rho_y, mass, n, eps)
    for i, value in enumerate(eps):
        scale = math.exp(value)
        z = rho_x - scale * rho_y
        if float(z.max()) <= 0.0:
            continue
        if exact:
            lower[i], upper[i] = _exact(block, float(value))
            continue
        w_values[:-1] = z
        theta = float(thetas[i])
        errors = np.append(POSITION_ERROR * (np.abs(rho_x) + scale * np.abs(rho_y)), 0.0)
        values, errors = w_values[keep], errors[keep]
        masses = w_mass[keep]
        # Chernoff: s_+ <= e^(theta s) / (e theta), so delta <= M(theta)^n / (e theta n),
        # M of the law that dominates every law within the errors.
        log_chernoff = chernoff_log_bound(values, masses, errors, mass_error, theta, n)
        log_chernoff -= math.log(math.e * theta * n)
        if log_chernoff < math.log(NEGLIGIBLE):
            upper[i] = math.exp(log_chernoff) * (1 + 1e-12)
            continue
        # E[S_+] = E[S] + E[(-S)_+]: a positive mean (zeros in the matrix: R(x) has more
        # mass than e^eps R(x') on the blanket's support) is taken exactly, and the
        # tilted evaluation is left the tail below 0.
        flip = float(np.dot(masses, values)) > 0
        try:
            lower[i], upper[i] = smoothed_bounds(
                -values if flip else values,
                log_mass,
                n,
                mass_error=mass_error,
                position_errors=errors,
                upper_only=not lower_side,
                saddle=None if flip else float(roots[i]),
            )
        except SmoothingError:
            lower[i], upper[i] = 0.0, 1.0
        if flip:
            size = float(np.dot(masses, np.abs(values) + errors))
            slack = size * (mass_error + (values.size + 2) * math.ulp(1.0))
            lower[i] += float(np.dot(masses, values - errors)) - slack
            upper[i] += float(np.dot(masses, values + errors)) + slack
        # Chernoff's bound is valid too (and better where the evaluation degenerates).
        upper[i] = min(upper[i], math.exp(min(log_chernoff, 0.0)) * (1 + 1e-12))
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _tilts(
    rho_x: np.ndarray, rho_y: np.ndarray, mass: np.ndarray, n: int, eps: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(saddle point of W, Chernoff tilt) at each eps; the tilt is at least ``0.1 / sd(S)``."""
    w_mass = np.append(mass, max(0.0, 1.0 - float(mass.sum())))
    keep = w_mass > 0
    z = np.column_stack(
        (rho_x[None, :] - np.exp(eps)[:, None] * rho_y[None, :], np.zeros(eps.size))
    )
    z, w_mass = z[:, keep], w_mass[keep]
    weights = w_mass / w_mass.sum()
    mean = z @ weights
    variance = ((z - mean[:, None]) ** 2) @ weights
    with np.errstate(divide="ignore"):
        floor = 0.1 / np.sqrt(n * variance)
    roots = _saddles(z, w_mass)
    return roots, np.maximum(roots, floor)


def chernoff_upper(
    rho_x: np.ndarray, rho_y: np.ndarray, mass: np.ndarray, n: int, eps: np.ndarray
) -> np.ndarray:
    """Analytic upper bound ``min_theta M(theta)^n / (e theta n)`` on the same delta(eps).

    From ``s_+ <= e^(theta s) / (e theta)`` for theta > 0, at the saddle point of W;
    cheap (no enumeration), loose by a polynomial factor in n.
    """
    w_mass = np.append(mass, max(0.0, 1.0 - float(mass.sum())))
    keep = w_mass > 0
    z = np.column_stack(
        (rho_x[None, :] - np.exp(eps)[:, None] * rho_y[None, :], np.zeros(eps.size))
    )
    z = z[:, keep]
    live = z.max(axis=1) > 0.0
    out = np.zeros(eps.size)
    if not np.any(live):
        return out
    theta = _tilts(rho_x, rho_y, mass, n, eps[live])[1]
    masses = w_mass[keep]
    log_bound = np.empty(theta.size)
    for row, (values, scale, tilt) in enumerate(
        zip(z[live], np.exp(eps[live]), theta, strict=True)
    ):
        errors = np.append(POSITION_ERROR * (np.abs(rho_x) + scale * np.abs(rho_y)), 0.0)
        log_bound[row] = chernoff_log_bound(values, masses, errors[keep], ATOM_MASS_ERROR, tilt, n)
    log_bound -= np.log(math.e * theta * n)
    out[live] = np.minimum(1.0, np.exp(np.minimum(log_bound, 0.0)) * (1 + 1e-12))
    return out


def outside_delta(out_x: np.ndarray, out_y: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``sum_y (R(x)(y) - e^eps R(x')(y))_+`` over outputs outside the blanket's support.

    A report there identifies the target's report exactly, and the other users'
    blanket reports have the same law under x and x', so the views that contain it
    add exactly this to the hockey stick (:func:`finite_profile_bounds`).
    """
    if out_x.size == 0:
        return np.zeros(eps.size)
    gaps = out_x[None, :] - np.exp(eps)[:, None] * out_y[None, :]
    return np.maximum(gaps, 0.0).sum(axis=1)


def _add(values: np.ndarray, extra: np.ndarray, side: int) -> np.ndarray:
    """``values + extra`` with the extra term's float error (relative 1e-12) on ``side``."""
    return np.clip(values + extra * (1 + side * 1e-12), 0.0, 1.0)


Outside = tuple[np.ndarray, np.ndarray]


def finite_profile_bounds(
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    outside: list[Outside],
    n: int,
    eps: np.ndarray,
    *,
    lower_side: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) blanket delta(eps) of a shuffled finite randomizer.

    The maximum over ordered input pairs of the blanket divergence (Balle et al. 2019,
    §5; Koskela et al. 2023, §4): each pair's ``(1/n) E[(W_1 + ... + W_n)_+]``
    (:func:`positive_part_bounds`) plus its outside term (:func:`outside_delta`: outputs
    with ``omega_min(y) = 0`` lie outside every blanket report's support, so a target
    report there is seen as such; found by the brute-force tests, which include zeros).

    Parameters
    ----------
    pairs : list of (ratio_x, ratio_x', mass)
        The classes of each ordered pair (``FiniteRandomizer.blanket_classes``).
    outside : list of (R(x)(y), R(x')(y))
        The same pairs' masses on the outputs outside the blanket (``outside``).
    n : int
        Number of users, >= 1.
    eps : ndarray
        Values of eps >= 0, nats.
    lower_side : bool
        False: only the upper values (the lower ones are then 0, a valid bound).
    """
    lower = np.zeros(eps.size)
    upper = np.zeros(eps.size)
    extra = [outside_delta(out_x, out_y, eps) for out_x, out_y in outside]
    if len(pairs) == 1:
        lower, upper = positive_part_bounds(*pairs[0], n, eps, lower_side=lower_side)
        return _add(lower, extra[0], -1), _add(upper, extra[0], 1)
    # Pairs whose analytic Chernoff bound is already below the running upper value at
    # some eps cannot raise the maximum there: they are skipped at that eps.
    cheap = [
        _add(chernoff_upper(*classes, n, eps), e, 1)
        for classes, e in zip(pairs, extra, strict=True)
    ]
    for index in np.argsort([-float(np.sum(c)) for c in cheap]):
        needed = cheap[index] > upper
        if not np.any(needed):
            continue
        lo, up = positive_part_bounds(*pairs[index], n, eps[needed], lower_side=lower_side)
        lower[needed] = np.maximum(lower[needed], _add(lo, extra[index][needed], -1))
        upper[needed] = np.maximum(upper[needed], _add(up, extra[index][needed], 1))
    return lower, upper


def finite_quick_upper(
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    outside: list[Outside],
    n: int,
    eps: np.ndarray,
) -> np.ndarray:
    """An upper bound on :func:`finite_profile_bounds`' upper values without enumeration
    (Chernoff, :func:`chernoff_upper`)."""
    upper = np.zeros(eps.size)
    for classes, out in zip(pairs, outside, strict=True):
        bound = chernoff_upper(*classes, n, eps)
        upper = np.maximum(upper, _add(bound, outside_delta(*out, eps), 1))
    return upper
