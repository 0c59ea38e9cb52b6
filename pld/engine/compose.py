"""Composition of discrete privacy-loss pmfs by FFT, with rigorous error terms.

The privacy loss of a composition is the sum of the rounds' losses (seed 004,
Thm 6), so its pmf is the convolution of the rounds' pmfs. All factors are
transformed once at a length ``N`` that covers the window chosen by Chernoff
bounds (:mod:`pld.engine.tails`); self-composition raises a spectrum to the
power T by repeated squaring (about 7× faster and more accurate than ``X**T``);
one inverse transform gives the composed pmf on the window.

Error terms (docs/error-bounds.md):

* wrap-around: the circular convolution folds the mass outside the window
  ``[low, high]`` into it. Mass below the window lands at higher losses, which
  only raises delta: nothing to charge for the upper bound. Mass above it
  lands lower, so its Chernoff bound is charged to +inf for the upper bound.
  For the lower bound all folded mass is "junk" whose bound is subtracted.
* round-off: a floating-point FFT of a non-negative vector of 1-norm ``s``
  has entrywise error at most ``c * u * log2(N) * s`` (Higham 2002, §24.1,
  with ``c = 8``); raising to the power T multiplies an entrywise error ``e`` of
  a spectrum value ``X`` into at most ``T e (|X| + e)^(T-1)``; each complex
  product adds a relative ``3u``. The resulting bound on the composed
  spectrum is pushed through the inverse transform in the max-norm and the
  2-norm (:class:`LossPmf` uses the smaller resulting slack).
* errors already carried by the factors propagate through the convolution;
  the factors' loss-position errors add up and their relative mass errors
  multiply.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pld.engine import MAX_GRID_SIZE, fft
from pld.engine.loss_pmf import LossPmf
from pld.engine.tails import composition_window

_UNIT_ROUNDOFF = math.ulp(1.0) / 2
_FFT_ERROR_PER_LEVEL = 8.0
_COMPLEX_PRODUCT_ERROR = 3.0
#: Above this bound on the amplified error of the double-precision forward
#: transforms (sum of counts times 8 u log2 N), the forward transforms are done
#: in extended precision: about 7x slower, but the dominant round-off term of a
#: long self-composition shrinks by two orders of magnitude.
_EXTENDED_THRESHOLD = 1e-12
#: Spectrum bins whose double-precision error bound exceeds this are recomputed
#: in extended precision: only the few low-frequency bins where |X|^T is not
#: negligible, so the T u error of double-precision powering disappears at the
#: cost of a handful of long-double products.
_HOT_BIN_ERROR = 1e-20


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


def _extended_product(
    spectra: Sequence[np.ndarray], counts: Sequence[int], bins: np.ndarray
) -> np.ndarray:
    """``prod_i spectra[i][bins] ** counts[i]`` in extended precision, rounded to complex128."""
    result = np.ones(bins.shape[0], dtype=np.clongdouble)
    for spectrum, count in zip(spectra, counts, strict=True):
        result *= spectrum_power(spectrum[bins], count)
    return result.astype(np.complex128)


def _half_spectrum_weights(length: int) -> np.ndarray:
    """Multiplicity of each rfft bin in the full spectrum (1 for DC and Nyquist)."""
    weights = np.full(length // 2 + 1, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    return weights


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
        If the window needs more than ``pld.engine.MAX_GRID_SIZE`` points.
    """
    first = factors[0][0]
    step, bound = first.step, first.bound
    counts = [count for _, count in factors]
    log_keep = sum(c * math.log1p(-min(p.infinity_mass, 1.0)) for p, c in factors)
    infinity_mass = -math.expm1(log_keep) if log_keep > -math.inf else 1.0
    log_junk = sum(c * math.log1p(p.junk_mass) for p, c in factors)
    input_junk = math.expm1(log_junk)
    finite_masses = [p.finite_mass for p, _ in factors]
    loss_error = sum(c * p.loss_error for p, c in factors)
    mass_error = math.expm1(sum(c * math.log1p(p.mass_error) for p, c in factors))
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

    log_grown = sum(
        c * math.log(m + p.error_l1) for (p, c), m in zip(factors, finite_masses, strict=True)
    )
    log_plain = sum(c * math.log(m) for (p, c), m in zip(factors, finite_masses, strict=True))
    grown = math.exp(log_grown)
    input_error_l1 = grown * -math.expm1(log_plain - log_grown)
    input_error_max = sum(
        c * p.error_max * grown / (m + p.error_l1)
        for (p, c), m in zip(factors, finite_masses, strict=True)
    )

    window = composition_window([(p.offset, p.masses) for p, _ in factors], counts, step, tail_mass)
    width = window.high - window.low + 1
    length = fft.fast_length(width)
    if length > MAX_GRID_SIZE:
        raise ValueError(
            f"the composition needs a grid of {length} points (limit {MAX_GRID_SIZE}, "
            f"about {16 * length / 2**30:.1f} GiB per array); increase loss_grid_step "
            "(coarser grid) or compose fewer rounds at a time"
        )

    levels = math.log2(length)
    amplification = sum(counts)
    extended = amplification * _FFT_ERROR_PER_LEVEL * _UNIT_ROUNDOFF * levels > _EXTENDED_THRESHOLD
    forward_roundoff = fft.EXTENDED_UNIT_ROUNDOFF if extended else _UNIT_ROUNDOFF
    composed_spectrum = None
    extended_spectra = []
    log_magnitude_bound = np.zeros(length // 2 + 1)
    forward_relative_error = np.zeros(length // 2 + 1)
    for (pmf, count), mass in zip(factors, finite_masses, strict=True):
        positions = (pmf.offset + np.arange(pmf.masses.shape[0])) % length
        folded = np.bincount(positions, weights=pmf.masses, minlength=length)
        if extended:
            extended_spectra.append(fft.rfft_extended(folded))
            spectrum = extended_spectra[-1].astype(np.complex128)
        else:
            spectrum = fft.rfft(folded)
        forward_error = _FFT_ERROR_PER_LEVEL * forward_roundoff * levels * mass
        magnitude = np.abs(spectrum) * (1 + _UNIT_ROUNDOFF) + forward_error
        log_magnitude_bound += count * np.log(magnitude)
        forward_relative_error += count * forward_error / magnitude
        powered = spectrum_power(spectrum, count)
        if composed_spectrum is None:
            composed_spectrum = powered
        else:
            np.multiply(composed_spectrum, powered, out=composed_spectrum)
        del spectrum, powered, magnitude

    magnitude_bound = np.exp(log_magnitude_bound)
    products = sum(_powering_error(c) for c in counts) + _COMPLEX_PRODUCT_ERROR * (len(counts) - 1)
    conversions = amplification if extended else 0
    relative_error = forward_relative_error + (products + conversions) * _UNIT_ROUNDOFF
    if extended:
        hot = np.flatnonzero(magnitude_bound * relative_error > _HOT_BIN_ERROR)
        composed_spectrum[hot] = _extended_product(extended_spectra, counts, hot)
        relative_error[hot] = (
            forward_relative_error[hot] + products * fft.EXTENDED_UNIT_ROUNDOFF + _UNIT_ROUNDOFF
        )
    del extended_spectra
    magnitude_bound = np.exp(log_magnitude_bound)
    spectrum_error = magnitude_bound * relative_error
    weights = _half_spectrum_weights(length)
    inverse_error = _FFT_ERROR_PER_LEVEL * _UNIT_ROUNDOFF * levels
    spectrum_error_sum = float(np.dot(weights, spectrum_error))
    magnitude_sum = float(np.dot(weights, magnitude_bound))
    error_max = (spectrum_error_sum + inverse_error * magnitude_sum) / length
    error_l1 = math.sqrt(float(np.dot(weights, spectrum_error**2))) + inverse_error * math.sqrt(
        float(np.dot(weights, magnitude_bound**2))
    )
    error_l1 = min(error_l1, length * error_max)

    circular = fft.irfft(composed_spectrum, length)
    del composed_spectrum
    masses = np.maximum(circular[(window.low + np.arange(width)) % length], 0.0)

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
