"""The other direction of the shuffle-Gaussian pair: ``D_lam(G || Mix)``.

For the canonical pair of Liew and Takahashi (2022), Thm 1 (``G = M(D)``, ``Mix = M(D')``, see
:mod:`pld.rdp.shuffle`) the likelihood ratio under ``G`` is
``Y = Mix/G = (1/n) sum_i W_i`` with ``W_i = exp(z_i / sigma - 1 / (2 sigma^2))``,
``z_i ~ N(0, 1)`` i.i.d. (Liew and Takahashi 2022, eq. 9-11), so with ``s = lam - 1``

    D_lam(G || Mix) = 1/s log E[Y^-s].

There is no multinomial expansion for a negative power. The Gamma-function identity
``y^-s = 1/Gamma(s) int_0^inf t^(s-1) e^(-t y) dt`` and independence give

    E[Y^-s] - 1 = 1/Gamma(s) int_0^inf t^(s-1) e^-t expm1(n psi(t/n)) dt,
    psi(u) = log E[exp(-u (W - 1))] >= 0,

a one-dimensional integral of a one-dimensional expectation, with a non-negative
integrand (so ``E[Y^-s] - 1``, which is ~1e-7 for n = 60000, keeps its relative
precision). ``psi(u) = log1p(E[g(u (W - 1))])`` with ``g(x) = e^-x - 1 + x >= 0`` for
``u <= 1`` (no cancellation) and ``u + log E[e^(-u W)]`` in log space above. Both
integrals are trapezoid sums on uniform grids (in ``z`` and in ``log t``); the
integrands are analytic and decay at least like Gaussians, where the trapezoid rule
converges exponentially. Checked against the closed form ``lam / (2 sigma^2)`` at
``n = 1`` and a direct two-dimensional quadrature at ``n = 2`` in
``tests/rdp/test_rdp_shuffle_gaussian.py``; the result is at most ``lam / (2 sigma^2)``
(the shuffle is post-processing of the unshuffled Gaussian vector).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

_TAYLOR_TERMS = 12


def _g(x: np.ndarray) -> np.ndarray:
    """``e^-x - 1 + x`` without cancellation (Taylor series for ``|x| < 0.5``)."""
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    xs = x[small]
    term = xs * xs / 2.0
    acc = term.copy()
    for k in range(3, _TAYLOR_TERMS + 3):
        term = term * (-xs) / k
        acc += term
    out[small] = acc
    xl = x[~small]
    out[~small] = np.expm1(-xl) + xl
    return out


def _log_integrand_core(
    t: np.ndarray, n: int, sigma: float, z: np.ndarray, log_weight: np.ndarray
) -> np.ndarray:
    """``log(e^-t expm1(n psi(t/n))) = log(E[e^(-t Y)] - e^-t)`` for each ``t``.

    For ``u = t/n <= 1``: ``psi = log1p(E[g(u (W - 1))])`` and the result is
    ``-t + log(expm1(n psi))``. Above, ``n log E[e^(-u W)] + log1p(-e^(-n psi))``,
    which never forms ``u + log E[e^(-u W)]`` from two huge numbers.
    """
    w = np.exp(z / sigma - 1.0 / (2.0 * sigma * sigma))
    weight = np.exp(log_weight)
    u = t / n
    out = np.empty_like(t)
    small = np.flatnonzero(u <= 1.0)
    large = np.flatnonzero(u > 1.0)
    rows = max(1, 2_000_000 // z.shape[0])
    for chunk in range(0, small.shape[0], rows):
        index = small[chunk : chunk + rows]
        excess = _g(np.outer(u[index], w - 1.0)) @ weight
        n_psi = n * np.log1p(excess)
        with np.errstate(divide="ignore"):
            log_expm1 = np.where(
                n_psi > 30.0,
                n_psi + np.log1p(-np.exp(-np.maximum(n_psi, 30.0))),
                np.log(np.expm1(np.minimum(n_psi, 30.0))),
            )
        out[index] = -t[index] + log_expm1
    for chunk in range(0, large.shape[0], rows):
        index = large[chunk : chunk + rows]
        log_laplace = logsumexp(log_weight[None, :] - np.outer(u[index], w), axis=1)
        n_psi = n * (u[index] + log_laplace)
        with np.errstate(divide="ignore"):
            out[index] = n * log_laplace + np.log1p(-np.exp(-np.maximum(n_psi, 1e-300)))
    return out


def gaussian_vs_mixture(n: int, sigma: float, orders: np.ndarray) -> np.ndarray:
    """``D_lam(M(D) || M(D'))`` of the canonical shuffle-Gaussian pair (validated inputs).

    ``orders`` are integers >= 2 (validated by :func:`pld.rdp.shuffle.shuffle_gaussian`).
    Returns ``eps(lam)`` in nats, capped at ``lam / (2 sigma^2)`` (data processing).
    """
    lams = np.asarray(orders, dtype=np.float64)
    s_values = lams - 1.0
    s_max = float(s_values.max())
    step_y = 0.02
    # the integrand in y = log t behaves like exp((s + 1) y) for small t
    y_lo = -40.0 / (1.0 + s_values.min()) - 5.0
    # for large t the integrand is largest at n = 1, where E[e^(-t W)] ~ P(W < 1/t)
    # = Phi(-sigma (log t + 1/(2 sigma^2))) puts its peak at log t ~ s / sigma^2
    # with width 1/sigma
    y_hi = max(30.0, (s_max + 1.0) / (sigma * sigma) + 15.0 / sigma + 40.0)
    y = np.arange(y_lo, y_hi + step_y, step_y)
    t = np.exp(y)
    u = t / n
    log_u_max = math.log(float(u.max()))
    step_z = min(0.05, sigma / 20.0)
    z_lo = min(-12.0, (-log_u_max - 1.0 / (2 * sigma * sigma)) * sigma - 12.0)
    z_hi = 1.0 / sigma + 14.0
    z = np.arange(z_lo, z_hi + step_z, step_z)
    log_weight = math.log(step_z) - 0.5 * z * z - 0.5 * math.log(2.0 * math.pi)
    core = _log_integrand_core(t, n, sigma, z, log_weight)
    result = np.empty(lams.shape)
    for index, s in enumerate(s_values):
        log_integrand = s * y + core
        log_excess = float(logsumexp(log_integrand)) + math.log(step_y) - gammaln(s)
        log_moment = float(np.logaddexp(0.0, log_excess))
        result[index] = min(log_moment / s, lams[index] / (2.0 * sigma * sigma))
    return result
