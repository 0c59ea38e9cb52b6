"""The mixture maths shared by every subsampling: hockey sticks of mixture pairs.

Subsampling turns a base pair (P, Q) into mixtures. Write ``H(beta) =
H_beta(P || Q)`` for the base's hockey-stick curve (all ``beta >= 0``). Expanding
the positive parts term by term (derived here, checked against the mixtures'
hockey sticks in tests/subsampling/test_subsample.py and tests/subsampling/test_sampling.py):

    A(alpha) = H_alpha(gamma P + (1-gamma) Q || Q)
             = 1 - alpha                                  if alpha < 1 - gamma,
             = gamma H(1 + (alpha - 1) / gamma)           otherwise;                (5)
    B(alpha) = H_alpha(P || gamma Q + (1-gamma) P)
             = c H(alpha gamma / c),  c = 1 - alpha (1 - gamma),   if c > 0,
             = 0                                          otherwise.                (6)

(the equation numbers of :mod:`pld.subsampling.subsampled_shuffler`). Both are increasing
functions of the curve ``H``, each evaluated at one point, so a curve above
(below) the base's gives values above (below) the mixture's.

With the curve of the base given by atoms (P-mass ``m_i`` at loss ``l_i``,
Q-mass ``m_i e^{-l_i}``, P-mass ``p_inf`` at ``+inf``), ``H(beta) = p_inf +
P_tail - beta Q_tail`` over the atoms with ``l_i > log beta``, so

    A = gamma (P_tail + p_inf) - (alpha - 1 + gamma) Q_tail,
    B = c (P_tail + p_inf) - alpha gamma Q_tail,

evaluated exactly by suffix sums (long double) with a float error budget.

Used by :mod:`pld.subsampling.subsampled_shuffler` (fixed-size sampling of shufflers,
Koskela et al. 2023, Lemma 7) and :mod:`pld.subsampling.poisson` (Poisson sampling and sampling
without replacement of central mechanisms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pld.distribution import tail_sums
from pld.numerics import UNIT_ROUNDOFF

if TYPE_CHECKING:  # pragma: no cover
    from pld.distribution import PLD

#: Unit round-off of float64 and of long double.
UNIT = 2 * UNIT_ROUNDOFF
LONGUNIT = float(np.finfo(np.longdouble).eps)


@dataclass(frozen=True)
class Curve:
    """Suffix sums of one direction's atoms: ``H(beta) = p_inf + p_tail - beta q_tail``."""

    loss: np.ndarray
    p_tail: np.ndarray
    q_tail: np.ndarray
    p_infinity: float
    relative_error: float


def curve_from_atoms(
    loss: np.ndarray,
    p_mass: np.ndarray,
    p_infinity: float,
    *,
    fill: bool,
    mass_error: float = 0.0,
) -> Curve:
    """Sort the atoms and take suffix sums in long double.

    ``mass_error``: the relative error the atoms' masses may already carry (the
    base's ``LossAtoms.mass_error``); it is added to the curve's ``relative_error``.

    ``fill``: add a shortfall of the total P-mass below 1 to ``p_infinity`` (an
    upper-bound charge; the base's upper atoms should sum to 1 already) unless it
    is within the curve's ``relative_error`` of the total, which the budgets of
    :func:`branches` already cover.
    """
    finite = np.isfinite(loss) & (p_mass > 0)
    p_infinity = p_infinity + float(p_mass[np.isposinf(loss)].sum())
    order = np.argsort(loss[finite], kind="stable")
    loss = loss[finite][order]
    p_mass = p_mass[finite][order]
    with np.errstate(divide="ignore"):
        q_mass = np.exp(np.log(p_mass) - loss)
    p_tail, q_tail = tail_sums(p_mass, q_mass)
    # Sequential long-double sums of n positive terms: relative error <= n u_long;
    # exp and the float64 inputs: a few u.
    relative_error = 8 * UNIT + 2 * loss.size * LONGUNIT + mass_error
    if fill:
        # The budgets of `branches` cover every pair whose masses are within
        # relative_error of these; a shortfall that small is float rounding of
        # such a pair (it would otherwise put ~1e-16 per round at +inf, an
        # infinite eps below delta ~ T * 1e-16). A larger one is charged.
        shortfall = float(1 - p_tail[0] - p_infinity)
        if shortfall > relative_error * float(p_tail[0]):
            p_infinity += shortfall
    return Curve(loss, p_tail, q_tail, p_infinity, relative_error)


def _terms(curve: Curve, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``P_tail + p_inf``, ``Q_tail`` over atoms with loss > log beta, and the boundary mass.

    The boundary term is ``rho`` times the P-mass of atoms whose loss is within
    ``rho`` of ``log beta`` (rho: the float error of ``log beta`` and of the
    losses): each of them contributes at most ``rho`` times its mass to H,
    whichever side of ``log beta`` it is counted on.
    """
    with np.errstate(divide="ignore"):
        log_beta = np.log(beta.astype(np.float64))
    index = np.searchsorted(curve.loss, log_beta, side="right")
    rho = 8 * UNIT * (1 + np.abs(np.where(np.isfinite(log_beta), log_beta, 0.0)))
    first = np.searchsorted(curve.loss, log_beta - rho, side="left")
    last = np.searchsorted(curve.loss, log_beta + rho, side="right")
    p_sum = curve.p_tail[index] + np.longdouble(curve.p_infinity)
    boundary = (curve.p_tail[first] - curve.p_tail[last]) * rho
    return p_sum, curve.q_tail[index], boundary


def branches(curve: Curve, rate: float, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A and B of one direction at ``alpha`` (long double), eqs. (5)-(6), and their budgets.

    Returns ``values`` and ``errors`` of shape ``(2, len(alpha))``: row 0 is A, row 1 is B.
    """
    gamma = np.longdouble(rate)
    one = np.longdouble(1)
    rel = curve.relative_error
    # A, eq. (5): below 1 - gamma exactly 1 - alpha.
    beta_a = np.maximum(one + (alpha - one) / gamma, 0)
    p_sum, q_sum, boundary = _terms(curve, beta_a)
    slope = alpha - one + gamma
    a_value = np.where(slope > 0, gamma * p_sum - slope * q_sum, one - alpha)
    a_error = np.where(
        slope > 0, rel * (gamma * p_sum + (alpha + one) * q_sum) + gamma * boundary, 0
    )
    # B, eq. (6): zero once c = 1 - alpha (1 - gamma) <= 0.
    c = one - alpha * (one - gamma)
    positive = c > 0
    beta_b = np.where(positive, alpha * gamma / np.where(positive, c, one), np.inf)
    p_sum, q_sum, boundary = _terms(curve, beta_b)
    b_value = np.where(positive, c * p_sum - alpha * gamma * q_sum, 0)
    b_error = rel * ((np.abs(c) + one + alpha) * p_sum + alpha * gamma * q_sum)
    b_error = b_error + np.maximum(c, 0) * boundary
    return np.stack((a_value, b_value)), np.stack((a_error, b_error))


def base_curves(base: PLD, bound: str) -> list[Curve]:
    """One curve per direction of the base, with losses moved by the engine's loss error.

    The engine bounds the true delta by its atoms' delta at ``eps -/+ loss_error``
    (upper/lower): shifting every loss up (upper) or down (lower) by that amount
    turns the atoms into a curve above (below) the base's true curve.
    """
    from pld.engine import loss_rounding_error

    curves = []
    for atoms in base.atoms(bound):
        shift = loss_rounding_error(atoms.loss, base.loss_grid_step)
        loss = atoms.loss + (shift if bound == "upper" else -shift)
        curves.append(
            curve_from_atoms(
                loss,
                atoms.mass,
                atoms.infinity_mass,
                fill=bound == "upper",
                mass_error=atoms.mass_error,
            )
        )
    return curves


def kink_reach(curves: list[Curve], rate: float) -> float:
    """Half-width E of a symmetric eps range ``[-E, E]`` that holds every kink of h.

    A base atom at loss l puts kinks of h at ``log(1 + gamma (e^l - 1))`` (eq. 5)
    and ``-log(1 + gamma (e^{-l} - 1))`` (eq. 6); for ``l >= 0`` the first is the
    larger in absolute value (their product of ``1 + ...`` terms is
    ``1 + gamma (1 - gamma) (e^l - 2 + e^{-l}) >= 1``). Beyond the largest kink h
    is constant and below the smallest one linear, so there the
    connect-the-dots curve is exact, up to the base's masses at infinity (whose
    kinks, at ``-/+ log(1 - gamma)``, are left out: they change delta by at most
    those masses).
    """
    reach = 0.0
    log_rate = math.log(rate)
    log_rest = math.log1p(-rate) if rate < 1 else -math.inf
    for curve in curves:
        if curve.loss.size == 0:
            continue
        for extreme in (float(curve.loss[-1]), -float(curve.loss[0])):
            if extreme > 0:
                reach = max(reach, float(np.logaddexp(log_rest, log_rate + extreme)))
    return reach


def chi_square(base: PLD) -> float:
    """``chi^2(P || Q) = E_Q[(P/Q - 1)^2]`` of a base's upper atoms (finite losses), nats-free.

    The largest over the base's directions; each term ``m (e^l - 1)^2 e^-l`` is
    non-negative, so the sum has no cancellation.
    """
    total = 0.0
    for atoms in base.atoms("upper"):
        finite = np.isfinite(atoms.loss) & (atoms.mass > 0)
        loss = atoms.loss[finite]
        total = max(total, float(np.sum(atoms.mass[finite] * np.expm1(loss) ** 2 * np.exp(-loss))))
    return total


def subsampled_loss_std(base: PLD, rate: float) -> float:
    """Estimated standard deviation (nats) of the loss of a mixture at ``rate``, for default grids.

    With likelihood ratio ``R = e^L`` of the base, the mixture's ratio is
    ``1 + rate (R - 1)``, so its loss is ``~ rate (R - 1)`` and its standard deviation
    ``rate sqrt(chi^2)`` (:func:`chi_square`), to first order in the rate; every
    subsampling (Poisson, fixed size, check-in's count mixture) chooses its default
    grid from it.
    """
    return rate * math.sqrt(chi_square(base))
