"""Composition of discrete privacy-loss pmfs by FFT, with rigorous error terms.

The privacy loss of a composition is the sum of the rounds' losses (seed 004,
Thm 6), so its pmf is the convolution of the rounds' pmfs. All factors are
transformed once at a length ``N`` that covers the window chosen by Chernoff
bounds (:mod:`pld.engine.tails`); self-composition raises a spectrum to the
power T by repeated squaring (about 7× faster and more accurate than ``X**T``);
one inverse transform gives the composed pmf on the window. Heterogeneous
factors share the length: one forward transform each, multiplied in place.

Error terms (docs/error-bounds.md §3–4):

* wrap-around: the circular convolution folds the mass outside the window
  ``[low, high]`` into it. Mass below the window lands at higher losses, which
  only raises delta: nothing to charge for the upper bound. Mass above it
  lands lower, so its Chernoff bound is charged to +inf for the upper bound.
  For the lower bound all folded mass is "junk" whose bound is subtracted.
* round-off: a floating-point FFT of a non-negative vector of 1-norm ``s``
  has entrywise error at most ``c * u * log2(N) * s`` (Higham 2002, §24.1,
  with ``c = 8``); raising to the power T multiplies an entrywise error ``e`` of
  a spectrum value ``X`` into at most ``T e (|X| + e)^(T-1)``; each complex
  product adds a relative ``3u``. Only the few "hot" bins where ``|X|^T`` is not
  negligible amplify the error; when the double-precision bound there is too
  large, just those bins are recomputed in extended precision, by a direct
  sum over the pmf's atoms when that is cheaper than an extended FFT. The
  resulting bound on the composed spectrum is pushed through the inverse
  transform in the max-norm and the 2-norm (:class:`LossPmf` uses the smaller
  resulting slack).
* bins whose magnitude bound is below ``exp(_LOG_DEAD)`` are set to zero and
  their magnitude bound is charged as their error (nothing is dropped).
* errors already carried by the factors propagate through the convolution;
  the factors' loss-position errors add up and their relative mass errors
  multiply.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from pld.engine import check_grid_points, fft
from pld.engine.loss_pmf import LossPmf
from pld.engine.tails import composition_window

_UNIT_ROUNDOFF = math.ulp(1.0) / 2
_FFT_ERROR_PER_LEVEL = 8.0
_COMPLEX_PRODUCT_ERROR = 3.0
#: Above this bound on the amplified error of the double-precision forward
#: transforms (sum of counts times 8 u log2 N), the hot bins are recomputed in
#: extended precision: the dominant round-off term of a long self-composition
#: shrinks by two to three orders of magnitude.
_EXTENDED_THRESHOLD = 1e-12
#: Spectrum bins whose double-precision error bound exceeds this are recomputed
#: in extended precision: only the few low-frequency bins where |X|^T is not
#: negligible.
_HOT_BIN_ERROR = 1e-20
#: Bins whose magnitude bound is below exp(_LOG_DEAD) are not powered (set to 0,
#: error = magnitude bound).
_LOG_DEAD = -700.0
#: Measured costs, in units of one ``N log2 N`` of an extended FFT (x87 long
#: double): one (bin, atom) term of the direct sum, and one (bin, grid point)
#: term of the blocked sum (two long-double matrix products).
_DIRECT_COST = 20.0
_BLOCKED_COST = 4.0
#: Grid points per block of the blocked sum (its inner, sequential dot products).
_BLOCK = 16
#: Error of the direct and blocked sums in units of u_ext of the 1-norm, without
#: their summation depth: a twiddle is within 51 units (two table entries of 24
#: and a complex product), a mass product adds 1 (direct: 51 + 1 + 2 for the
#: rounding of the result's own terms); the blocked sum has two twiddles, the
#: mass product and an outer complex product: 51 + 51 + 1 + 3.
_DIRECT_UNITS = 54
_BLOCKED_UNITS = 106
#: Largest number of (bin, atom) terms of the direct sum held in memory at once.
_DIRECT_CHUNK = 2**20
#: Error growth factors exp(x) are capped at exp(_LARGEST_LOG) (beyond it every
#: bound is vacuous anyway) instead of overflowing.
_LARGEST_LOG = 700.0
#: Largest grid index a composed loss may reach: window ends and Chernoff
#: exponents are computed in float64, exact for integers up to 2^52.
_LARGEST_INDEX = 2**52


def spectrum_power(spectrum: np.ndarray, exponent: int) -> np.ndarray:
    """``spectrum ** exponent`` elementwise by repeated squaring (exponent >= 1)."""
    result = None
    base = spectrum.copy()
    while exponent:
        if exponent & 1:
            result = base.copy() if result is None else np.multiply(result, base, out=result)
        exponent >>= 1
        if exponent:
            np.multiply(base, base, out=base)
    return result


def _powering_error(count: int) -> float:
    """Relative error bound, in units of u, of ``X**count`` by repeated squaring.

    The rounding of the j-th squaring is raised to the power of the remaining
    squarings, so the exponents of all roundings add up to less than
    ``2 * count + bit_length(count)``; each complex product errs by at most 3u.
    """
    return _COMPLEX_PRODUCT_ERROR * (2 * count + count.bit_length())


def _half_spectrum_weights(length: int) -> np.ndarray:
    """Multiplicity of each rfft bin in the full spectrum (1 for DC and Nyquist)."""
    weights = np.full(length // 2 + 1, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    return weights


def _fold(pmf: LossPmf, length: int) -> np.ndarray:
    """The pmf's masses placed at grid positions modulo ``length``."""
    size = pmf.masses.shape[0]
    if size > length:
        positions = (pmf.offset + np.arange(size)) % length
        return np.bincount(positions, weights=pmf.masses, minlength=length)
    folded = np.zeros(length)
    start = pmf.offset % length
    first = min(size, length - start)
    folded[start : start + first] = pmf.masses[:first]
    folded[: size - first] += pmf.masses[first:]
    return folded


def _unfold(circular: np.ndarray, low: int, width: int) -> np.ndarray:
    """Entries ``(low + j) mod N`` for ``j < width``, clipped at zero (in place).

    Negative outputs are round-off: the true values are non-negative, so
    clipping only moves a value towards the truth.
    """
    length = circular.shape[0]
    start = low % length
    if start + width <= length:
        window = circular[start : start + width]  # a view: ``circular`` is the caller's own
    else:
        head = circular[start:]
        window = np.concatenate((head, circular[: width - head.shape[0]]))
    return np.maximum(window, 0.0, out=window)


@functools.lru_cache(maxsize=2)
def _twiddle_tables(length: int) -> tuple[int, np.ndarray, np.ndarray]:
    """``exp(-2 pi i m / N)`` in extended precision for ``m < B`` and for ``m = j B``.

    Any twiddle is the product of one entry of each table (``B = ceil(sqrt(N))``).
    Each entry errs by at most ``24 u_ext``: the angle (at most ``2 pi``) carries
    ``2 pi`` from ``8 arctanl(1)`` (1.3 units), the product and the division
    (20.7 units in all), and ``cosl``/``sinl`` one ulp each (2.9 units).
    """
    block = math.isqrt(length - 1) + 1
    two_pi = 8 * np.arctan(np.longdouble(1))

    def table(multiples: np.ndarray) -> np.ndarray:
        angle = two_pi * multiples.astype(np.longdouble) / length
        return np.cos(angle) - 1j * np.sin(angle)

    low = table(np.arange(block))
    high = table(np.arange(-(-length // block)) * block)
    return block, low, high


def _pairwise_rows(values: np.ndarray) -> np.ndarray:
    """Row sums by a balanced tree: relative error at most ceil(log2 n) units."""
    while values.shape[1] > 1:
        if values.shape[1] % 2:
            values = np.concatenate((values, np.zeros((values.shape[0], 1), values.dtype)), 1)
        values = values[:, 0::2] + values[:, 1::2]
    return values[:, 0]


def _mass_bound(pmf: LossPmf) -> float:
    """An upper bound on the 1-norm of the (non-negative) masses: their float sum
    errs by at most ``(n - 1) u`` relatively."""
    return pmf.finite_mass * (1 + pmf.masses.shape[0] * _UNIT_ROUNDOFF)


def _direct_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` by direct summation in extended precision.

    Returns the values and their entrywise error bound: each twiddle is a
    product of two table entries (``51 u_ext``), times a mass (``u_ext``), summed
    by a balanced tree (``ceil(log2 n) u_ext``), all relative to the 1-norm.
    """
    atoms = np.flatnonzero(pmf.masses)
    masses = pmf.masses[atoms].astype(np.longdouble)
    positions = (pmf.offset + atoms) % length
    block, low, high = _twiddle_tables(length)
    result = np.empty(bins.shape[0], dtype=np.clongdouble)
    chunk = max(1, _DIRECT_CHUNK // max(1, atoms.shape[0]))
    for start in range(0, bins.shape[0], chunk):
        phase = (bins[start : start + chunk, None] * positions[None, :]) % length
        twiddles = high[phase // block] * low[phase % block]
        result[start : start + chunk] = _pairwise_rows(twiddles * masses[None, :])
    levels = math.ceil(math.log2(max(2, atoms.shape[0])))
    error = (_DIRECT_UNITS + levels) * fft.EXTENDED_UNIT_ROUNDOFF * _mass_bound(pmf)
    return result, error


def _twiddles(phase: np.ndarray, length: int) -> np.ndarray:
    """``exp(-2 pi i phase / N)`` for integer phases in ``[0, N)``, within ``51 u_ext``."""
    block, low, high = _twiddle_tables(length)
    return high[phase // block] * low[phase % block]


def _blocked_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision by blocks of ``_BLOCK`` points.

    With the support ``p0 + a B + b`` (``b < B``): ``X_k = sum_a w^((p0 + a B) k)
    sum_b m_(aB+b) w^(b k)``; the inner sums are two long-double matrix products
    (sequential dots: ``B u_ext``), each twiddle is within ``51 u_ext``, the
    mass products add ``u_ext``, the outer complex products ``3 u_ext`` and the
    outer balanced tree ``ceil(log2 A) u_ext``: in all ``(106 + B + ceil(log2 A))
    u_ext`` of the 1-norm.
    """
    atoms = np.flatnonzero(pmf.masses)
    start, stop = int(atoms[0]), int(atoms[-1]) + 1
    rows = -(-(stop - start) // _BLOCK)
    padded = np.zeros(rows * _BLOCK, dtype=np.longdouble)
    padded[: stop - start] = pmf.masses[start:stop]
    matrix = padded.reshape(rows, _BLOCK)
    inner_twiddles = _twiddles((np.arange(_BLOCK)[:, None] * bins[None, :]) % length, length)
    inner = matrix @ inner_twiddles.real + 1j * (matrix @ inner_twiddles.imag)
    origins = (pmf.offset + start + np.arange(rows) * _BLOCK) % length
    outer_twiddles = _twiddles((origins[:, None] * bins[None, :]) % length, length)
    result = _pairwise_rows(np.ascontiguousarray((outer_twiddles * inner).T))
    levels = math.ceil(math.log2(max(2, rows)))
    error = (_BLOCKED_UNITS + _BLOCK + levels) * fft.EXTENDED_UNIT_ROUNDOFF * _mass_bound(pmf)
    return result, error


def _extended_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision, and its entrywise error bound.

    The cheapest of three methods whose bound is at most the extended FFT's
    (``8 u_ext log2 N`` of the 1-norm): a direct sum over the atoms, a blocked
    sum over the support, or the extended FFT of the whole length.
    """
    levels = math.log2(length)
    atoms = np.flatnonzero(pmf.masses)
    span = int(atoms[-1] - atoms[0]) + 1
    fft_cost = length * levels
    blocked_bound = _BLOCKED_UNITS + _BLOCK + math.ceil(math.log2(max(2, -(-span // _BLOCK))))
    candidates = [(atoms.shape[0] * bins.shape[0] * _DIRECT_COST, _direct_spectrum)]
    if blocked_bound <= _FFT_ERROR_PER_LEVEL * levels:
        candidates.append((span * bins.shape[0] * _BLOCKED_COST, _blocked_spectrum))
    cost, method = min(candidates, key=lambda item: item[0])
    if cost < fft_cost:
        return method(pmf, length, bins)
    spectrum = fft.rfft_extended(_fold(pmf, length))[bins]
    error = _FFT_ERROR_PER_LEVEL * fft.EXTENDED_UNIT_ROUNDOFF * levels * _mass_bound(pmf)
    return spectrum, error


def compose(factors: Sequence[tuple[LossPmf, int]], tail_mass: float) -> LossPmf:
    """Compose ``factors`` (pmf, count) into the pmf of the summed privacy loss.

    Parameters
    ----------
    factors : sequence of (LossPmf, int)
        The pmfs, all with the same grid step and bound, and how many times
        each enters the composition (count >= 1).
    tail_mass : float
        Target bound on the mass outside the composition window, per side.

    Returns
    -------
    LossPmf
        The composed pmf on the window, with its error terms.

    Raises
    ------
    ValueError
        If the window needs more grid points than the budget
        (:func:`pld.engine.max_grid_points`).
    """
    first = factors[0][0]
    step, bound = first.step, first.bound
    counts = [count for _, count in factors]
    if max(p.infinity_mass for p, _ in factors) >= 1.0:
        infinity_mass = 1.0
    else:
        infinity_mass = -math.expm1(sum(c * math.log1p(-p.infinity_mass) for p, c in factors))
    log_junk = sum(c * math.log1p(p.junk_mass) for p, c in factors)
    input_junk = math.expm1(min(log_junk, _LARGEST_LOG))
    finite_masses = [p.finite_mass for p, _ in factors]
    loss_error = sum(c * p.loss_error for p, c in factors)
    mass_error = math.expm1(
        min(sum(c * math.log1p(p.mass_error) for p, c in factors), _LARGEST_LOG)
    )
    if min(finite_masses) <= 0.0:
        return LossPmf(
            step,
            0,
            np.zeros(0),
            infinity_mass,
            bound,
            junk_mass=input_junk,
            loss_error=loss_error,
            mass_error=mass_error,
        )

    reach = sum(c * (abs(p.offset) + p.masses.shape[0]) for p, c in factors)
    if reach > _LARGEST_INDEX:
        raise ValueError(
            f"the composition of {sum(counts)} rounds reaches the loss grid index {reach:.3g}, "
            f"beyond the 2^52 that float64 holds exactly (its tail bounds would lose all "
            "precision); compose fewer rounds or increase loss_grid_step"
        )
    window = composition_window([(p.offset, p.masses) for p, _ in factors], counts, step, tail_mass)
    width = window.high - window.low + 1
    for size in (width, None):  # the window, then its FFT length (a little longer)
        length = fft.fast_length(width) if size is None else size
        check_grid_points(
            length,
            f"the composition of {sum(counts)} rounds on the grid of step {step:g} nats",
            "increase loss_grid_step (coarser grid) or compose fewer rounds at a time",
        )

    log_grown = sum(
        c * math.log(m + p.error_l1) for (p, c), m in zip(factors, finite_masses, strict=True)
    )
    log_plain = sum(c * math.log(m) for (p, c), m in zip(factors, finite_masses, strict=True))
    grown = math.exp(min(log_grown, _LARGEST_LOG))
    input_error_l1 = grown * -math.expm1(log_plain - log_grown)
    input_error_max = sum(
        c * p.error_max * grown / (m + p.error_l1)
        for (p, c), m in zip(factors, finite_masses, strict=True)
    )

    levels = math.log2(length)
    forward_errors = [
        _FFT_ERROR_PER_LEVEL * _UNIT_ROUNDOFF * levels * _mass_bound(p) for p, _ in factors
    ]
    # Largest possible magnitude bound |X^|(1 + u) + e of each factor: |X^| <= s + e.
    log_ceilings = [
        c * math.log((_mass_bound(p) + e) * (1 + _UNIT_ROUNDOFF) + e)
        for (p, c), e in zip(factors, forward_errors, strict=True)
    ]
    bins = length // 2 + 1
    live = np.arange(bins)
    log_magnitude = np.zeros(bins)
    relative_error = np.zeros(bins)
    composed = None
    for index, ((pmf, count), error) in enumerate(zip(factors, forward_errors, strict=True)):
        spectrum = fft.rfft(_fold(pmf, length))
        values = spectrum if live.shape[0] == bins else spectrum[live]
        magnitude = np.abs(values) * (1 + _UNIT_ROUNDOFF) + error
        log_magnitude += count * np.log(magnitude)
        relative_error += count * error / magnitude
        keep = log_magnitude + sum(log_ceilings[index + 1 :]) > _LOG_DEAD
        if not keep.all():
            live, values = live[keep], values[keep]
            log_magnitude, relative_error = log_magnitude[keep], relative_error[keep]
            composed = None if composed is None else composed[keep]
        powered = spectrum_power(values, count)
        composed = powered if composed is None else np.multiply(composed, powered, out=composed)

    products = sum(_powering_error(c) for c in counts) + _COMPLEX_PRODUCT_ERROR * (len(counts) - 1)
    relative_error += products * _UNIT_ROUNDOFF
    magnitude_bound = np.exp(log_magnitude)
    spectrum_error = magnitude_bound * relative_error

    amplification = sum(counts)
    if amplification * forward_errors[0] / finite_masses[0] > _EXTENDED_THRESHOLD:
        hot = np.flatnonzero(spectrum_error > _HOT_BIN_ERROR)
        if hot.size:
            hot_bins = live[hot]
            exact = np.ones(hot.shape[0], dtype=np.clongdouble)
            hot_log = np.zeros(hot.shape[0])
            hot_relative = np.zeros(hot.shape[0])
            for pmf, count in factors:
                values, error = _extended_spectrum(pmf, length, hot_bins)
                # |X| is formed in extended precision and rounded to double: 2u.
                magnitude = np.abs(values).astype(np.float64) * (1 + 2 * _UNIT_ROUNDOFF) + error
                hot_log += count * np.log(magnitude)
                hot_relative += count * error / magnitude
                exact *= spectrum_power(values, count)
            composed[hot] = exact.astype(np.complex128)
            relative_error_hot = (
                hot_relative + products * fft.EXTENDED_UNIT_ROUNDOFF + _UNIT_ROUNDOFF
            )
            magnitude_bound[hot] = np.exp(hot_log)
            spectrum_error[hot] = magnitude_bound[hot] * relative_error_hot

    weights = _half_spectrum_weights(length)
    live_weights = weights[live]
    dead_weight = float(weights.sum() - live_weights.sum())
    dead_bound = math.exp(_LOG_DEAD)
    inverse_error = _FFT_ERROR_PER_LEVEL * _UNIT_ROUNDOFF * levels
    spectrum_error_sum = float(np.dot(live_weights, spectrum_error)) + dead_weight * dead_bound
    magnitude_sum = float(np.dot(live_weights, magnitude_bound)) + dead_weight * dead_bound
    error_max = (spectrum_error_sum + inverse_error * magnitude_sum) / length
    error_norm = math.sqrt(
        float(np.dot(live_weights, spectrum_error**2)) + dead_weight * dead_bound**2
    )
    magnitude_norm = math.sqrt(
        float(np.dot(live_weights, magnitude_bound**2)) + dead_weight * dead_bound**2
    )
    error_l1 = min(error_norm + inverse_error * magnitude_norm, length * error_max)

    full = np.zeros(bins, dtype=np.complex128)
    full[live] = composed
    del composed
    masses = _unfold(fft.irfft(full, length), window.low, width)

    if bound == "upper":
        infinity_mass = min(1.0, infinity_mass + window.mass_above + input_error_l1)
        junk = 0.0
    else:
        junk = input_junk + window.mass_above + window.mass_below + 2.0 * input_error_l1
    return LossPmf(
        step,
        window.low,
        masses,
        infinity_mass,
        bound,
        junk_mass=junk,
        error_max=error_max + input_error_max,
        error_l1=error_l1 + input_error_l1,
        loss_error=loss_error,
        mass_error=mass_error,
    )
