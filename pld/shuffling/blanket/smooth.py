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

Error terms, each charged in the direction of its side:

* aliasing: both kernels are >= 0, so the copies ``j != 0`` only raise the sum
  (nothing to charge on the upper side, nor for the sech term of the lower side);
  for the softplus term of the lower side they are bounded with Chernoff bounds on
  the tilted sum (bulk in ``[-A, B]``, ``T >= A + 40/theta`` and ``T >= B + 40 w``)
  and, outside the bulk, by ``max g + (1/T) int g`` (g is log-concave, hence
  unimodal);
* truncation at ``|omega| <= Omega``: ``|phi| <= sum_k m~_k`` and
  ``|sin(x + iy)|, |cos(x + iy)| >= sinh|y|`` give geometric tails;
* round-off: each node's ``phi`` (a product of two directly computed exponentials
  per value) errs by at most ``u (6 |omega| sum_k m~_k |v_k| + (K + 6) sum_k m~_k)``
  (angles, exponentials, product, sums; K values),
  its n-th power by repeated squaring adds ``3u (2n + log2 n)`` relatively
  (:mod:`pld.engine.compose`), each kernel value ``16 u``; nodes with
  ``|phi|^n <= e^-230`` are charged instead of evaluated;
* masses: a relative error ``kappa`` of each tilted mass scales each of the two
  non-negative expectations by ``(1 +- kappa)^n``;
* positions: value k is known within ``eta_k``; the upper side is evaluated at
  ``v_k + eta_k``, the lower at ``v_k - eta_k``, or, when ``theta n max eta`` is
  negligible, both from one characteristic function with the kernels moved by
  ``+- n max eta`` (a factor ``e^(+-z n max eta)`` in F).

A bracket wider than 0.3 % (atoms of S within ~w of 0) is evaluated once more
with an 8 times narrower w.
"""

from __future__ import annotations

import math

import numpy as np

from pld.engine import BudgetError, spectrum_power
from pld.numerics import UNIT_ROUNDOFF
from pld.numerics.iid_sums import (
    ChernoffTails,
    chernoff_tails,
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

_POWER_ERROR = 3.0

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

    One law: :func:`pld.numerics.iid_sums.tilt_roots`. Several: the same Newton steps
    safeguarded by bisection on the sum's tilted mean (non-decreasing in theta), to a
    relative 1e-12; any theta gives an exact identity, so accuracy only saves nodes.
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


def _tails(laws: list[Law], tilted: list[np.ndarray], sd: float) -> ChernoffTails:
    """Chernoff tails of the tilted sum at ``t`` from ``0.01 / sd`` to ``1000 / sd``.

    The sum's log moment generating function is the sum of the laws' (independent terms).
    """
    t = np.logspace(-2, 3, 41) / sd
    parts = []
    for (values, _, count), masses in zip(laws, tilted, strict=True):
        with np.errstate(divide="ignore"):
            log_t = np.log(masses)
        parts.append(chernoff_tails(values, values, log_t, count, t))
    return ChernoffTails(
        t,
        np.sum([part.log_up for part in parts], axis=0),
        np.sum([part.log_down for part in parts], axis=0),
        sum(part.slack for part in parts),
    )


#: Position errors move S by at most ``shift = n max_k eta_k``; when ``theta shift`` is
#: below this, both sides use one characteristic function with kernels moved by
#: ``+-shift`` (a relative cost of about ``theta shift``); above it, each side is
#: evaluated at its own moved values ``v_k +- eta_k``.
_SHARED_SHIFT = 3e-4

#: Nodes per block of the characteristic-function evaluation: ``e^(i omega v)`` at
#: node ``b B + j`` is the product of the exactly computed factors of ``b B`` and ``j``.
_BLOCK = 256


def _phi(values: np.ndarray, tilted: np.ndarray, step: float, count: int) -> np.ndarray:
    """``sum_k m~_k e^(i omega v_k)`` at ``omega = step * m``, m = 0..count.

    Each factor ``e^(i omega v_k)`` is the product of two directly computed
    exponentials (of the block start and of the offset within the block): one
    complex product more than a direct evaluation (``3u``, charged in
    :func:`_evaluate`), and no sine per node.
    """
    blocks = count // _BLOCK + 1
    starts = np.exp(1j * np.multiply.outer(_BLOCK * np.arange(blocks) * step, values))
    offsets = np.exp(1j * np.multiply.outer(np.arange(_BLOCK) * step, values))
    return ((starts * tilted) @ offsets.T).ravel()[: count + 1]


def _node_error(values: np.ndarray, tilted: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """Float error bound of :func:`_phi` at each node (angles, exponentials, product, sums)."""
    return UNIT_ROUNDOFF * (
        6 * omega * float(np.dot(tilted, np.abs(values)))
        + (values.size + 6) * float(math.fsum(tilted))
    )


def _shared_phi(
    values: np.ndarray,
    tilted: np.ndarray,
    step: float,
    count: int,
    shared: dict[bytes, tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray | float]:
    """:func:`_phi` and a bound on the error beyond :func:`_node_error`, reusing a law on
    the same values.

    The groups of a population differ only in their mass at the value 0
    (``gamma_h`` times a common law, ``1 - gamma_h`` at 0), so ``phi_h = a phi_ref + b``
    with ``a`` fitted to the masses off 0 and ``b`` the rest of the mass at 0. Charged:
    the residual ``sum_k |m_k - a r_k|`` off 0 (0 up to round-off), ``a`` times the
    reference's own node error, and ``2 u (a |phi_ref| + |b|)`` for the affine map.
    """
    omega = step * np.arange(count + 1)
    key = values.tobytes()
    zero = values == 0.0
    if key not in shared or np.count_nonzero(zero) != 1:
        phi = _phi(values, tilted, step, count)
        shared.setdefault(key, (tilted, phi))
        return phi, 0.0
    reference, phi_ref = shared[key]
    off = ~zero
    norm = float(np.dot(reference[off], reference[off]))
    if norm == 0.0:
        return _phi(values, tilted, step, count), 0.0
    a = float(np.dot(tilted[off], reference[off]) / norm)
    b = float(tilted[zero][0] - a * reference[zero][0])
    residual = float(np.sum(np.abs(tilted[off] - a * reference[off])))
    extra = (
        residual
        + a * _node_error(values, reference, omega)
        + 2 * UNIT_ROUNDOFF * (a * np.abs(phi_ref) + abs(b))
    )
    return a * phi_ref + b, extra


def _evaluate(
    laws: list[Law],
    theta: float,
    width: float,
    period: float,
    count: int,
    bulk: tuple[float, float, float],
    mass_error: float,
    shift: float,
    sides: tuple[str, ...],
) -> dict[str, float]:
    """``log`` of the bounds on ``E[(S)_+]`` for the requested sides (``-inf``: a lower 0).

    S is the sum of every law's terms: its characteristic function is the product of
    the laws' powers, each node's relative error the sum of the laws' (module
    docstring) and 2u per product. The upper side's kernels are evaluated at
    ``s + shift``, the lower side's at ``s - shift`` (a factor ``e^(+-z shift)`` of
    their transforms).
    """
    step = 2 * math.pi / period
    omega = step * np.arange(count + 1)
    tilted_laws = []
    log_norm = 0.0  # sum_h n_h log(normaliser_h)
    log_mass_power = 0.0  # log prod_h (sum_k m~_k)^(n_h)
    log_grow, log_shrink = 0.0, 0.0  # the masses' relative errors, (1 -+ kappa_h)^(-+n_h)
    log_bound = np.zeros(count + 1)
    relative = np.zeros(count + 1)
    phis = []
    shared: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
    for values, log_mass, n in laws:
        log_tilted = log_mass + theta * values
        norm = float(log_sum_exp(log_tilted))
        tilted = np.exp(log_tilted - norm)
        tilted_laws.append(tilted)
        # exp, the sums and products in the exponent: a few ulps of each term's size.
        kappa = mass_error + 8 * UNIT_ROUNDOFF * (
            4.0 + float(np.max(np.abs(log_mass) + np.abs(theta * values))) + abs(norm)
        )
        phi, extra = _shared_phi(values, tilted, step, count, shared)
        node_error = _node_error(values, tilted, omega) + extra
        magnitude = np.abs(phi) + node_error
        with np.errstate(divide="ignore", under="ignore"):
            log_bound += n * np.log(magnitude)
        relative += n * node_error / magnitude
        relative += _POWER_ERROR * UNIT_ROUNDOFF * (2 * n + n.bit_length())
        phis.append(phi)
        log_norm += n * norm
        log_mass_power += n * math.log(float(math.fsum(tilted)))
        log_grow -= n * math.log1p(-kappa)
        log_shrink -= n * math.log1p(kappa)
    live = np.flatnonzero(log_bound > _SKIP_LOG)
    weights = np.where(live == 0, 1.0, 2.0)
    omega = omega[live]
    powered = spectrum_power(phis[0][live], laws[0][2])
    for phi, (_, _, n) in zip(phis[1:], laws[1:], strict=True):
        powered = powered * spectrum_power(phi[live], n)
    relative = relative[live] + (16 + 2 * (len(laws) - 1)) * UNIT_ROUNDOFF
    weighted = weights * powered
    error_weights = weights * np.exp(log_bound[live]) * relative
    mass_power = math.exp(log_mass_power)
    # Skipped nodes: |G| <= G(0) e^(theta shift) (the kernels are >= 0), |phi^n| <= e^_SKIP_LOG.
    growth = math.exp(theta * shift)
    skipped = 2.0 * (count + 1 - live.size) * math.exp(_SKIP_LOG) * growth
    # sin(pi w z) and cos(pi w z / 2) for z = theta + i omega, from real functions.
    a, b = math.pi * width * theta, math.pi * width * omega
    z = theta + 1j * omega
    soft = math.pi * width / (z * (math.sin(a) * np.cosh(b) + 1j * math.cos(a) * np.sinh(b)))
    soft_peak = math.pi * width / (theta * math.sin(a))
    rotation = np.exp(1j * omega * shift) if shift > 0 else None

    def trapezoid(kernel: np.ndarray, peak: float, side: str, bound: str) -> float:
        """The sum for the kernel moved to ``side``'s shift, its errors charged to ``bound``."""
        if rotation is not None:
            kernel = kernel * (growth * rotation if side == "upper" else np.conj(rotation) / growth)
        total = float(np.dot(weighted.real, kernel.real) - np.dot(weighted.imag, kernel.imag))
        modulus = np.sqrt(kernel.real * kernel.real + kernel.imag * kernel.imag)  # np.hypot is slow
        error = float(np.dot(error_weights, modulus)) + skipped * peak
        return (total + (error if bound == "upper" else -error)) / period

    # Truncation beyond the last node: |phi^n| <= mass_sum^n; |sin|, |cos| >= sinh|Im|.
    last = step * count
    r_soft = math.exp(-math.pi * width * step)
    r_bump = math.exp(-0.5 * math.pi * width * step)
    edge = mass_power * 2 * growth / period
    tail_soft = edge * (
        2
        * math.pi
        * width
        / last
        * r_soft ** (count + 1)
        / ((1 - r_soft) * -math.expm1(-2 * math.pi * width * last))
    )
    # The sech bump with unit coefficient: transform, value at theta, truncation tail.
    half_a, half_b = a / 2, b / 2
    bump_scale = math.pi * width * width
    bump = bump_scale / (
        math.cos(half_a) * np.cosh(half_b) - 1j * math.sin(half_a) * np.sinh(half_b)
    )
    bump_peak = bump_scale / math.cos(half_a)
    tail_bump = edge * (
        2
        * bump_scale
        * r_bump ** (count + 1)
        / ((1 - r_bump) * -math.expm1(-math.pi * width * last))
    )
    grow = math.exp(log_grow)
    out = {}
    if "upper" in sides:
        # sp - BELOW w sech >= s_+ >= 0: one non-negative kernel.
        kernel = soft - BELOW * bump
        upper = trapezoid(kernel, soft_peak - BELOW * bump_peak, "upper", "upper")
        out["upper"] = log_norm + math.log((upper + tail_soft + BELOW * tail_bump) * grow)
    if "lower" not in sides:
        return out
    # The bump's expectation is subtracted: its upper bound (aliases only add to it).
    bump_sum = math.log(2) * trapezoid(bump, bump_peak, "lower", "upper")
    tail_bump *= math.log(2)
    # Aliasing of the softplus term (module docstring): bulk [-low, high].
    low, high, sd = bulk
    outside = _tails(laws, tilted_laws, sd).outside(low, high)
    near, far = period - low - shift, period - high - shift
    q = math.exp(-theta * period)
    right = math.exp(-theta * near) * (
        (near + width * math.log(2)) / (1 - q) + period * q / (1 - q) ** 2
    )
    left = width * math.exp(-far * (1 / width - theta)) / -math.expm1(-period * (1 / width - theta))
    peak = max(width, math.exp(theta * width * math.log(2) - 1) / theta)
    aliasing = growth * (mass_power * (right + left) + outside * (peak + soft_peak / period))
    shrink = math.exp(log_shrink)
    value = (trapezoid(soft, soft_peak, "lower", "lower") - tail_soft - aliasing) * shrink - (
        bump_sum + tail_bump
    ) * grow
    out["lower"] = log_norm + math.log(value) if value > 0 else -math.inf
    return out


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
        ``count`` i.i.d. terms taking ``values[k]`` (any reals; include 0 for the zero
        class) with mass ``exp(log_mass[k])`` (positive masses summing to 1 up to
        ``mass_error``).
    mass_error : float
        Relative error of each mass.
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
        If more than ``MAX_NODES`` Fourier nodes would be needed.
    """
    laws = [(np.asarray(v, np.float64), np.asarray(m, np.float64), int(n)) for v, m, n in laws]
    errors = [np.asarray(e, dtype=np.float64) for e in position_errors]
    ups = [(v + e, m, n) for (v, m, n), e in zip(laws, errors, strict=True)]
    downs = [(v - e, m, n) for (v, m, n), e in zip(laws, errors, strict=True)]
    if all(float(np.max(v)) <= 0.0 for v, _, _ in ups):
        return -math.inf, -math.inf
    theta = saddle_tilt(laws, saddle)
    tilted = []
    for values, log_mass, _ in laws:
        log_tilted = log_mass + theta * values
        tilted.append(np.exp(log_tilted - log_sum_exp(log_tilted)))
    sd = sum_moments(laws, theta)[1]
    # The bulk of both shifted laws: reach of the unshifted one plus the largest shift.
    high, low = _tails(laws, tilted, sd).reach(math.log(_BULK_TAIL))
    shift = sum(n * float(np.max(e)) for (_, _, n), e in zip(laws, errors, strict=True))
    low, high = max(low, 0.0) + shift, max(high, 0.0) + shift
    scale = min(1.0 / theta, sd)
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
        common = (theta, width, period, count, (low, high, sd), mass_error)
        if upper_only:
            logs = _evaluate(laws, *common, shift, ("upper",))
            logs["lower"] = -math.inf
            break
        if theta * shift <= _SHARED_SHIFT:
            # One characteristic function; the kernels move by +-shift (module docstring).
            logs = _evaluate(laws, *common, shift, ("upper", "lower"))
        else:
            logs = _evaluate(ups, *common, 0.0, ("upper",))
            logs.update(_evaluate(downs, *common, 0.0, ("lower",)))
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
    """(lower, upper) on ``(1/n) E[(W_1 + ... + W_n)_+]``: one law (:func:`positive_sum_bounds`).

    Parameters as in :func:`positive_sum_bounds`, with the one law ``(values,
    log_mass, n)`` and its ``position_errors``.

    Raises
    ------
    SmoothingError
        If more than ``MAX_NODES`` Fourier nodes would be needed.
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
