"""Rigorous brackets on E[(W_1 + ... + W_n)_+] for i.i.d. W with finitely many values.

The blanket divergence of a finite randomizer (:mod:`pld.shuffling.blanket.finite`)
is ``(1/n) E[(S)_+]`` with ``S = W_1 + ... + W_n`` and W taking a handful of values
``v_k`` with masses ``m_k`` (one class of outputs each, plus 0 for the non-blanket
reports). For large n this module evaluates it from W's exact characteristic
function; no lattice is involved, so very discrete laws (few heavy outputs per
round, e.g. Hadamard response with 1024 outputs at eps0 = 8) lose nothing to a
discretisation of W. (A lattice contraction merges isolated atoms across gaps far
wider than the step, which made the lower side first order there.)

Smoothing. With ``sp(s) = w log(1 + e^(s/w))`` (softplus of width w),

    sp(s) - log(2) w sech(s/w) <= s_+ <= sp(s) - 0.46 w sech(s/w),

because ``sp(s) - s_+ = w log(1 + y)`` with ``y = e^(-|s|/w)`` and
``f(y) = 2 log(2) y - (1 + y^2) log(1 + y) >= 0`` on [0, 1]: f(0) = f(1) = 0,
``f'(0) = 2 log 2 - 1 > 0``, ``f'(1) = -1``, and ``-f'' = 2 log(1 + y) + 2y/(1 + y) +
1 - 2/(1 + y)^2`` is increasing, so f' falls once through 0 and f rises then
falls; and ``(1 + y^2) log(1 + y) >= (1 + y^2)(y - y^2/2) >= 0.9259 y`` (the cubic
``1 - y/2 + y^2 - y^3/2`` is smallest at y = 1/3 on [0, 1]), so 0.46 < 0.9259 / 2
(``BELOW``). Both error terms are bumps of width w around 0 (the lower one is
exact at s = 0), so the bracket is second order in w where S has a density
(about ``0.2 w^2 p(0)`` above and ``0.53 w^2 p(0)`` below, against
``pi^2/6 w^2 p(0)`` for softplus alone), and first order only at atoms within ~w
of 0.

Tilt and Fourier inversion. For theta in (0, 1/w) the tilted law
``m~_k = m_k e^(theta v_k) / M`` gives exactly ``E[f(S)] = M^n E~[f(S) e^(-theta S)]``.
The two kernels ``g(s) = f(s) e^(-theta s)`` have closed-form transforms
``G(omega) = F(theta + i omega)`` with the bilateral Laplace transforms

    F_sp(z)   = pi w / (z sin(pi w z))         (twice by parts: sp'' is a logistic density),
    F_sech(z) = pi w^2 / cos(pi w z / 2)       (w sech(s/w); 0 < Re z < 1/w),

and ``E~[g(S)] = (1/2 pi) int G(omega) phi(omega)^n d omega`` with
``phi(omega) = sum_k m~_k e^(i omega v_k)``. The trapezoidal rule of step
``2 pi / T`` equals ``sum_j E~[g(S + j T)]`` (Poisson summation).

Error terms, each charged in the direction of its side (none grows with n:
docs/large-populations.md §3):

* aliasing: both kernels are >= 0, so the copies ``j != 0`` only raise the sum
  (nothing to charge on the upper side, nor for the sech term of the lower side);
  for the softplus term of the lower side they are bounded with Chernoff bounds on
  the tilted sum (bulk in ``[-A, B]``, ``T >= A + 40/theta`` and ``T >= B + 40 w``)
  and, outside the bulk, by ``max g + (1/T) int g`` (g is log-concave, hence
  unimodal);
* truncation at ``|omega| <= Omega``: ``|phi| <= 1`` and
  ``|sin(x + iy)|, |cos(x + iy)| >= sinh|y|`` give geometric tails;
* masses and positions, by dominance: value k is known within ``eta_k`` and its
  mass within a relative ``kappa``. The upper side evaluates the law whose values
  are ``v_k + eta_k`` and whose masses of positive values are raised by ``kappa``,
  of negative values lowered by ``kappa``, the difference taken from or given to
  the value 0 (the reports outside the blanket): every move goes up, so this law
  is stochastically larger than every law within the errors and, ``s_+`` being
  increasing, its ``E[(S)_+]`` is larger too. The lower side evaluates the mirror
  law. Each is an exact law: the mass at 0 never enters, since
  ``M(z) = E e^(zW) = 1 + sum_{v_k != 0} mu_k expm1(z v_k)``;
* round-off: the integrand is ``exp(n (log M(theta + i omega) - log M(theta)))``
  with ``log M`` by log1p of that sum, each complex ``expm1(x + iy) =
  expm1(x) cos y - 2 sin^2(y/2) + i e^x sin y`` free of cancellation; its error,
  ``n`` times a few ulps of ``sum_k mu_k |expm1(z v_k)|``, is O(u sqrt(n)) at the
  nodes that matter (``|omega| <~ 21 / sd(S)``) instead of the O(u n) of an n-th
  power; nodes whose tilted ``|phi|^n`` is below ``e^-230`` are charged instead of
  evaluated, found by a bound from a few pairs of atoms
  (``|phi|^2 = 1 - 4 sum_{k<j} m~_k m~_j sin^2(omega (v_k - v_j) / 2)``); each kernel
  value ``16 u``.

A bracket wider than 0.3 % (atoms of S within ~w of 0) is evaluated once more
with an 8 times narrower w.

Several laws. :func:`positive_sum_bounds` takes S as a sum of independent terms of a
few laws (``n_h`` i.i.d. terms of law h: the users of a population's groups,
:mod:`pld.shuffling.blanket.population`). Everything above carries over term by term:
the tilted characteristic function of S is the product of the laws' powers, so its
log is ``sum_h n_h (log M_h(theta + i omega) - log M_h(theta))`` with the errors
summed; the screening bound on ``|phi|`` is the product of the laws' bounds; the
Chernoff tails of S add the laws' log moment generating functions; and each side's
law is dominated law by law (a sum of independent stochastically larger terms is
stochastically larger). With one law every number is the one-law evaluation's.
"""

from __future__ import annotations

import math

import numpy as np

from pld.engine import BudgetError
from pld.numerics import UNIT_ROUNDOFF
from pld.numerics.iid_sums import (
    ChernoffTails,
    ExactLaw,
    log_sum_exp,
    tilt_roots,
    tilted_moments,
)

#: Smoothing width as a fraction of ``min(1 / theta, sd(S))``: the relative bracket
#: is of the order of its square where S has a density (measured 2e-6 to 7e-5 for
#: Hadamard response, eps0 = 2, n = 40 to 43).
SMOOTHING = 6e-3

#: A relative bracket wider than this (atoms of a very discrete S near 0) is
#: evaluated again with the smoothing width divided by ``_RETRY_FACTOR``, at most
#: ``_RETRIES`` times (each costs about ``_RETRY_FACTOR`` times more nodes).
_TARGET = 3e-3
_RETRY_FACTOR = 8
_RETRIES = 1

#: Largest number of Fourier nodes; beyond it the smoothing width grows (the
#: bracket widens, it stays rigorous).
MAX_NODES = 2**18

#: The kernels' reach in units of their decay lengths (1/theta, w): e^-40 beyond.
_REACH = 40.0

#: ``pi w Omega / 2``: the sech kernel's transform is below ``e^-32`` of its peak
#: beyond the last node.
_FREQUENCY_REACH = 32.0

#: Chernoff target for the tilted mass outside the bulk ``[-A, B]``.
_BULK_TAIL = 1e-17

#: Nodes with ``|phi|^n`` below ``e^_SKIP_LOG`` are charged instead of evaluated (well
#: above the subnormal range, whose arithmetic is ~100 times slower).
_SKIP_LOG = -230.0

#: The two sides of a bracket.
SIDES = ("upper", "lower")

#: ``sp(s) - BELOW w sech(s/w) >= s_+`` (module docstring).
BELOW = 0.46


class SmoothingError(BudgetError):
    """The evaluation would need more than ``MAX_NODES`` Fourier nodes."""


#: One law of a sum: ``(values, log_mass, count)``, ``count`` i.i.d. terms taking
#: ``values[k]`` with mass ``exp(log_mass[k])``.
Law = tuple[np.ndarray, np.ndarray, int]


def sum_moments(laws: list[Law], theta: float) -> tuple[float, float]:
    """(mean, standard deviation) of S, the sum of every law's terms, under the tilt theta."""
    mean, variance = 0.0, 0.0
    for values, log_mass, count in laws:
        m, v = tilted_moments(values, log_mass, theta)
        mean += count * float(m[0])
        variance += count * float(v[0])
    return mean, math.sqrt(max(variance, 1e-300))


def _sum_root(laws: list[Law], low: float, high: float) -> float:
    """theta in [low, high] where the tilted mean of S vanishes (negative at low, >= 0 at high).

    One law: :func:`pld.numerics.iid_sums.tilt_roots`. Several: Newton steps safeguarded
    by bisection on the sum's tilted mean (non-decreasing in theta), to a relative
    1e-12; any theta gives an exact identity, so accuracy only saves nodes.
    """
    if len(laws) == 1:
        values, log_mass, _ = laws[0]
        return float(tilt_roots(values[None, :], log_mass, [low], [high])[0])
    theta = 0.5 * (low + high)
    for _ in range(200):
        mean, sd = sum_moments(laws, theta)
        low, high = (theta, high) if mean < 0 else (low, theta)
        newton = theta - mean / (sd * sd)
        step = newton if low < newton < high else 0.5 * (low + high)
        if mean == 0 or high - low <= 1e-12 * high or abs(step - theta) <= 1e-12 * abs(theta):
            break
        theta = step
    return theta


def saddle_tilt(laws: list[Law], saddle: float | None = None) -> float:
    """A tilt theta > 0: the saddle point (tilted mean of S 0), raised to ``theta sd(S) >= 1``.

    Any theta gives an exact identity; the floor keeps the kernel's reach ``~1/theta``
    within a few tilted standard deviations, which sets the number of nodes.
    ``saddle``: the saddle point if the caller knows it (0 where the mean is >= 0).
    """
    theta = 1.0 / sum_moments(laws, 0.0)[1]
    if saddle is not None:
        theta = max(theta, saddle)  # the tilted mean rises with theta
    elif sum_moments(laws, theta)[0] < 0:
        high = 2 * theta
        while sum_moments(laws, high)[0] < 0 and high < 1e300:
            high *= 2.0
        theta = _sum_root(laws, theta, high)
    for _ in range(100):  # theta sd_theta >= 1 (up to 100 steps of at least 25 %)
        sd = sum_moments(laws, theta)[1]
        if theta * sd >= 1.0:
            break
        theta = max(1.0 / sd, 1.25 * theta)
    return theta


def _side_law(
    values: np.ndarray, masses: np.ndarray, errors: np.ndarray, kappa: float, side: str
) -> ExactLaw:
    """:meth:`ExactLaw.dominating`, refusing as :class:`SmoothingError`."""
    try:
        return ExactLaw.dominating(values, masses, errors, kappa, side)
    except ValueError as refusal:
        raise SmoothingError(str(refusal)) from None


def chernoff_log_bound(
    values: np.ndarray,
    masses: np.ndarray,
    position_errors: np.ndarray,
    mass_error: float,
    theta: float,
    n: int,
) -> float:
    """log of an upper bound on ``E e^(theta S)``, theta > 0, for every law within the errors.

    ``n log M(theta)`` of the upper side's law (stochastically the largest, so its
    moment generating function is the largest at theta > 0), plus its evaluation
    error; ``inf`` when no mass at 0 can absorb the masses' errors.
    """
    try:
        law = ExactLaw.dominating(values, masses, position_errors, mass_error, "upper")
    except ValueError:
        return math.inf
    return law.chernoff_log_bound(theta, n)


def _chernoff_grid(sd: float) -> np.ndarray:
    """Chernoff exponents of the bulk and aliasing bounds: 0.01 / sd to 1000 / sd."""
    return np.logspace(-2, 3, 41) / sd


def _sum_tails(laws: list[tuple[ExactLaw, int]], theta: float, t: np.ndarray) -> ChernoffTails:
    """:class:`ChernoffTails` of S tilted by theta: the laws' log moment generating
    functions and slacks add (independent terms)."""
    parts = [law.tilted_tails(theta, n, t) for law, n in laws]
    if len(parts) == 1:
        return parts[0]
    return ChernoffTails(
        t,
        np.sum([part.log_up for part in parts], axis=0),
        np.sum([part.log_down for part in parts], axis=0),
        sum(part.slack for part in parts),
    )


#: Pairs of atoms whose terms bound the tilted ``|phi|`` when screening the nodes.
_SCREEN_PAIRS = 4


def _node_log_bounds(
    law: ExactLaw, theta: float, log_norm: float, step: float, count: int, n: int
) -> np.ndarray:
    """Upper bounds on ``log |phi|^n`` at the nodes ``omega = m step``, m = 0..count.

    ``phi`` is the characteristic function of ``law`` tilted by theta (masses
    ``t_k = mass_k e^(theta v_k) / M``, the rest at 0), and
    ``|phi|^2 = (sum t)^2 - 4 sum_{k<j} t_k t_j sin^2(omega (v_k - v_j) / 2)``: every
    term is >= 0, so the ``_SCREEN_PAIRS`` pairs of largest ``t_k t_j`` alone bound
    ``|phi|`` from above, with the masses' rounding (a relative 1e-10 charged) and the
    sine's (4 u of its argument) on the safe side. One sine per node and pair, instead
    of K complex exponentials; only the nodes kept are evaluated exactly.
    """
    tilted = law.mass * np.exp(theta * law.value - log_norm)
    zero = max(0.0, 1.0 - math.fsum(law.mass)) * math.exp(-log_norm)
    masses = np.append(tilted, zero)
    values = np.append(law.value, 0.0)
    total = float(np.sum(masses)) * (1.0 + 1e-10)
    first, second = np.triu_indices(masses.size, 1)
    products = masses[first] * masses[second]
    order = np.argsort(-products)[:_SCREEN_PAIRS]
    omega = step * np.arange(count + 1)
    deficit = np.zeros(count + 1)
    for k, j, product in zip(first[order], second[order], products[order], strict=True):
        angle = 0.5 * omega * (values[k] - values[j])
        sine = np.maximum(np.abs(np.sin(angle)) - 4 * UNIT_ROUNDOFF * (np.abs(angle) + 1.0), 0.0)
        deficit += 4.0 * product * (1.0 - 1e-10) * sine * sine
    with np.errstate(divide="ignore"):
        return 0.5 * n * np.log(np.maximum(total * total - deficit, 0.0))


def _evaluate(
    laws: list[tuple[ExactLaw, int]],
    theta: float,
    width: float,
    period: float,
    count: int,
    bulk: tuple[float, float, float],
    side: str,
) -> float:
    """``log`` of the bound of ``side`` on ``E[(S)_+]``, S the sum of ``n`` i.i.d. terms of
    each exact law ``(law, n)`` (-inf: 0)."""
    step = 2 * math.pi / period
    norms = []
    total_norm, total_norm_error = 0.0, 0.0  # sum_h n_h log M_h(theta), its error
    node_bound = np.zeros(count + 1)
    for law, n in laws:
        log_norm_array, norm_error = law.log_mgf(np.array([theta]))
        log_norm, norm_error = float(log_norm_array[0]), float(norm_error[0])
        norms.append((log_norm, norm_error))
        total_norm += n * log_norm
        total_norm_error += n * norm_error
        node_bound += _node_log_bounds(law, theta, log_norm, step, count, n)
    live = np.flatnonzero(node_bound > _SKIP_LOG)
    omega = step * live
    exponent, spread = 0.0, 0.0
    for (law, n), (log_norm, norm_error) in zip(laws, norms, strict=True):
        logs, errors = law.log_cf(theta, omega)
        exponent = exponent + n * (logs - log_norm)
        spread = spread + n * (errors + norm_error)
    spread = spread + 4 * UNIT_ROUNDOFF * np.abs(exponent)
    powered = np.exp(exponent)
    weights = np.where(live == 0, 1.0, 2.0)
    weighted = weights * powered
    error_weights = weights * np.abs(powered) * np.expm1(spread)
    skipped = 2.0 * (count + 1 - live.size) * math.exp(_SKIP_LOG)
    # sin(pi w z) and cos(pi w z / 2) for z = theta + i omega, from real functions.
    a, b = math.pi * width * theta, math.pi * width * omega
    z = theta + 1j * omega
    soft = math.pi * width / (z * (math.sin(a) * np.cosh(b) + 1j * math.cos(a) * np.sinh(b)))
    soft_peak = math.pi * width / (theta * math.sin(a))
    half_a, half_b = a / 2, b / 2
    bump_scale = math.pi * width * width
    bump = bump_scale / (
        math.cos(half_a) * np.cosh(half_b) - 1j * math.sin(half_a) * np.sinh(half_b)
    )
    bump_peak = bump_scale / math.cos(half_a)

    def trapezoid(kernel: np.ndarray, peak: float, bound: str) -> float:
        """The trapezoidal sum of the kernel, its errors charged to ``bound``."""
        total = float(np.dot(weighted.real, kernel.real) - np.dot(weighted.imag, kernel.imag))
        modulus = np.sqrt(kernel.real * kernel.real + kernel.imag * kernel.imag)
        error = float(np.dot(error_weights, modulus)) + skipped * peak
        error += 16 * UNIT_ROUNDOFF * float(np.dot(np.abs(weighted), modulus))
        return (total + (error if bound == "upper" else -error)) / period

    # Truncation beyond the last node: |phi^n| <= 1; |sin|, |cos| >= sinh|Im|.
    last = step * count
    r_soft = math.exp(-math.pi * width * step)
    r_bump = math.exp(-0.5 * math.pi * width * step)
    edge = 2.0 / period
    tail_soft = edge * (
        2
        * math.pi
        * width
        / last
        * r_soft ** (count + 1)
        / ((1 - r_soft) * -math.expm1(-2 * math.pi * width * last))
    )
    tail_bump = edge * (
        2
        * bump_scale
        * r_bump ** (count + 1)
        / ((1 - r_bump) * -math.expm1(-math.pi * width * last))
    )
    if side == "upper":
        # sp - BELOW w sech >= s_+ >= 0: one non-negative kernel.
        value = trapezoid(soft - BELOW * bump, soft_peak - BELOW * bump_peak, "upper")
        return total_norm + total_norm_error + math.log(value + tail_soft + BELOW * tail_bump)
    # The bump's expectation is subtracted: its upper bound (aliases only add to it).
    bump_sum = math.log(2) * (trapezoid(bump, bump_peak, "upper") + tail_bump)
    # Aliasing of the softplus term (module docstring): bulk [-low, high].
    low, high, sd = bulk
    outside = _sum_tails(laws, theta, _chernoff_grid(sd)).outside(low, high)
    near, far = period - low, period - high
    q = math.exp(-theta * period)
    right = math.exp(-theta * near) * (
        (near + width * math.log(2)) / (1 - q) + period * q / (1 - q) ** 2
    )
    left = width * math.exp(-far * (1 / width - theta)) / -math.expm1(-period * (1 / width - theta))
    peak = max(width, math.exp(theta * width * math.log(2) - 1) / theta)
    aliasing = right + left + outside * (peak + soft_peak / period)
    value = trapezoid(soft, soft_peak, "lower") - tail_soft - aliasing - bump_sum
    return total_norm - total_norm_error + math.log(value) if value > 0 else -math.inf


def positive_sum_bounds(
    laws: list[Law],
    *,
    mass_error: float,
    position_errors: list[np.ndarray],
    smoothing: float = SMOOTHING,
    upper_only: bool = False,
    saddle: float | None = None,
) -> tuple[float, float]:
    """``log`` of (lower, upper) on ``E[(S)_+]``, S a sum of independent terms of a few laws.

    Parameters
    ----------
    laws : list of (values, log_mass, count)
        ``count`` i.i.d. terms taking ``values[k]`` (any reals; the value 0 for the
        reports outside the blanket, whose mass absorbs the masses' errors) with mass
        ``exp(log_mass[k])`` (positive masses summing to 1 up to ``mass_error``).
    mass_error : float
        Relative error of each mass of a non-zero value.
    position_errors : list of ndarray
        Per law, a bound on the error of each value (same units as ``values``): the
        upper side is evaluated at ``values + position_errors``, the lower at
        ``values - ...``.
    smoothing : float
        Smoothing width as a fraction of ``min(1/theta, sd(S))``, in (0, 0.1].
    upper_only : bool
        Only the upper value (the lower is then ``-inf``), in one attempt.
    saddle : float, optional
        The root of S's tilted mean if known (0 where the mean is >= 0): saves a search.

    Returns
    -------
    log_lower, log_upper : float
        ``-inf`` for a bound 0.

    Raises
    ------
    SmoothingError
        If more than ``MAX_NODES`` Fourier nodes would be needed, or no mass at 0
        can absorb the masses' errors.
    """
    laws = [(np.asarray(v, np.float64), np.asarray(m, np.float64), int(n)) for v, m, n in laws]
    errors = [np.asarray(e, dtype=np.float64) for e in position_errors]
    if all(float(np.max(v + e)) <= 0.0 for (v, _, _), e in zip(laws, errors, strict=True)):
        return -math.inf, -math.inf
    theta = saddle_tilt(laws, saddle)
    variance = 0.0
    for values, log_mass, n in laws:
        log_tilted = log_mass + theta * values
        tilted = np.exp(log_tilted - log_sum_exp(log_tilted))
        mean = float(np.dot(tilted, values))
        variance += n * float(np.dot(tilted, (values - mean) ** 2))
    sd = math.sqrt(max(variance, 1e-300))
    sides = ("upper",) if upper_only else ("upper", "lower")
    side_laws = {
        s: [
            (_side_law(values, np.exp(log_mass), e, mass_error, s), n)
            for (values, log_mass, n), e in zip(laws, errors, strict=True)
        ]
        for s in SIDES
    }
    # The bulk of both laws (also for the upper side alone: the same nodes, the same value).
    low = high = 0.0
    for side_law in side_laws.values():
        above, below = _sum_tails(side_law, theta, _chernoff_grid(sd)).reach(math.log(_BULK_TAIL))
        low, high = max(low, below), max(high, above)
    scale = min(1.0 / theta, sd)
    logs = {"lower": -math.inf}
    for attempt in range(_RETRIES + 1):
        width = smoothing * scale / _RETRY_FACTOR**attempt
        period = max(low + _REACH / theta, high + _REACH * width)
        needed = math.ceil(period * _FREQUENCY_REACH / (math.pi**2 * width))
        count = min(needed, MAX_NODES)
        width *= needed / count
        if width * theta >= 0.5:  # the transforms need theta < 1/w; keep a margin
            if attempt:
                break
            raise SmoothingError(f"{needed} Fourier nodes needed (limit {MAX_NODES})")
        common = (theta, width, period, count, (low, high, sd))
        logs = {s: _evaluate(side_laws[s], *common, s) for s in sides}
        if upper_only:
            logs["lower"] = -math.inf
            break
        # Atoms of S within ~w of 0 make the bracket first order in w: narrow it.
        if -math.expm1(logs["lower"] - logs["upper"]) <= _TARGET or count == MAX_NODES:
            break
    return logs["lower"], logs["upper"]


def smoothed_bounds(
    values: np.ndarray,
    log_mass: np.ndarray,
    n: int,
    *,
    mass_error: float,
    position_errors: np.ndarray,
    smoothing: float = SMOOTHING,
    upper_only: bool = False,
    saddle: float | None = None,
) -> tuple[float, float]:
    """(lower, upper) on ``(1/n) E[(W_1 + ... + W_n)_+]``: one law of :func:`positive_sum_bounds`.

    Parameters as in :func:`positive_sum_bounds`, with the one law ``(values,
    log_mass, n)`` and its ``position_errors``.

    Raises
    ------
    SmoothingError
        If more than ``MAX_NODES`` Fourier nodes would be needed, or no mass at 0
        can absorb the masses' errors.
    """
    log_lower, log_upper = positive_sum_bounds(
        [(values, log_mass, n)],
        mass_error=mass_error,
        position_errors=[position_errors],
        smoothing=smoothing,
        upper_only=upper_only,
        saddle=saddle,
    )
    log_n = math.log(n)
    # (1/n) E[(S)_+] is a hockey-stick divergence, at most 1: a larger bound (error
    # terms swamping a degenerate evaluation) is replaced by 1.
    return (
        math.exp(min(log_lower - log_n, 0.0)),
        math.exp(min(log_upper - log_n, 0.0)),
    )
