"""Rényi DP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar and Zhang 2019).

Each record is kept with probability q and the sum (sensitivity 1) gets
``N(0, σ^2)`` noise. With ``mu_0 = N(0, σ^2)`` and the mixture
``mu = (1 - q) mu_0 + q N(1, σ^2)`` the two directions are

    removal:   D_lam(mu || mu_0) = log A_lam / (lam - 1),
               A_lam = E_{mu_0}[(mu / mu_0)^lam]
                     = ∫ phi_σ(z) (1 - q + q exp((2z - 1) / (2σ^2)))^lam dz,
    addition:  D_lam(mu_0 || mu) = log B_lam / (lam - 1),
               B_lam = ∫ phi_σ(z) (1 - q + q exp((2z - 1) / (2σ^2)))^(1 - lam) dz.

For integer lam the binomial expansion gives the closed form (Mironov et al.
2019, §3.3, the integer case)

    A_lam = sum_{k=0}^{lam} C(lam, k) (1 - q)^(lam - k) q^k exp((k^2 - k) / (2σ^2)),

summed here in log space. For fractional lam, A_lam and B_lam are integrated
numerically (adaptive quadrature of the log-scaled integrand, relative
tolerance 1e-12) and inflated by ``QUADRATURE_SLACK``; A_lam is moreover capped
by the log-convex interpolation between the neighbouring integers
(``lam -> log A_lam`` is convex by Hölder's inequality, and ``A_1 = 1``),
which is a rigorous bound. B_lam is at most A_lam at every order checked
(tests/rdp/test_rdp_poisson.py, as Mironov et al. state), but it is computed and
the maximum of both directions returned all the same.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.special import gammaln, logsumexp

from pld.rdp.orders import real_orders
from pld.validation import in_interval, positive

#: Relative inflation of a numerically integrated moment (10 times the quadrature's
#: relative tolerance of 1e-12): added to its log.
QUADRATURE_SLACK = 1e-11

_DIRECTIONS = ("both", "remove", "add")


def _log_moment_integer(order: int, sigma: float, rate: float) -> float:
    """log A_lam by the binomial sum (exact up to float round-off)."""
    k = np.arange(order + 1, dtype=np.float64)
    log_binomial = gammaln(order + 1) - gammaln(k + 1) - gammaln(order - k + 1)
    log_rest = math.log1p(-rate) if rate < 1 else -math.inf
    with np.errstate(invalid="ignore"):
        terms = (
            log_binomial
            + np.where(order - k > 0, (order - k) * log_rest, 0.0)
            + k * math.log(rate)
            + (k * k - k) / (2 * sigma**2)
        )
    return float(logsumexp(terms))


def _log_moment_quadrature(power: float, sigma: float, rate: float) -> float:
    """log ∫ phi_σ(z) (1 - q + q e^{(2z-1)/(2σ^2)})^power dz by adaptive quadrature."""
    log_rest = math.log1p(-rate) if rate < 1 else -math.inf

    def log_integrand(z: np.ndarray) -> np.ndarray:
        ratio = np.logaddexp(log_rest, math.log(rate) + (2 * z - 1) / (2 * sigma**2))
        return -(z**2) / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi)) + power * ratio

    # The integrand is a mixture of bumps near 0 and near max(power, 0) (the
    # exponential tilt of the Gaussian); find its peak on a grid around both.
    centre_high = max(power, 0.0) + 1.0
    low, high = min(power, 0.0) - 40 * sigma - 1.0, centre_high + 40 * sigma
    grid = np.linspace(low, high, 4001)
    peak = float(np.max(log_integrand(grid)))

    def scaled(z: float) -> float:
        return math.exp(float(log_integrand(np.array([z]))[0]) - peak)

    value, _ = integrate.quad(
        scaled, low, high, points=[0.0, 0.5, centre_high - 1.0], limit=1000, epsrel=1e-12, epsabs=0
    )
    return peak + math.log(value)


def poisson_subsampled_gaussian(
    sigma: float = 1.0,
    rate: float = 0.01,
    orders: object = (2, 4, 8, 16, 32, 64),
    *,
    direction: str = "both",
) -> np.ndarray:
    """RDP of one step of the Poisson-subsampled Gaussian mechanism (add/remove neighbours).

    Parameters
    ----------
    sigma : float
        Noise multiplier σ > 0 (noise standard deviation over the sensitivity).
    rate : float
        Sampling probability q in (0, 1].
    orders : array_like
        Rényi orders ``lam > 1``: integers use the binomial closed form,
        other reals quadrature (module docstring).
    direction : {"both", "remove", "add"}
        The removal ``D(mu || mu_0)``, the addition ``D(mu_0 || mu)``, or the
        larger of the two (the RDP of the mechanism under add/remove).

    Returns
    -------
    numpy.ndarray
        ``eps(lam)`` in nats per order.
    """
    sigma = positive("sigma", sigma)
    rate = in_interval("rate", rate, 0.0, 1.0, low_open=True)
    lams = real_orders(orders)
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS} (got {direction!r})")
    result = np.empty(lams.shape)
    slack = math.log1p(QUADRATURE_SLACK)
    for index, lam in enumerate(lams):
        lam = float(lam)
        values = []
        if direction in ("both", "remove"):
            if lam.is_integer():
                log_a = _log_moment_integer(int(lam), sigma, rate)
            else:
                below, above = math.floor(lam), math.ceil(lam)
                share = lam - below
                log_below = 0.0 if below == 1 else _log_moment_integer(below, sigma, rate)
                cap = (1 - share) * log_below + share * _log_moment_integer(above, sigma, rate)
                log_a = min(_log_moment_quadrature(lam, sigma, rate) + slack, cap)
            values.append(log_a)
        if direction in ("both", "add"):
            values.append(_log_moment_quadrature(1.0 - lam, sigma, rate) + slack)
        result[index] = max(max(values), 0.0) / (lam - 1.0)
    return result
