"""One direction, one bound: a discrete privacy-loss pmf and its delta/epsilon queries.

A :class:`LossPmf` holds masses on the grid ``g_j = (offset + j) * step`` and the
mass at ``+inf``, together with the error terms that turn its hockey-stick value
into a bound:

    delta(eps) = infinity_mass + sum_j m_j (1 - exp(eps - g_j))_+        (Koskela et al. 2023, eq
    2.1)

* ``bound == "upper"``: the masses dominate the truth after rounding, aliasing
  and truncation (extra mass only raises delta); add the float round-off term.
* ``bound == "lower"``: the masses are dominated by the truth except for at most
  ``junk_mass`` of aliased mass; subtract it and the float round-off term.

Float round-off: every mass carries an error of at most ``error_max``, and the
error vector has 1-norm at most ``error_l1``; the slack on delta(eps) is
``min(error_max * sum_j w_j, error_l1)`` with ``w_j = (1 - exp(eps - g_j))_+``
(the weights are at most 1), see docs/error-bounds.md.

Loss positions: if every atom's loss may be off by at most ``loss_error`` nats
(float evaluation of the mechanism's log-ratios), the true composed loss is
within ``loss_error`` of the computed one, so ``delta_true(eps) <=
delta(eps - loss_error)`` and ``>= delta(eps + loss_error)``: the queries shift eps.

Mass values: if every finite mass may be off by a relative ``mass_error``, the
finite part of delta is scaled by ``1 + mass_error`` (upper) or ``1 - mass_error``
(lower).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from pld.engine import point_queries
from pld.engine.point_queries import FINAL_ROUNDING as _FINAL_ROUNDING
from pld.engine.point_queries import MAX_NUDGES as _MAX_NUDGES
from pld.engine.point_queries import NUDGE_GROWTH as _NUDGE_GROWTH
from pld.numerics import UNIT_ROUNDOFF

#: Suffix sums are computed for the top this many points first (rounded up to
#: whole blocks), then each further segment reaches ``_SUFFIX_GROWTH`` times as far
#: from the top (:meth:`LossPmf._suffix_from`): a query computes at most about
#: that many times the sums it needs.
_SUFFIX_FIRST = 4096
_SUFFIX_GROWTH = 2
#: Points per block of the suffix sums (:func:`pld.engine.kernels.suffix_sums`),
#: and the largest loss span of a block in nats (keeps exp(+-span) normal).
_SUFFIX_BLOCK = 1024
_SUFFIX_SPAN = 600.0
#: Positions (the candidate and its first moves) verified by the first evaluation.
_LADDER_FIRST = 8
#: eps queries locate the crossing breakpoint by a search that evaluates this many
#: breakpoints per round (a bisection generalised), or all of them once at most
#: _SEARCH_ALL are left: one round on 4e3 points, two on 2.6e5.
_SEARCH_POINTS = 64
_SEARCH_ALL = 4096
#: Queries on grids of up to this many points search the array of grid losses;
#: on larger ones they locate grid indices arithmetically (:meth:`LossPmf._index`).
_LOSSES_BUILT = 2**14
#: The lower bound's breakpoint maxima are computed from the top of the grid down,
#: in chunks of at least this many points (then doubling), as far as a query needs them.
_MAXIMA_CHUNK = 4096


@dataclass(frozen=True, eq=False)
class LossPmf:
    """Masses of one privacy-loss direction on an equidistant grid (one bound).

    ``step`` and ``loss_error`` are in nats; masses are probabilities.
    """

    step: float
    offset: int
    masses: np.ndarray
    infinity_mass: float
    bound: str
    junk_mass: float = 0.0
    error_max: float = 0.0
    error_l1: float = 0.0
    loss_error: float = 0.0
    mass_error: float = 0.0

    @functools.cached_property
    def losses(self) -> np.ndarray:
        """Grid loss values ``(offset + j) * step`` of the masses, in nats (read-only)."""
        losses = (self.offset + np.arange(self.masses.shape[0])) * self.step
        losses.flags.writeable = False
        return losses

    def _loss_at(self, index: np.ndarray) -> np.ndarray:
        """``losses[index]`` (the same floats) without building :attr:`losses`."""
        return (self.offset + np.asarray(index, dtype=np.int64)) * self.step

    def _index(self, values: np.ndarray, side: str) -> np.ndarray:
        """``np.searchsorted(self.losses, values, side)``, located arithmetically.

        Queries need a few grid indices, and on a large grid a fresh array of its
        losses costs more than they do (10^5 points: 0.7 ms on the 2-core machine,
        mostly page faults).
        """
        size = self.masses.shape[0]
        values = np.asarray(values, dtype=np.float64)
        if size <= _LOSSES_BUILT or "losses" in self.__dict__:
            return np.searchsorted(self.losses, values, side=side)
        with np.errstate(invalid="ignore", over="ignore"):
            guess = np.floor(values / self.step) - self.offset
        guess = np.where(np.isnan(values), size, guess)
        index = np.clip(guess, 0, size).astype(np.int64)
        while True:
            up = index < size
            down = index > 0
            at = self._loss_at(np.minimum(index, size - 1))
            before = self._loss_at(np.maximum(index - 1, 0))
            if side == "right":
                up &= at <= values
                down &= before > values
            else:
                up &= at < values
                down &= before >= values
            if not (up.any() or down.any()):
                return index
            index = index + up - down

    @functools.cached_property
    def finite_mass(self) -> float:
        """Total mass at finite losses (computed, including junk and round-off)."""
        return float(self.masses.sum())

    @property
    def error_floor(self) -> float:
        """Largest absolute amount a delta query adds (upper) or subtracts (lower) for
        the FFT's round-off and, for a lower bound, aliased mass (a probability).

        Brackets on delta values near or below this are dominated by it
        (docs/error-bounds.md §4, "The floor that remains"). The rounding of the
        query's own sums is relative to the mass beyond eps (below ``1e-12`` of it
        on grids of up to 10^6 points, §5) and not part of the floor.
        """
        roundoff = min(self.error_max * self.masses.shape[0], self.error_l1)
        return roundoff + (self.junk_mass if self.bound == "lower" else 0.0)

    def with_terms(self, **changes: float) -> LossPmf:
        """The same masses with other error terms, infinity or junk mass (fields of this
        class); shares the suffix sums, which depend on the masses and step alone."""
        copy = dataclasses.replace(self, **changes)
        if copy.masses is self.masses and copy.step == self.step:
            copy.__dict__["_suffixes"] = self._suffixes
        return copy

    def refined(self, factor: int) -> LossPmf:
        """The same pmf on the grid of step ``step / factor`` (exact: old points are new ones)."""
        if factor == 1:
            return self
        masses = np.zeros((self.masses.shape[0] - 1) * factor + 1 if self.masses.size else 0)
        masses[::factor] = self.masses
        return LossPmf(
            self.step / factor,
            self.offset * factor,
            masses,
            self.infinity_mass,
            self.bound,
            junk_mass=self.junk_mass,
            error_max=self.error_max,
            error_l1=self.error_l1,
            loss_error=self.loss_error,
            mass_error=self.mass_error,
        )

    @functools.cached_property
    def _suffixes(self) -> list:
        """Cache of :meth:`_suffix_from`: ``[start, mass_tail, weighted_tail, ones]``
        (``ones``: :func:`pld.engine.kernels.geometric_sums`)."""
        size = self.masses.shape[0]
        mass_tail, weighted_tail, ones = np.empty(size + 1), np.empty(size + 1), np.empty(size + 1)
        mass_tail[size] = weighted_tail[size] = ones[size] = 0.0
        return [size, mass_tail, weighted_tail, ones]

    def _suffix_from(self, start: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Suffix sums that make delta(eps) O(1) per query, from (at most) ``start`` up.

        For ``first <= i <= n`` (index ``n`` holds zeros): ``mass_tail[i - first] =
        sum_{j>=i} m_j`` and ``weighted_tail[i - first] = sum_{j>=i} m_j exp(g_i - g_j)``;
        returns ``(first, mass_tail, weighted_tail)``.

        The sums of :func:`pld.engine.kernels.suffix_sums` run in blocks aligned at
        the top of the grid, each from the carry of the blocks above it, so the sums
        over the top ``L`` points (``L`` a multiple of the block) are the sums of the
        whole grid there, bit for bit (:attr:`_suffix_starts` keeps one kernel
        path), with the same error bound (docs/error-bounds.md §5). They
        are computed as far down as queries need them: the top ``_SUFFIX_FIRST``
        points (rounded up to blocks), then segments reaching ``_SUFFIX_GROWTH`` times
        as far from the top each time; each point keeps the value of the first such
        segment that covers it, so the values depend on the pmf alone, not on the
        order of the queries.
        """
        from pld.engine.kernels import geometric_sums, suffix_sums

        cache = self._suffixes
        for low in self._suffix_starts:
            if start >= cache[0]:
                break
            have = cache[0]
            if low >= have:
                continue
            # The sums from low to have, carried down from those above have (numpy
            # sums them again, to the same floats).
            masses = np.ascontiguousarray(self.masses[low:], dtype=np.float64)
            out = (cache[1][low:], cache[2][low:])
            suffix_sums(masses, self.step, self._block, out, have - low)
            geometric_sums(self.masses.shape[0], low, have, self.step, cache[3][low:have])
            cache[0] = low
        first = cache[0]
        return first, cache[1][first:], cache[2][first:]

    @functools.cached_property
    def _suffix_starts(self) -> tuple[int, ...]:
        """Where the segments of :meth:`_suffix_from` start, from the top down (to 0).

        On a grid that the suffix sums' compiled loop would sum whole, every segment
        is longer than :data:`pld.engine.kernels.COMPILED_SIZE` too: one kernel path
        for the whole grid, bit for bit the sums of one pass.
        """
        from pld.engine.kernels import COMPILED_SIZE

        size = self.masses.shape[0]
        first = _SUFFIX_FIRST if size <= COMPILED_SIZE else COMPILED_SIZE + 1
        length = -(-first // self._block) * self._block
        # Small grids are summed whole: splitting them saves less than a call costs.
        starts = [max(0, size - length) if size > 3 * _SUFFIX_FIRST else 0]
        while starts[-1] > 0:
            length *= _SUFFIX_GROWTH
            starts.append(max(0, size - length))
        return tuple(starts)

    @property
    def _block(self) -> int:
        return max(1, min(_SUFFIX_BLOCK, int(_SUFFIX_SPAN / self.step)))

    @functools.cached_property
    def _summation_error(self) -> float:
        """Relative rounding error of the suffix sums and of one evaluation, as a
        multiple of ``mass_tail`` (docs/error-bounds.md §5)."""
        size = self.masses.shape[0]
        length = min(size, self._block)
        crossings = max(0, -(-size // self._block) - 1)
        plain = length - 1 + crossings
        # One point: exp(0) = 1 is exact and the discounted sum is the mass itself.
        discounted = 0 if size <= 1 else length + 6 + 4 * crossings
        return (plain + discounted + 5) * UNIT_ROUNDOFF

    @property
    def _terms(self) -> tuple[float, ...]:
        """The error terms as :func:`pld.engine.kernels.hockey_stick_bound` takes them."""
        return (
            self.mass_error,
            self.infinity_mass,
            self.junk_mass,
            self.error_max,
            self.error_l1,
            self._summation_error,
            _FINAL_ROUNDING,
        )

    def _evaluate(self, index: np.ndarray, factor: np.ndarray) -> np.ndarray:
        """The bound on the segment ``index`` at ``factor = exp(eps' - g_index)``.

        ``eps'`` is eps shifted by the loss-position error; ``index`` is the first grid
        point above it, so ``factor`` lies in ``(exp(-step), 1]``. On the segment,
        ``sum_j m_j (1 - exp(eps' - g_j))_+ = S_P - exp(eps') S_Q`` with the suffix sums
        of the P-masses and the Q-masses ``m_j exp(-g_j)`` (Koskela et al. 2023, eq 2.1); the
        error terms are added (upper) or subtracted (lower) as the module says.
        """
        from pld.engine.kernels import hockey_stick_bound

        index = np.ascontiguousarray(index, dtype=np.int64)
        first, mass_tail, weighted_tail = self._suffix_from(
            int(index.min()) if index.size else self.masses.shape[0]
        )
        return hockey_stick_bound(
            mass_tail,
            weighted_tail,
            self._suffixes[3][first:],
            index - first,
            np.ascontiguousarray(factor, dtype=np.float64),
            self.bound == "upper",
            self._terms,
        )

    def _segment(self, index: np.ndarray) -> tuple[np.ndarray, ...]:
        """Suffix sums of the masses, discounted masses, ones and discounted ones at ``index``."""
        first, mass_tail, weighted_tail = self._suffix_from(
            int(index.min()) if index.size else self.masses.shape[0]
        )
        return (
            mass_tail[index - first],
            weighted_tail[index - first],
            (self.masses.shape[0] - index).astype(np.float64),
            self._suffixes[3][index],
        )

    def _shifted(self, eps: np.ndarray) -> np.ndarray:
        """eps moved by the loss-position error, to the side that keeps the bound valid."""
        return eps - self.loss_error if self.bound == "upper" else eps + self.loss_error

    def _raw_delta(self, shifted: np.ndarray) -> np.ndarray:
        """Hockey stick of the masses plus (upper) or minus (lower) the error terms."""
        size = self.masses.shape[0]
        index = self._index(shifted, "right")
        next_loss = self._loss_at(np.minimum(index, size - 1)) if size else np.zeros(index.shape)
        factor = np.where(index < size, np.exp(np.minimum(shifted - next_loss, 0.0)), 1.0)
        return self._evaluate(index, factor)

    @functools.cached_property
    def _maxima(self) -> list:
        """Cache of :meth:`_grid_maxima`: ``[start, values]``, ``values[start:]`` filled."""
        size = self.masses.shape[0]
        return [size + 1, np.empty(size + 1)]

    def _grid_maxima(self, start: int) -> tuple[int, np.ndarray]:
        """Lower bound: ``max_{k >= j}`` of the raw bound at ``eps' = g_k`` for ``j`` from
        (at most) ``start`` to ``n``, the value of the lower curve at its breakpoints
        (index ``n``: beyond the last grid point). Returns ``(first, values)`` with
        ``values[j - first]``; computed from the top down, as far as asked, and kept."""
        from pld.engine.kernels import breakpoint_maxima

        cache = self._maxima
        size = self.masses.shape[0]
        start = max(start, 0)
        values = cache[1]
        # Chunks of _MAXIMA_CHUNK, then doubling what is covered: the same chunks
        # whatever the queries asked, so the values depend on the pmf alone.
        while start < cache[0]:
            have = cache[0]
            low = max(0, have - max(_MAXIMA_CHUNK, size + 1 - have))
            if low < _MAXIMA_CHUNK // 2:
                low = 0  # the rest in the same chunk: a call costs more than it saves
            stop = min(have, size)
            first, mass_tail, weighted_tail = self._suffix_from(min(low + 1, size))
            breakpoint_maxima(
                mass_tail,
                weighted_tail,
                self._suffixes[3][first:],
                low + 1 - first,
                stop - low,
                have > size,
                self.step,
                self.bound == "upper",
                self._terms,
                float(values[have]) if have <= size else -math.inf,
                values[low:have],
            )
            cache[0] = low
        return cache[0], values[cache[0] :]

    def delta(self, eps: np.ndarray) -> np.ndarray:
        """Bound on delta(eps) = H_{exp(eps)}(P || Q) for an array of eps (nats).

        Upper bounds are non-increasing in eps by construction. A lower bound
        ``raw(eps)`` is replaced by ``max_{eps' >= eps} raw(eps')`` over the grid
        breakpoints, still a lower bound because the true delta is non-increasing.
        """
        eps = np.asarray(eps, dtype=np.float64)
        if eps.shape == (1,):
            return np.array([point_queries.delta(self, float(eps[0]))])
        shifted = self._shifted(eps)
        raw = self._raw_delta(shifted)
        if self.bound == "lower" and raw.size:
            index = self._index(shifted, "left")
            first, values = self._grid_maxima(int(index.min()))
            raw = np.maximum(raw, values[index - first])
        return np.clip(raw, 0.0, 1.0)

    def epsilon(self, delta: float | np.ndarray) -> float | np.ndarray:
        """Smallest eps >= 0 with ``self.delta(eps) <= delta`` (``inf`` if none), per delta.

        One pass: the bound's values at the grid breakpoints locate the segment of
        the crossing, where delta(eps) = S_P - e^eps S_Q (plus affine error terms)
        is solved in closed form. The candidate is then checked against
        :meth:`delta` and nudged, so that an upper bound satisfies
        ``delta_upper(eps) <= delta`` (hence is never below the true crossing) and
        a lower bound satisfies ``delta_lower(eps) > delta`` or is 0 (hence never
        above it). Accepts a scalar (returns a float) or an array of delta.
        """
        scalar = np.ndim(delta) == 0
        targets = np.atleast_1d(np.asarray(delta, dtype=np.float64))
        if targets.shape == (1,):
            one = (
                point_queries.epsilon_upper
                if self.bound == "upper"
                else point_queries.epsilon_lower
            )
            value = one(self, float(targets[0]))
            return value if scalar else np.array([value])
        if self.bound == "upper":
            result = self._epsilon_upper(targets)
        else:
            result = self._epsilon_lower(targets)
        return float(result[0]) if scalar else result

    def _index_one(self, value: float, side: str) -> int:
        """:meth:`_index` of one float, in Python arithmetic (the same grid floats)."""
        size = self.masses.shape[0]
        if value != value:
            return size
        if math.isinf(value):
            return size if value > 0 else 0
        offset, step = self.offset, self.step
        ratio = value / step - offset
        index = size if ratio >= size else (int(ratio) if ratio > 0.0 else 0)
        if side == "right":
            while index < size and (offset + index) * step <= value:
                index += 1
            while index > 0 and (offset + index - 1) * step > value:
                index -= 1
        else:
            while index < size and (offset + index) * step < value:
                index += 1
            while index > 0 and (offset + index - 1) * step >= value:
                index -= 1
        return index

    def _first_at_or_below(
        self, targets: np.ndarray, low: np.ndarray, high: np.ndarray
    ) -> np.ndarray:
        """Per target, the first breakpoint ``k`` in ``(low, high)`` where the upper bound
        at ``eps' = g_k`` is at most the target, or ``high`` if there is none (the
        bound being non-increasing, a generalised bisection: ``_SEARCH_POINTS``
        breakpoints evaluated per round, or all that are left). Each target's rounds
        depend on its own bracket alone, so an array of targets gets, elementwise,
        the breakpoints each target would get alone."""
        decay = math.exp(-self.step)
        low, high = low.copy(), high.copy()
        while True:
            gap = high - low
            active = np.flatnonzero(gap > 1)
            if active.size == 0:
                return high
            gap = gap[active, None]
            # Points strictly inside (low, high): all of them on short gaps, else
            # _SEARCH_POINTS evenly spaced; rows with fewer points repeat their last.
            count = np.where(gap - 1 <= _SEARCH_ALL, gap - 1, _SEARCH_POINTS)
            steps = np.minimum(np.arange(1, int(count.max()) + 1), count)
            inside = np.minimum(
                low[active, None] + np.maximum(1, (steps * gap) // (count + 1)),
                high[active, None] - 1,
            )
            values = self._evaluate(inside.ravel() + 1, np.full(inside.size, decay))
            below = values.reshape(inside.shape) <= targets[active, None]
            crossing = np.argmax(below, axis=1)
            rows = np.arange(active.size)
            found = below[rows, crossing]
            high[active] = np.where(found, inside[rows, crossing], high[active])
            before = np.where(found, crossing - 1, count[:, 0] - 1)
            low[active] = np.where(before >= 0, inside[rows, np.maximum(before, 0)], low[active])

    def _first_at_or_below_one(self, target: float, low: int, high: int) -> int:
        """:meth:`_first_at_or_below` of one target (the same breakpoints, less glue)."""
        from pld.engine.kernels import first_at_or_below

        decay = math.exp(-self.step)
        low, high = int(low), int(high)
        if high - low > 1:
            first, mass_tail, weighted_tail = self._suffix_from(low + 2)
            found = first_at_or_below(
                mass_tail,
                weighted_tail,
                self._suffixes[3][first:],
                low - first,
                high - first,
                self.step,
                self.bound == "upper",
                self._terms,
                target,
                _SEARCH_POINTS,
                _SEARCH_ALL,
            )
            if found is not None:
                return found + first
        while high - low > 1:
            gap = high - low
            count = gap - 1 if gap - 1 <= _SEARCH_ALL else _SEARCH_POINTS
            inside = np.minimum(
                low + np.maximum(1, (np.arange(1, count + 1) * gap) // (count + 1)), high - 1
            )
            below = self._evaluate(inside + 1, np.full(count, decay)) <= target
            crossing = int(below.argmax())
            if below[crossing]:
                high = int(inside[crossing])
                low = int(inside[crossing - 1]) if crossing > 0 else low
            else:
                low = int(inside[-1])
        return high

    def _epsilon_upper(self, targets: np.ndarray) -> np.ndarray:
        size = self.masses.shape[0]
        result = np.full(targets.shape, math.inf)
        first = self._index_one(-self.loss_error, "right")
        # The first breakpoint at positive eps where the (non-increasing) bound is at or
        # below each target, bracketed from the top down between the starts of the
        # suffix sums' segments (so that a tail query computes no more of them than
        # it needs), then located by a search with O(log n) evaluations.
        low = np.full(targets.shape, first - 1, dtype=np.int64)
        high = np.full(targets.shape, size, dtype=np.int64)
        pending = np.arange(targets.size)
        for start in self._suffix_starts:
            if pending.size == 0 or start <= first:
                break
            value = self._evaluate(
                np.full(pending.shape, start + 1), np.full(pending.shape, math.exp(-self.step))
            )
            above = value > targets[pending]
            low[pending[above]] = start
            high[pending[~above]] = start
            pending = pending[~above]
        if first < size:
            high = self._first_at_or_below(targets, low, high)
        # Where even the first positive breakpoint is at or below the target (or there
        # is none), the answer may be 0: delta(0) decides.
        at_first = high <= first
        if at_first.any():
            at_zero = self.delta(np.zeros(1))[0]
            result[at_first & (targets >= at_zero)] = 0.0
        open_ = np.flatnonzero((result == math.inf) & (high < size))
        if open_.size == 0:
            return result
        right = high[open_]
        target = targets[open_]
        s, w, c, o = self._segment(right)
        grow = 1 + self.mass_error
        base = grow * s + self.infinity_mass + self._summation_error * s - target
        with np.errstate(divide="ignore", invalid="ignore"):
            linear = (base + self.error_max * c) / (grow * w + self.error_max * o)
            capped = (base + self.error_l1) / (grow * w)
            factor = np.fmin(linear, capped)
            at_right = self._loss_at(right)
            low = np.where(right > first, self._loss_at(right - 1) + self.loss_error, 0.0)
            high = at_right + self.loss_error
            candidate = at_right + np.log(factor) + self.loss_error
        candidate = np.where(np.isfinite(candidate), candidate, high)
        candidate = np.minimum(np.maximum(candidate, low), high)
        result[open_] = self._nudge(candidate, target, high, upward=True)
        return result

    def _epsilon_lower(self, targets: np.ndarray) -> np.ndarray:
        size = self.masses.shape[0]
        result = np.zeros(targets.shape)
        beyond = self._grid_maxima(size)[1][-1]
        if beyond > 0.0:
            result[targets < beyond] = math.inf
        first = self._index_one(self.loss_error, "right")
        open_ = np.flatnonzero(result == 0.0)
        if open_.size == 0 or first >= size:
            return result
        # The breakpoint maxima (non-increasing) from the top down, until they exceed
        # every target or reach eps = 0: the crossings lie above where they stop.
        goal = float(targets[open_].max())
        start = size
        while True:
            low, values = self._grid_maxima(start)
            if low <= first or values[0] > goal:
                break
            start = low - 1
        zero = self._index_one(self.loss_error, "left")
        if not (values[max(zero - low, 0)] > goal and goal < 1.0):
            # Otherwise every target is below the maxima at eps' = 0 (or above it, at
            # g_low), hence below delta(0) (the lower curve's value there is at
            # least theirs).
            open_ = open_[targets[open_] < self.delta(np.zeros(1))[0]]
            if open_.size == 0:
                return result
        # The first breakpoint at or below the target ends the segment where the
        # lower curve crosses it.
        skip = max(0, low - first)
        position = skip + np.searchsorted(
            -values[first + skip - low : size - low], -targets[open_], side="left"
        )
        found = position < size - first
        if not found.all():
            # Above every breakpoint: the crossing lies beyond the last grid point.
            last = open_[~found]
            result[last] = self._nudge(
                np.full(last.shape, self._loss_at(size - 1) - self.loss_error),
                targets[last],
                np.zeros(last.shape),
                upward=False,
            )
            open_, position = open_[found], position[found]
        right = first + position
        target = targets[open_]
        s, w, c, o = self._segment(right)
        shrink = 1 - self.mass_error
        base = shrink * s + self.infinity_mass - self._summation_error * s - self.junk_mass - target
        at_right = self._loss_at(right)
        low = np.where(position > 0, self._loss_at(right - 1) - self.loss_error, 0.0)
        high = at_right - self.loss_error
        low_factor = np.exp(np.minimum(low + self.loss_error - at_right, 0.0))
        # The raw lower bound is max(linear, capped) in factor = exp(eps' - g_right):
        # keep the largest factor in [low_factor, 1] where either exceeds the target.
        best = np.full(open_.shape, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            for intercept, slope in (
                (base - self.error_max * c, self.error_max * o - shrink * w),
                (base - self.error_l1, -shrink * w),
            ):
                root = np.minimum(-intercept / slope, 1.0)
                at_top = np.where(intercept + slope > 0, 1.0, -np.inf)
                factor = np.where(slope < 0, root, at_top)
                best = np.maximum(best, np.where(factor >= low_factor, factor, -np.inf))
            candidate = at_right + np.log(best) - self.loss_error
        candidate = np.where(np.isfinite(candidate), candidate, low)
        candidate = np.minimum(np.maximum(candidate, low), high)
        result[open_] = self._nudge(candidate, target, low, upward=False)
        return result

    def _nudge(
        self, candidate: np.ndarray, target: np.ndarray, fallback: np.ndarray, *, upward: bool
    ) -> np.ndarray:
        """Move candidates until the bound is verified: ``delta(eps) <= target`` when
        ``upward`` (upper bound), ``delta(eps) > target`` or ``eps == 0`` otherwise.

        Each candidate moves by steps growing ``_NUDGE_GROWTH``-fold from 4 ulps,
        clamped at ``fallback``, until verified; the positions after each move are
        the running sums of the steps (one addition each, as when moving one step at
        a time), so a ladder of them is verified in one evaluation
        (``_LADDER_FIRST`` rungs first, then the rest).
        """
        candidate = candidate.copy()
        if candidate.size == 0:
            return candidate
        sign = 1.0 if upward else -1.0
        first = 4 * UNIT_ROUNDOFF * np.maximum(1.0, np.abs(candidate))
        moves = sign * _NUDGE_GROWTH ** np.arange(_MAX_NUDGES, dtype=np.float64)
        ladder = np.cumsum(
            np.concatenate([candidate[:, None], first[:, None] * moves], axis=1), axis=1
        )
        clamp = np.minimum if upward else np.maximum
        ladder[:, 1:] = np.maximum(clamp(ladder[:, 1:], fallback[:, None]), 0.0)
        bad = np.arange(candidate.size)
        for rungs in (slice(0, _LADDER_FIRST), slice(_LADDER_FIRST, None)):
            tried = ladder[bad, rungs]
            bound = self.delta(tried.ravel()).reshape(tried.shape)
            goal = target[bad, None]
            passed = bound <= goal if upward else (bound > goal) | (tried <= 0.0)
            rung = np.argmax(passed, axis=1)
            rows = np.arange(bad.size)
            done = passed[rows, rung]
            candidate[bad[done]] = tried[rows[done], rung[done]]
            bad = bad[~done]
            if bad.size == 0:
                return candidate
        candidate[bad] = ladder[bad, -1]
        return self._walk_to_breakpoints(candidate, target, bad, upward=upward)

    def _walk_to_breakpoints(
        self, candidate: np.ndarray, target: np.ndarray, bad: np.ndarray, *, upward: bool
    ) -> np.ndarray:
        """Candidates ``bad``, still unverified after every nudge, moved to the
        neighbouring breakpoints (where the bound is known) until verified."""

        def failing(values: np.ndarray, goal: np.ndarray) -> np.ndarray:
            bound = self.delta(values)
            return bound > goal if upward else (bound <= goal) & (values > 0.0)

        while bad.size:
            points = self.losses + (self.loss_error if upward else -self.loss_error)
            if upward:
                index = np.searchsorted(points, candidate[bad], side="right")
                candidate[bad] = np.where(
                    index < points.shape[0], points[np.minimum(index, points.shape[0] - 1)], np.inf
                )
                bad = bad[np.isfinite(candidate[bad])]
            else:
                index = np.searchsorted(points, candidate[bad], side="left") - 1
                candidate[bad] = np.where(index >= 0, points[np.maximum(index, 0)], 0.0)
                candidate[bad] = np.maximum(candidate[bad], 0.0)
            bad = bad[failing(candidate[bad], target[bad])]
        return candidate
