"""A bracket of one blanket term without a lattice: geometric buckets of ``V``.

Where ``e^eps`` is large against the spread of the other users' terms (small noise,
large eps) the lattice of :mod:`pld.shuffling.blanket.continuous_terms` cannot reach
the values that matter: the others' sum is about ``-n e^eps``, and one report
``V`` of that size decides the positive part. This module bounds eq. (1) of
:mod:`pld.shuffling.blanket.continuous` on buckets ``[v_b, v_{b+1}]`` of ``V`` with a
fixed ratio, whose masses and means are the law's closed forms or Gauss-Legendre
sums (docs/blanket-continuous.md §4e):

* upper: the reports beyond a cut ``c >= e^eps`` (``P``) one jump at a time (§4d),
  with ``G(x) = E[(x + R)_+]`` and the no-jump part by Chernoff on the exact
  bucket MGF (each bucket's mass moved to its ends with its mean kept, which raises
  ``E[e^{theta Z}]``, and ``E[G; bucket]``, for convex functions); the best of a
  ladder of cuts;
* lower: one report beyond a cut, the others' reports truncated below ``w`` on the
  branch ``1 - e^eps V`` and Jensen given the jump; the best of a ladder of
  ``(c, w)``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from pld.numerics import UNIT_ROUNDOFF
from pld.numerics.iid_sums import log_sum_exp, mgf_log_error
from pld.shuffling.blanket.continuous_law import VLaw
from pld.shuffling.blanket.continuous_terms import CLOSED_FORM_ERROR, MASS_ERROR

#: Ratio between consecutive bucket ends of ``V``.
BUCKET_RATIO = 1.02
#: Buckets reach the quantile of ``V`` of this upper tail mass (beyond: closed forms).
_NEGLIGIBLE = 1e-30
#: Exponents of the Chernoff bounds (log-spaced; any exponent gives a valid bound).
_EXPONENTS = 96
#: Cuts of the upper bound and of the lower bound's jump, and truncations of the latter.
_CUTS = 12
_TRUNCATIONS = 32
#: Relative error of each bucket's mean (its offset from the lower end, relative to
#: the bucket; the masses' is ``MASS_ERROR``, the closed forms' ``CLOSED_FORM_ERROR``).
_MEAN_ERROR = 1e-9


def far_bracket(law: VLaw, n: int, alpha: float) -> tuple[float, float]:
    """(lower, upper) of ``(1/n) E[(S)_+]`` (eq. (1)) at ``alpha = e^eps >= 1``, lattice-free.

    Parameters
    ----------
    law : VLaw
        The randomizer's blanket law.
    n : int
        Number of users, >= 1.
    alpha : float
        ``e^eps``, >= 1.

    Returns
    -------
    lower, upper : float
        Valid bounds (module docstring), ``0 <= lower <= upper``; the upper one may be
        ``inf`` where no cut applies.
    """
    top = min(law.quantile_above(_NEGLIGIBLE), law.v_max)
    if top <= alpha:
        return 0.0, math.inf
    buckets = _buckets(law, top).split_at(law, alpha)
    lower = _jump_lower(law, n, alpha, top)
    upper = _chernoff_upper(law, buckets, n, alpha)
    return lower, max(upper, lower)


class _Buckets:
    """Buckets ``[a_b, a_{b+1}]`` of ``V`` from 1 to ``top``: masses and the shares that
    move each bucket's mass to its two ends with its mean kept (rounded up by the
    mean's error bound, so that every convex function's bucket integral is raised)."""

    def __init__(self, ends: np.ndarray, exact_mass: np.ndarray, weight_low: np.ndarray):
        self.ends = ends
        self.exact_mass = exact_mass
        self.weight_low = weight_low
        self.mass = exact_mass * (1 + MASS_ERROR)
        self.low_share = np.minimum(weight_low + _MEAN_ERROR, 1.0)
        self.high_share = np.minimum(1.0 - weight_low + _MEAN_ERROR, 1.0)
        self.log_low, self.log_high = np.log(self.low_share), np.log(self.high_share)
        with np.errstate(divide="ignore"):
            self.log_mass = np.log(self.mass)

    @classmethod
    def of(cls, law: VLaw, top: float) -> _Buckets:
        count = max(1, math.ceil(math.log(top) / math.log(BUCKET_RATIO)))
        ends = np.exp(np.linspace(0.0, math.log(top), count + 1))
        ends[0], ends[-1] = 1.0, top
        return cls(ends, *_cells(law, ends[:-1], ends[1:]))

    def split_at(self, law: VLaw, value: float) -> _Buckets:
        """The same buckets with the one holding ``value`` split there (a cut exactly at
        ``e^eps``: every report below it on the branch ``V - alpha`` is at most 0)."""
        k = int(np.searchsorted(self.ends, value))
        if k == 0 or k == self.ends.shape[0] or self.ends[k] == value:
            return self
        mass, weight_low = _cells(
            law, np.array([self.ends[k - 1], value]), np.array([value, self.ends[k]])
        )
        return _Buckets(
            np.insert(self.ends, k, value),
            np.concatenate((self.exact_mass[: k - 1], mass, self.exact_mass[k:])),
            np.concatenate((self.weight_low[: k - 1], weight_low, self.weight_low[k:])),
        )

    def log_chords(self, exponent_low: np.ndarray, exponent_high: np.ndarray) -> np.ndarray:
        """``log E[e^{f(V)}; bucket]`` upper bounds for convex ``f`` with the given end values
        (rows: exponents of the Chernoff grid, columns: buckets)."""
        with np.errstate(divide="ignore"):
            return self.log_mass + np.logaddexp(
                self.log_low + exponent_low, self.log_high + exponent_high
            )


def _cells(law: VLaw, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masses of the buckets ``[low, high]`` and the share of each at its lower end that
    keeps its mean."""
    mass, above, _ = law.cells(low, high)
    share_high = np.clip(above / np.where(mass > 0, mass, 1.0) / (high - low), 0.0, 1.0)
    return mass, 1.0 - share_high


@lru_cache(maxsize=8)
def _buckets(law: VLaw, top: float) -> _Buckets:
    """The buckets of ``law`` up to ``top`` (the same for every eps of a profile)."""
    return _Buckets.of(law, top)


def _chernoff_upper(law: VLaw, buckets: _Buckets, n: int, alpha: float) -> float:
    """Upper bound: the best over a ladder of cuts ``c`` of

        (1/n) E[(S'')_+] + E[G(X); X in P] + (n - 1) p e_P,

    ``S''`` the sum with the values in ``P = {Z = V - alpha, V > c}`` set to 0 and ``G(x) =
    E[(x + W''_1 + ... + W''_{n-1})_+]`` (docs/blanket-continuous.md §4d, §4e), each
    Chernoff's ``y_+ <= e^{theta y - 1} / theta`` on the buckets' MGF."""
    half = 0.5 * law.gamma
    ends = buckets.ends
    top = float(ends[-1])
    scale = top + n * alpha * (2.0 / law.gamma)
    theta = np.exp(np.linspace(math.log(1e-2 / scale), math.log(1e6 / alpha), _EXPONENTS))
    log_theta = np.log(theta)
    column = theta[:, np.newaxis]
    # Branch "+" below each cut (prefix sums over buckets), branch "-" in full.
    plus = buckets.log_chords(column * (ends[:-1] - alpha), column * (ends[1:] - alpha))
    minus = log_sum_exp(
        buckets.log_chords(column * (1 - alpha * ends[:-1]), column * (1 - alpha * ends[1:])),
        axis=1,
    )
    beyond = law.survival(top) + (law.atom if law.v_max <= top else 0.0)
    if beyond > 0:
        minus = np.logaddexp(minus, math.log(beyond) + theta * (1 - alpha * top))
    slack = math.log1p(MASS_ERROR + mgf_log_error(ends.shape[0] + 4))
    rounding = 1 + 8 * UNIT_ROUNDOFF * (ends.shape[0] + 8)
    # B = 0 and the branch "-" are in every MGF; the branch "+" as far as it is kept.
    common = [np.full(theta.shape, math.log1p(-law.gamma)), math.log(half) + minus]

    def log_mgf(*kept: np.ndarray) -> np.ndarray:
        return log_sum_exp(np.stack([*common, *kept]), axis=0) + slack

    def log_chernoff(count: int, log_m: np.ndarray) -> np.ndarray:
        """``log(e^{count log M - 1} / theta)`` on the exponents."""
        return count * log_m - 1.0 - log_theta

    best = math.inf
    if law.v_max <= top:
        # A bounded V: no cut at all, Chernoff on the whole sum.
        whole = [math.log(half) + log_sum_exp(plus, axis=1)]
        if law.atom > 0:
            whole.append(math.log(half * law.atom) + theta * (law.v_max - alpha))
        no_cut = float(np.min(log_chernoff(n, log_mgf(*whole)))) - math.log(n)
        best = math.exp(min(no_cut, 700.0)) * rounding
    # Cuts below the top end, so that P(V > cut) holds every atom the buckets leave out.
    first, last = int(np.searchsorted(ends, alpha)), ends.shape[0] - 2
    if first > last:
        return best
    cuts = np.unique(np.linspace(first, last, _CUTS).astype(np.int64))
    # Branch "+" below each cut: sums over the segments between cuts, accumulated.
    segments = [
        log_sum_exp(plus[:, low:high], axis=1) if high > low else np.full(theta.shape, -np.inf)
        for low, high in zip([0, *cuts[:-1]], cuts, strict=True)
    ]
    below_cut = np.logaddexp.accumulate(np.stack(segments), axis=0)
    for index, k in enumerate(cuts):
        cut = float(ends[k])
        survival = law.survival(cut)
        kept = [math.log(half) + below_cut[index]] if k > 0 else []
        if survival > 0:
            kept.append(np.full(theta.shape, math.log(half * survival)))
        log_m = log_mgf(*kept)
        # At the cut e^eps no value left in S'' is positive: (S'')_+ = 0.
        no_jump = -math.inf if cut <= alpha else float(np.min(log_chernoff(n, log_m)))
        no_jump -= math.log(n)
        base = log_chernoff(n - 1, log_m)
        g_zero = math.exp(min(float(np.min(base)), 700.0))
        tail = ends[k:] - alpha
        with np.errstate(over="ignore"):
            log_g = np.min(base[:, np.newaxis] + column * tail, axis=0)
            g = np.minimum(np.exp(np.minimum(log_g, 700.0)), tail + g_zero)
        # E[G(V - alpha); bucket] <= the chord of G at the bucket's ends.
        shares = buckets.low_share[k:] * g[:-1] + buckets.high_share[k:] * g[1:]
        jumps = float(np.sum(buckets.mass[k:] * shares))
        if law.atom > 0 and law.v_max <= top:
            jumps += law.atom * g[-1]
        # Beyond the buckets, G(x) <= x + G(0).
        over = law.moment_above(top) + (g_zero - alpha) * law.survival(top)
        jumps = half * (jumps + max(over, 0.0) * (1 + 2 * CLOSED_FORM_ERROR))
        p = half * survival
        e_p = half * (law.moment_above(cut) - alpha * survival)
        e_p += CLOSED_FORM_ERROR * half * (law.moment_above(cut) + alpha * survival)
        value = math.exp(min(no_jump, 700.0)) + jumps + (n - 1) * p * max(e_p, 0.0)
        best = min(best, value * rounding)
    return best


def _jump_lower(law: VLaw, n: int, alpha: float, top: float) -> float:
    """Lower bound: the best over ``(c, w)`` of

        (1 - p - q)^(n-1) (gamma / 2) E[(V - alpha + m)_+; V > c],

    ``p = (gamma/2) P(V > c)`` (one report beyond ``c`` on the branch ``V - alpha``),
    ``q = (gamma/2) P(V > w)`` (the others' reports with ``V > w`` on the branch ``1 -
    alpha V``, left out), ``m`` the mean of the ``n - 1`` others' sum given that
    none is in either set (Jensen given the jump; the events are disjoint across
    users). The truncation lowers the others' heavy-tailed drift at the cost of the
    factor ``(1 - p - q)^(n-1)``."""
    half = 0.5 * law.gamma
    if n == 1:
        moment, survival = law.moment_above(alpha), law.survival(alpha)
        gain = moment - alpha * survival - 2 * CLOSED_FORM_ERROR * (moment + alpha * survival)
        return max(half * gain * (1 - 4 * UNIT_ROUNDOFF), 0.0)
    truncations = np.exp(np.linspace(0.0, math.log(top), _TRUNCATIONS))
    survival_w, moment_w = _tails(law, truncations)
    best = 0.0
    for cut in np.exp(np.linspace(math.log(alpha), math.log(top), _CUTS)):
        survival_c, moment_c = law.survival(float(cut)), law.moment_above(float(cut))
        kept = 1.0 - half * survival_c - half * survival_w
        usable = kept > 0
        if not np.any(usable):
            continue
        kept, survival_n, moment_n = kept[usable], survival_w[usable], moment_w[usable]
        # E[T; core] = (1 - alpha) - E[T; P] - E[T; N], less its float error.
        core_mean = (1 - alpha) - half * (moment_c - alpha * survival_c + survival_n)
        core_mean += half * alpha * moment_n
        size = abs(1 - alpha) + half * (moment_c + alpha * survival_c)
        size += half * (survival_n + alpha * moment_n)
        core_mean -= (CLOSED_FORM_ERROR + 8 * UNIT_ROUNDOFF) * size
        shift = alpha - (n - 1) * core_mean / kept  # the jump must exceed this
        survival_v, moment_v = _tails(law, np.maximum(cut, shift))
        gain = moment_v - shift * survival_v
        gain -= 2 * CLOSED_FORM_ERROR * (moment_v + np.abs(shift) * survival_v)
        weight = np.exp((n - 1) * np.log(kept))
        values = half * np.maximum(gain, 0.0) * weight * (1 - 4 * UNIT_ROUNDOFF * n)
        best = max(best, float(np.max(values)))
    return best


def _tails(law: VLaw, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P(V > v)`` and ``E[V; V > v]`` at each ``v``."""
    survival = np.array([law.survival(float(v)) for v in values])
    return survival, np.array([law.moment_above(float(v)) for v in values])
