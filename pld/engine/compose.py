"""Composition of discrete privacy-loss pmfs by FFT, with rigorous error terms.

The privacy loss of a composition is the sum of the rounds' losses (Koskela et al. 2023,
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
  large, just those bins are recomputed in extended precision, by direct or
  blocked sums over the pmf's atoms, an output-pruned FFT or the whole extended
  FFT, whichever costs least. The
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

import math
import weakref
from collections.abc import Sequence

import numpy as np

from pld.engine import check_grid_points, fft
from pld.engine.hot_bins import FFT_ERROR_PER_LEVEL as _FFT_ERROR_PER_LEVEL
from pld.engine.hot_bins import extended_spectra, mass_bound
from pld.engine.linalg import dot
from pld.engine.loss_pmf import LossPmf
from pld.engine.tails import Window, composition_window
from pld.numerics import UNIT_ROUNDOFF

_COMPLEX_PRODUCT_ERROR = 3.0
#: Error of the float64 elementary functions used on bounds (numpy's vectorised
#: ``log``, ``exp`` and complex ``abs``; ``math.log``, ``log1p``, ``expm1``, ``exp``),
#: in units of u: 4 ulp (at most 8 u relative to the result).
_FUNCTION_UNITS = 8.0
#: Error of a computed magnitude bound ``fl(fl(|X^|) + e)`` below ``|X^| + e``, and
#: of a factor's computed ceiling, in units of u (absolute in its log): the absolute
#: value (8), the sum (1) and the rounding of the forward error ``e`` (4), plus 1.
_MAGNITUDE_UNITS = 14.0
#: Above this bound on the amplified error of the double-precision forward
#: transforms (sum of counts times 8 u log2 N), the hot bins are recomputed in
#: extended precision: the dominant round-off term of a long self-composition
#: shrinks by two to three orders of magnitude.
_EXTENDED_THRESHOLD = 1e-12
#: Spectrum bins whose double-precision error bound exceeds this are recomputed
#: in extended precision: only the few low-frequency bins where |X|^T is not
#: negligible ...
_HOT_BIN_ERROR = 1e-20
#: ... except the smallest of them whose bounds, with those of the other cold
#: bins, add at most this share of the inverse transform's own round-off term
#: to error_max and to error_l1 (their double-precision bounds stay valid). At
#: 1e-3 upper bounds on floor-dominated queries rose by up to 1e-5 relatively
#: (benchmarks/bracket_check.py); at 1e-7 it finds no widening from the split.
_COLD_SHARE = 1e-7
#: When the hot bins' typical extended-precision error (in units of u_ext of the
#: 1-norm), amplified by the number of rounds, exceeds this share of the inverse
#: transform's term, their method is chosen for its bound before its cost.
_TYPICAL_EXTENDED_ERROR = 32.0
_TIGHT_SHARE = 0.1
#: Bins whose magnitude bound is below exp(_LOG_DEAD) are not powered (set to 0,
#: error = magnitude bound).
_LOG_DEAD = -700.0
#: Relative difference of the supports of two pmfs below which the window of one
#: composition is searched only at the best exponents of the other's.
_SAME_SUPPORT = 0.01
#: Error growth factors exp(x) are capped at exp(_LARGEST_LOG) (beyond it every
#: bound is vacuous anyway) instead of overflowing.
_LARGEST_LOG = 700.0
#: Largest grid index a composed loss may reach: window ends and Chernoff
#: exponents are computed in float64, exact for integers up to 2^52.
_LARGEST_INDEX = 2**52
#: Per pmf (while it lives), the log-MGF values its window searches computed: a
#: pmf composed again (another count, the other bound's hint) re-evaluates none.
_MGF_MEMOS: weakref.WeakKeyDictionary[LossPmf, dict] = weakref.WeakKeyDictionary()


def spectrum_power(spectrum: np.ndarray, exponent: int, in_place: bool = False) -> np.ndarray:
    """``spectrum ** exponent`` elementwise by repeated squaring (exponent >= 1);
    ``in_place`` lets it overwrite ``spectrum``."""
    result = None
    base = spectrum if in_place else spectrum.copy()
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


def _widened(value: float, units: float) -> float:
    """A float at least ``value (1 + units u)`` (``value >= 0``): the factor ``1 + (units
    + 3) u`` is rounded by at most a unit, the product by one more."""
    return value * (1.0 + (units + 3.0) * UNIT_ROUNDOFF)


def _narrowed(value: float, units: float) -> float:
    """A float at most ``value (1 - units u)`` (``value >= 0``), as :func:`_widened`."""
    return value * (1.0 - (units + 3.0) * UNIT_ROUNDOFF)


def _log_sum_units(terms: int) -> float:
    """Absolute error of a float sum ``sum_i c_i log(m_i)`` of ``terms`` terms (and up to
    three more additions), in units of u of ``sum_i c_i |log m_i|``: the logarithm
    (``_FUNCTION_UNITS``), the product by ``c_i`` (1), the sum (``terms + 2`` levels,
    each within u of the partial sums' absolute values), with 1 % for second order."""
    return 1.01 * (_FUNCTION_UNITS + 1 + terms + 3)


def _expm1_units(log_sum: float, terms: int) -> float:
    """Relative error, in units of u, of ``expm1(L)`` for a float ``L = sum_i c_i log1p(x_i)``
    of non-negative terms: ``L`` is within ``(terms + 10) u`` of itself (log1p, product,
    sum), which moves ``expm1(L)`` by at most ``(1 + L)`` times that relatively, and
    ``expm1`` adds its own error."""
    return 1.01 * ((terms + 10) * (1 + log_sum) + _FUNCTION_UNITS)


def _half_spectrum_weights(length: int) -> np.ndarray:
    """Multiplicity of each rfft bin in the full spectrum (1 for DC and Nyquist)."""
    weights = np.full(length // 2 + 1, 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    return weights


def _hot_bins(
    spectrum_error: np.ndarray,
    magnitude_bound: np.ndarray,
    weights: np.ndarray,
    inverse_error: float,
) -> tuple[np.ndarray, float]:
    """Indices (into the live bins) of the bins to recompute in extended precision,
    and the weighted sum of the squared magnitude bounds.

    Those whose double-precision bound exceeds ``_HOT_BIN_ERROR``, except the
    smallest of them while the cold bins' bounds add up to at most
    ``_COLD_SHARE`` of the inverse transform's term (``inverse_error`` times the
    magnitude bounds, in the 1-norm and in the 2-norm; weights as in the half
    spectrum). Any split is sound: a cold bin keeps its valid bound.
    """
    magnitude_square = dot(weights, magnitude_bound * magnitude_bound)
    hot = np.flatnonzero(spectrum_error > _HOT_BIN_ERROR)
    if not hot.size:
        return hot, magnitude_square
    errors, hot_weights = spectrum_error[hot], weights[hot]
    squares = spectrum_error * spectrum_error
    budget_max = _COLD_SHARE * inverse_error * dot(weights, magnitude_bound)
    budget_norm = (_COLD_SHARE * inverse_error) ** 2 * magnitude_square
    budget_max -= dot(weights, spectrum_error) - dot(hot_weights, errors)
    budget_norm -= dot(weights, squares) - dot(hot_weights, squares[hot])
    order = np.argsort(errors)
    cold = int(
        np.count_nonzero(
            (np.cumsum(hot_weights[order] * errors[order]) <= budget_max)
            & (np.cumsum(hot_weights[order] * squares[hot][order]) <= budget_norm)
        )
    )
    return np.sort(hot[order[cold:]]), magnitude_square


def _fold_rows(pmf: LossPmf, length: int) -> int:
    """Most masses :func:`pld.engine.fft.rfft_placed` adds into one entry when it folds
    the pmf onto ``length`` positions: a sum of ``w`` of them errs by
    at most ``(w - 1) u`` of their sum, so the folded vector is within ``(w - 1) u``
    of the pmf's 1-norm of the exact one (and so is every bin of its transform)."""
    return -(-pmf.masses.shape[0] // length)


def _spectrum(pmf: LossPmf, length: int) -> np.ndarray:
    """The pmf's double-precision spectrum at ``length`` (valid until the next
    transform of that length)."""
    return fft.rfft_placed(pmf.masses, pmf.offset % length, length)


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
    return _compose(factors, tail_mass, None, None)[0]


def compose_bounds(
    uppers: Sequence[tuple[LossPmf, int]],
    lowers: Sequence[tuple[LossPmf, int]],
    tail_mass: float,
) -> tuple[LossPmf, LossPmf]:
    """:func:`compose` of the upper and of the lower factors of one direction.

    When every lower factor spans the grid points of its upper one (within
    ``_SAME_SUPPORT``), the lower composition's window tries only the two
    Chernoff exponents that chose the upper one's: the pmfs then differ by mass
    moves of about a grid step, so their best exponents nearly agree (any
    exponent gives valid tail bounds). Otherwise its search starts at those
    exponents instead of a Gaussian guess.
    """
    upper, window = _compose(uppers, tail_mass, None, None)
    similar = all(
        abs(p.offset - q.offset) <= _SAME_SUPPORT * p.masses.shape[0]
        and abs(p.masses.shape[0] - q.masses.shape[0]) <= _SAME_SUPPORT * p.masses.shape[0]
        for (p, _), (q, _) in zip(uppers, lowers, strict=True)
    )
    found = None if window is None else (window.t_up, window.t_down)
    lower, _ = _compose(lowers, tail_mass, found if similar else None, None if similar else found)
    return upper, lower


def _compose(
    factors: Sequence[tuple[LossPmf, int]],
    tail_mass: float,
    hint: tuple[float, float] | None,
    near: tuple[float, float] | None,
) -> tuple[LossPmf, Window | None]:
    """:func:`compose`, with a hint or a starting point for the window search (see
    :func:`pld.engine.tails.composition_window`); also returns the window."""
    first = factors[0][0]
    step, bound = first.step, first.bound
    counts = [count for _, count in factors]
    finite_masses = [p.finite_mass for p, _ in factors]
    # Sums over the factors, in their order (one pass of Python arithmetic).
    log_finite = log_junk = loss_error = log_mass = reach = 0.0
    for p, c in factors:
        if p.infinity_mass < 1.0:
            log_finite += c * math.log1p(-p.infinity_mass)
        log_junk += c * math.log1p(p.junk_mass)
        loss_error += c * p.loss_error
        log_mass += c * math.log1p(p.mass_error)
        reach += c * (abs(p.offset) + p.masses.shape[0])
    terms = len(factors)
    if max(p.infinity_mass for p, _ in factors) >= 1.0:
        infinity_mass = 1.0
    else:
        # ``log_finite`` is within (terms + 10) u of itself relatively (same signs), which
        # moves ``-expm1`` relatively by at most as much; then expm1's own error.
        infinity_units = 1.01 * (terms + 10 + _FUNCTION_UNITS)
        infinity_mass = -math.expm1(log_finite)
        if first.bound == "upper":
            infinity_mass = min(1.0, _widened(infinity_mass, infinity_units))
        else:
            infinity_mass = _narrowed(infinity_mass, infinity_units)
    log_junk, log_mass = min(log_junk, _LARGEST_LOG), min(log_mass, _LARGEST_LOG)
    input_junk = _widened(math.expm1(log_junk), _expm1_units(log_junk, terms))
    mass_error = _widened(math.expm1(log_mass), _expm1_units(log_mass, terms))
    loss_error = _widened(loss_error, 1.01 * (terms + 1))
    if min(finite_masses) <= 0.0:
        empty = LossPmf(
            step,
            0,
            np.zeros(0),
            infinity_mass,
            bound,
            junk_mass=input_junk,
            loss_error=loss_error,
            mass_error=mass_error,
        )
        return empty, None

    if reach > _LARGEST_INDEX:
        raise ValueError(
            f"the composition of {sum(counts)} rounds reaches the loss grid index {reach:.3g}, "
            f"beyond the 2^52 that float64 holds exactly (its tail bounds would lose all "
            "precision); compose fewer rounds or increase loss_grid_step"
        )
    window = composition_window(
        [(p.offset, p.masses) for p, _ in factors],
        counts,
        step,
        tail_mass,
        hint,
        [_MGF_MEMOS.setdefault(p, {}) for p, _ in factors],
        near,
    )
    width = window.high - window.low + 1
    for size in (width, None):  # the window, then its FFT length (a little longer)
        length = fft.fast_length(width) if size is None else size
        check_grid_points(
            length,
            f"the composition of {sum(counts)} rounds on the grid of step {step:g} nats",
            "increase loss_grid_step (coarser grid) or compose fewer rounds at a time",
        )

    levels = math.log2(length)
    rounds = sum(counts)
    log_units = _log_sum_units(terms)
    # ``grown`` = prod (s + e_1)^c and ``gap`` = sum c log1p(e_1 / s) (no cancellation),
    # with s the factors' 1-norm bounds; ``spread`` = sum c |log(s + e_1)| scales the
    # rounding of ``log_grown`` (and s + e_1 rounds by a unit).
    log_grown = spread = gap = 0.0
    forward_errors, log_ceilings = [], []
    positive = 0.0  # sum of c log(ceiling) over the ceilings above 1
    for p, c in factors:
        norm = mass_bound(p)
        grown_log = math.log(norm + p.error_l1)
        log_grown += c * grown_log
        spread += c * abs(grown_log)
        gap += c * math.log1p(p.error_l1 / norm)
        error = (_FFT_ERROR_PER_LEVEL * levels + _fold_rows(p, length) - 1) * UNIT_ROUNDOFF
        forward_errors.append(error * norm)
        # Largest possible magnitude bound |X^| + e of the factor: |X^| <= s + e.
        log_ceilings.append(c * math.log(norm + 2.0 * error * norm))
        positive += max(0.0, log_ceilings[-1])
    grown_units = 1.01 * (log_units * spread + rounds + _FUNCTION_UNITS)
    grown = math.exp(min(log_grown, _LARGEST_LOG))
    input_error_l1 = _widened(
        grown * -math.expm1(-gap), 1.01 * (grown_units + terms + 10 + _FUNCTION_UNITS + 1)
    )
    input_error_max = _widened(
        sum(c * p.error_max * grown / (mass_bound(p) + p.error_l1) for p, c in factors),
        1.01 * (grown_units + terms + 5),
    )
    # A bin is dead when its computed sum of c log(magnitude) over the factors so far,
    # plus the ceilings' of the rest, is at most _LOG_DEAD - margin: near the threshold
    # the sum's terms add up to at most 701 + 3 ``positive`` in absolute value, so its
    # rounding, and that of the magnitudes (``_MAGNITUDE_UNITS`` per round), is within
    # the margin and the true bound of a dead bin is at most exp(_LOG_DEAD).
    dead_margin = (
        1.01
        * UNIT_ROUNDOFF
        * (log_units * (1.0 - _LOG_DEAD + 3.0 * positive) + _MAGNITUDE_UNITS * rounds)
    )
    # Suffix sums, each rounded relatively to its own terms only.
    rests = [0.0] * terms
    for index in range(terms - 2, -1, -1):
        rests[index] = rests[index + 1] + log_ceilings[index + 1]
    live = None  # every bin, until some are dead
    composed = log_magnitude = relative_error = None
    for index, ((pmf, count), error) in enumerate(zip(factors, forward_errors, strict=True)):
        rest = rests[index]
        spectrum = _spectrum(pmf, length)
        values = spectrum if live is None else spectrum[live]
        magnitude = np.abs(values)
        magnitude += error
        logs = None
        if index == 0:
            # Dead iff count * log(magnitude) + rest <= _LOG_DEAD - margin; the factor
            # 1 - 1e-9 covers the rounding of ``cut`` (below 1e-12 relatively) and exp.
            cut = min((_LOG_DEAD - dead_margin - rest) / count, _LARGEST_LOG)
            threshold = math.exp(cut) * (1 - 1e-9)
            keep = None if float(magnitude.min()) > threshold else magnitude > threshold
        else:
            logs = np.log(magnitude)
            keep = log_magnitude + count * logs + rest > _LOG_DEAD - dead_margin
            if keep.all():
                keep = None
        if keep is not None:
            indices = np.flatnonzero(keep)
            selected = indices
            if indices.shape[0] and indices[-1] - indices[0] + 1 == indices.shape[0]:
                selected = slice(int(indices[0]), int(indices[-1]) + 1)  # views
            live = indices if live is None else live[selected]
            values, magnitude = values[selected], magnitude[selected]
            if index:
                log_magnitude, relative_error = log_magnitude[selected], relative_error[selected]
                logs, composed = logs[selected], composed[selected]
        if index == 0:
            # ``values`` may be the transform's own output: powered in place below.
            relative_error = np.divide(count * error, magnitude)
            log_magnitude = np.log(magnitude, out=magnitude)
            log_magnitude *= count
        else:
            log_magnitude += count * logs
            relative_error += count * error / magnitude
        powered = spectrum_power(values, count, in_place=True)
        composed = powered if composed is None else np.multiply(composed, powered, out=composed)

    products = sum(_powering_error(c) for c in counts) + _COMPLEX_PRODUCT_ERROR * (len(counts) - 1)
    relative_error += products * UNIT_ROUNDOFF
    # Largest |sum_i c_i log m_i| of a live bin (none is above a few u: every m_i is
    # at most its ceiling).
    spread = -float(log_magnitude.min()) if log_magnitude.shape[0] else 0.0
    magnitude_bound = np.exp(log_magnitude)
    spectrum_error = magnitude_bound * relative_error

    if live is None:
        live_weights = _half_spectrum_weights(length)
    else:
        # Ascending: only the first can be DC, only the last Nyquist.
        live_weights = np.full(live.shape[0], 2.0)
        if live.shape[0] and live[0] == 0:
            live_weights[0] = 1.0
        if live.shape[0] and 2 * live[-1] == length:
            live_weights[-1] = 1.0
    # The inverse transform, and the division of its result by N (one unit).
    inverse_error = (_FFT_ERROR_PER_LEVEL * levels + 1) * UNIT_ROUNDOFF

    amplification = sum(counts)
    if amplification * forward_errors[0] / finite_masses[0] > _EXTENDED_THRESHOLD:
        hot, magnitude_square = _hot_bins(
            spectrum_error, magnitude_bound, live_weights, inverse_error
        )
        # Typical extended bounds (about 32 u_ext of the 1-norm), amplified T times
        # at the largest bins, against the inverse transform's own term.
        tight = amplification * _TYPICAL_EXTENDED_ERROR * fft.EXTENDED_UNIT_ROUNDOFF > (
            _TIGHT_SHARE * inverse_error * math.sqrt(magnitude_square)
        )
        if hot.size:
            hot_bins = hot if live is None else live[hot]
            exact = np.ones(hot.shape[0], dtype=np.clongdouble)
            hot_log = np.zeros(hot.shape[0])
            hot_relative = np.zeros(hot.shape[0])
            spectra = extended_spectra([pmf for pmf, _ in factors], length, hot_bins, tight)
            for (values, error), (_, count) in zip(spectra, factors, strict=True):
                # |X| is formed in extended precision and rounded to double.
                magnitude = np.abs(values).astype(np.float64) + error
                hot_log += count * np.log(magnitude)
                hot_relative += count * error / magnitude
                exact *= spectrum_power(values, count)
            composed[hot] = exact.astype(np.complex128)
            relative_error_hot = (
                hot_relative + products * fft.EXTENDED_UNIT_ROUNDOFF + UNIT_ROUNDOFF
            )
            spread = max(spread, -float(hot_log.min()))
            magnitude_bound[hot] = np.exp(hot_log)
            spectrum_error[hot] = magnitude_bound[hot] * relative_error_hot

    # The weights of all bins add up to the length.
    dead_weight = float(length - live_weights.sum())
    dead_bound = _widened(math.exp(_LOG_DEAD), _FUNCTION_UNITS)
    spectrum_error_sum = dot(live_weights, spectrum_error) + dead_weight * dead_bound
    magnitude_sum = dot(live_weights, magnitude_bound) + dead_weight * dead_bound
    error_max = (spectrum_error_sum + inverse_error * magnitude_sum) / length
    # The dead bins' squares underflow: their 2-norm is added after the square root.
    dead_norm = math.sqrt(dead_weight) * dead_bound
    error_norm = math.sqrt(dot(live_weights, spectrum_error**2)) + dead_norm
    magnitude_norm = math.sqrt(dot(live_weights, magnitude_bound**2)) + dead_norm
    error_l1 = min(error_norm + inverse_error * magnitude_norm, length * error_max)
    # The rounding of the bounds themselves (docs/error-bounds.md §4): a magnitude
    # bound exp(sum c log m) is within ``magnitude_units`` u of prod (|X^| + e)^c (the
    # logs, their sum, exp, the magnitudes' own rounding); a relative error term adds
    # ``terms + 23`` units (the forward error, magnitude, product and quotient of each
    # term, their sum, the powering term and the product with the magnitude); the
    # sums over the bins and the rest of the arithmetic above ``live + 12`` units
    # (dot products of non-negative terms, squares, square roots, the inverse
    # transform's factor, the division by the length).
    magnitude_units = log_units * (spread + 2.0 * positive + 1.0) + _MAGNITUDE_UNITS * rounds
    bins = length if live is None else live.shape[0]
    own_units = 1.02 * (magnitude_units + _FUNCTION_UNITS + terms + 23 + bins + 12) + 1.0
    error_max, error_l1 = _widened(error_max, own_units), _widened(error_l1, own_units)

    masses = fft.irfft_sparse(live, composed, length, window.low, width)
    del composed
    # Negative outputs are round-off: the true values are non-negative, so clipping
    # only moves a value towards the truth.
    np.maximum(masses, 0.0, out=masses)

    if bound == "upper":
        infinity_mass = min(1.0, _widened(infinity_mass + window.mass_above + input_error_l1, 2))
        junk = 0.0
    else:
        junk = _widened(
            input_junk + window.mass_above + window.mass_below + 2.0 * input_error_l1, 3
        )
    composed_pmf = LossPmf(
        step,
        window.low,
        masses,
        infinity_mass,
        bound,
        junk_mass=junk,
        error_max=_widened(error_max + input_error_max, 1),
        error_l1=_widened(error_l1 + input_error_l1, 1),
        loss_error=loss_error,
        mass_error=mass_error,
    )
    return composed_pmf, window
