"""Sums of i.i.d. finite variables: log-sum-exp, exponential tilts and Chernoff tails.

Every blanket evaluator (:mod:`pld.shuffling.blanket`) bounds ``E[(S)_+]`` for a sum
``S = W_1 + ... + W_n`` of i.i.d. copies of a finite law (values ``v_k``, log-masses
``l_k``). They share three tools, defined here once:

* :func:`log_sum_exp`: ``log sum_k exp(x_k)`` along an axis, shifted by the maximum;
* the exponential tilt ``w_k(theta) ∝ exp(l_k + theta v_k)``: :func:`tilted_moments`,
  the root of the tilted mean (:func:`tilt_roots`, Newton steps safeguarded by
  bisection, all rows at once) and the centring tilt (:func:`centring_tilt`). Any tilt
  gives an exact identity (the tilted law reweighted back) and a valid Chernoff bound,
  so a tilt's accuracy never affects soundness, only cost and round-off;
* :class:`ChernoffTails`: ``mass(S >= a) <= exp(n log M(t) - t a)`` (Markov's
  inequality for ``e^{tS}``; valid for any non-negative measure) on a grid of t, with
  the float error of ``n log M(t)`` (a relative ``64 u log2(K + 2)`` of M, n times)
  charged as a factor;
* :class:`ExactLaw`: a law whose mass at 0 absorbs the rest, with ``log M`` by log1p
  of expm1 sums (an error that does not grow like n) and the laws that dominate every
  law within given mass and position errors (docs/large-populations.md §3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pld.numerics.constants import UNIT_ROUNDOFF


def log_sum_exp(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``log sum exp(x)`` along ``axis`` (all of ``x`` when None), shifted by the maximum.

    scipy's ``logsumexp`` costs ~0.6 ms a call in overhead; this is the same sum
    (``-inf`` where every term is ``-inf``).
    """
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    out = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return out.reshape(()) if axis is None else np.squeeze(out, axis=axis)


def tilted_moments(
    values: np.ndarray, log_mass: np.ndarray, theta: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of the law tilted by ``theta``, per row of ``values``.

    Parameters
    ----------
    values : ndarray
        Shape (K,) or (rows, K).
    log_mass : ndarray
        Natural logs of the masses, broadcastable to ``values``.
    theta : float or ndarray
        One tilt, or one per row.
    """
    values = np.atleast_2d(values)
    theta = np.broadcast_to(np.asarray(theta, dtype=np.float64), (values.shape[0],))
    log_w = log_mass + theta[:, None] * values
    w = np.exp(log_w - np.max(log_w, axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    mean = np.sum(w * values, axis=1)
    return mean, np.sum(w * (values - mean[:, None]) ** 2, axis=1)


def tilt_roots(
    values: np.ndarray, log_mass: np.ndarray, low: np.ndarray, high: np.ndarray
) -> np.ndarray:
    """Per row, theta in [low, high] where the tilted mean vanishes.

    The tilted mean is non-decreasing in theta (its derivative is the tilted
    variance), negative at ``low`` and non-negative at ``high``. Newton steps
    safeguarded by bisection, all rows at once, to a relative 1e-12.

    Parameters
    ----------
    values : ndarray
        Shape (rows, K): the values of each row's law.
    log_mass : ndarray
        Natural logs of their masses, broadcastable to ``values``.
    low, high : ndarray
        Shape (rows,): brackets of the roots.
    """
    low, high = np.array(low, dtype=np.float64), np.array(high, dtype=np.float64)
    theta = 0.5 * (low + high)
    active = np.ones(theta.size, dtype=bool)
    for _ in range(200):
        mean, var = tilted_moments(values, log_mass, theta)
        negative = mean < 0
        low = np.where(negative, theta, low)
        high = np.where(negative, high, theta)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = theta - mean / var
        inside = np.isfinite(newton) & (newton > low) & (newton < high)
        step = np.where(inside, newton, 0.5 * (low + high))
        active &= (
            (mean != 0)
            & (high - low > 1e-12 * high)
            & (np.abs(step - theta) > 1e-12 * np.abs(theta))
        )
        theta = np.where(active, step, theta)
        if not np.any(active):
            break
    return theta


def centring_tilt(
    values: np.ndarray, log_mass: np.ndarray, start: float, largest: float = 1e300
) -> float:
    """The tilt >= 0 whose tilted mean is 0, for a law with a negative mean and a positive value.

    The bracket grows from ``start`` by doubling (at most to ``largest``, which is
    returned if the mean is still negative there), then :func:`tilt_roots` solves.
    """
    values = np.asarray(values, dtype=np.float64)
    high = start
    while tilted_moments(values, log_mass, high)[0][0] < 0 and high < largest:
        high *= 2.0
    if tilted_moments(values, log_mass, high)[0][0] < 0:
        return high
    low = high / 2.0 if high > start else 0.0
    if tilted_moments(values, log_mass, low)[0][0] >= 0:
        return low
    return float(tilt_roots(values[None, :], log_mass, [low], [high])[0])


@dataclass(frozen=True)
class ChernoffTails:
    """Chernoff bounds on both tails of ``S = W_1 + ... + W_n`` at a grid of ``t > 0``.

    ``log_up[j] = n log E[e^{t_j W}]`` and ``log_down[j] = n log E[e^{-t_j W}]`` (plus
    any exact extra term); ``slack`` is the charged float error of those logs.
    """

    t: np.ndarray
    log_up: np.ndarray
    log_down: np.ndarray
    slack: float

    def reach(self, log_target: float) -> tuple[float, float]:
        """``(a, b)`` with ``mass(S >= a)`` and ``mass(S <= -b)`` both ``<= e^log_target``."""
        target = log_target - self.slack
        return (
            float(np.min((self.log_up - target) / self.t)),
            float(np.min((self.log_down - target) / self.t)),
        )

    def outside(self, low: float, high: float) -> float:
        """Bound on ``mass(S <= -low) + mass(S >= high)``, at most 1."""
        up = float(np.min(self.log_up - self.t * high))
        down = float(np.min(self.log_down - self.t * low))
        return min(1.0, math.exp(up + self.slack) + math.exp(down + self.slack))


def chernoff_tails(
    up_values: np.ndarray,
    down_values: np.ndarray,
    log_mass: np.ndarray,
    n: int,
    t: np.ndarray,
) -> ChernoffTails:
    """:class:`ChernoffTails` of n i.i.d. copies from the law's own atoms.

    ``up_values`` bound the values from above (for the upper tail) and
    ``down_values`` from below (lower tail); they are the values themselves unless a
    caller merged atoms (moving each outwards keeps the bounds valid).
    """
    size = np.asarray(log_mass).shape[-1]
    log_up = n * log_sum_exp(log_mass[None, :] + t[:, None] * up_values[None, :], axis=1)
    log_down = n * log_sum_exp(log_mass[None, :] - t[:, None] * down_values[None, :], axis=1)
    return ChernoffTails(t, log_up, log_down, n * mgf_log_error(size))


def mgf_log_error(size: int) -> float:
    """Float error bound of one ``log E[e^{tW}]`` over ``size`` atoms: ``64 u log2(size + 2)``."""
    return 64 * UNIT_ROUNDOFF * math.log2(size + 2)


# -- exact laws: n log M without an error growing like n -----------------------------


class ExactLaw:
    """The law with ``mass[k]`` at ``value[k]`` (all non-zero) and the rest of the mass at 0.

    Its moment generating function is ``M(z) = 1 + sum_k mass_k expm1(z value_k)``:
    the mass at 0 never enters, so the law is exact whatever the float masses (their
    sum is never formed), and ``log M`` by log1p of that sum errs by a few ulps of
    ``sum_k mass_k |expm1(z value_k)|``, not of M. ``n log M`` then errs by n times
    that: O(u sqrt(n)) where it matters (|z| ~ 1/sd(S)), against O(u n) for the n-th
    power of a computed M (docs/large-populations.md §3).
    """

    def __init__(self, value: np.ndarray, mass: np.ndarray) -> None:
        self.value = np.asarray(value, dtype=np.float64)
        self.mass = np.asarray(mass, dtype=np.float64)

    @classmethod
    def dominating(
        cls, values: np.ndarray, masses: np.ndarray, errors: np.ndarray, kappa: float, side: str
    ) -> ExactLaw:
        """The law above (``"upper"``) or below (``"lower"``) every law within the errors.

        The true law has values within ``errors`` of ``values`` and masses of its
        non-zero values within a relative ``kappa`` of ``masses``, the rest at 0. Values
        move by their error towards the side; masses of values on the side's sign grow
        by ``kappa``, the others shrink by it, the difference taken from or given to 0:
        every move goes towards the side, so the result is stochastically larger
        (smaller) than every such law. Entries whose moved value is 0 belong to the
        mass at 0.

        Raises
        ------
        ValueError
            If the grown masses leave no mass at 0 to take them from.
        """
        sign = 1.0 if side == "upper" else -1.0
        moved = values + sign * errors
        live = moved != 0.0
        moved = moved[live]
        mass = masses[live] * np.where(sign * moved > 0, 1.0 + kappa, 1.0 - kappa)
        if math.fsum(mass) * (1.0 + (mass.size + 1) * UNIT_ROUNDOFF) > 1.0:
            raise ValueError("no mass at 0 to dominate the masses' errors with")
        return cls(moved, mass)

    def log_mgf(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log M(z), bound on its absolute error) for real z (1-d).

        Each expm1 errs by u of itself and ``u |x| e^x`` from its argument
        ``x = z value_k``, the sum by (K + 1) u of the sum of magnitudes, log1p by u of
        its value plus the propagated error. Where some ``x > 1`` (far tails of
        Chernoff bounds) M is summed as a log-sum-exp with the mass at 0 instead: a
        relative (K + 4) u of M, plus ``u |x|`` from the arguments.
        """
        x = np.multiply.outer(z, self.value)
        top = np.max(x, axis=-1, initial=0.0)
        far = top > 1.0
        terms = self.mass * np.expm1(np.minimum(x, 1.0))
        w = terms.sum(axis=-1)
        size = (np.abs(terms) * (1.0 + np.abs(x))).sum(axis=-1)
        error = (self.value.size + 4) * UNIT_ROUNDOFF * size
        log_m = np.log1p(w)
        error = error / np.maximum(1.0 + w - error, 1e-300) + 2 * UNIT_ROUNDOFF * np.abs(log_m)
        if np.any(far):
            rest = max(0.0, 1.0 - math.fsum(self.mass))
            shifted = x[far] - top[far, None]
            total = np.sum(self.mass * np.exp(shifted), axis=-1) + rest * np.exp(-top[far])
            log_m[far] = top[far] + np.log(total)
            spread = 2.0 + np.max(np.abs(x[far]), axis=-1)
            error[far] = (self.value.size + 4) * UNIT_ROUNDOFF * spread
        return log_m, error

    def log_cf(self, theta: float, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log M(theta + i omega), bound on its absolute error) at the nodes ``omega``.

        ``expm1(x + iy) = expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y`` without
        cancellation; the errors of x and y (relative u) are included.
        """
        x = theta * self.value
        y = np.multiply.outer(omega, self.value)
        shrunk = np.expm1(x)
        grown = shrunk + 1.0
        half = np.sin(0.5 * y)
        sine = np.sin(y)
        e = (shrunk * np.cos(y) - 2.0 * half * half) + 1j * (grown * sine)
        size = np.abs(shrunk) * (1.0 + np.abs(x)) + 2.0 * half * half
        size = size + grown * (np.abs(sine) + np.abs(y))
        terms = self.mass * e
        w = terms.sum(axis=-1)
        error = (self.mass * 8 * UNIT_ROUNDOFF * size).sum(axis=-1)
        error += (self.value.size + 2) * UNIT_ROUNDOFF * np.abs(terms).sum(axis=-1)
        one = 1.0 + w
        log_m = 0.5 * np.log1p(2.0 * w.real + w.real**2 + w.imag**2) + 1j * np.arctan2(
            w.imag, one.real
        )
        error = error / np.maximum(np.abs(one) - error, 1e-300)
        error += 8 * UNIT_ROUNDOFF * (np.abs(w) + np.abs(log_m))
        return log_m, error

    def tilted_tails(self, theta: float, n: int, t: np.ndarray) -> ChernoffTails:
        """:class:`ChernoffTails` of n copies of this law tilted by ``theta``."""
        at_theta, error = self.log_mgf(np.array([theta]))
        down, down_error = self.log_mgf(theta - t)
        up, up_error = self.log_mgf(theta + t)
        slack = n * (float(error[0]) + float(max(np.max(up_error), np.max(down_error))))
        return ChernoffTails(t, n * (up - at_theta[0]), n * (down - at_theta[0]), slack)

    def chernoff_log_bound(self, theta: float, n: int) -> float:
        """log of an upper bound on ``E e^(theta S)``: ``n log M(theta)`` plus its error."""
        log_m, error = self.log_mgf(np.array([theta]))
        return n * (float(log_m[0]) + float(error[0]))
