"""The one FFT wrapper: real forward and inverse transforms of a given length.

pyFFTW (FFTW with ``FFTW_ESTIMATE`` plans, cached per length, all cores) when it
is installed, otherwise ``scipy.fft``. Measured on the 2-core reference machine
(``shared/notes/measurements.md``): an rfft+irfft round trip of 2^24 points takes
118 ms with pyFFTW and 665 ms with scipy.fft; ``FFTW_MEASURE`` planning costs
minutes at that size and is never used.

Set the environment variable ``PLD_FFT_BACKEND=scipy`` to force the fallback.
pyFFTW's wheels bundle FFTW, which is GPL-licensed; the scipy backend has no such
licence condition (see README).
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np
import scipy.fft


@functools.lru_cache(maxsize=1)
def backend() -> str:
    """Name of the FFT backend in use: ``"pyfftw"`` or ``"scipy"``."""
    if os.environ.get("PLD_FFT_BACKEND", "").lower() == "scipy":
        return "scipy"
    try:
        import pyfftw  # noqa: F401
    except ImportError:
        return "scipy"
    return "pyfftw"


#: Plans are kept for several lengths (the bounds and directions of one
#: composition use a few nearby lengths) while their lengths add up to at most
#: this many points; the newest plan is always kept.
_PLAN_BUDGET = 2**23


def _cached(build):
    """Cache plans per shape within ``_PLAN_BUDGET`` points, oldest evicted first."""
    plans: dict[tuple[int, ...], object] = {}

    @functools.wraps(build)
    def get(*shape: int):
        if shape in plans:
            plans[shape] = plans.pop(shape)
            return plans[shape]
        while plans and sum(math.prod(key) for key in plans) + math.prod(shape) > _PLAN_BUDGET:
            del plans[next(iter(plans))]
        plans[shape] = build(*shape)
        return plans[shape]

    return get


@_cached
def _fftw_extended_plan(rows: int, columns: int = 0):
    """Long-double forward plan of length ``rows`` (``columns == 0``), or of the
    ``columns`` columns of a ``(rows, columns)`` array (one thread: many short
    transforms gain nothing from more)."""
    import pyfftw

    shape = (rows, columns) if columns else (rows,)
    real = pyfftw.empty_aligned(shape, dtype="longdouble")
    spectrum = pyfftw.empty_aligned((rows // 2 + 1, *shape[1:]), dtype="clongdouble")
    return pyfftw.FFTW(
        real,
        spectrum,
        axes=(0,),
        direction="FFTW_FORWARD",
        flags=("FFTW_ESTIMATE",),
        threads=1 if columns else _threads(rows),
    )


#: Transforms shorter than this run on one thread: a second one gains nothing there
#: (2^18: 1.81 ms with two threads, 1.64 ms with one; 2^22: 25.6 ms against 36 ms,
#: shared/notes/measurements.md), and on a loaded machine waiting for it stalls.
_THREADED_LENGTH = 2**21


def _threads(length: int) -> int:
    """Threads of a transform of this length (all cores from ``_THREADED_LENGTH`` on)."""
    return 1 if length < _THREADED_LENGTH else max(1, os.cpu_count() or 1)


@_cached
def _fftw_plans(length: int):
    import pyfftw

    threads = _threads(length)
    real = pyfftw.empty_aligned(length, dtype="float64")
    spectrum = pyfftw.empty_aligned(length // 2 + 1, dtype="complex128")
    forward = pyfftw.FFTW(
        real, spectrum, direction="FFTW_FORWARD", flags=("FFTW_ESTIMATE",), threads=threads
    )
    real_out = pyfftw.empty_aligned(length, dtype="float64")
    spectrum_in = pyfftw.empty_aligned(length // 2 + 1, dtype="complex128")
    inverse = pyfftw.FFTW(
        spectrum_in,
        real_out,
        direction="FFTW_BACKWARD",
        flags=("FFTW_ESTIMATE", "FFTW_DESTROY_INPUT"),
        threads=threads,
    )
    return forward, inverse


def rfft(values: np.ndarray) -> np.ndarray:
    """Spectrum ``X_k = sum_j x_j exp(-2 pi i j k / N)`` of a real array, ``k <= N/2``."""
    if backend() == "scipy":
        return scipy.fft.rfft(values)
    forward, _ = _fftw_plans(values.shape[0])
    forward.input_array[:] = values
    forward.execute()
    return forward.output_array.copy()


def place(values: np.ndarray, masses: np.ndarray, start: int) -> None:
    """``masses`` placed into ``values`` (overwritten) at positions ``start, start + 1,
    ...`` modulo ``N = len(values)`` (``0 <= start < N``): the first ``N`` copied, the
    rest added onto them a row of ``N`` at a time, in order, in ``values``' precision.
    """
    length, size = values.shape[0], masses.shape[0]
    head = min(size, length - start)
    values[:start] = 0.0
    values[start + head :] = 0.0
    values[start : start + head] = masses[:head]
    values[: min(size, length) - head] = masses[head:length]
    for first in range(length, size, length):
        row = masses[first : first + length]
        tail = min(row.shape[0], length - start)
        values[start : start + tail] += row[:tail]
        values[: row.shape[0] - tail] += row[tail:]


def rfft_placed(masses: np.ndarray, start: int, length: int) -> np.ndarray:
    """:func:`rfft` of ``masses`` placed (:func:`place`) at positions ``start, start +
    1, ...`` modulo ``length`` (``0 <= start < length``).

    The result may be the plan's own output array: it is valid until the next
    transform of this length.
    """
    if backend() == "scipy":
        values = np.empty(length)
        place(values, masses, start)
        return scipy.fft.rfft(values)
    forward, _ = _fftw_plans(length)
    place(forward.input_array, masses, start)
    forward.execute()
    return forward.output_array


def rfft_extended(values: np.ndarray) -> np.ndarray:
    """:func:`rfft` computed and returned in extended precision (x87 long double).

    Used where a spectrum is raised to a high power, which multiplies its error.
    """
    if backend() == "scipy":
        return scipy.fft.rfft(values.astype(np.longdouble))
    plan = _fftw_extended_plan(values.shape[0])
    plan.input_array[:] = values
    plan.execute()
    return plan.output_array.copy()


def extended_columns_input(rows: int, columns: int) -> np.ndarray:
    """A ``(rows, columns)`` long-double array for :func:`rfft_extended_columns`: the
    plan's own input array (filled in place, it is not copied), or a new one."""
    if backend() == "scipy":
        return np.empty((rows, columns), dtype=np.longdouble)
    return _fftw_extended_plan(rows, columns).input_array


def rfft_extended_columns(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of :func:`rfft_extended` of each column of a 2-d array (the
    transforms run down axis 0, one per column)."""
    if backend() == "scipy":
        return scipy.fft.rfft(values.astype(np.longdouble), axis=0)[rows]
    plan = _fftw_extended_plan(*values.shape)
    if values is not plan.input_array:
        plan.input_array[:] = values
    plan.execute()
    return plan.output_array[rows]


#: Unit roundoff of the extended precision used by :func:`rfft_extended`.
EXTENDED_UNIT_ROUNDOFF = float(np.finfo(np.longdouble).eps) / 2


def irfft(spectrum: np.ndarray, length: int) -> np.ndarray:
    """Inverse of :func:`rfft` (normalised by ``1/N``) for a spectrum of a real array."""
    return irfft_sparse(None, spectrum, length)


def irfft_sparse(
    indices: np.ndarray | None,
    values: np.ndarray,
    length: int,
    start: int = 0,
    width: int | None = None,
) -> np.ndarray:
    """Entries ``(start + j) mod N`` for ``j < width`` (all ``N`` by default, ``width <=
    N``) of :func:`irfft` of the spectrum that is ``values`` at ``indices`` (ascending;
    all bins if None) and zero elsewhere, as a new array of ``width`` entries."""
    width = length if width is None else width
    if backend() == "scipy":
        spectrum = values if indices is None else np.zeros(length // 2 + 1, dtype=complex)
        if indices is not None:
            spectrum[indices] = values
        return _window(scipy.fft.irfft(spectrum, length), start, width, 1)
    _, inverse = _fftw_plans(length)
    if indices is None:
        inverse.input_array[:] = values
    elif indices.shape[0] and indices[-1] - indices[0] + 1 == indices.shape[0]:
        # Ascending and contiguous (the live bins are usually the lowest ones).
        first, stop = int(indices[0]), int(indices[-1]) + 1
        inverse.input_array[:first] = 0.0
        inverse.input_array[first:stop] = values
        inverse.input_array[stop:] = 0.0
    else:
        inverse.input_array[:] = 0.0
        inverse.input_array[indices] = values
    inverse.execute()
    return _window(inverse.output_array, start, width, length)


def _window(values: np.ndarray, start: int, width: int, divisor: int) -> np.ndarray:
    """``values[(start + j) mod N] / divisor`` for ``j < width <= N``, a new array (only
    the window is written: no transform-sized temporary)."""
    start %= values.shape[0]
    head = min(width, values.shape[0] - start)
    window = np.empty(width)
    np.divide(values[start : start + head], divisor, out=window[:head])
    np.divide(values[: width - head], divisor, out=window[head:])
    return window


def fast_length(minimum: int) -> int:
    """Smallest even 2·3·5-smooth length >= ``minimum`` (odd lengths cost 2–2.5×).

    Twice the smallest smooth length >= ``minimum / 2``: rounding a smooth odd
    length up to even would leave large prime factors (84375 -> 84376 = 8·53·199,
    an FFT several times slower).
    """
    half = -(-max(int(minimum), 2) // 2)
    return 2 * scipy.fft.next_fast_len(half, real=True)
