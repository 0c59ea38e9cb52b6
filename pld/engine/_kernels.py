"""Numba kernels of the discretisation (loops over atoms and over grid cells).

Imported lazily by :mod:`pld.engine.discretise`, so that ``import pld`` does not
load numba. Both kernels are serial (``parallel=True`` next to threaded FFTs
slows the FFTs down, see ``shared/notes/measurements.md``) and cached on disk.

Notation: the loss grid is ``g_k = k * h``; cell ``k`` is ``[g_k, g_{k+1})``. For
an atom of P-mass ``p`` at loss ``l = g_k + r`` with ``0 <= r < h``, its position
in ``y = exp(-loss)`` coordinates, relative to ``y_k = exp(-g_k)``, is
``exp(-r) = 1 - theta * (1 - exp(-h))`` with ``theta = (1 - exp(-r)) / (1 - exp(-h))``
in ``[0, 1)``: ``theta`` is the linear position of the atom between ``y_k``
(``theta = 0``) and ``y_{k+1}`` (``theta = 1``).
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, error_model="numpy")
def scatter_cells(loss, mass, snap, step, first_cell, n_cells):  # pragma: no cover - compiled
    """Sum, per grid cell, the P-mass and its share at the cell's two grid points.

    An atom within ``snap[i]`` nats of a grid point is placed on it: its
    computed loss carries float error of that order, and
    :func:`pld.engine.discretise.loss_rounding_error` budgets for the move.

    Returns ``(to_left, to_right)``: for cell ``k``, ``to_left[k]`` is the P-mass
    that the dominating split of Doroshenko et al. (2022) sends to ``g_k`` and
    ``to_right[k]`` the mass sent to ``g_{k+1}``; the split keeps the P-mean of
    ``exp(-loss)`` (that is, the Q-mass) of every atom. Their sum is the cell's
    P-mass and ``to_right / (to_left + to_right)`` is the cell's mean ``theta``.
    Callers leave a spare cell on top, so every atom lands in a cell; an atom
    outside the cells would be moved up to the nearest end (never down).
    """
    to_left = np.zeros(n_cells)
    to_right = np.zeros(n_cells)
    denominator = -math.expm1(-step)
    for i in range(loss.shape[0]):
        p = mass[i]
        if p <= 0.0:
            continue
        x = loss[i]
        nearest = round(x / step)
        if abs(x - nearest * step) <= snap[i]:
            k = nearest
            r = 0.0
        else:
            k = math.floor(x / step)
            r = x - k * step
            if r < 0.0:
                k -= 1
                r = x - k * step
            elif r >= step:
                k += 1
                r = x - k * step
        cell = k - first_cell
        if cell < 0:  # below the first grid point (callers prevent it): move up
            to_left[0] += p
            continue
        if cell >= n_cells:  # never round down: the top grid point is above the atom
            to_right[n_cells - 1] += p
            continue
        if r < 0.0:
            r = 0.0
        share_right = -math.expm1(-r) / denominator
        if share_right > 1.0:
            share_right = 1.0
        to_right[cell] += p * share_right
        to_left[cell] += p * (math.expm1(-r) - math.expm1(-step)) / denominator
    return to_left, to_right


@numba.njit(cache=True, error_model="numpy")
def _relative_y(cell, theta, target, step, shrink):  # pragma: no cover - compiled
    """y = exp(-loss) of the atom (cell, theta), divided by y at grid point ``target``."""
    return math.exp(-step * (cell - target)) * (1.0 - theta * shrink)


@numba.njit(cache=True, error_model="numpy")
def contract_cells(cell_mass, cell_theta, step, max_gap):  # pragma: no cover - compiled
    """A pair dominated by the cells' atoms, supported on the grid (lower bound).

    Works in ``y = exp(-loss)`` coordinates under P, where the hockey-stick
    divergence is ``E_P[(1 - e^eps * Y)_+]``, a convex decreasing function of Y.
    Two operations never increase it, for one round and for any composition:
    merging atoms (a contraction in convex order; a post-processing of the pair)
    and moving an atom to larger y, i.e. a lower loss, keeping its P-mass (its
    Q-mass grows, which lowers every hockey-stick divergence, including both
    branches of the subsampling profile of seed 004 eq 2.3).

    Two sweeps run from both ends towards the heaviest cell. Each carries an
    atom and pulls just enough mass from the next occupied cell's atom, if it
    lies at most ``max_gap`` cells away, to land the merged atom exactly on the
    grid point the carry is heading for. When the next atom is farther, or holds
    too little mass, the carry is moved down in loss to its cell's left point
    instead (the classic optimistic rounding). Where occupied cells are close,
    the error is of second order in the grid step, against first order for
    plain rounding.

    Returns the P-masses on the grid points ``g_first .. g_{first + n_cells}``.
    """
    n_cells = cell_mass.shape[0]
    out = np.zeros(n_cells + 1)
    if n_cells == 0:
        return out
    shrink = -math.expm1(-step)
    mode = 0
    for k in range(n_cells):
        if cell_mass[k] > cell_mass[mode]:
            mode = k

    # Sweep A: from the highest-loss cell down to the mode (increasing y). The
    # carry sits in cell a_cell at a_theta, below its target g_{a_cell} in y.
    a_weight = 0.0
    a_theta = 0.0
    a_cell = -1
    for k in range(n_cells - 1, mode - 1, -1):
        m = cell_mass[k]
        if m <= 0.0:
            continue
        theta = cell_theta[k]
        if a_cell >= 0 and a_theta > 0.0 and a_cell - k <= max_gap:
            carry = 1.0 - a_theta * shrink
            other = _relative_y(k, theta, a_cell, step, shrink)
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
    for k in range(0, mode):
        m = cell_mass[k]
        if m <= 0.0:
            continue
        theta = cell_theta[k]
        if b_cell >= 0 and b_theta > 0.0 and k - b_cell <= max_gap:
            target = b_cell + 1
            carry = _relative_y(b_cell, b_theta, target, step, shrink)
            other = _relative_y(k, theta, target, step, shrink)
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
        carry = 1.0 - a_theta * shrink
        other = _relative_y(b_cell, b_theta, a_cell, step, shrink)
        pull = a_weight * (1.0 - carry) / (other - 1.0)
        if pull <= b_weight:
            out[a_cell] += a_weight + pull
            out[b_cell] += b_weight - pull
            return out
        target = b_cell + 1
        carry = _relative_y(b_cell, b_theta, target, step, shrink)
        other = _relative_y(a_cell, a_theta, target, step, shrink)
        pull = b_weight * (carry - 1.0) / (1.0 - other)
        if b_theta > 0.0 and pull <= a_weight:
            out[target] += b_weight + pull
            out[a_cell] += a_weight - pull
            return out
    if a_cell >= 0:
        out[a_cell] += a_weight
    if b_cell >= 0:
        out[b_cell] += b_weight
    return out


@numba.njit(cache=True, error_model="numpy")
def suffix_sums(masses, step, block):  # pragma: no cover - compiled
    """Suffix sums of the masses, plain and discounted by ``exp(-step)`` per grid point.

    Returns ``(mass_tail, weighted_tail)`` of length ``n + 1`` (index ``n`` holds
    zeros): ``mass_tail[i] = sum_{j >= i} m_j`` and ``weighted_tail[i] = sum_{j >= i}
    m_j exp(-step (j - i))``. Blocks of ``block`` points are summed with exact-to-an-ulp
    powers ``exp(-step k)``, ``k <= block``, and carried from block to block, so the
    relative error of every term is at most ``block + 5`` units from its own block
    plus 4 units per block boundary crossed (docs/error-bounds.md §5); all terms
    are non-negative and nothing overflows.
    """
    size = masses.shape[0]
    mass_tail = np.zeros(size + 1)
    weighted_tail = np.zeros(size + 1)
    down = np.empty(block + 1)
    up = np.empty(block + 1)
    for k in range(block + 1):
        down[k] = math.exp(-step * k)
        up[k] = math.exp(step * k)
    carry_mass = 0.0
    carry_weighted = 0.0
    end = size
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


@numba.njit(cache=True, error_model="numpy")
def hockey_stick_bound(
    mass_tail, weighted_tail, index, factor, step, upper, terms
):  # pragma: no cover - compiled
    """The bound on delta at points given by segment ``index`` and ``factor``.

    ``index[k]`` is the first grid point above the (shifted) eps and ``factor[k] =
    exp(eps' - g_index)``; on that segment the hockey stick of the masses is
    ``mass_tail - factor * weighted_tail`` (seed 004, eq 2.1), and the weights
    ``(1 - exp(eps' - g_j))_+`` sum to ``count - factor * ones`` in closed form.
    ``terms`` holds ``(mass_error, infinity_mass, junk_mass, error_max, error_l1,
    summation_error, final_rounding)`` (see :class:`pld.engine.loss_pmf.LossPmf`).
    """
    mass_error, infinity_mass, junk, error_max, error_l1, summation, final = terms
    size = mass_tail.shape[0] - 1
    unit = 2.0**-53
    denominator = -math.expm1(-step)
    out = np.empty(index.shape[0])
    for k in range(index.shape[0]):
        i = index[k]
        x = factor[k]
        tail = mass_tail[i]
        finite = tail - x * weighted_tail[i]
        if finite < 0.0:
            finite = 0.0
        count = float(size - i)
        ones = -math.expm1(-step * (size - i)) / denominator
        weight_sum = count - x * ones
        if weight_sum < 0.0:
            weight_sum = 0.0
        weight_sum += 4.0 * unit * (count + ones)
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


@numba.njit(cache=True, error_model="numpy")
def suffix_maximum(values):  # pragma: no cover - compiled
    """``out[i] = max_{j >= i} values[j]``."""
    out = np.empty(values.shape[0])
    best = -np.inf
    for i in range(values.shape[0] - 1, -1, -1):
        if values[i] > best:
            best = values[i]
        out[i] = best
    return out


@numba.njit(cache=True, error_model="numpy")
def log_mgf(masses, offset, step, t):  # pragma: no cover - compiled
    """``log sum_j m_j exp(t_k (offset + j) step)`` for each ``t_k``, by Horner's rule.

    With ``r = exp(|t| step) >= 1`` the sum is a polynomial in ``r``: evaluated
    from the top atom down for ``t >= 0`` (``exp(t offset step) sum_j m_j r^j``)
    and from the bottom atom up for ``t < 0`` (``exp(t (offset + n - 1) step)
    sum_j m_j r^(n-1-j)``). Accumulators above ``2^900`` are rescaled by ``2^-900``
    together with the masses still to come (which are then below 2^-900 of the
    accumulator, so their underflow changes it by less than ``n 2^-900``
    relatively); the check interval keeps every accumulator finite. All terms
    are non-negative, so the relative error is at most ``(4 n + 4) u`` (two
    roundings per step and the ulp of ``r`` raised to at most ``n``). ``t`` with
    ``|t| step > 600`` (where ``r`` itself would overflow) take a log-sum-exp.
    """
    size = masses.shape[0]
    count = t.shape[0]
    out = np.full(count, -np.inf)
    big = 2.0**900
    log_big = 900.0 * math.log(2.0)
    for direction in (1, -1):
        chosen = np.array(
            [
                k
                for k in range(count)
                if (t[k] >= 0.0) == (direction == 1) and abs(t[k]) * step <= 600.0
            ],
            dtype=np.int64,
        )
        width = chosen.shape[0]
        if width == 0:
            continue
        ratio = np.empty(width)
        largest = 0.0
        for c in range(width):
            rate = abs(t[chosen[c]]) * step
            ratio[c] = math.exp(rate)
            largest = max(largest, rate)
        acc = np.zeros(width)
        weight = np.ones(width)
        scale = np.zeros(width)
        interval = max(1, int(60.0 / largest)) if largest > 0.0 else size + 1
        for i in range(size):
            m = masses[size - 1 - i] if direction == 1 else masses[i]
            for c in range(width):
                acc[c] = acc[c] * ratio[c] + m * weight[c]
            if i % interval == 0:
                for c in range(width):
                    if acc[c] > big:
                        acc[c] /= big
                        weight[c] /= big
                        scale[c] += log_big
        base = offset if direction == 1 else offset + size - 1
        for c in range(width):
            if acc[c] > 0.0:
                k = chosen[c]
                out[k] = math.log(acc[c]) + scale[c] + t[k] * base * step
    for k in range(count):
        if abs(t[k]) * step <= 600.0:
            continue
        peak = -np.inf
        for j in range(size):
            if masses[j] > 0.0:
                peak = max(peak, math.log(masses[j]) + t[k] * (offset + j) * step)
        if peak > -np.inf:
            total = 0.0
            for j in range(size):
                if masses[j] > 0.0:
                    total += math.exp(math.log(masses[j]) + t[k] * (offset + j) * step - peak)
            out[k] = peak + math.log(total)
    return out
