"""Kernels of the discretisation and the queries (the window search's log-MGF
kernels are in :mod:`pld.engine.mgf`).

The scatter of atoms onto grid cells and the suffix maximum are vectorised
numpy. The suffix sums, the bounds on a segment, the breakpoint maxima and
search and the contraction sweep of the lower bound (plain Python source) have
twins compiled by numba (serial,
``cache=True``: ``parallel=True`` next to threaded FFTs slows the FFTs down, see
``shared/notes/measurements.md``), 4-50x faster per call; but a fresh process
pays ~0.4 s to import numba and load its first cached loop (~6 ms each after),
more than a typical accountant's whole first query. :func:`run_compiled` decides
by rent-or-buy: numpy (or the interpreted sweep) runs while its estimated extra
cost over the compiled twin, summed over the process, stays under that load
cost; the call that would pass it loads numba, and so does any call once numba
is in the process. A process thus pays at most about twice the hindsight-best
choice (the ski-rental bound), a DP-SGD accountant's first query never loads
numba, and a long computation runs compiled after its first fraction of a
second. Both paths give the same floats (the same operations in the same
order; ``tests/engine/test_engine_kernels.py`` checks it bit for bit), so no
answer depends on what the process did before.

Notation: the loss grid is ``g_k = k * h``; cell ``k`` is ``[g_k, g_{k+1})``. For
an atom of P-mass ``p`` at loss ``l = g_k + r`` with ``0 <= r < h``, its position
in ``y = exp(-loss)`` coordinates, relative to ``y_k = exp(-g_k)``, is
``exp(-r) = 1 - theta * (1 - exp(-h))`` with ``theta = (1 - exp(-r)) / (1 - exp(-h))``
in ``[0, 1)``: ``theta`` is the linear position of the atom between ``y_k``
(``theta = 0``) and ``y_{k+1}`` (``theta = 1``).
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from pld.numerics import UNIT_ROUNDOFF

#: Seconds a fresh process pays to import numba and load its first cached loop
#: (measured ~0.4 s on the reference machine): the rent-or-buy price of
#: :func:`run_compiled`.
NUMBA_LOAD_SECONDS = 0.4
#: Suffix sums of grids of more than this many points start in segments of more
#: than this many points (:meth:`pld.engine.loss_pmf.LossPmf._suffix_from`).
COMPILED_SIZE = 2**15
#: Estimated extra seconds, over the compiled twin, of the interpreted contraction
#: sweep per occupied cell (~0.5 us against ~10 ns) and of the numpy query
#: loops per point (~40 ns against 1.5 ns for the suffix sums, the costliest).
INTERPRETED_SECONDS_PER_CELL = 5e-7
NUMPY_SECONDS_PER_POINT = 4e-8

#: Estimated extra seconds the numpy and interpreted paths have cost this process.
_rented_seconds = 0.0


def run_compiled(extra_seconds: float) -> bool:
    """Whether a kernel with a compiled twin runs compiled on an input whose numpy
    (or interpreted) path would cost an estimated ``extra_seconds`` more.

    Yes once numba is in the process; before, only when the extra cost of every
    such call so far, this one included, would pass ``NUMBA_LOAD_SECONDS``
    (rent-or-buy). Both paths give the same floats.
    """
    global _rented_seconds
    if "numba" in sys.modules:
        return True
    if _rented_seconds + extra_seconds > NUMBA_LOAD_SECONDS:
        return True
    _rented_seconds += extra_seconds
    return False


def scatter_cells(
    loss: np.ndarray,
    mass: np.ndarray,
    snap: np.ndarray,
    step: float,
    first_cell: int,
    n_cells: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Sum, per grid cell, the P-mass and its share at the cell's two grid points.

    An atom within ``snap[i]`` nats of a grid point is placed on it: its
    computed loss carries float error of that order, and
    :func:`pld.engine.discretisation.loss_rounding_error` budgets for the move.

    Returns ``(to_left, to_right)``: for cell ``k``, ``to_left[k]`` is the P-mass
    that the dominating split of Doroshenko et al. (2022) sends to ``g_k`` and
    ``to_right[k]`` the mass sent to ``g_{k+1}``; the split keeps the P-mean of
    ``exp(-loss)`` (that is, the Q-mass) of every atom. Their sum is the cell's
    P-mass and ``to_right / (to_left + to_right)`` is the cell's mean ``theta``.
    Losses must be finite; an atom of zero mass adds exact zeros. Callers leave
    a spare cell on top, so every atom lands in a cell; an atom outside the
    cells would be moved up to the nearest end (never down). The per-cell sums
    run in atom order (``np.bincount``).
    """
    ratio = loss / step
    nearest = np.rint(ratio)
    snapped = np.abs(loss - nearest * step) <= snap
    k = np.floor(ratio)
    r = loss - k * step
    if r.min(initial=0.0) < 0.0:
        below = r < 0.0
        k[below] -= 1.0
        r[below] = loss[below] - k[below] * step
    if r.max(initial=0.0) >= step:
        above = r >= step
        k[above] += 1.0
        r[above] = loss[above] - k[above] * step
    np.maximum(r, 0.0, out=r)
    if np.count_nonzero(snapped):
        k = np.where(snapped, nearest, k)
        r[snapped] = 0.0
    cell = k.astype(np.int64)
    cell -= first_cell
    denominator = -math.expm1(-step)
    down = np.expm1(-r)
    right = mass * np.minimum(-down / denominator, 1.0)
    down -= math.expm1(-step)
    left = mass * down
    left /= denominator
    if cell.min(initial=0) < 0 or cell.max(initial=0) >= n_cells:
        under = cell < 0  # below the first grid point (callers prevent it): move up
        over = cell >= n_cells  # never round down: the top grid point is above the atom
        left[under] = mass[under]
        right[under] = 0.0
        left[over] = 0.0
        right[over] = mass[over]
        cell = np.clip(cell, 0, n_cells - 1)
    to_left = np.bincount(cell, weights=left, minlength=n_cells)
    to_right = np.bincount(cell, weights=right, minlength=n_cells)
    return to_left, to_right


def contract_cells(
    to_left: np.ndarray, to_right: np.ndarray, step: float, max_gap: int
) -> np.ndarray:
    """The lower-bound masses of the cells of :func:`scatter_cells` (see
    :func:`_contract`), on ``n_cells + 1`` grid points.

    The cell masses are ``to_left + to_right`` and their mean positions ``theta =
    to_right / (to_left + to_right)``; empty cells are dropped in one vectorised
    step. The sweep runs compiled or interpreted as :func:`run_compiled` decides:
    both paths give the same floats, so the result does not depend on what the
    process did before.
    """
    n_cells = to_left.shape[0]
    cell_mass = to_left + to_right
    occupied = (cell_mass > 0.0).nonzero()[0]
    if occupied.size == 0:
        return np.zeros(n_cells + 1)
    mass = cell_mass[occupied]
    theta = to_right[occupied] / mass
    np.maximum(theta, 0.0, out=theta)
    np.minimum(theta, 1.0, out=theta)
    split = int(np.argmax(mass))
    if run_compiled(INTERPRETED_SECONDS_PER_CELL * occupied.size):
        out = np.zeros(n_cells + 1)
        _compiled(_contract)(
            occupied, mass, theta, split, step, max_gap, np.zeros(max_gap + 1), out
        )
        return out
    out = [0.0] * (n_cells + 1)
    _contract(
        occupied.tolist(),
        mass.tolist(),
        theta.tolist(),
        split,
        step,
        max_gap,
        [0.0] * (max_gap + 1),
        out,
    )
    return np.array(out)


@functools.cache
def _compiled(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` compiled by numba (serial, cached on disk), on first use."""
    import numba

    return numba.njit(cache=True, error_model="numpy")(function)


def _contract(cells, cell_mass, cell_theta, split, step, max_gap, grow, out):
    """A pair dominated by the cells' atoms, supported on the grid (lower bound).

    Works in ``y = exp(-loss)`` coordinates under P, where the hockey-stick
    divergence is ``E_P[(1 - e^eps * Y)_+]``, a convex decreasing function of Y.
    Two operations never increase it, for one round and for any composition:
    merging atoms (a contraction in convex order; a post-processing of the pair)
    and moving an atom to larger y, i.e. a lower loss, keeping its P-mass (its
    Q-mass grows, which lowers every hockey-stick divergence, including both
    branches of the subsampling profile of Koskela et al. (2023), eq 2.3).

    Two sweeps run from both ends towards the heaviest cell. Each carries an
    atom and pulls just enough mass from the next occupied cell's atom, if it
    lies at most ``max_gap`` cells away, to land the merged atom exactly on the
    grid point the carry is heading for. When the next atom is farther, or holds
    too little mass, the carry is moved down in loss to its cell's left point
    instead (the classic optimistic rounding). Where occupied cells are close,
    the error is of second order in the grid step.

    ``cells`` are the occupied cells' indices, increasing, ``cell_mass`` (> 0) and
    ``cell_theta`` their masses and mean positions, ``cells[split]`` the heaviest;
    ``grow`` (``max_gap + 1`` zeros) memoises ``exp(step * d)`` for gaps ``d``.
    Adds the P-masses on the grid points ``g_first .. g_{first + n_cells}`` to ``out``.
    """
    count = len(cells)
    shrink = -math.expm1(-step)

    # Sweep A: from the highest-loss cell down to the mode (increasing y). The
    # carry sits in cell a_cell at a_theta, below its target g_{a_cell} in y.
    a_weight = 0.0
    a_theta = 0.0
    a_cell = -1
    for j in range(count - 1, split - 1, -1):
        k = cells[j]
        m = cell_mass[j]
        theta = cell_theta[j]
        gap = a_cell - k
        if a_cell >= 0 and a_theta > 0.0 and gap <= max_gap:
            carry = 1.0 - a_theta * shrink
            factor = grow[gap]
            if factor == 0.0:
                factor = math.exp(-step * (k - a_cell))
                grow[gap] = factor
            other = factor * (1.0 - theta * shrink)
            if other > 1.0:
                pull = a_weight * (1.0 - carry) / (other - 1.0)
                if pull <= m:
                    out[a_cell] += a_weight + pull
                    a_weight, a_theta, a_cell = m - pull, theta, k
                else:
                    merged = (a_weight * carry + m * other) / (a_weight + m)
                    a_weight += m
                    a_theta = max(0.0, (1.0 - merged) / shrink)
                continue
        if a_cell >= 0:
            out[a_cell] += a_weight
        a_weight, a_theta, a_cell = m, theta, k

    # Sweep B: from the lowest-loss cell up to just below the mode (decreasing y).
    # The carry is above its target g_{b_cell + 1} in y.
    b_weight = 0.0
    b_theta = 0.0
    b_cell = -1
    for j in range(split):
        k = cells[j]
        m = cell_mass[j]
        theta = cell_theta[j]
        if b_cell >= 0 and b_theta > 0.0 and k - b_cell <= max_gap:
            target = b_cell + 1
            carry = math.exp(-step * (b_cell - target)) * (1.0 - b_theta * shrink)
            other = math.exp(-step * (k - target)) * (1.0 - theta * shrink)
            if other < 1.0:
                pull = b_weight * (carry - 1.0) / (1.0 - other)
                if pull <= m:
                    out[target] += b_weight + pull
                    b_weight, b_theta, b_cell = m - pull, theta, k
                else:
                    merged = (b_weight * carry + m * other) / (b_weight + m)
                    b_weight += m
                    b_theta = min(1.0, (1.0 - merged * math.exp(-step)) / shrink)
                continue
        if b_cell >= 0:
            out[b_cell] += b_weight
        b_weight, b_theta, b_cell = m, theta, k

    # The two carries meet: the one on the loss side of the other's target pulls.
    if a_cell >= 0 and b_cell >= 0 and a_theta > 0.0 and a_cell - b_cell <= max_gap:
        # A carry that lies (after rounding) on the other's target cannot pull.
        carry = 1.0 - a_theta * shrink
        other = math.exp(-step * (b_cell - a_cell)) * (1.0 - b_theta * shrink)
        if other > 1.0:
            pull = a_weight * (1.0 - carry) / (other - 1.0)
            if pull <= b_weight:
                out[a_cell] += a_weight + pull
                out[b_cell] += b_weight - pull
                return
        target = b_cell + 1
        carry = math.exp(-step * (b_cell - target)) * (1.0 - b_theta * shrink)
        other = math.exp(-step * (a_cell - target)) * (1.0 - a_theta * shrink)
        if other < 1.0:
            pull = b_weight * (carry - 1.0) / (1.0 - other)
            if b_theta > 0.0 and pull <= a_weight:
                out[target] += b_weight + pull
                out[a_cell] += a_weight - pull
                return
    if a_cell >= 0:
        out[a_cell] += a_weight
    if b_cell >= 0:
        out[b_cell] += b_weight


def _query_loop(function: Callable[..., Any], size: int) -> Callable[..., Any] | None:
    """The compiled ``function`` for an input of ``size`` points if :func:`run_compiled`
    says so, else None (numpy: the same floats)."""
    if run_compiled(NUMPY_SECONDS_PER_POINT * size):
        return _compiled(function)
    return None


def suffix_sums(
    masses: np.ndarray,
    step: float,
    block: int,
    out: tuple[np.ndarray, np.ndarray] | None = None,
    known: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Suffix sums of the masses, plain and discounted by ``exp(-step)`` per grid point.

    Returns ``(mass_tail, weighted_tail)`` of length ``n + 1`` (index ``n`` holds
    zeros): ``mass_tail[i] = sum_{j >= i} m_j`` and ``weighted_tail[i] = sum_{j >= i}
    m_j exp(-step (j - i))``. Blocks of ``block`` points, aligned at the top end,
    are summed (sequentially, from their top) with exact-to-an-ulp powers
    ``exp(-step k)``, ``k <= block``, and carried from block to block, so the
    relative error of every term is at most ``block + 5`` units from its own block
    plus 4 units per block boundary crossed (docs/error-bounds.md §5); all terms
    are non-negative and nothing overflows. The compiled loop and numpy run the
    same operations in the same order on the same table of powers: the same floats.
    ``out``: two arrays of length ``n + 1`` to fill (the compiled loop writes
    there directly) and return; ``known``: ``out`` already holds these sums from
    this index (a multiple of ``block`` below ``n``) up, which the compiled loop
    carries down from instead of summing them again.
    """
    powers = np.arange(block + 1) * step
    down = np.exp(-powers)
    up = np.exp(powers)
    size = masses.shape[0]
    loop = _query_loop(_suffix_sums_loop, size)
    if loop is None:
        sums = _suffix_sums_numpy(masses, down, up, block)
        if out is None:
            return sums
        out[0][:] = sums[0]
        out[1][:] = sums[1]
        return out
    if out is None or known is None:
        known = size
    if out is None:
        out = (np.empty(size + 1), np.empty(size + 1))
    loop(np.ascontiguousarray(masses, dtype=np.float64), down, up, block, out[0], out[1], known)
    return out


def _suffix_sums_numpy(
    masses: np.ndarray, down: np.ndarray, up: np.ndarray, block: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`suffix_sums` vectorised (the same sums in the same order); ``down[k] =
    exp(-step k)`` and ``up[k] = exp(step k)`` for ``k <= block``."""
    size = masses.shape[0]
    mass_tail = np.zeros(size + 1)
    weighted_tail = np.zeros(size + 1)
    if size == 0:
        return mass_tail, weighted_tail
    # Reversed, the blocks start at index 0 (the top block first) and each sums forwards.
    # (Contiguous reversed power tables and sums formed in place: the same operations
    # on the same floats, without strided operands or fresh temporaries.)
    count = -(-size // block)
    padded = np.zeros(count * block)
    padded[:size] = masses[::-1]
    rows = padded.reshape(count, block)
    down_reversed = np.ascontiguousarray(down[block - 1 :: -1])
    up_reversed = np.ascontiguousarray(up[block - 1 :: -1])
    local_mass = np.cumsum(rows, axis=1)
    local_weighted = np.multiply(rows, down_reversed)
    np.cumsum(local_weighted, axis=1, out=local_weighted)
    # The partial bottom block counts its powers from its own first point.
    width = size - (count - 1) * block
    tail_weighted = None
    if width < block:
        tail_weighted = np.cumsum(rows[-1, :width] * down[width - 1 :: -1])
    # Carried into block b: the sums of the full blocks above it, at their first
    # (lowest-loss) points; carry_mass[b] = carry_mass[b - 1] + start (a cumsum).
    carry_mass = np.zeros(count)
    carry_mass[1:] = np.cumsum(local_mass[:-1, -1])
    carry_weighted = [0.0] * count
    decay = float(down[block])
    for b, start in enumerate(local_weighted[:-1, -1].tolist(), start=1):
        carry_weighted[b] = start + carry_weighted[b - 1] * decay
    carried = np.array(carry_weighted)[:, np.newaxis]
    mass_rows = local_mass
    mass_rows += carry_mass[:, np.newaxis]
    weighted_rows = local_weighted
    weighted_rows *= up_reversed
    weighted_rows += np.multiply(carried, down[1:], out=rows)
    if tail_weighted is not None:
        weighted_rows[-1, :width] = (
            tail_weighted * up[width - 1 :: -1] + carried[-1, 0] * down[1 : width + 1]
        )
    mass_tail[:size] = mass_rows.ravel()[:size][::-1]
    weighted_tail[:size] = weighted_rows.ravel()[:size][::-1]
    return mass_tail, weighted_tail


def _suffix_sums_loop(
    masses, down, up, block, mass_tail, weighted_tail, known
):  # pragma: no cover - compiled
    """:func:`suffix_sums` as one loop (compiled by numba), into the arrays given, from
    the block boundary ``known`` down (the sums above it given)."""
    size = masses.shape[0]
    if known == size:
        mass_tail[size] = 0.0
        weighted_tail[size] = 0.0
    carry_mass = mass_tail[known]
    carry_weighted = weighted_tail[known]
    end = known
    while end > 0:
        start = max(0, end - block)
        mass = 0.0
        weighted = 0.0
        for i in range(end - 1, start - 1, -1):
            mass += masses[i]
            weighted += masses[i] * down[i - start]
            mass_tail[i] = mass
            weighted_tail[i] = weighted
        for i in range(start, end):
            mass_tail[i] += carry_mass
            weighted_tail[i] = weighted_tail[i] * up[i - start] + carry_weighted * down[end - i]
        carry_mass = mass_tail[start]
        carry_weighted = weighted_tail[start]
        end = start
    return mass_tail, weighted_tail


def geometric_sums(size: int, low: int, high: int, step: float, out: np.ndarray) -> None:
    """``out[i - low] = sum_{k < size - i} exp(-step k) = -expm1(-step (size - i)) /
    -expm1(-step)`` for ``low <= i < high``: the closed-form count of discounted ones
    that every bound evaluation reads (numpy's expm1, so every path gets these floats)."""
    np.multiply(np.arange(size - low, size - high, -1), -step, out=out)
    np.expm1(out, out=out)
    np.divide(out, math.expm1(-step), out=out)


def _hockey_stick_loop(
    mass_tail, weighted_tail, ones, index, factor, upper, terms
):  # pragma: no cover - compiled
    """:func:`hockey_stick_bound` as one loop (compiled by numba)."""
    mass_error, infinity_mass, junk, error_max, error_l1, summation, final = terms
    size = mass_tail.shape[0] - 1
    unit = UNIT_ROUNDOFF
    out = np.empty(index.shape[0])
    for k in range(index.shape[0]):
        i = index[k]
        x = factor[k]
        tail = mass_tail[i]
        finite = tail - x * weighted_tail[i]
        if finite < 0.0:
            finite = 0.0
        count = float(size - i)
        weight_sum = count - x * ones[i]
        if weight_sum < 0.0:
            weight_sum = 0.0
        weight_sum += 4.0 * unit * (count + ones[i])
        slack = error_max * weight_sum
        if slack > error_l1:
            slack = error_l1
        slack += summation * tail
        if upper:
            value = finite * (1.0 + mass_error) + infinity_mass + slack
            out[k] = value * (1.0 + final * unit)
        else:
            value = finite * (1.0 - mass_error) + infinity_mass - slack - junk
            out[k] = value - final * unit * abs(value)
    return out


def hockey_stick_bound(
    mass_tail: np.ndarray,
    weighted_tail: np.ndarray,
    ones: np.ndarray,
    index: np.ndarray,
    factor: np.ndarray,
    upper: bool,
    terms: tuple[float, ...],
) -> np.ndarray:
    """The bound on delta at points given by segment ``index`` and ``factor``.

    ``index[k]`` is the first grid point above the (shifted) eps and ``factor[k] =
    exp(eps' - g_index)``; on that segment the hockey stick of the masses is
    ``mass_tail - factor * weighted_tail`` (Koskela et al. 2023, eq 2.1), and the weights
    ``(1 - exp(eps' - g_j))_+`` sum to ``count - factor * ones`` in closed form
    (``ones`` from :func:`geometric_sums`, aligned with the suffix sums).
    ``terms`` holds ``(mass_error, infinity_mass, junk_mass, error_max, error_l1,
    summation_error, final_rounding)`` (see :class:`pld.engine.loss_pmf.LossPmf`).
    The compiled loop and numpy give the same floats.
    """
    loop = _query_loop(_hockey_stick_loop, index.shape[0])
    if loop is not None:
        return loop(
            mass_tail,
            weighted_tail,
            ones,
            np.ascontiguousarray(index, dtype=np.int64),
            np.ascontiguousarray(factor, dtype=np.float64),
            upper,
            terms,
        )
    mass_error, infinity_mass, junk, error_max, error_l1, summation, final = terms
    size = mass_tail.shape[0] - 1
    tail = mass_tail[index]
    finite = np.maximum(tail - factor * weighted_tail[index], 0.0)
    count = (size - index).astype(np.float64)
    geometric = ones[index]
    weight_sum = np.maximum(count - factor * geometric, 0.0) + 4.0 * UNIT_ROUNDOFF * (
        count + geometric
    )
    slack = np.minimum(error_max * weight_sum, error_l1) + summation * tail
    if upper:
        value = finite * (1.0 + mass_error) + infinity_mass + slack
        return value * (1.0 + final * UNIT_ROUNDOFF)
    value = finite * (1.0 - mass_error) + infinity_mass - slack - junk
    return value - final * UNIT_ROUNDOFF * np.abs(value)


def _maxima_loop(
    mass_tail, weighted_tail, ones, index, count, beyond, decay, upper, terms, carry, out
):  # pragma: no cover - compiled
    """:func:`breakpoint_maxima` as one loop from the top down (compiled by numba)."""
    mass_error, infinity_mass, junk, error_max, error_l1, summation, final = terms
    size = mass_tail.shape[0] - 1
    unit = UNIT_ROUNDOFF
    running = carry
    total = count + (1 if beyond else 0)
    for p in range(total - 1, -1, -1):
        i = index + p if p < count else size
        x = decay if p < count else 1.0
        tail = mass_tail[i]
        finite = tail - x * weighted_tail[i]
        if finite < 0.0:
            finite = 0.0
        count_i = float(size - i)
        weight_sum = count_i - x * ones[i]
        if weight_sum < 0.0:
            weight_sum = 0.0
        weight_sum += 4.0 * unit * (count_i + ones[i])
        slack = error_max * weight_sum
        if slack > error_l1:
            slack = error_l1
        slack += summation * tail
        if upper:
            value = finite * (1.0 + mass_error) + infinity_mass + slack
            value = value * (1.0 + final * unit)
        else:
            value = finite * (1.0 - mass_error) + infinity_mass - slack - junk
            value = value - final * unit * abs(value)
        if value > running:
            running = value
        out[p] = running


def breakpoint_maxima(
    mass_tail: np.ndarray,
    weighted_tail: np.ndarray,
    ones: np.ndarray,
    index: int,
    count: int,
    beyond: bool,
    step: float,
    upper: bool,
    terms: tuple[float, ...],
    carry: float,
    out: np.ndarray,
) -> None:
    """Running maxima, from the top down, of the bound at consecutive breakpoints.

    The points are ``index + p`` for ``p < count`` at ``factor = exp(-step)`` (the
    bound at the grid point below each index) and, if ``beyond``, the end of the
    suffix arrays at ``factor = 1``; ``out[p]`` becomes the largest bound at points
    ``>= p`` and ``carry`` (the maxima above them; ``-inf`` for none). The bound
    is :func:`hockey_stick_bound`'s; the compiled loop and numpy give the same floats.
    """
    total = count + (1 if beyond else 0)
    loop = _query_loop(_maxima_loop, total)
    if loop is not None:
        loop(
            mass_tail,
            weighted_tail,
            ones,
            index,
            count,
            beyond,
            math.exp(-step),
            upper,
            terms,
            carry,
            out,
        )
        return
    points = np.arange(index, index + total)
    factor = np.full(total, math.exp(-step))
    if beyond:
        points[-1] = mass_tail.shape[0] - 1
        factor[-1] = 1.0
    values = hockey_stick_bound(mass_tail, weighted_tail, ones, points, factor, upper, terms)
    values[-1] = max(values[-1], carry)
    np.maximum.accumulate(values[::-1], out=out[::-1])


def _search_loop(
    mass_tail, weighted_tail, ones, low, high, decay, upper, terms, target, points, every
):  # pragma: no cover - compiled
    """:func:`first_at_or_below` as one loop (compiled by numba)."""
    mass_error, infinity_mass, junk, error_max, error_l1, summation, final = terms
    size = mass_tail.shape[0] - 1
    unit = UNIT_ROUNDOFF
    while high - low > 1:
        gap = high - low
        count = gap - 1 if gap - 1 <= every else points
        last = low  # no sentinel value: breakpoints can be negative (low may be -2)
        for s in range(1, count + 1):
            k = low + max(1, (s * gap) // (count + 1))
            if k > high - 1:
                k = high - 1
            i = k + 1
            tail = mass_tail[i]
            finite = tail - decay * weighted_tail[i]
            if finite < 0.0:
                finite = 0.0
            count_i = float(size - i)
            weight_sum = count_i - decay * ones[i]
            if weight_sum < 0.0:
                weight_sum = 0.0
            weight_sum += 4.0 * unit * (count_i + ones[i])
            slack = error_max * weight_sum
            if slack > error_l1:
                slack = error_l1
            slack += summation * tail
            if upper:
                value = finite * (1.0 + mass_error) + infinity_mass + slack
                value = value * (1.0 + final * unit)
            else:
                value = finite * (1.0 - mass_error) + infinity_mass - slack - junk
                value = value - final * unit * abs(value)
            if value <= target:
                high = k
                break
            last = k
        low = last
    return high


def first_at_or_below(
    mass_tail: np.ndarray,
    weighted_tail: np.ndarray,
    ones: np.ndarray,
    low: int,
    high: int,
    step: float,
    upper: bool,
    terms: tuple[float, ...],
    target: float,
    points: int,
    every: int,
) -> int | None:
    """The first breakpoint ``k`` in ``(low, high)`` (indices of the suffix arrays, the
    bound evaluated at ``k + 1``, ``factor = exp(-step)``) where the bound is at most
    ``target``, else ``high``: rounds of ``points`` evenly spaced breakpoints, or all
    left once at most ``every`` are, in one compiled loop; None when the loop is not
    loaded (the caller's numpy rounds visit the same breakpoints)."""
    loop = _query_loop(_search_loop, mass_tail.shape[0] - 1)
    if loop is None:
        return None
    return int(
        loop(
            mass_tail,
            weighted_tail,
            ones,
            low,
            high,
            math.exp(-step),
            upper,
            terms,
            target,
            points,
            every,
        )
    )
