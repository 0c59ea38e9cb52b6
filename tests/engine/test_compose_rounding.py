"""The composition's bounds are bounds after the rounding of their own arithmetic.

The magnitude bounds ``prod_i (|X^_i| + e_i)^(c_i)``, the error bounds, their sums
over the bins and the dead-bin test are computed in double precision; the
composition widens them by a charge for that rounding (docs/error-bounds.md §4,
"Rounding of the bounds themselves"). Here the same quantities are recomputed
from the same spectra in x87 extended precision (2048 times finer than double;
its own rounding, below ``1e-15`` relatively here, is covered by a ``1e-14``
margin in the truth's favour) and the composition's terms must not be smaller.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import pld
from pld.engine import compose as compose_module
from pld.engine import fft
from pld.engine.loss_pmf import LossPmf

U = math.ulp(1.0) / 2
#: Relative error of the extended-precision recomputation (logs and sums over 24
#: factors and a few thousand bins, about 1e-16 of |log| <= 700), with margin.
TRUTH_MARGIN = 1e-14


def _factors(count: int, rounds_each: int) -> list[tuple[LossPmf, int]]:
    """``count`` discretised Gaussians of various widths and means (some mass at +inf)."""
    factors = []
    for index in range(count):
        width = 2.0 + 0.37 * index
        points = np.arange(-12, 13)
        masses = np.exp(-((points - 0.3 * index) ** 2) / (2 * width**2))
        masses *= (1 - 1e-9) / masses.sum()
        pmf = LossPmf(0.01, -12 + index % 3, masses, 1e-9 * (index % 2), "upper")
        factors.append((pmf, rounds_each))
    return factors


def _recompute(factors, length, spectra, hot):
    """``error_max`` and ``error_l1`` of the composition, in extended precision, from the
    forward spectra (double) and the extended values and bounds at the hot bins."""
    ext = np.longdouble
    u, u_ext = ext(U), ext(fft.EXTENDED_UNIT_ROUNDOFF)
    levels = np.log2(ext(length))
    bins = length // 2 + 1
    log_magnitude = np.zeros(bins, dtype=ext)
    relative = np.zeros(bins, dtype=ext)
    for (pmf, count), spectrum in zip(factors, spectra, strict=True):
        norm = np.sum(pmf.masses.astype(ext))  # exact enough: 25 masses
        error = (8 * levels + compose_module._fold_rows(pmf, length) - 1) * u * norm
        magnitude = np.abs(spectrum.astype(np.clongdouble)) + error
        log_magnitude += count * np.log(magnitude)
        relative += count * error / magnitude
    counts = [count for _, count in factors]
    products = sum(compose_module._powering_error(c) for c in counts) + 3 * (len(counts) - 1)
    relative += products * u
    if hot is not None:
        hot_bins, values = hot
        hot_log = np.zeros(hot_bins.shape[0], dtype=ext)
        hot_relative = np.zeros(hot_bins.shape[0], dtype=ext)
        for (spectrum, error), count in zip(values, counts, strict=True):
            magnitude = np.abs(spectrum) + ext(error)
            hot_log += count * np.log(magnitude)
            hot_relative += count * ext(error) / magnitude
        log_magnitude[hot_bins] = hot_log
        relative[hot_bins] = hot_relative + products * u_ext + u
    magnitude = np.exp(log_magnitude)
    spectrum_error = magnitude * relative
    weights = np.full(bins, ext(2))
    weights[0] = 1
    if length % 2 == 0:
        weights[-1] = 1
    inverse = (8 * levels + 1) * u
    error_max = (np.sum(weights * spectrum_error) + inverse * np.sum(weights * magnitude)) / length
    error_l1 = np.sqrt(np.sum(weights * spectrum_error**2)) + inverse * np.sqrt(
        np.sum(weights * magnitude**2)
    )
    return error_max, min(error_l1, length * error_max)


@pytest.mark.parametrize(
    ("extended", "count", "rounds_each"),
    [(False, 24, 417), (False, 12, 833), (False, 6, 1667), (True, 24, 417)],
)
def test_bounds_at_least_their_extended_recomputation(monkeypatch, extended, count, rounds_each):
    """Many factors, T = 10 000 (within 10): error_max and error_l1 are at least the same
    bounds recomputed in extended precision (double-precision path, then hot bins),
    and within 1e-9 of them relatively (the charge does not widen the bracket).
    Without the charge, the double-precision path's terms were 4.5e-13 (12
    factors) and 2.1e-13 (6 factors) relatively below the recomputation; with it
    they are about 2e-11 above."""
    spectra, hot = [], []
    plain_spectrum = compose_module._spectrum
    plain_extended = compose_module.extended_spectra

    def recorded_spectrum(pmf, length):
        spectrum = plain_spectrum(pmf, length)
        spectra.append(spectrum.copy())  # powered in place by the composition
        return spectrum

    def recorded_extended(pmfs, length, bins, tight):
        values = plain_extended(pmfs, length, bins, tight)
        hot.append((bins.copy(), [(v.copy(), e) for v, e in values]))
        return values

    monkeypatch.setattr(compose_module, "_spectrum", recorded_spectrum)
    monkeypatch.setattr(compose_module, "extended_spectra", recorded_extended)
    if not extended:
        monkeypatch.setattr(compose_module, "_EXTENDED_THRESHOLD", math.inf)
    factors = _factors(count, rounds_each)
    assert 9_990 <= sum(c for _, c in factors) <= 10_010
    composed = compose_module.compose(factors, 1e-12)
    length = fft.fast_length(composed.masses.shape[0])
    assert len(hot) == (1 if extended else 0)
    error_max, error_l1 = _recompute(factors, length, spectra, hot[0] if hot else None)
    error_max, error_l1 = (float(x * (1 + TRUTH_MARGIN)) for x in (error_max, error_l1))
    assert composed.error_max >= error_max
    assert composed.error_l1 >= error_l1
    assert composed.error_max <= error_max * (1 + 1e-9)
    assert composed.error_l1 <= error_l1 * (1 + 1e-9)


def test_no_bin_is_dead_above_the_threshold(monkeypatch):
    """Every bin the composition drops (charged at exp(-700)) has a magnitude bound,
    recomputed in extended precision, of at most exp(-700)."""
    spectra, live = [], []
    plain_spectrum = compose_module._spectrum
    plain_sparse = fft.irfft_sparse

    def recorded_spectrum(pmf, length):
        spectrum = plain_spectrum(pmf, length)
        spectra.append(spectrum.copy())
        return spectrum

    def recorded_sparse(bins, *arguments):
        live.append(bins)
        return plain_sparse(bins, *arguments)

    monkeypatch.setattr(compose_module, "_spectrum", recorded_spectrum)
    monkeypatch.setattr(fft, "irfft_sparse", recorded_sparse)
    factors = _factors(24, 417)
    composed = compose_module.compose(factors, 1e-12)
    length = fft.fast_length(composed.masses.shape[0])
    ext = np.longdouble
    levels = np.log2(ext(length))
    log_magnitude = np.zeros(length // 2 + 1, dtype=ext)
    for (pmf, count), spectrum in zip(factors, spectra, strict=True):
        error = (8 * levels) * ext(U) * np.sum(pmf.masses.astype(ext))
        log_magnitude += count * np.log(np.abs(spectrum.astype(np.clongdouble)) + error)
    dead = np.ones(length // 2 + 1, dtype=bool)
    assert live[0] is not None
    dead[live[0]] = False
    assert 0 < np.count_nonzero(dead) < dead.shape[0]
    assert float(np.max(log_magnitude[dead])) <= -700.0 + 1e-15


WORKLOADS = {
    "subsampled_gaussian": lambda: pld.subsampled_gaussian(1.0, 0.01),
    "clones": lambda: pld.clones(10_000, 1.0),
    "gaussian": lambda: pld.gaussian(2.0),
    "krr": lambda: pld.krr(1000, 4, 0.25, "weak"),
}


def _terms(loss: pld.PLD) -> list[float]:
    terms = []
    for direction in loss._directions:
        for pmf in (direction.upper, direction.lower):
            terms += [pmf.error_max, pmf.error_l1, pmf.infinity_mass, pmf.junk_mass]
            terms += [pmf.mass_error, pmf.loss_error]
    return terms


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_charge_does_not_widen_the_benchmarks(monkeypatch, name):
    """On the workloads of benchmarks/compose.py at T = 1000, every error term with
    the rounding charge is within 1e-9 relatively of the term without it."""
    charged = _terms(WORKLOADS[name]().self_compose(1000))
    monkeypatch.setattr(compose_module, "_widened", lambda value, units: value)
    monkeypatch.setattr(compose_module, "_narrowed", lambda value, units: value)
    plain = _terms(WORKLOADS[name]().self_compose(1000))
    for with_charge, without in zip(charged, plain, strict=True):
        assert without * (1 - 1e-9) <= with_charge <= without * (1 + 1e-9) + 1e-300
