"""Log-MGF kernels of the window search (:mod:`pld.engine.tails`).

``log M(t) = log sum_j m_j exp(t (offset + j) step)`` of a pmf on the loss grid, at
many exponents ``t`` at once, with a stated rounding bound
(:func:`log_mgf_rounding`). A pmf of at most ``COMPILED_MGF_ATOMS`` positive
masses takes vectorised numpy (a direct log-sum-exp, or rows of about ``sqrt(n)``
atoms in one matrix product; the factors of a heterogeneous composition in one
product together, :func:`log_mgf_many`); a larger one Horner's rule on blocks of
atoms compiled by numba (:func:`_log_mgf_blocked`).
``tests/engine/test_engine_kernels.py`` checks both paths against mpmath.
"""

from __future__ import annotations

import math

import numpy as np

from pld.engine.kernels import _compiled
from pld.engine.linalg import products
from pld.numerics import UNIT_ROUNDOFF

#: The log-MGF of a pmf of more positive masses than this runs compiled. Numpy's
#: rows cost ~0.1 ms a call at 2^14 atoms and ~1.5 ms at 2^16 with 28 exponents
#: (the blocked loop ~0.7 ms), but a fresh process pays ~0.4 s to load numba: at
#: 2^16 an accountant's first query (DP-SGD grids of ~5e4 points) loads none. The
#: paths differ in the last bits, so the choice depends on the size alone.
COMPILED_MGF_ATOMS = 2**16
#: Largest (t, atom) count of the log-MGF evaluated term by term.
_MGF_DIRECT = 2**15


def log_mgf(
    masses: np.ndarray, offset: float, step: float, t: np.ndarray, layouts: dict | None = None
) -> np.ndarray:
    """``log sum_j m_j exp(t_k (offset + j) step)`` for each ``t_k``, as a log-sum-exp.

    Over the positive masses only (a negative one could only lower the sum). A pmf
    of at most ``COMPILED_MGF_ATOMS`` positive masses takes the numpy path: small
    inputs the log-sum-exp of ``log m_j + t_k (offset + j) step`` directly, larger
    ones rows of ``B`` atoms with ``B |t_k| step <= 300``, whose sums ``r_q =
    sum_s m_(qB+s) exp(t_k step s)`` are one matrix product with ``B``
    exponentials per ``t_k``, and the log-sum-exp of ``log r_q + t_k (offset + qB)
    step`` over the rows. A larger pmf takes :func:`_log_mgf_blocked` (compiled),
    which keeps its blocks (and the count of positive masses) in ``layouts``, a
    dict the caller keeps with the pmf for a few calls (a window search); so does
    the numpy path its positive masses and rows.

    Rounding of the numpy path, as an absolute error of the result (log-sum-exp is
    1-Lipschitz in its exponents, whose magnitude is at most ``S = |t_k| step
    (|offset| + n)`` plus the log of a mass or row sum, ``<= 1100``): the powers
    ``exp(t_k step s)`` err by ``603 u``; each row is divided by its largest mass
    (1 unit), so its sum of ``B`` non-negative terms is at least ``exp(-300)`` and
    errs by ``B u`` relatively (terms that underflow lose less than ``B
    2^-1074``, below a unit); the logs of the row sums and scales by 2 units of
    1100 each, the products ``t_k (...) step`` by 3.01 units of ``S``, the sums and
    the shift by 3 units of ``1100 + S``, ``exp`` by 2 units, the sum of the ``Q <=
    n`` terms in ``[0, 1]`` by ``Q - 1`` units, the log of that sum by 2 units of
    ``log n`` and the final addition by 1 unit of the result; with ``B + Q <= n +
    1`` this is at most ``(n + 2 log n + 8500) u + 6.01 S u + u |result|``
    (:func:`log_mgf_rounding` without the last term), and the direct path's bound
    is smaller. The compiled path's bound is in :func:`_log_mgf_blocked`.
    """
    if masses.shape[0] > COMPILED_MGF_ATOMS:
        if layouts is None or "atoms" not in layouts:
            atoms = int(np.count_nonzero(masses > 0.0))
            if layouts is not None:
                layouts["atoms"] = atoms
        else:
            atoms = layouts["atoms"]
        if atoms > COMPILED_MGF_ATOMS:
            return _log_mgf_blocked(masses, offset, step, t, layouts)
    return _log_mgf_numpy(masses, offset, step, t, layouts)


def _log_mgf_numpy(
    masses: np.ndarray, offset: float, step: float, t: np.ndarray, layouts: dict | None = None
) -> np.ndarray:
    """:func:`log_mgf` by a log-sum-exp (direct, or over rows of about sqrt(n) atoms);
    the positive masses' positions and logs, and the scaled rows of the usual width,
    are kept in ``layouts`` if given."""
    kept = {} if layouts is None else layouts
    positive, log_masses = _positive(masses, kept)
    out = np.full(t.shape[0], -np.inf)
    if positive.size == 0:
        return out
    rates = np.asarray(t, dtype=np.float64) * step
    largest = float(np.max(np.abs(rates)))
    size = int(positive[-1]) + 1 - int(positive[0])
    # Rows of about sqrt(n) atoms: about 2 sqrt(n) exponentials per t.
    usual = min(size, math.isqrt(size - 1) + 1)
    width = max(1, min(usual, int(300.0 / largest))) if largest > 0.0 else usual
    if width <= 16 or positive.size * t.shape[0] <= _MGF_DIRECT:
        exponent = log_masses + rates[:, np.newaxis] * (offset + positive)
        return _log_sum_exp(exponent)
    blocks, log_scale, starts = _rows(masses, kept, width, width == usual)
    powers = np.exp(np.arange(width)[:, np.newaxis] * rates)
    log_rows = (np.log(products(blocks, powers)) + log_scale).T
    return _log_sum_exp(log_rows + rates[:, np.newaxis] * (offset + starts))


def log_mgf_many(
    factors: list[tuple[np.ndarray, float]],
    step: float,
    t: np.ndarray,
    layouts: list[dict],
    stacks: dict | None = None,
) -> np.ndarray:
    """:func:`log_mgf` of many pmfs at the same exponents, ``out[i, k]`` for factor
    ``i`` (its masses and offset) and ``t_k``; ``layouts[i]`` is factor ``i``'s dict,
    ``stacks`` keeps the stacked rows for further calls on the same factors.

    The factors on the numpy path whose rows would hold more than 16 atoms share
    one row width ``B`` (the smallest of their usual widths, and ``B |t_k| step <=
    300``; a single call would sum a small input directly): their scaled rows
    are stacked into one matrix product with the powers ``exp(t_k step s)``, and
    each factor's log-sum-exp runs over its own rows (``np.maximum.reduceat`` and
    ``np.add.reduceat``). Every factor's value is the rows path's, with the same
    rounding bound (the order of a sum of non-negative terms does not enter it);
    the other factors take :func:`log_mgf` one by one.
    """
    count = t.shape[0]
    out = np.empty((len(factors), count))
    rates = np.asarray(t, dtype=np.float64) * step
    largest = float(np.max(np.abs(rates))) if count else 0.0
    batch, widths = [], []
    for i, ((masses, offset), kept) in enumerate(zip(factors, layouts, strict=True)):
        positive = _positive(masses, kept)[0]
        if 0 < positive.size <= COMPILED_MGF_ATOMS:
            size = int(positive[-1]) + 1 - int(positive[0])
            usual = min(size, math.isqrt(size - 1) + 1)
            width = max(1, min(usual, int(300.0 / largest))) if largest > 0.0 else usual
            if width > 16:
                batch.append(i)
                widths.append(usual)
                continue
        out[i] = log_mgf(masses, offset, step, t, kept)
    if len(batch) < 2:
        for i in batch:
            masses, offset = factors[i]
            out[i] = log_mgf(masses, offset, step, t, layouts[i])
        return out
    width = min(widths)
    if largest > 0.0:
        width = max(1, min(width, int(300.0 / largest)))
    kept = {} if stacks is None else stacks
    key = ("stack", width, tuple(batch))
    if key not in kept:
        parts = [_rows(factors[i][0], layouts[i], width, False) for i in batch]
        kept.clear()  # one stack at a time (the size of the factors' masses)
        kept[key] = (
            np.concatenate([part[0] for part in parts]),
            np.concatenate([part[1] for part in parts]),
            np.concatenate(
                [part[2] + factors[i][1] for part, i in zip(parts, batch, strict=True)]
            ).astype(np.float64),
            np.cumsum([0] + [part[0].shape[0] for part in parts])[:-1],
        )
    blocks, log_scale, starts, bounds = kept[key]
    powers = np.exp(np.arange(width)[:, np.newaxis] * rates)
    exponent = (np.log(products(blocks, powers)) + log_scale).T + rates[:, np.newaxis] * starts
    peak = np.maximum.reduceat(exponent, bounds, axis=1)
    row_factor = np.repeat(np.arange(len(batch)), np.diff(np.append(bounds, blocks.shape[0])))
    total = np.add.reduceat(np.exp(exponent - peak[:, row_factor]), bounds, axis=1)
    out[batch] = (peak + np.log(total)).T
    return out


def _positive(masses: np.ndarray, kept: dict) -> tuple[np.ndarray, np.ndarray]:
    """The grid indices of a pmf's positive masses and their logs (kept in ``kept``)."""
    if "positive" not in kept:
        positive = np.flatnonzero(masses > 0.0)
        kept["positive"] = (positive, np.log(masses[positive]))
    return kept["positive"]


def _rows(masses: np.ndarray, kept: dict, width: int, keep: bool) -> tuple[np.ndarray, ...]:
    """A pmf's rows of ``width`` atoms from its first positive mass, each scaled by its
    largest mass: the scaled rows, the logs of the scales (a column) and the grid
    index of each row's first atom (from the pmf's first point); kept in ``kept``
    if ``keep``."""
    if ("rows", width) in kept:
        return kept["rows", width]
    positive = _positive(masses, kept)[0]
    low = int(positive[0])
    size = int(positive[-1]) + 1 - low
    rows = -(-size // width)
    padded = np.zeros(rows * width)
    padded[:size] = np.maximum(masses[low : low + size], 0.0)
    blocks = padded.reshape(rows, width)
    # Each row is scaled by its largest mass, so a row sum is at least exp(-300).
    scale = blocks.max(axis=1)
    occupied = scale > 0.0
    layout = (
        blocks[occupied] / scale[occupied, np.newaxis],
        np.log(scale[occupied])[:, np.newaxis],
        low + width * np.flatnonzero(occupied),
    )
    if keep:
        kept["rows", width] = layout
    return layout


def _log_sum_exp(exponent: np.ndarray) -> np.ndarray:
    """``log sum_j exp(exponent[k, j])`` per row (``-inf`` entries allowed)."""
    peak = exponent.max(axis=1, keepdims=True)
    finite = np.isfinite(peak)
    shift = np.where(finite, peak, 0.0)
    total = np.exp(exponent - shift).sum(axis=1)
    with np.errstate(divide="ignore"):
        return np.where(finite[:, 0], shift[:, 0] + np.log(total), -np.inf)


def log_mgf_rounding(size: int, span: np.ndarray) -> np.ndarray:
    """Bound on the rounding error of :func:`log_mgf` over ``size`` atoms, without its
    ``u |result|`` term, for exponent magnitudes ``span = |t| step (|offset| + size)``:
    the larger of the numpy path's and the blocked Horner's (:func:`_log_mgf_blocked`)
    bounds, with 2 units of ``S`` to spare."""
    fixed = size + 2.0 * math.log(max(size, 1)) + 8810.0
    return (fixed + 8.0 * span) * UNIT_ROUNDOFF


def _log_mgf_blocked(
    masses: np.ndarray, offset: float, step: float, t: np.ndarray, layouts: dict | None = None
) -> np.ndarray:
    """:func:`log_mgf` by Horner's rule on blocks of atoms (loops compiled by numba).

    The atoms are cut into blocks of ``l <= ceil(n / 64)`` consecutive grid points
    with ``l |t| step <= 690`` for every ``t`` of the call, laid out so that one
    Horner step advances every block at once (independent chains: the loop runs
    at the machine's throughput, not the latency of one chain). Block ``b`` is
    scaled by ``2^-e_b``, its largest mass in ``[1/2, 1)``, and evaluated in ``r
    = exp(|t| step) >= 1`` from the end where ``exp(t g)`` is smallest, so its sum
    lies in ``[1/2, l exp(690)]``: nothing overflows, whatever ``t``. The result
    is the log-sum-exp over blocks of ``log(sum_b) + e_b log 2 + t step a_b``
    (``a_b`` the block's grid index of smallest ``exp(t g)``).

    Rounding, as an absolute error of the result: a block sum of non-negative
    terms with ``r >= 1`` errs relatively by ``2 l`` units (two roundings a step)
    and ``2 (l - 1)`` more from ``r`` (one ulp, raised to at most ``l - 1``);
    masses or partial sums that underflow lose less than ``2^-1075`` each, below
    ``2 l exp(690 - 745) < 0.03 l`` units of a sum that is at least 1/2. The
    scaling is exact. The logs of the sums err by 2 units of ``710``, ``e_b log
    2`` by 2 units of 745 (the constant and the product), ``t step a_b`` by 2
    units of ``S = |t| step (|offset| + n)``, their two additions by 2 units of
    ``1455 + S``; the shift by the peak by 2 more units of ``1455 + S``, ``exp``
    by 2 units, the sum of the ``B`` terms in ``[0, 1]`` by ``B - 1`` units, its
    log by 2 units of ``log n`` and the final addition by 1 unit of the result.
    With ``4.03 l + B - 1 <= n + 70`` this is at most ``(n + 2 log n + 8810) u +
    6 S u + u |result|``, within :func:`log_mgf_rounding`. (The former
    single-chain Horner loop overflowed to ``+inf`` above ``|t| step = 86`` and
    summed its rescaling constants with one rounding each, up to ``n |t| step /
    624`` of them.)
    """
    masses = np.ascontiguousarray(masses, dtype=np.float64)
    t = np.ascontiguousarray(t, dtype=np.float64)
    length = _block_length(masses.shape[0], t, step)
    # The layout of the exponents a window search tries (blocks of ceil(n / 64)
    # atoms) is kept in ``layouts``.
    key = ("layout", length)
    if layouts is not None and key in layouts:
        grid, shift = layouts[key]
    else:
        grid, shift = _compiled(_mgf_layout)(masses, length)
        if layouts is not None and length == -(-masses.shape[0] // 64):
            layouts[key] = (grid, shift)
    return _compiled(_mgf_blocks)(grid, shift, float(offset), step, t)


def _block_length(size: int, t: np.ndarray, step: float) -> int:
    """Atoms per block of :func:`_log_mgf_blocked`: at most ``ceil(size / 64)``, and
    at most ``690 / (|t| step)`` for every ``t``."""
    length = max(1, -(-size // 64))
    largest = float(np.max(np.abs(t))) * step if t.shape[0] else 0.0
    if largest > 0.0:
        length = max(1, min(length, int(690.0 / largest)))
    return length


def _mgf_layout(masses, length):  # pragma: no cover - compiled
    """The blocks of :func:`_log_mgf_blocked`: ``grid[i, b]`` the ``i``-th mass of block
    ``b`` (zero-padded, negative masses as zero) times ``2^-e_b``, and ``e_b log 2``."""
    size = masses.shape[0]
    blocks = -(-size // length)
    grid = np.zeros((length, blocks))
    shift = np.zeros(blocks)
    for b in range(blocks):
        low = b * length
        high = min(size, low + length)
        peak = 0.0
        for j in range(low, high):
            peak = max(peak, masses[j])
        if peak > 0.0:
            exponent = math.frexp(peak)[1]
            shift[b] = exponent * math.log(2.0)
            # Two exact power-of-two factors: 2^-exponent alone overflows for a
            # subnormal peak.
            boost = 2.0**1000 if exponent < -1000 else 1.0
            factor = math.ldexp(1.0, -exponent - (1000 if exponent < -1000 else 0))
            for j in range(low, high):
                grid[j - low, b] = max(masses[j], 0.0) * boost * factor
    return grid, shift


def _mgf_blocks(grid, shift, offset, step, t):  # pragma: no cover - compiled
    """:func:`_log_mgf_blocked` on the blocks laid out by :func:`_mgf_layout`."""
    length, blocks = grid.shape
    count = t.shape[0]
    out = np.full(count, -np.inf)
    acc = np.empty(blocks)
    for k in range(count):
        rate = t[k] * step
        ratio = math.exp(abs(rate)) if length > 1 else 0.0
        acc[:] = 0.0
        if rate >= 0.0:
            first = offset
            for i in range(length - 1, -1, -1):
                row = grid[i]
                for b in range(blocks):
                    acc[b] = acc[b] * ratio + row[b]
        else:
            first = offset + length - 1
            for i in range(length):
                row = grid[i]
                for b in range(blocks):
                    acc[b] = acc[b] * ratio + row[b]
        peak = -np.inf
        for b in range(blocks):
            if acc[b] > 0.0:
                acc[b] = math.log(acc[b]) + shift[b] + rate * (first + b * length)
                peak = max(peak, acc[b])
            else:
                acc[b] = -np.inf
        if peak > -np.inf:
            total = 0.0
            for b in range(blocks):
                total += math.exp(acc[b] - peak)
            out[k] = peak + math.log(total)
    return out
