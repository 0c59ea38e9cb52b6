"""``E[(Z_1 + ... + Z_n)_+]`` for i.i.d. lattice variables, with rigorous error terms.

The blanket bound of a shuffled randomizer (docs/blanket-continuous.md) is
``(1/n) E[(S)_+]`` for a sum ``S`` of ``n`` i.i.d. copies of a real variable.
This module turns the variable's law into lattice laws that bound the
expectation from both sides, and evaluates the expectation by a characteristic-
function integral whose every approximation is bounded. It is the one evaluator of
the blanket sum: the continuous randomizers pass the lattice law of one user's
term, the finite ones (:mod:`pld.shuffling.blanket.finite`) that of an exactly
enumerated block of users, plus one remainder block as the ``extra`` term (its
transform multiplies ``X^n``; its Chernoff exponent, round-off and mass error are
added to those below).

Lattice laws (grid ``z_j = j h``): ``(.)_+`` is convex and non-decreasing, and
convex order is preserved by sums of independent variables, so

* a **mean-preserving spread** of each cell's mass onto the cell's two end
  points (:func:`spread_to_grid`) gives an upper bound, and
* a **contraction** (merging masses into their barycentre, :func:`contract_to_grid`),
  followed at the very end by moving a left-over carry down, gives a lower bound;

both are second order in ``h``.

Evaluation (:func:`positive_part_mean`), in grid units ``s`` (``S = s h``):

1. Tilt: ``t_j = p_j e^{theta h j} / M`` with ``theta`` centring the tilted sum
   near 0; then exactly ``E[(S)_+] = M^n sum_s w(s) q(s)``, ``w(s) = (s h)_+
   e^{-theta h s}``, ``q = t^{*n}``. The region that matters is the bulk of ``q``,
   so absolute round-off becomes a relative error of the result, even when
   ``E[(S)_+]`` is 1e-15.
2. Fourier: with ``X(omega) = sum_j t_j e^{i omega j}`` and ``W(omega) = sum_s
   w(s) e^{i omega s} = h r e^{i omega} / (1 - r e^{i omega})^2``, ``r = e^{-theta h}``,
   ``sum_s w(s) q(s) = (1 / 2 pi) int X(omega)^n W(-omega) d omega``.
3. The trapezoidal rule with ``P`` nodes ``omega_m = 2 pi m / P`` equals
   ``sum_s w(s) sum_l q(s + l P)``: it is **never below** the integral (all terms
   are non-negative), and exceeds it by at most ``max w * mass(|S| >= P/2)``
   plus ``sum_{s >= P/2} w(s)`` (Chernoff bounds, as in :mod:`pld.engine.tails`,
   with the exact per-term MGF).
4. Nodes where ``|X|^n`` is negligible are dropped, with a bound: on ``|omega| <=
   2 v / rho3`` (``v``, ``rho3``: second and third absolute central moments of ``t``)
   ``|X(omega)| <= 1 - omega^2 v / 2 + |omega|^3 rho3 / 6`` (Taylor), and beyond it the
   maximum of ``|X|`` on an FFT grid of ``Q`` points plus the Lipschitz slack
   ``(pi / Q) E|J - c|``; the dropped nodes then contribute at most
   ``sup|X|^n (1/P) sum_m |W(-omega_m)|`` with
   ``(1/P) sum_m |1 - r e^{-i omega_m}|^{-2} = (1 + r^P) / ((1 - r^2)(1 - r^P))``.
   When ``P`` is small the trapezoidal sum is taken over all nodes (one FFT).

Round-off: ``X`` at a node by Horner's rule (integer phase reduction) errs by at
most ``8 (len + 2) u``, by the FFT by at most ``8 u log2 P`` (Higham 2002, §24.1);
the power by repeated squaring adds ``3u (2n + log2 n)`` relatively (as in
:mod:`pld.engine.compose`). Relative errors ``kappa`` of the per-term masses
(including the tilt factors) scale the result by ``(1 +- kappa)^n``, and a bound
``eta`` on the position error of every atom, which shifts ``S`` by at most
``n eta``, is charged as ``n eta P(S >= -n eta) <= n eta e^{theta n eta} M^n``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from pld.engine import BudgetError, fft, spectrum_power
from pld.numerics import UNIT_ROUNDOFF
from pld.numerics.iid_sums import ChernoffTails, centring_tilt, chernoff_tails, log_sum_exp

_FFT_ERROR_PER_LEVEL = 8.0
_COMPLEX_PRODUCT_ERROR = 3.0
#: Bound on the tilted mass beyond the trapezoidal period, per side.
TAIL_MASS = 1e-18
#: Largest number of Fourier nodes for a full trapezoidal sum by FFT.
MAX_NODES = 2**25
_DIRECT_NODES = 1024
_CHERNOFF_BINS = 2**16
#: The dropped nodes have ``|X|^n <= exp(-_DROPPED_LOG_SUP)``.
_DROPPED_LOG_SUP = 100.0
#: The period covers the kernel ``w(s) = (s h)_+ e^{-theta s h}`` up to ``theta s h`` =
#: this; the rest (``e^-40`` of the peak region's weight) is charged as aliasing.
_KERNEL_REACH = 40.0
#: FFT nodes with ``|X|^n <= exp(_SKIP_LOG)`` are charged instead of powered.
_SKIP_LOG = -700.0


class FourierNodesError(BudgetError):
    """The trapezoidal sum would need more than ``MAX_NODES`` Fourier nodes."""


def spread_to_grid(
    index: np.ndarray, frac: np.ndarray, mass: np.ndarray, first: int, size: int
) -> np.ndarray:
    """Mean-preserving spread of atoms onto the grid (an upper bound in convex order).

    An atom of ``mass`` at ``(index + frac) h`` with ``0 <= frac <= 1`` goes to
    ``index`` with ``mass (1 - frac)`` and to ``index + 1`` with ``mass frac``.
    Returns the masses on grid indices ``first .. first + size - 1``.
    """
    low = np.bincount(index - first, weights=mass * (1.0 - frac), minlength=size)
    high = np.bincount(index + 1 - first, weights=mass * frac, minlength=size)
    return low[:size] + high[:size]


@njit(cache=True)
def _contract(positions, masses, out, first):  # pragma: no cover - numba
    """Left-to-right sweep into ``out`` (grid index ``first`` at 0); returns the final carry."""
    carry_mass = 0.0
    carry_deficit = 0.0  # sum of mass * (target - position) >= 0
    target = 0
    for i in range(positions.shape[0]):
        mass = masses[i]
        if mass <= 0.0:
            continue
        x = positions[i]
        if carry_mass == 0.0:
            target = int(math.ceil(x))
            carry_mass = mass
            carry_deficit = mass * (target - x)
            continue
        excess = x - target
        if excess <= 0.0:
            carry_mass += mass
            carry_deficit += mass * (target - x)
            continue
        share = carry_deficit / (mass * excess)
        if share > 1.0:
            carry_mass += mass
            carry_deficit -= mass * excess
            continue
        out[target - first] += carry_mass + share * mass
        rest = (1.0 - share) * mass
        target = int(math.ceil(x))
        carry_mass = rest
        carry_deficit = rest * (target - x)
    if carry_mass > 0.0:
        return carry_mass, target - carry_deficit / carry_mass
    return 0.0, 0.0


def contract_to_grid(positions: np.ndarray, masses: np.ndarray) -> tuple[int, np.ndarray]:
    """A lattice law below the given atoms in convex order (a lower bound).

    Atoms (``positions`` in grid units, sorted increasingly) are swept from the
    top down to the lowest atom, then that atom is swept up (as the engine
    sweeps from both ends, docs/error-bounds.md §2): a
    carried mass whose barycentre lies on one side of the next grid point ``g``
    is merged with just enough of the next atom beyond ``g`` to put the
    barycentre exactly on ``g`` (merging is a contraction). The downward sweep's
    final carry joins the lowest atom as one atom at its barycentre; the last
    carry is moved down to the grid point below its barycentre, which lowers
    every non-decreasing functional. Heavy isolated atoms at either end (the
    Laplace randomizer's) are thus merged with their neighbours instead of
    being rounded (first order). Returns ``(first, masses)`` on grid indices
    ``first, first + 1, ...``.
    """
    first = int(math.floor(positions[0])) - 1
    size = int(math.ceil(positions[-1])) - first + 2
    out = np.zeros(size)
    split = 1  # the last carry ends at the bottom, where (.)_+ of a sum cares least
    mirrored = np.zeros(size)
    # Grid index g of the mirror image -g is stored at mirrored[last - g].
    last = first + size - 1
    carry_mass, carry_mean = _contract(
        -positions[split:][::-1].copy(), masses[split:][::-1].copy(), mirrored, -last
    )
    out += mirrored[::-1]
    lower_positions = positions[:split]
    lower_masses = masses[:split]
    if carry_mass > 0.0:
        lower_positions = np.append(lower_positions, -carry_mean)
        lower_masses = np.append(lower_masses, carry_mass)
    if lower_positions.shape[0]:
        carry_mass, carry_mean = _contract(lower_positions, lower_masses, out, first)
        if carry_mass > 0.0:
            out[int(math.floor(carry_mean)) - first] += carry_mass
    return first, out


def with_zero_atom(first: int, masses: np.ndarray, weight: float) -> tuple[int, np.ndarray]:
    """The lattice law of ``B Z``, ``B ~ Bernoulli(weight)``, from the law of ``Z``.

    ``weight`` times the masses on grid indices ``first, first + 1, ...``, plus
    ``1 - weight`` at index 0 (the grid is grown to hold it).
    """
    if first > 0 or first + masses.shape[0] <= 0:
        low = min(first, 0)
        grown = np.zeros(max(first + masses.shape[0], 1) - low)
        grown[first - low : first - low + masses.shape[0]] = masses
        first, masses = low, grown
    masses = weight * masses
    masses[-first] += 1.0 - weight
    return first, masses


def _plan_length(minimum: int) -> int:
    """Smallest ``2^k`` or ``3 * 2^k`` >= ``minimum``: few lengths, so FFTW plans are reused."""
    power = 1 << math.ceil(math.log2(max(minimum, 2)))
    return 3 * power // 4 if power >= 4 and 3 * power // 4 >= minimum else power


def _choose_theta(
    log_mass: np.ndarray, z: np.ndarray, n: int, tilt_growth: float | None = None
) -> float:
    """The tilt that centres the sum near 0 (at least ``min(4, sqrt(n) / 4) / (sqrt(n) sd)``).

    With ``tilt_growth``, the floor is lowered where it would raise ``n log M(theta)``
    more than that above its value at the centring tilt: a law with a far, light
    upper tail (the shuffled Gaussian at small sigma) is otherwise dominated by that
    tail once tilted, and the round-off, relative to ``M^n``, swamps the result.
    """
    weight = np.exp(log_mass - np.max(log_mass))
    weight /= np.sum(weight)
    mean = float(np.dot(weight, z))
    sd = math.sqrt(max(float(np.dot(weight, (z - mean) ** 2)), 1e-300))
    floor = min(4.0, 0.25 * math.sqrt(n)) / (math.sqrt(n) * sd)
    centre = 0.0 if mean >= 0 else centring_tilt(z, log_mass, floor, largest=1e12)
    if centre >= floor:
        return centre

    if tilt_growth is None:
        return floor
    base = float(log_sum_exp(log_mass + centre * z))

    def growth(theta: float) -> float:
        return n * (float(log_sum_exp(log_mass + theta * z)) - base)

    if growth(floor) <= tilt_growth:
        return floor
    low, high = centre, floor
    for _ in range(24):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if growth(middle) <= tilt_growth else (low, middle)
    return low if low > 0 else high


def _chernoff(
    index: np.ndarray,
    log_mass: np.ndarray,
    n: int,
    sd: float,
    extra: tuple[np.ndarray, np.ndarray] | None = None,
) -> ChernoffTails:
    """``mass(s >= a) <= exp(n log M(t) - t a)`` (Markov; any measure), exact per-term MGF.

    The engine's bounds (:mod:`pld.engine.tails`) coarsen the pmf, moving atoms
    outwards by up to one coarse bin, an error that grows like ``n``; here the
    MGF is evaluated on the atoms themselves, and its float error (relative
    ``64 u log2(size)``) is charged as a factor ``exp(n 64 u log2(size))``.
    ``extra``: (index, log_mass) of one more independent term, added exactly.
    """
    t = np.logspace(-2, 3, 31) / (math.sqrt(n) * max(sd, 1.0))
    width = max(1, math.ceil(index.shape[0] / _CHERNOFF_BINS))
    if width > 1:  # coarsen, moving every atom outwards (the bound stays valid)
        size = math.ceil(index.shape[0] / width) * width
        padded = np.full(size, -np.inf)
        padded[: index.shape[0]] = log_mass
        log_mass = log_sum_exp(padded.reshape(-1, width), axis=1)
        starts = index[0] + width * np.arange(log_mass.shape[0])
        up_points, down_points = starts + width - 1, starts
    else:
        up_points = down_points = index
    tails = chernoff_tails(up_points, down_points, log_mass, n, t)
    if extra is None:
        return tails
    extra_index, extra_log = extra
    once = chernoff_tails(extra_index, extra_index, extra_log, 1, t)
    return ChernoffTails(
        t, tails.log_up + once.log_up, tails.log_down + once.log_down, tails.slack + once.slack
    )


def _kernel(omega: np.ndarray, rate: float, step: float) -> np.ndarray:
    """``W(-omega) = h r e^{-i omega} / (1 - r e^{-i omega})^2`` with ``r = e^{-rate}``.

    ``1 - r e^{-i omega} = (-expm1(-rate) + 2 r sin^2(omega / 2)) + i r sin(omega)``,
    free of cancellation.
    """
    r = math.exp(-rate)
    one_minus = (-math.expm1(-rate) + 2 * r * np.sin(omega / 2) ** 2) + 1j * r * np.sin(omega)
    return step * r * np.exp(-1j * omega) / one_minus**2


@njit(cache=True)
def _horner(masses, angles):  # pragma: no cover - numba
    """``sum_j masses[j] e^{i angle j}`` for each angle, by Horner's rule."""
    out = np.empty(angles.shape[0], dtype=np.complex128)
    for m in range(angles.shape[0]):
        z = complex(math.cos(angles[m]), math.sin(angles[m]))
        value = 0j
        for j in range(masses.shape[0] - 1, -1, -1):
            value = value * z + masses[j]
        out[m] = value
    return out


def _direct_transform(index: np.ndarray, masses: np.ndarray, nodes: np.ndarray, size: int):
    """``X(2 pi m / size) = sum_j t_j e^{i 2 pi m j / size}`` for integer nodes m.

    ``index`` is contiguous (``index[0] + arange``): Horner's rule in ``e^{i omega}``
    times the phase of ``index[0]`` (integer reduction). Each step is a complex
    multiply-add of relative error below ``(2 sqrt 2 + 1) u`` and ``e^{i omega}`` errs
    by ``u``, so the error is below ``8 (len + 2) u sum_j t_j`` (see ``_trapezoid``).
    """
    angles = (2 * math.pi / size) * nodes
    phase = (2 * math.pi / size) * ((nodes * (int(index[0]) % size)) % size)
    return _horner(masses, angles) * np.exp(1j * phase)


def positive_part_mean(
    first: int,
    masses: np.ndarray,
    n: int,
    step: float,
    bound: str,
    *,
    mass_error: float,
    position_error: float,
    extra: tuple[int, np.ndarray] | None = None,
    tilt_growth: float | None = None,
    max_nodes: int = MAX_NODES,
) -> float:
    """A bound on ``(1/n) E[(Z_1 + ... + Z_n)_+]`` for i.i.d. ``Z`` with the given lattice law.

    Parameters
    ----------
    first : int
        Grid index of ``masses[0]``; ``Z`` takes the value ``(first + j) * step``
        with probability ``masses[j]``.
    masses : ndarray
        Non-negative masses (total at most 1 up to ``mass_error``).
    n : int
        Number of terms, >= 1.
    step : float
        Grid step h.
    bound : {"upper", "lower"}
        Which side to return; every error term is charged in that direction.
    mass_error : float
        Bound on the relative error of each mass (as computed from the true law).
    position_error : float
        Bound on the position error of each atom (same units as ``step``).
    extra : (int, ndarray), optional
        ``(first, masses)`` of the lattice law of one more independent term
        ``Z_0`` on the same grid (same error bounds): then the bound is on
        ``(1/n) E[(Z_0 + Z_1 + ... + Z_n)_+]``.
    tilt_growth : float, optional
        Largest rise of ``n log M(theta)`` above its minimum that the tilt's floor
        may cause (None: no limit); for laws with far, light upper tails.
    max_nodes : int
        Largest number of Fourier nodes of a full trapezoidal sum (default ``MAX_NODES``);
        beyond, :class:`FourierNodesError` is raised.

    Returns
    -------
    float
        The bound (not clipped to [0, 1]).
    """
    keep = np.flatnonzero(masses > 0)
    shift = n * position_error
    extra_law = None
    if extra is not None:
        extra_keep = np.flatnonzero(extra[1] > 0)
        extra_masses = extra[1][extra_keep[0] : extra_keep[-1] + 1]
        extra_law = (extra[0] + int(extra_keep[0]) + np.arange(extra_masses.shape[0]), extra_masses)
        shift += position_error
        if keep.size and (n * (first + keep[-1]) + extra_law[0][-1]) * step + shift <= 0:
            return 0.0
    elif keep.size == 0 or (first + keep[-1]) * step + shift <= 0:
        return 0.0
    masses = masses[keep[0] : keep[-1] + 1]
    index = first + int(keep[0]) + np.arange(masses.shape[0])
    z = index * step
    with np.errstate(divide="ignore"):
        log_mass = np.log(masses)
    theta = _choose_theta(log_mass, z, n, tilt_growth)
    rate = theta * step
    log_tilted = log_mass + rate * index
    log_norm = float(log_sum_exp(log_tilted))
    log_tilted -= log_norm
    tilted = np.exp(log_tilted)
    kappa = mass_error + 8 * UNIT_ROUNDOFF * (
        2.0 + float(np.max(np.abs(log_tilted[np.isfinite(log_tilted)])))
    )
    kappa += 4 * UNIT_ROUNDOFF * math.log2(masses.shape[0] + 1)
    extra_tilted, extra_log_norm, extra_kappa = None, 0.0, 0.0
    if extra_law is not None:
        with np.errstate(divide="ignore"):
            extra_log = np.log(extra_law[1]) + rate * extra_law[0]
        extra_log_norm = float(log_sum_exp(extra_log))
        extra_log -= extra_log_norm
        extra_tilted = (extra_law[0], np.exp(extra_log))
        extra_kappa = mass_error + 8 * UNIT_ROUNDOFF * (
            2.0 + float(np.max(np.abs(extra_log[np.isfinite(extra_log)])))
        )
        extra_kappa += 4 * UNIT_ROUNDOFF * math.log2(extra_law[1].shape[0] + 1)

    centre = float(np.dot(tilted, index))
    deviation = np.abs(index - centre)
    variance = float(np.dot(tilted, deviation**2))
    third = float(np.dot(tilted, deviation**3))
    first_abs = float(np.dot(tilted, deviation))
    chernoff = _chernoff(
        index,
        log_tilted,
        n,
        math.sqrt(variance),
        None if extra_law is None else (extra_law[0], extra_log),
    )
    reach_up, reach_down = chernoff.reach(math.log(TAIL_MASS))
    half = max(reach_up, reach_down, _KERNEL_REACH / rate, 8.0) + 2.0
    nodes_total = _plan_length(2 * math.ceil(half))
    r = math.exp(-rate)
    kernel_l1 = (
        step * (1 + r**nodes_total) / (-math.expm1(-2 * rate) * -math.expm1(-rate * nodes_total))
    )
    # Trapezoidal excess over the integral (charged to the lower bound only).
    peak = 1.0 / (math.e * theta)
    start = nodes_total // 2
    tail_sum = step * (start * r**start / (1 - r) + r ** (start + 1) / (1 - r) ** 2)
    aliasing = peak * chernoff.outside(start, start) + tail_sum
    total, roundoff, dropped = _trapezoid(
        index,
        tilted,
        n,
        rate,
        step,
        nodes_total,
        (variance, third, first_abs),
        kernel_l1,
        extra_tilted,
        max_nodes,
    )
    # Position errors: ((s h + shift)_+ - (s h)_+) e^{-theta s h} <= shift e^{theta shift}.
    position_charge = shift * math.exp(min(theta * shift, 700.0))
    if bound == "upper":
        total += roundoff + dropped + position_charge
        factor = n * math.log1p(kappa) + math.log1p(extra_kappa)
    else:
        total -= roundoff + dropped + aliasing + position_charge
        factor = n * math.log1p(-kappa) + math.log1p(-extra_kappa)
    if total <= 0:
        return 0.0
    log_norms = n * log_norm + extra_log_norm
    # (S)_+ <= sum of the terms' positive parts: a cap that also keeps a bound whose
    # error terms swamp it (huge tilt normalisers) from overflowing.
    one_term = float(np.dot(masses, np.maximum(z, 0.0)))
    if extra_law is not None:
        one_term += float(np.dot(extra_law[1], np.maximum(extra_law[0] * step, 0.0))) / n
    cap = one_term * (1.0 + kappa + extra_kappa) + shift
    log_value = log_norms + factor + math.log(total) - math.log(n)
    return cap if log_value >= math.log(cap) else min(math.exp(log_value), cap)


def _trapezoid(
    index, tilted, n, rate, step, nodes_total, moments, kernel_l1, extra=None, max_nodes=MAX_NODES
):
    """Trapezoidal sum ``(1/P) sum_m X(omega_m)^n W(-omega_m)``, its round-off and dropped part.

    ``extra``: (index, tilted masses) of one more term, whose transform multiplies ``X^n``.
    """
    size = index.shape[0]
    mass_sum = float(np.sum(tilted))
    power_error = _COMPLEX_PRODUCT_ERROR * UNIT_ROUNDOFF * (2 * n + n.bit_length())
    cutoff = _frequency_cutoff(tilted, n, *moments)
    count = nodes_total // 2 + 1
    if cutoff is not None:
        count = min(count, math.ceil(cutoff[0] * nodes_total / (2 * math.pi)) + 1)
    if cutoff is None or count > _DIRECT_NODES:
        if nodes_total > max_nodes:
            raise FourierNodesError(
                f"the blanket sum for n={n} needs {nodes_total} Fourier nodes (limit {max_nodes}); "
                "increase grid_step"
            )
        length = nodes_total
        folded = np.bincount(index % length, tilted, minlength=length)
        values = np.conj(fft.rfft(folded))  # rfft uses e^{-i omega j}
        node_error = _FFT_ERROR_PER_LEVEL * UNIT_ROUNDOFF * math.log2(length) * mass_sum
        nodes = np.arange(values.shape[0])
        sup_dropped = 0.0
        if extra is not None:
            extra_sum = float(np.sum(extra[1]))
            folded = np.bincount(extra[0] % length, extra[1], minlength=length)
            extra_values = np.conj(fft.rfft(folded))
            extra_error = _FFT_ERROR_PER_LEVEL * UNIT_ROUNDOFF * math.log2(length) * extra_sum
    else:
        nodes = np.arange(count)
        values = _direct_transform(index, tilted, nodes, nodes_total)
        node_error = 8 * (size + 2) * UNIT_ROUNDOFF * mass_sum
        sup_dropped = cutoff[1]
        if extra is not None:
            extra_sum = float(np.sum(extra[1]))
            extra_values = _direct_transform(extra[0], extra[1], nodes, nodes_total)
            extra_error = 8 * (extra[0].shape[0] + 2) * UNIT_ROUNDOFF * extra_sum
    weights = np.full(nodes.shape[0], 2.0)
    weights[0] = 1.0
    if nodes_total % 2 == 0 and nodes[-1] == nodes_total // 2:
        weights[-1] = 1.0
    magnitude = np.abs(values) + node_error
    with np.errstate(under="ignore", divide="ignore"):
        log_bound = n * np.log(magnitude)
    # Nodes with |X|^n <= e^_SKIP_LOG are not evaluated: each is charged its bound times
    # the kernel's largest modulus h r / (1 - r)^2 (at omega = 0).
    live = log_bound > _SKIP_LOG
    evaluated = nodes.shape[0]
    sup_extra = 1.0 if extra is None else extra_sum + extra_error
    r = math.exp(-rate)
    kernel_max = step * r / math.expm1(-rate) ** 2
    skipped = math.exp(_SKIP_LOG) * float(np.sum(weights[~live])) * kernel_max * sup_extra
    nodes, values, weights = nodes[live], values[live], weights[live]
    magnitude, log_bound = magnitude[live], log_bound[live]
    kernel = _kernel((2 * math.pi / nodes_total) * nodes, rate, step)
    powered = spectrum_power(values, n)
    bound_n = np.exp(log_bound)
    relative = n * node_error / magnitude + power_error + 16 * UNIT_ROUNDOFF
    if extra is not None:
        # |X_0| <= its tilted mass sum; the product adds its node error and one rounding.
        extra_values = extra_values[live]
        powered = powered * extra_values
        extra_magnitude = np.abs(extra_values) + extra_error
        bound_n = bound_n * extra_magnitude
        relative = relative + extra_error / extra_magnitude
        relative = relative + _COMPLEX_PRODUCT_ERROR * UNIT_ROUNDOFF
    total = float(np.dot(weights, (powered * kernel).real)) / nodes_total
    roundoff = float(np.dot(weights, bound_n * relative * np.abs(kernel)))
    roundoff = (roundoff + skipped) / nodes_total
    dropped_nodes = nodes_total - (2 * evaluated - 1)
    dropped = (
        sup_dropped**n * sup_extra * kernel_l1 if dropped_nodes > 0 and sup_dropped > 0 else 0.0
    )
    return total, roundoff, dropped


def _frequency_cutoff(tilted, n, variance, third, first_abs):
    """``(omega_K, s)`` with ``|X(omega)| <= s`` for ``omega_K <= |omega| <= pi`` and ``s^n`` tiny.

    None if no such cut-off is found (small n): then all nodes are used.
    """
    if variance <= 0:
        return None
    # The Taylor bound decreases on [0, limit] and 1 - omega^2 v / 2 >= 0 there.
    limit = min(2 * variance / third, math.sqrt(2 / variance))
    defect = abs(1 - float(np.sum(tilted)))

    def taylor(omega: float) -> float:
        return 1 - omega * omega * variance / 2 + omega**3 * third / 6 + 2 * defect

    def small(value: float) -> bool:
        return 0 < value < 1 and n * math.log(value) <= -_DROPPED_LOG_SUP

    if not small(taylor(limit)):
        return None
    low, high = 0.0, limit
    for _ in range(60):
        mid = (low + high) / 2
        if small(taylor(mid)):
            high = mid
        else:
            low = mid
    samples = 1 << max(12, math.ceil(math.log2(max(64 * math.pi * first_abs, 1.0))))
    samples = max(samples, 1 << math.ceil(math.log2(tilted.shape[0] + 1)))
    if samples > 2**22:
        return None
    spectrum = np.abs(fft.rfft(np.concatenate((tilted, np.zeros(samples - tilted.shape[0])))))
    spectrum += _FFT_ERROR_PER_LEVEL * UNIT_ROUNDOFF * math.log2(samples) * float(np.sum(tilted))
    grid = 2 * math.pi * np.arange(spectrum.shape[0]) / samples
    beyond = grid + math.pi / samples >= limit
    sampled = float(np.max(spectrum[beyond])) + (math.pi / samples) * first_abs
    sup = max(taylor(high), sampled)
    if not 0 < sup < 1 or n * math.log(sup) > -_DROPPED_LOG_SUP / 2:
        return None
    return high, sup
