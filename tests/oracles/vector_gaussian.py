"""Independent truths for the shuffled d-dimensional Gaussian (docs/vector-gaussian.md).

Everything here is computed from the definitions with numpy / scipy only and
shares no code with ``pld``:

* :func:`gaussian_mechanism_delta` -- the analytic profile of the Gaussian
  mechanism (Balle and Wang 2018, Thm 8);
* :func:`protocol_delta_mc` -- the hockey-stick divergence of the *real* shuffled
  protocol for one concrete pair of datasets (tiny n, any d), by Monte Carlo
  with a standard error: the density of the released multiset is a permanent of
  the users' densities. It is a lower bound on the protocol's delta (one pair),
  so a certified upper bound must lie above it;
* :func:`pairwise_divergence` -- the ideal term ``D_n`` of bound B for n = 1, 2 by
  adaptive quadrature (n = 2 is a 2-d integral);
* :func:`blanket_mc` -- the d-dimensional blanket divergence (eq. (1) with the
  blanket of the ball) of the antipodal pair and of the countermonotone variable of
  Theorem A, by Monte Carlo with a standard error (``omega`` sampled by rejection
  from N(0, I): accept with probability ``exp(-a |y|)``).

Units: sigma = 1 after scaling (``a = clip / sigma``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate, stats


def gaussian_mechanism_delta(eps: float, mu: float) -> float:
    """``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)`` (plain floats, no log space)."""
    return float(
        stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    )


def _log_permanent(log_matrix: np.ndarray) -> np.ndarray:
    """log of the permanent of each (n x n) matrix of a stack, from its log entries."""
    n = log_matrix.shape[-1]
    terms = []
    for perm in itertools.permutations(range(n)):
        terms.append(sum(log_matrix[..., i, perm[i]] for i in range(n)))
    stacked = np.stack(terms)
    top = stacked.max(axis=0)
    return top + np.log(np.exp(stacked - top).sum(axis=0))


def protocol_delta_mc(
    inputs_p: np.ndarray,
    inputs_q: np.ndarray,
    eps: float,
    *,
    samples: int = 400_000,
    seed: int = 0,
) -> tuple[float, float]:
    """(estimate, standard error) of ``H_{e^eps}(P || Q)`` for the released multiset.

    ``inputs_p`` and ``inputs_q`` are (n, d) arrays in sigma units (they differ in
    one row). Under P user i reports ``inputs_p[i] + N(0, I)``; the multiset has
    density ``(1/n!) perm[phi(y_j - x_i)]`` on ordered tuples, so
    ``H = E_P[(1 - e^eps perm_Q / perm_P)_+]``, a mean of values in [0, 1].
    """
    rng = np.random.default_rng(seed)
    inputs_p = np.asarray(inputs_p, dtype=float)
    inputs_q = np.asarray(inputs_q, dtype=float)
    values = []
    for _ in range(max(1, samples // 100_000)):
        size = min(samples, 100_000)
        y = inputs_p[None, :, :] + rng.standard_normal((size, *inputs_p.shape))
        # log phi(y_j - x_i) up to the common constant: -|y_j - x_i|^2 / 2
        log_p = -0.5 * ((y[:, None, :, :] - inputs_p[None, :, None, :]) ** 2).sum(-1)
        log_q = -0.5 * ((y[:, None, :, :] - inputs_q[None, :, None, :]) ** 2).sum(-1)
        ratio = np.exp(_log_permanent(log_q) - _log_permanent(log_p))
        values.append(np.maximum(1.0 - math.exp(eps) * ratio, 0.0))
    v = np.concatenate(values)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def _tail_plus(c: float, s: float, alpha: float) -> float:
    """``E[(c + Z)_+]`` in closed form: ``Z`` is increasing in ``y`` and ``omega r = N(s/2, 1)``.

    With ``y*`` where ``c + Z(y*) = 0``: ``c omega(Y > y*) + P_+(Y > y*) - alpha P_-(Y > y*)``.
    """
    u = (-c - (1 - alpha)) / (1 + alpha)
    if u >= 1:
        return 0.0
    y = -math.inf if u <= -1 else (2 / s) * math.atanh(u)
    up = stats.norm.sf(y - s / 2)
    down = stats.norm.sf(y + s / 2)
    return max(c * 0.5 * (up + down) + up - alpha * down, 0.0)


def pairwise_divergence(n: int, s: float, eps: float, q: float) -> float:
    """``D_n(eps; q) = (1/(n q)) E[(sum_i B_i Z_i)_+]`` of bound B for n = 1 or 2.

    ``Z = (1 - alpha) + (1 + alpha) tanh(s Y / 2)``, ``Y ~ (N(s/2, 1) + N(-s/2, 1))/2``;
    ``E[(Z)_+]`` in closed form, ``E[(Z_1 + Z_2)_+]`` by adaptive quadrature over
    ``Y_1`` of the closed form in ``Y_2``.
    """
    alpha = math.exp(eps)
    one = _tail_plus(0.0, s, alpha)
    if n == 1:
        return one
    if n != 2:
        raise ValueError("n must be 1 or 2")

    def inner(y: float) -> float:
        density = 0.5 * (stats.norm.pdf(y - s / 2) + stats.norm.pdf(y + s / 2))
        return density * _tail_plus((1 - alpha) + (1 + alpha) * math.tanh(s * y / 2), s, alpha)

    reach = 40.0 + s
    # The integrand has a kink where Z(y_1) = -2 (the inner law's whole support turns
    # positive); split there and on a grid of the scale 1/s.
    points = list(np.linspace(-10.0, 10.0, 41) * max(1.0, 1.0 / s))
    kink = (alpha - 3.0) / (1.0 + alpha)
    if -1.0 < kink < 1.0:
        points.append((2 / s) * math.atanh(kink))
    points = sorted(p for p in points if -reach < p < reach)
    two = integrate.quad(
        inner, -reach, reach, limit=4000, epsabs=1e-16, epsrel=1e-12, points=points
    )[0]
    return (2 * q * (1 - q) * one + q * q * two) / (2 * q)


def blanket_mass(a: float, dim: int) -> float:
    """``gamma_d = E[exp(-a chi_d - a^2/2)]`` by quadrature of the chi density on sqrt(d) +- 40."""
    centre = math.sqrt(dim)
    value = integrate.quad(
        lambda r: math.exp(stats.chi.logpdf(r, dim) - a * r - a * a / 2),
        max(0.0, centre - 40.0),
        centre + 40.0,
        points=[centre],
        limit=200,
        epsabs=0.0,
        epsrel=1e-12,
    )[0]
    return value


def _sample_blanket(
    rng: np.random.Generator, a: float, dim: int, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """(|Y|, Y_1) for ``size`` draws of ``Y ~ omega`` (density proportional to phi_d(|y| + a))."""
    norms, firsts = [], []
    count = 0
    while count < size:
        first = rng.standard_normal(2 * size)
        rest = rng.chisquare(dim - 1, 2 * size) if dim > 1 else np.zeros(2 * size)
        norm = np.sqrt(first**2 + rest)
        keep = rng.random(2 * size) < np.exp(-a * norm)
        norms.append(norm[keep])
        firsts.append(first[keep])
        count += int(keep.sum())
    return np.concatenate(norms)[:size], np.concatenate(firsts)[:size]


def blanket_mc(
    a: float,
    dim: int,
    n: int,
    eps: float,
    *,
    coupling: str = "antipodal",
    pool: int = 1_000_000,
    samples: int = 400_000,
    seed: int = 0,
) -> tuple[float, float]:
    """(estimate, standard error) of ``(1/(n gamma)) E[(sum_i B_i W_i)_+]``, ``B_i ~ Bern(gamma)``.

    ``coupling="antipodal"``: ``W = gamma e^{a|Y|} (e^{a Y_1} - alpha e^{-a Y_1})``, the
    pair ``(a e_1, -a e_1)``; ``"countermonotone"``: ``W = r_(k) - alpha r_(N+1-k)``
    over the sorted pool ``r = gamma e^{a(|Y| + Y_1)}`` (the empirical version of
    Theorem A's variable; its bias is of order 1/pool). ``W_i`` are drawn from a
    pool of ``pool`` draws of ``omega``.
    """
    rng = np.random.default_rng(seed)
    gamma = blanket_mass(a, dim)
    alpha = math.exp(eps)
    norm, first = _sample_blanket(rng, a, dim, pool)
    if coupling == "antipodal":
        w = gamma * np.exp(a * norm) * (np.exp(a * first) - alpha * np.exp(-a * first))
    elif coupling == "countermonotone":
        r = np.sort(gamma * np.exp(a * (norm + first)))
        w = r - alpha * r[::-1]
    else:
        raise ValueError("coupling must be 'antipodal' or 'countermonotone'")
    values = []
    done = 0
    while done < samples:
        size = min(100_000, samples - done)
        picks = w[rng.integers(0, w.size, (size, n))]
        on = rng.random((size, n)) < gamma
        values.append(np.maximum((picks * on).sum(axis=1), 0.0) / (n * gamma))
        done += size
    v = np.concatenate(values)
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))
