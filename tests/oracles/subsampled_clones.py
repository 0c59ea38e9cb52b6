"""Independent truth for ``pld.subsample(pld.clones(m, eps0), gamma)`` after T rounds.

Shares no code with ``pld``. Three steps:

1. The clones pair (Koskela et al. 2023, eq. 3.1, default p = 1/(e^eps0 + 1), so w2 = 0): the
   other m - 1 users are trinomial(m - 1; p, p, 1 - 2p) (a clone of 0, of 1, or
   uninformative); the target reports 0 with probability q = e^eps0 p under P
   and p under Q (1 otherwise). Every lattice point (a, b) with its exact P- and
   Q-mass in long double (log-factorials by cumulative sums), within +-16
   standard deviations (the mass outside is below 1e-50; the masses are
   normalised, which removes the log-factorials' common rounding).
2. Lemma 7 (Koskela et al. 2023, eq. 2.3) as measures: P_A = gamma P + (1 - gamma) Q,
   Q_A = Q; its profile is h = max(A, B) with A = H(P_A || Q_A) and, the base
   being symmetric, B = H(Q_A || P_A); A >= B on alpha >= 1 is checked at every
   grid point, so h is the profile of the symmetric pair that keeps P_A's
   positive losses and mirrors them.
3. Two pairs on the grid ``k s`` whose composed deltas bracket that of h:
   * upper: connect-the-dots (each atom split between its two grid points
     keeping its P- and Q-mass; Doroshenko et al. 2022), which dominates;
   * lower: the values of h at the grid points lowered by the chord-excess bound
     ``(b - a)(h'(b-) - h'(a+)) / 4`` of each adjacent interval (tangent lines of
     the convex h; ``h'(b-) - h'(a+)`` is the Q-mass of the atoms inside), their
     lower convex hull, floored at 0: a profile below h everywhere, hence a
     dominated pair.
   Both are composed by dp_accounting (pessimistic / optimistic truncation), or,
   for deltas far in the tail, exponentially tilted towards the queried eps
   (Esscher: masses ``m_k e^(lam k s) / M(lam)``, composed, untilted).
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as dpa

LD = np.longdouble

#: dp_accounting's truncation per composition; subtracted from the lower bound.
TAIL_MASS_TRUNCATION = 1e-15


def clones_atoms(m: int, eps0: float, width: float = 16.0) -> tuple[np.ndarray, np.ndarray]:
    """P- and Q-masses (long double) of the clones pair's lattice points for m users."""
    others = m - 1
    p = 1.0 / (math.exp(eps0) + 1.0)
    q = math.exp(eps0) * p
    rho = 2 * p
    mean, sd = others * rho, math.sqrt(max(others * rho * (1 - rho), 1.0))
    t_low = max(0, int(mean - width * sd) - 2)
    t_high = min(m, int(mean + width * sd) + 3)
    log_fact = np.concatenate([[LD(0)], np.cumsum(np.log(np.arange(1, others + 1, dtype=LD)))])
    log_p, log_rest = np.log(LD(p)), np.log1p(LD(-2 * p))

    def log_trinomial(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        ok = (x >= 0) & (y >= 0) & (x + y <= others)
        xs, ys = np.where(ok, x, 0), np.where(ok, y, 0)
        value = (
            log_fact[others]
            - log_fact[xs]
            - log_fact[ys]
            - log_fact[others - xs - ys]
            + (xs + ys) * log_p
            + (others - xs - ys) * log_rest
        )
        return np.where(ok, value, LD(-np.inf))

    log_ps, log_qs = [], []
    for t in range(t_low, t_high + 1):
        spread = math.sqrt(max(t, 1)) / 2
        a_low = max(0, int(t / 2 - width * spread) - 2)
        a = np.arange(a_low, min(t, int(t / 2 + width * spread) + 2) + 1)
        zero = log_trinomial(a - 1, t - a)  # the target reported 0
        one = log_trinomial(a, t - a - 1)  # the target reported 1
        log_ps.append(np.logaddexp(np.log(LD(q)) + zero, np.log(LD(p)) + one))
        log_qs.append(np.logaddexp(np.log(LD(p)) + zero, np.log(LD(q)) + one))
    log_ps, log_qs = np.concatenate(log_ps), np.concatenate(log_qs)
    keep = np.isfinite(log_ps)
    big_p, big_q = np.exp(log_ps[keep]), np.exp(log_qs[keep])
    return big_p / big_p.sum(dtype=LD), big_q / big_q.sum(dtype=LD)


def grid_pairs(
    m: int, eps0: float, gamma: float, step: float
) -> tuple[tuple[dict[int, float], float], tuple[dict[int, float], float]]:
    """(upper, lower): each a P-pmf ``{k: mass at loss k * step}`` and its mass at +inf."""
    big_p, big_q = clones_atoms(m, eps0)
    mixed_p = gamma * big_p + (1 - gamma) * big_q
    loss = np.log(mixed_p / big_q)
    order = np.argsort(loss)
    loss, mixed_p, mixed_q = loss[order], mixed_p[order], big_q[order]
    top = int(math.ceil(float(loss[-1]) / step)) + 2
    eps = np.arange(top + 1) * LD(step)
    alpha = np.exp(eps)
    flat = loss.astype(np.float64)
    suffix_p = np.concatenate([np.cumsum(mixed_p[::-1])[::-1], [LD(0)]])
    suffix_q = np.concatenate([np.cumsum(mixed_q[::-1])[::-1], [LD(0)]])
    prefix_p = np.concatenate([[LD(0)], np.cumsum(mixed_p)])
    prefix_q = np.concatenate([[LD(0)], np.cumsum(mixed_q)])
    above = np.searchsorted(flat, eps.astype(np.float64), side="right")
    a_values = suffix_p[above] - alpha * suffix_q[above]
    below = np.searchsorted(flat, -eps.astype(np.float64), side="left")
    b_values = prefix_q[below] - alpha * prefix_p[below]
    if float(np.max(b_values - a_values)) > 1e-15:
        raise AssertionError("B exceeds A on alpha >= 1: the mirrored pair is not h's")

    # Upper: connect-the-dots split of the positive losses (Q-mass per grid point).
    positive = loss > 0
    cell = np.floor(loss[positive] / LD(step)).astype(np.int64)
    left, right = alpha[cell], alpha[cell + 1]
    share = (np.exp(loss[positive]) - left) / (right - left)
    on_grid = loss[positive] == cell * LD(step)
    share = np.where(on_grid, 0, share)
    q_mass = np.zeros(top + 2, dtype=LD)
    np.add.at(q_mass, cell + 1, share * mixed_q[positive])
    np.add.at(q_mass, cell, (1 - share) * mixed_q[positive])
    inside = np.zeros(top + 1, dtype=LD)
    np.add.at(inside, cell, np.where(on_grid, 0, mixed_q[positive]))
    upper = _symmetric_pmf(q_mass, alpha, 1e-40)

    # Lower: values lowered by the chord-excess bound, hulled, floored at 0.
    widths = np.diff(alpha)
    excess = np.append(widths[:top] * inside[:top] / 4, LD(0))
    lowering = np.empty(top + 1, dtype=LD)
    lowering[0] = excess[0]
    lowering[1:] = np.maximum(excess[:-1], excess[1:])
    values = a_values - lowering * (1 + 1e-9) - a_values * 1e-12
    hull = [0]
    for i in range(1, top + 1):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (values[i1] - values[i0]) * (alpha[i] - alpha[i0]) >= (values[i] - values[i0]) * (
                alpha[i1] - alpha[i0]
            ):
                hull.pop()
            else:
                break
        hull.append(i)
    curve = np.empty(top + 1, dtype=LD)
    for i0, i1 in zip(hull[:-1], hull[1:], strict=True):
        share = (alpha[i0 : i1 + 1] - alpha[i0]) / (alpha[i1] - alpha[i0])
        curve[i0 : i1 + 1] = values[i0] + share * (values[i1] - values[i0])
    curve = np.maximum(curve, 0)
    tails = np.append((curve[:-1] - curve[1:]) / widths[:top], LD(0))  # Q(L >= k s), k >= 1
    q_low = np.zeros(top + 2, dtype=LD)
    q_low[1 : top + 1] = np.maximum(tails[:-1] - tails[1:], 0)
    lower = _symmetric_pmf(q_low, alpha, 0.0)
    return upper, lower


def _symmetric_pmf(
    q_mass: np.ndarray, alpha: np.ndarray, infinity: float
) -> tuple[dict[int, float], float]:
    """The symmetric pair with Q-mass ``q_mass[k]`` at loss ``k s`` (k >= 1), mirrored."""
    q = q_mass[1 : len(alpha)]
    p = q * alpha[1:]
    zero = 1 - infinity - float(np.sum(p + q, dtype=LD))
    if zero < -1e-15:
        raise AssertionError(f"not a pair: mass {zero} at loss 0")
    pmf = {0: max(zero, 0.0)}
    for k in np.flatnonzero(q > 0):
        pmf[int(k) + 1] = float(p[k])
        pmf[-int(k) - 1] = float(q[k])
    return pmf, infinity


def composed_deltas(
    pmf: dict[int, float], infinity: float, step: float, rounds: int, eps: list[float], side: str
) -> list[float]:
    """delta(eps) of ``rounds`` compositions by dp_accounting (upper: pessimistic)."""
    loss = dpa.PrivacyLossDistribution.create_from_rounded_probability(
        pmf, infinity, step, pessimistic_estimate=side == "upper"
    )
    if rounds > 1:
        loss = loss.self_compose(rounds, tail_mass_truncation=TAIL_MASS_TRUNCATION)
    values = [float(loss.get_delta_for_epsilon(e)) for e in eps]
    if side == "lower":
        values = [v - 2 * TAIL_MASS_TRUNCATION for v in values]
    return values


def tilted_delta(
    pmf: dict[int, float], infinity: float, step: float, rounds: int, eps: float, side: str
) -> float:
    """delta(eps) of ``rounds`` compositions, tilted so that the composed mean is eps."""
    ks = np.array(sorted(k for k, v in pmf.items() if v > 0), dtype=np.int64)
    log_mass = np.log(np.array([pmf[int(k)] for k in ks], dtype=LD))
    x = ks * LD(step)

    def log_mgf_and_mean(lam: LD) -> tuple[LD, float]:
        exponent = log_mass + lam * x
        peak = exponent.max()
        weights = np.exp(exponent - peak)
        return peak + np.log(weights.sum()), float((weights * x).sum() / weights.sum())

    low, high = LD(0), LD(1)
    while log_mgf_and_mean(high)[1] < eps / rounds:
        high *= 2
    for _ in range(80):
        middle = (low + high) / 2
        if log_mgf_and_mean(middle)[1] < eps / rounds:
            low = middle
        else:
            high = middle
    lam = low
    log_mgf, _ = log_mgf_and_mean(lam)
    tilted = np.exp(log_mass + lam * x - log_mgf)
    loss = dpa.PrivacyLossDistribution.create_from_rounded_probability(
        {int(k): float(v) for k, v in zip(ks, tilted, strict=True)},
        0.0,
        step,
        pessimistic_estimate=side == "upper",
    )
    composed = loss.self_compose(rounds, tail_mass_truncation=TAIL_MASS_TRUNCATION)._pmf_remove
    probs = np.asarray(composed._probs, dtype=LD)
    grid = (composed._lower_loss + np.arange(probs.size)) * LD(step)
    scale = rounds * log_mgf - lam * grid
    kept = (grid > eps) & (probs > 0)
    value = float(
        np.sum(np.exp(scale[kept] + np.log(probs[kept])) * -np.expm1(LD(eps) - grid[kept]))
    )
    # The truncated tilted mass (at most TAIL_MASS_TRUNCATION) weighs at most this much.
    slack = TAIL_MASS_TRUNCATION * float(np.exp(rounds * log_mgf - lam * LD(eps)))
    if side == "upper":
        return value + (1 - (1 - infinity) ** rounds) + slack
    return value - slack
