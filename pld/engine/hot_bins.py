"""Spectrum values at a few bins in extended precision, with rigorous error bounds.

A long self-composition amplifies the round-off of the few "hot" low-frequency
bins where ``|X|^T`` is not negligible (:mod:`pld.engine.compose`); these are
recomputed here in x87 extended precision (``u_ext = 2^-64``) by whichever of
four methods costs least: direct sums over the atoms, blocked sums over the
support, an output-pruned FFT (column transforms of a length dividing ``N``,
then one sum per bin over the columns), or the extended FFT of the whole
length. Each returns its entrywise error bound relative to the pmf's 1-norm
(docs/error-bounds.md §4, "Hot bins"); every bound is at most the extended
FFT's ``8 u_ext log2 N``. Twiddles come from octant-reduced tables (within
``4 u_ext`` an entry).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from pld.engine import fft
from pld.engine.loss_pmf import LossPmf

_UNIT_ROUNDOFF = math.ulp(1.0) / 2
#: Entrywise error of an FFT of a non-negative vector, per level, in units of the
#: working precision times the vector's 1-norm (Higham 2002, §24.1).
FFT_ERROR_PER_LEVEL = 8.0
#: Measured costs, in units of 2.7 ns (x87 long double, numpy and FFTW, on the
#: reference machine): one (bin, atom) term of the direct sum, one (bin, grid
#: point) term of the blocked sum (a long-double matrix product), one
#: ``N log2 M`` of the pruned sum's column transforms, one (bin, column) term of
#: its outer sum, and one ``N log2 N`` of the extended FFT.
_DIRECT_COST = 30.0
_BLOCKED_COST = 4.0
_COLUMNS_COST = 1.1
_OUTER_COST = 11.0
_FFT_COST = 1.2
#: Among the methods within this factor of the cheapest one's cost, the one with
#: the smallest error bound is used.
_COST_SLACK = 1.5
#: Largest number of (bin, column) terms of the pruned sum, and of (bin, block)
#: terms of the blocked sum, held at once (64 MB of long-double complex values).
_MAX_TERMS = 2**21
#: Largest odd factor of the pruned sum's column length.
_LARGEST_ODD_FACTOR = 25
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
#: Largest number of (bin, atom) terms of the direct sum held in memory at once.
_DIRECT_CHUNK = 2**20

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


def mass_bound(pmf: LossPmf) -> float:
    """An upper bound on the 1-norm of the (non-negative) masses: their float sum
    errs by at most ``(n - 1) u`` relatively."""
    return pmf.finite_mass * (1 + pmf.masses.shape[0] * _UNIT_ROUNDOFF)


def _direct_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` by direct summation in extended precision.

    Returns the values and their entrywise error bound: each twiddle is a
    product of two table entries (``11 u_ext``), times a mass (``u_ext``), summed
    by a balanced tree (``ceil(log2 n) u_ext``), with 2 units of slack, all
    relative to the 1-norm.
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
    error = (_DIRECT_UNITS + levels) * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)
    return result, error


def _twiddles(phase: np.ndarray, length: int) -> np.ndarray:
    """``exp(-2 pi i phase / N)`` for integer phases in ``[0, N)``, within ``11 u_ext``."""
    block, low, high = _twiddle_tables(length)
    return high[phase // block] * low[phase % block]


def _blocked_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision by blocks of ``_BLOCK`` points.

    With the support ``p0 + a B + b`` (``b < B``): ``X_k = sum_a w^((p0 + a B) k)
    sum_b m_(aB+b) w^(b k)``; the inner sums are one long-double matrix product
    (sequential dots: ``B u_ext``), each twiddle is within ``11 u_ext``, the
    mass products add ``u_ext``, the outer complex products ``3 u_ext`` and the
    outer balanced tree ``ceil(log2 A) u_ext``, with 2 units of slack: in all
    ``(28 + B + ceil(log2 A)) u_ext`` of the 1-norm.
    """
    atoms = np.flatnonzero(pmf.masses)
    start, stop = int(atoms[0]), int(atoms[-1]) + 1
    rows = -(-(stop - start) // _BLOCK)
    padded = np.zeros(rows * _BLOCK, dtype=np.longdouble)
    padded[: stop - start] = pmf.masses[start:stop]
    matrix = padded.reshape(rows, _BLOCK)
    inner_twiddles = _twiddles((np.arange(_BLOCK)[:, None] * bins[None, :]) % length, length)
    # One sequential long-double product for both parts (np.dot: about 1.5x
    # faster than matmul on long doubles).
    count = bins.shape[0]
    parts = np.dot(matrix, np.concatenate((inner_twiddles.real, inner_twiddles.imag), axis=1))
    inner = parts[:, :count] + 1j * parts[:, count:]
    origins = (pmf.offset + start + np.arange(rows) * _BLOCK) % length
    outer_twiddles = _twiddles((origins[:, None] * bins[None, :]) % length, length)
    result = _pairwise_rows(np.ascontiguousarray((outer_twiddles * inner).T))
    levels = math.ceil(math.log2(max(2, rows)))
    error = (_BLOCKED_UNITS + _BLOCK + levels) * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)
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
    return result, units * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)


def _pruned_units(rows: np.ndarray | int, columns: np.ndarray | int) -> np.ndarray | float:
    """Error bound of :func:`_pruned_spectrum` in units of ``u_ext`` of the 1-norm."""
    return (
        _PRUNED_UNITS
        + FFT_ERROR_PER_LEVEL * np.log2(rows)
        + np.ceil(np.log2(np.maximum(2, columns)))
    )


def extended_spectrum(pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
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
    cap = FFT_ERROR_PER_LEVEL * levels
    # (cost, units, method); the units decide only between methods of similar cost.
    candidates = [
        (
            atoms.shape[0] * count * _DIRECT_COST,
            _DIRECT_UNITS + math.ceil(math.log2(max(2, atoms.shape[0]))),
            _direct_spectrum,
        ),
        (_FFT_COST * length * levels, cap, None),
    ]
    blocked_units = _BLOCKED_UNITS + _BLOCK + math.ceil(math.log2(max(2, -(-span // _BLOCK))))
    if blocked_units <= cap and -(-span // _BLOCK) * count <= _MAX_TERMS:
        candidates.append((span * count * _BLOCKED_COST, blocked_units, _blocked_spectrum))
    divisors = np.arange(2, math.isqrt(length) + 1)
    divisors = divisors[length % divisors == 0]
    rows = np.concatenate((divisors, length // divisors))
    # Column lengths of a power of two times at most 25: FFTW's long-double
    # transforms of lengths such as 125 or 225 cost 2-3 times their N log2 M.
    odd = rows // (rows & -rows)
    rows = rows[(rows % 4 == 0) & (odd <= _LARGEST_ODD_FACTOR)]
    rows = rows[count * (length // rows) <= _MAX_TERMS]
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
    error = (cap + wraps - 1) * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)
    return spectrum, error
