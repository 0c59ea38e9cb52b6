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
from pld.engine.tails import Window, composition_window

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
#: Measured costs, in units of 2.7 ns (x87 long double, numpy and FFTW, on the
#: reference machine): one (bin, atom) term of the direct sum, one (bin, grid
#: point) term of the blocked sum (two long-double matrix products), one
#: ``N log2 M`` of the pruned sum's column transforms, one (bin, column) term of
#: its outer sum, and one ``N log2 N`` of the extended FFT.
_DIRECT_COST = 30.0
_BLOCKED_COST = 6.0
_COLUMNS_COST = 1.1
_OUTER_COST = 11.0
_FFT_COST = 1.2
#: Among the methods within this factor of the cheapest one's cost, the one with
#: the smallest error bound is used.
_COST_SLACK = 1.5
#: Grid points per block of the blocked sum (its inner, sequential dot products).
_BLOCK = 16
#: Error of a twiddle table entry and of a twiddle (a product of two entries),
#: in units of u_ext (see :func:`_unit_roots`).
_TABLE_UNITS = 4
_TWIDDLE_UNITS = 2 * _TABLE_UNITS + 3
#: Error of the direct, blocked and pruned sums in units of u_ext of the 1-norm,
#: without their summation depth (and, for the pruned sum, its column
#: transforms): a twiddle, the mass product (1 unit; direct and blocked) or the
#: complex product with a column's spectrum (3 units; pruned), the blocked sum's
#: second twiddle and outer complex product, and 2 units of slack for the
#: second-order terms.
_DIRECT_UNITS = _TWIDDLE_UNITS + 1 + 2
_BLOCKED_UNITS = 2 * _TWIDDLE_UNITS + 1 + 3 + 2
_PRUNED_UNITS = _TWIDDLE_UNITS + 3 + 2
#: Relative difference of the supports of two pmfs below which the window of one
#: composition is searched only at the best exponents of the other's.
_SAME_SUPPORT = 0.01
#: Largest number of (bin, atom) terms of the direct sum held in memory at once.
_DIRECT_CHUNK = 2**20
#: Error growth factors exp(x) are capped at exp(_LARGEST_LOG) (beyond it every
#: bound is vacuous anyway) instead of overflowing.
_LARGEST_LOG = 700.0
#: Largest grid index a composed loss may reach: window ends and Chernoff
#: exponents are computed in float64, exact for integers up to 2^52.
_LARGEST_INDEX = 2**52


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


def _spectrum(pmf: LossPmf, length: int) -> np.ndarray:
    """The pmf's double-precision spectrum at ``length`` (valid until the next
    transform of that length)."""
    if pmf.masses.shape[0] <= length:
        return fft.rfft_placed(pmf.masses, pmf.offset % length, length)
    return fft.rfft(_fold(pmf, length))


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


#: pi / 4 to the 64 bits of the x87 long double (error below 0.3 u_ext relative).
_QUARTER_PI = np.longdouble("0.78539816339744830961566084581987572105")


def _unit_roots(multiples: np.ndarray, length: int) -> np.ndarray:
    """``exp(-2 pi i m / N)`` in extended precision for integers ``0 <= m < N``.

    The angle is reduced exactly to an octant: with ``8 m = o N + r`` (integers),
    the angle is ``(pi / 4) (o + r / N)``, and its cosine and sine are those of
    ``phi = (pi / 4) r' / N`` in ``[0, pi / 4]`` (``r' = r``, or ``N - r`` in odd
    octants), swapped and negated exactly. ``phi`` errs by at most 2.31 u_ext
    relatively (pi / 4, the division, the product): 1.82 u_ext absolutely;
    ``cosl`` and ``sinl`` by one ulp each, below u_ext (glibc's documented accuracy
    on x86-64): an entry is within ``1.82 + sqrt(2) < 4 u_ext`` of the truth.
    """
    eighths = 8 * np.asarray(multiples, dtype=np.int64)
    octant = eighths // length
    rest = eighths - octant * length
    rest = np.where(octant % 2 == 1, length - rest, rest)
    angle = _QUARTER_PI * (rest.astype(np.longdouble) / length)
    cosine, sine = np.cos(angle), np.sin(angle)
    swap = (octant + 1) // 2 % 2 == 1
    real = np.where(swap, sine, cosine)
    imaginary = np.where(swap, cosine, sine)
    real = np.where((octant + 2) // 4 % 2 == 1, -real, real)
    imaginary = np.where(octant >= 4, -imaginary, imaginary)
    return real - 1j * imaginary


@functools.lru_cache(maxsize=2)
def _twiddle_tables(length: int) -> tuple[int, np.ndarray, np.ndarray]:
    """``exp(-2 pi i m / N)`` in extended precision for ``m < B`` and for ``m = j B``.

    Any twiddle is the product of one entry of each table (``B = ceil(sqrt(N))``);
    each entry is within ``4 u_ext`` (:func:`_unit_roots`).
    """
    block = math.isqrt(length - 1) + 1
    low = _unit_roots(np.arange(block), length)
    high = _unit_roots(np.arange(-(-length // block)) * block, length)
    return block, low, high


def _pairwise_rows(values: np.ndarray) -> np.ndarray:
    """Row sums by a balanced tree: relative error at most ceil(log2 n) units."""
    while values.shape[1] > 1:
        if values.shape[1] % 2:
            values = np.concatenate((values, np.zeros((values.shape[0], 1), values.dtype)), 1)
        values = values[:, 0::2] + values[:, 1::2]
    return values[:, 0]


def _halving_sums(values: np.ndarray) -> np.ndarray:
    """Row sums of a ``(K, 2^d)`` array by a balanced tree, in place (first half
    plus second half, ``d`` times): relative error at most ``d`` units."""
    width = values.shape[1]
    while width > 1:
        width //= 2
        values[:, :width] += values[:, width : 2 * width]
    return values[:, 0].copy()


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


def _fold_extended(pmf: LossPmf, length: int) -> tuple[np.ndarray, int]:
    """:func:`_fold` in extended precision, and the most masses summed into one entry.

    A sum of ``w`` masses errs by at most ``(w - 1) u_ext`` relatively (none when
    the support fits in the length).
    """
    size = pmf.masses.shape[0]
    start = pmf.offset % length
    if size <= length:
        folded = np.zeros(length, dtype=np.longdouble)
        head = min(size, length - start)
        folded[start : start + head] = pmf.masses[:head]
        folded[: size - head] = pmf.masses[head:]
        return folded, 1
    wraps = -(-(start + size) // length)
    padded = np.zeros(wraps * length, dtype=np.longdouble)
    padded[start : start + size] = pmf.masses
    return padded.reshape(wraps, length).sum(axis=0), wraps


@functools.lru_cache(maxsize=4)
def _column_twiddles(length: int, columns: int, key: bytes) -> np.ndarray:
    """``exp(-2 pi i r k / N)`` for the bins ``k`` in ``key`` (int64 bytes) and ``r < columns``."""
    bins = np.frombuffer(key, dtype=np.int64)
    twiddles = _twiddles((bins[:, None] * np.arange(columns)[None, :]) % length, length)
    twiddles.flags.writeable = False
    return twiddles


def _pruned_spectrum(
    pmf: LossPmf, length: int, bins: np.ndarray, rows: int
) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision by an output-pruned FFT.

    With ``N = M L`` (``M = rows``) and the folded masses ``f_(qL+r)``: ``X_k =
    sum_(r<L) w_N^(rk) Y_r(k mod M)``, ``Y_r`` the length-``M`` extended FFT of
    column ``r`` (entrywise within ``8 u_ext log2 M`` of the column's 1-norm,
    as every FFT here). The twiddle (``11 u_ext``), the complex product (``3
    u_ext``) and the balanced tree over the ``L`` columns (``ceil(log2 L) u_ext``)
    add, with 2 units of slack: ``(16 + 8 log2 M + ceil(log2 L)) u_ext`` of the
    1-norm, plus the fold's sums. Costs ``N log2 M`` in the columns' FFTs and
    ``L`` per bin, against ``N log2 N`` for the whole extended FFT.
    """
    columns = length // rows
    folded, wraps = _fold_extended(pmf, length)
    residue = bins % rows
    mirrored = residue > rows // 2
    selected = fft.rfft_extended_columns(
        folded.reshape(rows, columns), np.where(mirrored, rows - residue, residue)
    )
    if mirrored.any():
        selected[mirrored] = np.conj(selected[mirrored])
    twiddles = _column_twiddles(length, columns, bins.astype(np.int64).tobytes())
    terms = np.zeros((bins.shape[0], 1 << (columns - 1).bit_length()), dtype=np.clongdouble)
    np.multiply(selected, twiddles, out=terms[:, :columns])
    result = _halving_sums(terms)
    units = _pruned_units(rows, columns) + wraps - 1
    return result, units * fft.EXTENDED_UNIT_ROUNDOFF * _mass_bound(pmf)


def _pruned_units(rows: np.ndarray | int, columns: np.ndarray | int) -> np.ndarray | float:
    """Error bound of :func:`_pruned_spectrum` in units of ``u_ext`` of the 1-norm."""
    return (
        _PRUNED_UNITS
        + _FFT_ERROR_PER_LEVEL * np.log2(rows)
        + np.ceil(np.log2(np.maximum(2, columns)))
    )


def _extended_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision, and its entrywise error bound.

    Four methods whose bound is at most the extended FFT's (``8 u_ext log2 N`` of
    the 1-norm): a direct sum over the atoms, a blocked sum over the support, an
    output-pruned FFT (columns of the length ``M`` dividing ``N`` that costs
    least), the extended FFT of the whole length. Of those whose measured cost is
    within ``_COST_SLACK`` of the cheapest, the one with the smallest bound is used.
    """
    levels = math.log2(length)
    atoms = np.flatnonzero(pmf.masses)
    span = int(atoms[-1] - atoms[0]) + 1
    count = bins.shape[0]
    cap = _FFT_ERROR_PER_LEVEL * levels
    # (cost, units, method); the units decide only between methods of similar cost.
    candidates = [
        (
            atoms.shape[0] * count * _DIRECT_COST,
            _DIRECT_UNITS + math.log2(max(2, atoms.shape[0])),
            _direct_spectrum,
        ),
        (_FFT_COST * length * levels, cap, None),
    ]
    blocked_units = _BLOCKED_UNITS + _BLOCK + math.ceil(math.log2(max(2, -(-span // _BLOCK))))
    if blocked_units <= cap:
        candidates.append((span * count * _BLOCKED_COST, blocked_units, _blocked_spectrum))
    divisors = np.arange(2, math.isqrt(length) + 1)
    divisors = divisors[length % divisors == 0]
    rows = np.concatenate((divisors, length // divisors))
    units = _pruned_units(rows, length // rows)
    rows, units = rows[units <= cap], units[units <= cap]
    if rows.size:
        costs = _COLUMNS_COST * length * np.log2(rows) + _OUTER_COST * count * (length // rows)
        best = int(np.argmin(costs))
        chosen = int(rows[best])
        candidates.append(
            (
                float(costs[best]),
                float(units[best]),
                lambda p, n, b: _pruned_spectrum(p, n, b, chosen),
            )
        )
    cheapest = min(cost for cost, _, _ in candidates)
    _, _, method = min(
        (item for item in candidates if item[0] <= _COST_SLACK * cheapest),
        key=lambda item: item[1],
    )
    if method is not None:
        return method(pmf, length, bins)
    folded, wraps = _fold_extended(pmf, length)
    spectrum = fft.rfft_extended(folded)[bins]
    error = (cap + wraps - 1) * fft.EXTENDED_UNIT_ROUNDOFF * _mass_bound(pmf)
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
    return _compose(factors, tail_mass, None)[0]


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
    exponent gives valid tail bounds).
    """
    upper, window = _compose(uppers, tail_mass, None)
    similar = all(
        abs(p.offset - q.offset) <= _SAME_SUPPORT * p.masses.shape[0]
        and abs(p.masses.shape[0] - q.masses.shape[0]) <= _SAME_SUPPORT * p.masses.shape[0]
        for (p, _), (q, _) in zip(uppers, lowers, strict=True)
    )
    hint = None if window is None or not similar else (window.t_up, window.t_down)
    lower, _ = _compose(lowers, tail_mass, hint)
    return upper, lower


def _compose(
    factors: Sequence[tuple[LossPmf, int]], tail_mass: float, hint: tuple[float, float] | None
) -> tuple[LossPmf, Window | None]:
    """:func:`compose`, with a hint for the window search (see
    :func:`pld.engine.tails.composition_window`); also returns the window."""
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

    reach = sum(c * (abs(p.offset) + p.masses.shape[0]) for p, c in factors)
    if reach > _LARGEST_INDEX:
        raise ValueError(
            f"the composition of {sum(counts)} rounds reaches the loss grid index {reach:.3g}, "
            f"beyond the 2^52 that float64 holds exactly (its tail bounds would lose all "
            "precision); compose fewer rounds or increase loss_grid_step"
        )
    window = composition_window(
        [(p.offset, p.masses) for p, _ in factors], counts, step, tail_mass, hint
    )
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
    live = None  # every bin, until some are dead
    log_magnitude = np.zeros(1)
    relative_error = np.zeros(1)
    composed = None
    rest = sum(log_ceilings)
    for index, ((pmf, count), error) in enumerate(zip(factors, forward_errors, strict=True)):
        rest -= log_ceilings[index]
        spectrum = _spectrum(pmf, length)
        values = spectrum if live is None else spectrum[live]
        magnitude = np.abs(values)
        magnitude *= 1 + _UNIT_ROUNDOFF
        magnitude += error
        if index == 0:
            # Dead iff count * log(magnitude) + rest <= _LOG_DEAD; the margin keeps
            # every bin whose log might round across the threshold.
            cut = min((_LOG_DEAD - rest) / count, _LARGEST_LOG)
            keep = magnitude > math.exp(cut) * (1 + 1e-9)
        else:
            keep = log_magnitude + count * np.log(magnitude) + rest > _LOG_DEAD
        if not keep.all():
            selected = np.flatnonzero(keep)
            live = selected if live is None else live[selected]
            values, magnitude = values[selected], magnitude[selected]
            if index:
                log_magnitude, relative_error = log_magnitude[selected], relative_error[selected]
                composed = composed[selected]
        elif live is None:
            values = values.copy()
        log_magnitude = log_magnitude + count * np.log(magnitude)
        relative_error = relative_error + count * error / magnitude
        powered = spectrum_power(values, count, in_place=True)
        composed = powered if composed is None else np.multiply(composed, powered, out=composed)

    products = sum(_powering_error(c) for c in counts) + _COMPLEX_PRODUCT_ERROR * (len(counts) - 1)
    relative_error += products * _UNIT_ROUNDOFF
    magnitude_bound = np.exp(log_magnitude)
    spectrum_error = magnitude_bound * relative_error

    amplification = sum(counts)
    if amplification * forward_errors[0] / finite_masses[0] > _EXTENDED_THRESHOLD:
        hot = np.flatnonzero(spectrum_error > _HOT_BIN_ERROR)
        if hot.size:
            hot_bins = hot if live is None else live[hot]
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

    if live is None:
        live_weights = _half_spectrum_weights(length)
    else:
        live_weights = np.where((live == 0) | (2 * live == length), 1.0, 2.0)
    # The weights of all bins add up to the length.
    dead_weight = float(length - live_weights.sum())
    dead_bound = math.exp(_LOG_DEAD)
    # The inverse transform, and the division of its result by N (one unit).
    inverse_error = (_FFT_ERROR_PER_LEVEL * levels + 1) * _UNIT_ROUNDOFF
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

    masses = _unfold(fft.irfft_sparse(live, composed, length), window.low, width)
    del composed

    if bound == "upper":
        infinity_mass = min(1.0, infinity_mass + window.mass_above + input_error_l1)
        junk = 0.0
    else:
        junk = input_junk + window.mass_above + window.mass_below + 2.0 * input_error_l1
    composed_pmf = LossPmf(
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
    return composed_pmf, window
