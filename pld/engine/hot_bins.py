"""Spectrum values at a few bins in extended precision, with rigorous error bounds.

A long self-composition amplifies the round-off of the few "hot" low-frequency
bins where ``|X|^T`` is not negligible (:mod:`pld.engine.compose`); these are
recomputed here in x87 extended precision (``u_ext = 2^-64``) by whichever of
four methods costs least: direct sums over the atoms, sliced sums over the
support (blocks of exact double-precision matrix products of 21-bit slices,
combined in extended precision), an output-pruned FFT (column transforms of a
length dividing ``N``, then one sum per bin over the columns), or the extended
FFT of the whole length. Each returns its entrywise error bound relative to the pmf's 1-norm
(docs/error-bounds.md §4, "Hot bins"); every bound is at most the extended
FFT's ``8 u_ext log2 N``. Twiddles come from octant-reduced tables (within
``4 u_ext`` an entry).
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from collections.abc import Sequence

import numpy as np

from pld.engine import fft
from pld.engine.linalg import products
from pld.engine.loss_pmf import LossPmf
from pld.numerics import UNIT_ROUNDOFF

#: Entrywise error of an FFT of a non-negative vector, per level, in units of the
#: working precision times the vector's 1-norm (Higham 2002, §24.1).
FFT_ERROR_PER_LEVEL = 8.0
#: Measured costs, in units of 2.7 ns (x87 long double, numpy, BLAS and FFTW,
#: on the reference machine): one (bin, atom) term of the direct sum; one (bin,
#: grid point) term of the sliced sums, one (bin, block) term of their outer sum,
#: their fixed cost and one (bin, block offset) entry of their twiddle slices
#: (computed once per length and bins);
#: one ``N log2 M`` of the pruned sum's column transforms, one (bin, column)
#: term of its outer sum, and one ``N log2 N`` of the extended FFT. The sliced
#: sums' costs were measured with their matrix products in row blocks; on one
#: BLAS thread (:func:`pld.engine.linalg.products`) the products cost about a
#: third of ``_SLICED_COST``. The choice of method keeps these costs (with the
#: bounds deciding near ties, a cheaper estimate would trade tighter bounds for
#: speed), and the sliced sums, once chosen, run in the largest block where that
#: saves time (:func:`_largest_block`).
_DIRECT_COST = 30.0
_SLICED_COST = 0.4
_SLICED_OUTER_COST = 42.0
_SLICED_FIXED = 10_000.0
_SLICED_TABLE_COST = 30.0
#: One twiddle computed directly (:func:`_unit_roots`, within ``_TABLE_UNITS``)
#: instead of as a product of two table entries.
_ROOT_COST = 120.0
_COLUMNS_COST = 1.1
_OUTER_COST = 11.0
_FFT_COST = 1.2
#: Among the methods within this factor of the cheapest one's cost, the one with
#: the smallest error bound is used.
_COST_SLACK = 1.2
#: When the bound matters (``tight``), only methods whose bound is within this
#: factor of the smallest are considered.
_TIGHT_UNITS = 1.25
#: Largest number of (bin, column) terms of the pruned sum held at once (64 MB of
#: long-double complex values).
_MAX_TERMS = 2**21
#: Largest odd factor of the pruned sum's column length.
_LARGEST_ODD_FACTOR = 25
#: Error of a twiddle table entry and of a twiddle (a product of two entries),
#: in units of u_ext (see :func:`_unit_roots`).
_TABLE_UNITS = 4
_TWIDDLE_UNITS = 2 * _TABLE_UNITS + 3
#: Error of the direct and pruned sums in units of u_ext of the 1-norm, without
#: their summation depth (and, for the pruned sum, its column transforms): a
#: twiddle, the mass product (1 unit; direct) or the complex product with a
#: column's spectrum (3 units; pruned), and 2 units of slack for the second-order
#: terms.
_DIRECT_UNITS = _TWIDDLE_UNITS + 1 + 2
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
    on x86-64): an entry is within ``1.82 + sqrt(2) < 4 u_ext`` of the truth
    (``_TABLE_UNITS``).
    """
    eighths = 8 * np.asarray(multiples, dtype=np.int64).ravel()
    octant = eighths // length
    rest = eighths - octant * length
    odd = (octant & 1) == 1
    rest[odd] = length - rest[odd]
    angle = _QUARTER_PI * (rest.astype(np.longdouble) / length)
    parts = np.empty((2, angle.shape[0]), dtype=np.longdouble)
    np.cos(angle, out=parts[0])
    np.sin(angle, out=parts[1])
    swap = (octant + 1) // 2 % 2
    points = np.arange(angle.shape[0])
    result = np.empty(angle.shape[0], dtype=np.clongdouble)
    result.real = parts[swap, points] * _REAL_SIGNS[octant]
    result.imag = parts[1 - swap, points] * _IMAGINARY_SIGNS[octant]
    return result.reshape(np.shape(multiples))


#: Signs (exact) of the real part and of the imaginary part of ``exp(-i phi)`` by octant.
_REAL_SIGNS = np.array([1, 1, -1, -1, -1, -1, 1, 1], dtype=np.longdouble)
_IMAGINARY_SIGNS = np.array([-1, -1, -1, -1, 1, 1, 1, 1], dtype=np.longdouble)


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
    """Row sums of a ``(K, w)`` array by a balanced tree, in place: the columns beyond
    the largest power of two ``p <= w`` added onto the first ones, then first half
    plus second half ``log2 p`` times: relative error at most ``ceil(log2 w)`` units."""
    width = values.shape[1]
    power = 1 << (width.bit_length() - 1)
    if power < width:
        values[:, : width - power] += values[:, power:width]
    while power > 1:
        power //= 2
        values[:, :power] += values[:, power : 2 * power]
    return values[:, 0].copy()


#: Per pmf (while it lives): its number of non-zero masses and the first and last.
_SUPPORTS: weakref.WeakKeyDictionary[LossPmf, tuple[int, int, int]] = weakref.WeakKeyDictionary()


def _support(pmf: LossPmf) -> tuple[int, int, int]:
    """Number of non-zero masses of the pmf, and the indices of the first and last."""
    if pmf not in _SUPPORTS:
        nonzero = pmf.masses != 0.0
        last = nonzero.shape[0] - 1 - int(np.argmax(nonzero[::-1]))
        _SUPPORTS[pmf] = (int(np.count_nonzero(nonzero)), int(np.argmax(nonzero)), last)
    return _SUPPORTS[pmf]


def mass_bound(pmf: LossPmf) -> float:
    """An upper bound on the 1-norm of the (non-negative) masses: their float sum
    errs by at most ``(n - 1) u`` relatively (to first order; ``n^2 u < 1``); the
    factor ``1 + (n + 3) u`` is rounded by at most a unit, the product by one more."""
    return pmf.finite_mass * (1 + (pmf.masses.shape[0] + 3) * UNIT_ROUNDOFF)


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


def _twiddles(phase: np.ndarray, length: int, direct: bool = False) -> np.ndarray:
    """``exp(-2 pi i phase / N)`` for integer phases in ``[0, N)``: products of two table
    entries, within ``_TWIDDLE_UNITS`` u_ext, or computed ``direct`` by
    :func:`_unit_roots`, within ``_TABLE_UNITS`` (about 4-8 times the cost)."""
    if direct:
        return _unit_roots(phase, length)
    block, low, high = _twiddle_tables(length)
    return high[phase // block] * low[phase % block]


def _twiddle_units(direct: bool) -> int:
    """Error bound of :func:`_twiddles` in units of u_ext."""
    return _TABLE_UNITS if direct else _TWIDDLE_UNITS


#: Block lengths of the sliced sums and the bits ``b`` of their leading slices:
#: a product of two slices is an integer of at most 2^(2b) and a sum of 2B such
#: products (at most 2^(2b-1) each beyond the first B) at most B 2^(2b) <= 2^51,
#: exact in double precision whatever the order, blocking and fused
#: multiply-adds of the matrix product.
_SLICE_BLOCKS = {128: 22, 256: 21, 512: 21}
#: Error of the sliced sums in units of u_ext of the 1-norm, without their
#: summation depth and their two twiddles (inner and outer, :func:`_twiddle_units`):
#: the split of the twiddles and the double-precision products of the small parts
#: (below 2^-73 of the block's mass: 1), the sum of the levels in extended
#: precision (2), the outer complex product (3), and 3 units of slack.
_SLICED_UNITS = 1 + 2 + 3 + 3


def _split(
    values: np.ndarray, bits: int, whole: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``v = I + 2^-b t`` for doubles ``|v| <= 2^b`` (``b = bits``): ``I`` the nearest
    integers (into ``whole`` if given), ``t = (v - I) 2^b`` (``|t| <= 2^(b-1)``, in
    place of ``values``), both exact: ``v - I`` is a multiple of the ulp of ``v`` of
    modulus at most 1/2 (Rump's error-free extraction)."""
    whole = np.rint(values, out=whole)
    values -= whole
    values *= 2.0**bits
    return whole, values


#: The newest few tables of :func:`_inner_slices`, by (length, block, bins, direct).
_INNER_SLICES: dict[tuple[int, int, bytes, bool], tuple[np.ndarray, ...]] = {}
_INNER_SLICES_KEPT = 4


def _inner_slices(length: int, block: int, key: bytes, direct: bool) -> tuple[np.ndarray, ...]:
    """Slices of ``v = 2^b w^(j k)`` (real and imaginary parts) for ``j < block`` and
    the bins ``k`` in ``key`` (int64 bytes), stacked for :func:`_sliced_spectrum`:
    ``J1``, ``[J1; J2]`` and ``[rho; J1; 2^-b nu]`` with ``v = J1 + 2^-b nu``, ``nu =
    J2 + rho``, ``J1``, ``J2`` integers (``|J1| <= 2^b``, ``|J2| <= 2^(b-1)``).

    A long-double twiddle part (:func:`_twiddles`, ``direct`` or not) is the exact
    sum of the double ``hi`` and the at most 11 bits ``lo`` below it; ``nu`` adds
    ``lo`` to the exact rest of ``hi`` with one rounding (within ``2^(-b-53)`` of
    ``v / 2^b``, at most ``2^-74``). Kept for the next pmfs of the same length and bins.
    """
    if (length, block, key, direct) in _INNER_SLICES:
        return _INNER_SLICES[length, block, key, direct]
    bits = _SLICE_BLOCKS[block]
    bins = np.frombuffer(key, dtype=np.int64)
    phases = (np.arange(block)[:, None] * bins[None, :]) % length
    twiddles = _twiddles(phases, length, direct)
    parts = np.concatenate((twiddles.real, twiddles.imag), axis=1)
    high = parts.astype(np.float64)
    low = (parts - high).astype(np.float64)
    first, rest = _split(high * 2.0**bits, bits)
    rest += low * 2.0 ** (2 * bits)
    second = np.rint(rest)
    result = (
        first,
        np.concatenate((first, second)),
        np.concatenate((rest - second, first, rest * 2.0**-bits)),
    )
    for table in result:
        table.flags.writeable = False
    while len(_INNER_SLICES) >= _INNER_SLICES_KEPT:
        del _INNER_SLICES[next(iter(_INNER_SLICES))]
    _INNER_SLICES[length, block, key, direct] = result
    return result


def _sliced_spectrum(
    pmf: LossPmf,
    length: int,
    bins: np.ndarray,
    block: int,
    inner: bool = False,
    outer: bool = False,
) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision from exact products of slices.

    Error-free splitting after Ozaki, Ogita, Oishi and Rump (Numer. Algorithms
    59, 2012): with the support ``p0 + a B + j`` (``B = block``), ``X_k = sum_a
    w^((p0 + aB) k) S_a(k)``, ``S_a(k) = sum_j m_(aB+j) w^(jk)``. A block's masses,
    scaled by the power of two ``2^e_a`` above their largest to ``m < 2^b`` (``b =
    22`` for ``B = 128``, else 21), are split exactly as ``m = I1 + 2^-b t``, ``t =
    I2 + r2`` (integers ``I1``, ``I2``), each scaled twiddle part as ``v = J1 + 2^-b
    nu``, ``nu = J2 + rho`` (:func:`_inner_slices`). Then ``m v = I1 J1 + 2^-b (I1 J2
    + I2 J1) + 2^-b (I1 rho + r2 J1 + 2^-b t nu)``: the first two levels are
    double-precision matrix products whose sums are exact (integers of at most
    ``2^51``), the rest one more whose rounding (``9 B^2 u 2^-2b`` of the block's
    mass) and the twiddles' split stay below ``2^-73`` of it; the second level and
    the rest, then the first, are added in extended precision (one rounding of
    the result per component, the others scaled by ``2^-b``: 2 units). The
    twiddles add 11 units each (inner and outer), or 4 when computed directly
    (``inner``, ``outer``: :func:`_twiddles`), the outer complex product 3,
    the outer balanced tree over the blocks ``ceil(log2 A)``; with 1 unit for the
    split and the rest's products and 3 of slack, ``(31 + ceil(log2 A)) u_ext`` of
    the 1-norm with both twiddles from the tables, ``(17 + ceil(log2 A)) u_ext``
    with both direct. Blocks without mass are skipped.
    """
    return _sliced_spectra([pmf], length, bins, block, inner, outer)[0]


def _mass_slices(
    pmfs: Sequence[LossPmf], length: int, block: int, bits: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """The pmfs' supports in blocks of ``block`` masses (blocks without mass dropped),
    each scaled by the power of two ``2^(b - e)`` that puts its largest mass in
    ``[2^(b-1), 2^b)`` and split exactly (:func:`_split`) as ``m = I1 + 2^-b t``, ``t =
    I2 + r2`` (``b = bits``).

    Returns the slices as rows ``[I2 | I1 | r2 | t]`` of one array (``[I2 | I1]`` and
    ``[I1 | r2 | t]`` are the left factors of :func:`_sliced_spectra`'s second and third
    levels as they stand; the array is this thread's workspace, valid until the next
    call), the exponents ``e``, the position of each block's first mass modulo
    ``length``, and the number of blocks of each pmf.
    """
    spans = [(start, last + 1 - start) for _, start, last in map(_support, pmfs)]
    slices = _workspace(sum(-(-span // block) for _, span in spans), 4 * block)
    rest = slices[:, 3 * block :]
    origins, sizes, maxima, row = [], [], [], 0
    for pmf, (start, span) in zip(pmfs, spans, strict=True):
        full, tail = divmod(span, block)
        rest[row : row + full] = pmf.masses[start : start + full * block].reshape(full, block)
        if tail:
            rest[row + full, :tail] = pmf.masses[start + full * block : start + span]
            rest[row + full, tail:] = 0.0
        rows = full + (tail > 0)
        maxima.append(rest[row : row + rows].max(axis=1))
        kept = np.flatnonzero(maxima[-1] > 0.0)
        origins.append((pmf.offset + start + kept * block) % length)
        sizes.append(kept.shape[0])
        row += rows
    maxima = np.concatenate(maxima)
    if sum(sizes) < rest.shape[0]:
        kept = np.flatnonzero(maxima > 0.0)
        slices = slices[: kept.shape[0]]
        slices[:, 3 * block :] = rest[kept]
        rest, maxima = slices[:, 3 * block :], maxima[kept]
    # 2^e > largest (frexp's fraction is below 1): the scaled masses are below 2^b.
    exponents = np.frexp(maxima)[1]
    second, first, residue = (slices[:, i * block : (i + 1) * block] for i in range(3))
    shifts = (bits - exponents)[:, None]
    if shifts.max() <= _LARGEST_SCALE:
        # Products by powers of two, exact here (the masses are scaled up, below 2^b).
        rest *= np.ldexp(1.0, shifts)
    else:
        np.ldexp(rest, shifts, out=rest)
    _split(rest, bits, first)
    np.rint(rest, out=second)
    np.subtract(rest, second, out=residue)
    return slices, exponents, np.concatenate(origins), sizes


#: Largest workspace kept between calls (doubles, 4 MB): the slices of a support
#: of 131 072 points. Arrays of this size allocated and freed on every call let the
#: C allocator hand their memory back to the system and fault it in again: on the
#: reference machine a composition of four 67 500-point pmfs took 6.1-6.6 ms without
#: page faults and 10.5 ms with the 1 800 its temporaries could cost (about 3 us
#: each). Larger slices cost more to compute than to allocate.
_WORKSPACE_SIZE = 2**19
_workspaces = threading.local()


def _workspace(rows: int, columns: int) -> np.ndarray:
    """An uninitialised ``(rows, columns)`` float64 array: this thread's reused
    workspace when it fits in ``_WORKSPACE_SIZE``, otherwise a new array."""
    size = rows * columns
    if size > _WORKSPACE_SIZE:
        return np.empty((rows, columns))
    if getattr(_workspaces, "slices", None) is None:
        _workspaces.slices = np.empty(_WORKSPACE_SIZE)
    return _workspaces.slices[:size].reshape(rows, columns)


#: Largest exponent of a power of two formed as a double (below 2^1024).
_LARGEST_SCALE = 1023


def _sliced_spectra(
    pmfs: Sequence[LossPmf],
    length: int,
    bins: np.ndarray,
    block: int,
    inner: bool = False,
    outer: bool = False,
) -> list[tuple[np.ndarray, float]]:
    """:func:`_sliced_spectrum` of several pmfs at once: their blocks go through the
    same matrix products (each block's sums are independent of the others')."""
    bits = _SLICE_BLOCKS[block]
    slices, exponents, origins, sizes = _mass_slices(pmfs, length, block, bits)
    key = bins.astype(np.int64).tobytes()
    leading, crossed, small = _inner_slices(length, block, key, inner)
    level0 = products(slices[:, block : 2 * block], leading)
    level1 = products(slices[:, : 2 * block], crossed).astype(np.longdouble)
    level1 += products(slices[:, block:], small)
    value = level0.astype(np.longdouble)
    value += level1 * np.longdouble(2.0**-bits)
    value *= np.ldexp(np.longdouble(1.0), exponents - 2 * bits)[:, None]
    count = bins.shape[0]
    sums = np.empty((value.shape[0], count), dtype=np.clongdouble)
    sums.real, sums.imag = value[:, :count], value[:, count:]
    terms = _twiddles((origins[:, None] * bins[None, :]) % length, length, outer) * sums
    results = []
    units = _SLICED_UNITS + _twiddle_units(inner) + _twiddle_units(outer)
    for pmf, stop, size in zip(pmfs, np.cumsum(sizes), sizes, strict=True):
        values = _pairwise_rows(np.ascontiguousarray(terms[stop - size : stop].T))
        depth = math.ceil(math.log2(max(2, size)))
        error = (units + depth) * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)
        results.append((values, error))
    return results


def _fold_extended(
    pmf: LossPmf, length: int, out: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """The pmf's masses placed at grid positions modulo ``length`` in extended
    precision (into ``out``, a long-double array of that length, if given), and the
    most masses summed into one entry.

    A sum of ``w`` masses errs by at most ``(w - 1) u_ext`` relatively (none when
    the support fits in the length).
    """
    size = pmf.masses.shape[0]
    start = pmf.offset % length
    folded = np.empty(length, dtype=np.longdouble) if out is None else out
    fft.place(folded, pmf.masses, start)
    return folded, 1 if size <= length else -(-(start + size) // length)


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
    grid = fft.extended_columns_input(rows, columns)
    _, wraps = _fold_extended(pmf, length, grid.reshape(length))
    residue = bins % rows
    mirrored = residue > rows // 2
    selected = fft.rfft_extended_columns(grid, np.where(mirrored, rows - residue, residue))
    if mirrored.any():
        selected[mirrored] = np.conj(selected[mirrored])
    twiddles = _column_twiddles(length, columns, bins.astype(np.int64).tobytes())
    result = _halving_sums(np.multiply(selected, twiddles))
    units = _pruned_units(rows, columns) + wraps - 1
    return result, units * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)


def _pruned_units(rows: np.ndarray | int, columns: np.ndarray | int) -> np.ndarray | float:
    """Error bound of :func:`_pruned_spectrum` in units of ``u_ext`` of the 1-norm."""
    return (
        _PRUNED_UNITS
        + FFT_ERROR_PER_LEVEL * np.log2(rows)
        + np.ceil(np.log2(np.maximum(2, columns)))
    )


@functools.lru_cache(maxsize=16)
def _pruned_candidate(length: int, count: int, cap: float) -> tuple:
    """The output-pruned sum at the column length of least measured cost whose bound
    is at most ``cap`` units, as (cost, units, method), if there is one (kept for the
    next pmfs of the same length and number of bins)."""
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
        return ((float(costs[best]), float(units[best]), ("pruned", chosen)),)
    return ()


def extended_spectrum(
    pmf: LossPmf, length: int, bins: np.ndarray, tight: bool = False
) -> tuple[np.ndarray, float]:
    """Spectrum of the pmf at ``bins`` in extended precision, and its entrywise error bound.

    Four methods whose bound is at most the extended FFT's (``8 u_ext log2 N`` of
    the 1-norm): a direct sum over the atoms, sliced sums over the support, an
    output-pruned FFT (columns of the length ``M`` dividing ``N`` that costs
    least), the extended FFT of the whole length. Of those whose measured cost is
    within ``_COST_SLACK`` of the cheapest, the one with the smallest bound is used;
    with ``tight`` (the composition amplifies these bounds to a sizeable share of
    its error terms), the cheapest of those within ``_TIGHT_UNITS`` of the smallest
    bound.
    """
    return extended_spectra([pmf], length, bins, tight)[0]


def extended_spectra(
    pmfs: Sequence[LossPmf], length: int, bins: np.ndarray, tight: bool = False
) -> list[tuple[np.ndarray, float]]:
    """:func:`extended_spectrum` of each pmf (at one length and the same bins); those
    whose cheapest method is the sliced sums at one block length are computed
    together, their fixed cost shared."""
    count = bins.shape[0]
    key = bins.astype(np.int64).tobytes()
    cap = FFT_ERROR_PER_LEVEL * math.log2(length)
    pruned: tuple = ()
    searched = False
    chosen = []
    for pmf in pmfs:
        candidates = _candidates(pmf, length, count, key, len(pmfs), tight)
        # The pruned sum costs at least its columns' transforms of length 4.
        if _COST_SLACK * min(cost for cost, _, _ in candidates) > 2 * _COLUMNS_COST * length:
            if not searched:
                pruned, searched = _pruned_candidate(length, count, cap), True
            candidates += pruned
        if tight:
            smallest = min(units for _, units, _ in candidates)
            candidates = [item for item in candidates if item[1] <= _TIGHT_UNITS * smallest]
        cheapest = min(cost for cost, _, _ in candidates)
        chosen.append(
            min(
                (item for item in candidates if item[0] <= _COST_SLACK * cheapest),
                key=lambda item: item[1],
            )[2]
        )
    chosen = [_largest_block(method, pmf) for method, pmf in zip(chosen, pmfs, strict=True)]
    results: list = [None] * len(pmfs)
    for method in dict.fromkeys(item for item in chosen if item[0] == "sliced"):
        together = [i for i, item in enumerate(chosen) if item == method]
        values = _sliced_spectra([pmfs[i] for i in together], length, bins, *method[1:])
        for i, value in zip(together, values, strict=True):
            results[i] = value
    for i, (pmf, method) in enumerate(zip(pmfs, chosen, strict=True)):
        if results[i] is None:
            results[i] = _apply(method, pmf, length, bins)
    return results


#: Measured with the matrix products on one BLAS thread: one (bin, block) term of
#: the sliced sums' outer sum and one (bin, block offset) entry of their twiddle
#: slices, in the units of the costs above (24 bins of a 41 385-point pmf at length
#: 67 500: 0.82 ms in blocks of 512, 1.28 ms in blocks of 256); a table of twiddle
#: slices serves about ``_TABLE_USES`` pmfs (both bounds of the directions
#: composed at a length, and the next compositions of a refinement).
_OUTER_TERM = 89.0
_TABLE_ENTRY = 45.0
_TABLE_USES = 4


def _largest_block(method: tuple, pmf: LossPmf) -> tuple:
    """The sliced sums of ``method`` in the largest block when that saves time,
    otherwise ``method``.

    Their matrix products cost the same in any block (one term per bin and grid
    point) and their outer sum one term per bin and block: the largest block saves
    outer terms for a larger table of twiddle slices, worth it on long supports
    (more than about 10 000 points in blocks of 128, 33 000 in blocks of 256). Its
    bound is never larger (no more blocks with mass, so no deeper outer tree).
    """
    if method[0] != "sliced":
        return method
    _, block, inner, outer = method
    largest = max(_SLICE_BLOCKS)
    _, first, last = _support(pmf)
    span = last - first + 1
    # Per bin: the outer terms saved (each with a directly computed twiddle if
    # ``outer``), against the larger table's share (direct twiddles if ``inner``).
    term = _OUTER_TERM + (_ROOT_COST if outer else 0.0)
    saved = term * (-(-span // block) - -(-span // largest))
    entry = _ROOT_COST if inner else _TABLE_ENTRY
    if saved * _TABLE_USES <= entry * largest:
        return method
    return ("sliced", largest, *method[2:])


def _candidates(
    pmf: LossPmf, length: int, count: int, key: bytes, sharing: int, tight: bool = False
) -> list:
    """(cost, units, method) of the direct sum, the extended FFT and the sliced sums
    (their fixed cost and twiddle slices shared by ``sharing`` pmfs) for the pmf; with
    ``tight``, also the sliced sums with directly computed twiddles (smaller bounds at
    a higher cost)."""
    levels = math.log2(length)
    atoms, first, last = _support(pmf)
    span = last - first + 1
    cap = FFT_ERROR_PER_LEVEL * levels
    candidates = [
        (
            atoms * count * _DIRECT_COST,
            _DIRECT_UNITS + math.ceil(math.log2(max(2, atoms))),
            ("direct", 0),
        ),
        (_FFT_COST * length * levels, cap, ("fft", 0)),
    ]
    for block in _SLICE_BLOCKS:
        blocks = -(-span // block)
        for inner in (False, True) if tight else (False,):
            for outer in (False, True) if tight else (False,):
                units = (
                    _SLICED_UNITS
                    + _twiddle_units(inner)
                    + _twiddle_units(outer)
                    + math.ceil(math.log2(max(2, blocks)))
                )
                cost = _SLICED_FIXED / sharing + count * (
                    _SLICED_COST * blocks * block + _SLICED_OUTER_COST * blocks
                )
                cost += _ROOT_COST * count * blocks if outer else 0.0
                if (length, block, key, inner) not in _INNER_SLICES:
                    table = _ROOT_COST if inner else _SLICED_TABLE_COST
                    cost += table * block * count / sharing
                if units <= cap:
                    candidates.append((cost, units, ("sliced", block, inner, outer)))
    return candidates


def _apply(method: tuple, pmf: LossPmf, length: int, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """One pmf's extended spectrum by the chosen (method, parameters...)."""
    name, parameter = method[:2]
    if name == "direct":
        return _direct_spectrum(pmf, length, bins)
    if name == "sliced":
        return _sliced_spectrum(pmf, length, bins, *method[1:])
    if name == "pruned":
        return _pruned_spectrum(pmf, length, bins, parameter)
    folded, wraps = _fold_extended(pmf, length)
    spectrum = fft.rfft_extended(folded)[bins]
    cap = FFT_ERROR_PER_LEVEL * math.log2(length)
    error = (cap + wraps - 1) * fft.EXTENDED_UNIT_ROUNDOFF * mass_bound(pmf)
    return spectrum, error
