"""Exchange PLDs with Google's ``dp_accounting`` (optional: ``pip install dp-accounting``).

Both libraries store one direction of a privacy-loss distribution the same way:
P-masses ``m_k`` at the losses ``k * h`` plus a mass at ``+inf``, and
``delta(eps) = infinity_mass + sum_k m_k (1 - exp(eps - k h))_+`` (seed 004,
eq 2.1). ``dp_accounting``'s ``PrivacyLossDistribution`` keeps a REMOVE and an
ADD direction; they map to pld's first (P->Q) and second (Q->P) direction. A
symmetric pld PLD becomes a symmetric ``dp_accounting`` one. When a shuffle
round is composed with ``dp_accounting``'s own mechanisms, the pair (P, Q) must
be in the same order as the neighbouring datasets of those mechanisms; every
shuffle mechanism of pld is symmetric, so the order does not matter for them.

Export (:func:`to_dp_accounting`)
    ``bound="upper"`` gives a *pessimistic* ``dp_accounting`` PLD whose exact
    delta(eps) is at least pld's bound on the true one for every eps: the error
    terms pld adds when it queries (loss-position error, relative mass error,
    float round-off of the masses, see :mod:`pld.engine.loss_pmf`) are folded
    into the masses and the mass at +inf (:func:`_exported_masses`). pld's
    allowance for the round-off of its own summation concerns the evaluation,
    not the masses, and is not exported: ``dp_accounting`` sums with its own
    round-off, which pld does not bound. ``bound="lower"`` gives an
    *optimistic* one from pld's lower side (masses scaled by ``1 -
    mass_error``); its exact delta(eps) may exceed pld's lower bound by at most
    ``junk_mass + error_l1 + loss_error`` (times a mass <= 1; about 1e-12 for
    one round of this library's mechanisms, 1e-10 after 100 rounds), which
    cannot be folded into a pmf.

Import (:func:`from_dp_accounting`)
    A pessimistic grid pmf with P-masses ``m_k`` at losses ``k h`` is the PLD
    of a genuine pair: ``Q_k = m_k exp(-k h)``, plus the mass at +inf (where Q
    is 0) and the remaining Q-mass where P is 0. (``dp_accounting``'s
    pessimistic pmfs are pessimistic above the bottom of their eps grid, but
    their Q-masses may sum to a little more than 1: 1 + 9e-5 for its Gaussian
    with sigma = 1 on a 1e-4 grid. The lowest atoms are then moved up, with
    their P-mass, until Q sums to 1; larger losses raise every hockey stick,
    also after composition, and one round's delta(eps) is unchanged for eps
    above the bottom of the distribution.) That pair goes through
    :func:`pld.from_pmfs` (on the grid step ``h`` by default, so no atom moves)
    and gives pld's upper side, rigorous for the mechanism whenever the
    ``dp_accounting`` PLD dominates it. Without an optimistic PLD, pld's lower
    side comes from the same pair: it bounds the composition of that
    pessimistic pair from below (the numerical error of pld's accounting), not
    the mechanism.

    With an optimistic PLD too, pld's lower side is its masses: the bracket
    then contains the mechanism's true value as far as ``dp_accounting``'s
    optimistic estimate is a lower bound for it. An optimistic pmf rounds
    losses down with the same P-mass, so its Q-masses may sum to more than 1:
    it is not a genuine pair, but it is exactly what the engine's lower side
    may hold (docs/architecture.md). Its masses are used as they are when
    pld's grid is ``h`` or ``h / 2^j`` (every atom is a grid point). On any
    other grid they go through :func:`pld.from_pmfs` after P-mass is removed
    from the lowest-loss atoms until Q sums to 1 (a lower bound stays one;
    one round's delta(eps) is unchanged for eps >= 0, a composition's loses
    at most the removed mass per round).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from pld.engine.loss_pmf import LossPmf
from pld.loss_distribution import DEFAULT_MASS_RELATIVE_ERROR, PLD, _Direction, from_pmfs

_INSTALL_HINT = "interoperability needs dp_accounting: pip install dp-accounting"


def _dp_accounting_modules() -> tuple[Any, Any]:
    try:
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution
    except ImportError as error:
        raise ImportError(_INSTALL_HINT) from error
    return pld_pmf, privacy_loss_distribution


@dataclass(frozen=True)
class _GridPmf:
    """One dp_accounting direction: masses at ``(lower_loss + j) * step`` and at +inf."""

    step: float
    lower_loss: int
    masses: np.ndarray
    infinity_mass: float
    pessimistic: bool


def _shifted_up(masses: np.ndarray, shift: float, step: float) -> np.ndarray:
    """Masses of atoms moved up by ``shift`` in [0, step] nats, put back on the grid.

    Each atom at ``g`` moved to ``g + shift`` is split between ``g`` and ``g + step``
    with the same P- and Q-mass (connect-the-dots, Doroshenko et al. 2022, Alg. 1):
    the fraction ``(1 - e^-shift) / (1 - e^-step)`` goes up. The split pair
    dominates the shifted one, whose hockey stick at eps is the original's at
    ``eps - shift``. The result has one more grid point.
    """
    fraction = math.expm1(-shift) / math.expm1(-step)
    result = np.zeros(masses.shape[0] + 1)
    result[:-1] = masses * (1.0 - fraction)
    result[1:] += masses * fraction
    return result


def _exported_masses(pmf: Any, bound: str) -> tuple[int, np.ndarray, float]:
    """Masses and +inf mass for ``dp_accounting`` (module docstring).

    pld's upper query is ``(1 + mass_error) H(eps - loss_error) + infinity_mass +
    min(error_max * W(eps), error_l1)`` plus the round-off of its own summation,
    where ``H`` is the exact hockey stick of the stored masses and ``W(eps)`` the
    hockey stick of a unit mass on every grid point (pld.engine.loss_pmf). The
    upper export shifts the masses up by ``loss_error``, scales them by
    ``1 + mass_error`` and adds ``error_max`` to every grid point (or
    ``error_l1`` at +inf, whichever is smaller at its largest), so its exact
    hockey stick is at least the bound on the true one. The summation round-off
    concerns the evaluation, not the masses: ``dp_accounting`` has its own.
    """
    masses = np.asarray(pmf.masses, dtype=np.float64)
    offset = int(pmf.offset)
    if bound == "lower":
        return offset, masses * (1 - pmf.mass_error), pmf.infinity_mass
    infinity_mass = pmf.infinity_mass
    whole_cells = math.floor(pmf.loss_error / pmf.step)
    offset += whole_cells
    remainder = pmf.loss_error - whole_cells * pmf.step
    if remainder > 0:
        masses = _shifted_up(masses, remainder, pmf.step)
    masses = masses * (1 + pmf.mass_error)
    if pmf.error_max * masses.shape[0] <= pmf.error_l1:
        masses = masses + pmf.error_max
    else:
        infinity_mass += pmf.error_l1
    return offset, masses, infinity_mass


def to_dp_accounting(loss: PLD, bound: str = "upper") -> Any:
    """Export a PLD as a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.

    Parameters
    ----------
    loss : PLD
        The PLD to export (one round or composed).
    bound : {"upper", "lower"}
        ``"upper"``: a pessimistic PLD whose delta(eps) is at least pld's upper
        bound; ``"lower"``: an optimistic one from pld's lower side (module
        docstring for its exact guarantee).

    Returns
    -------
    PrivacyLossDistribution
        On the same grid (``value_discretization_interval = loss.loss_grid_step``);
        symmetric when ``loss`` is.
    """
    if bound not in ("upper", "lower"):
        raise ValueError(f"bound must be 'upper' or 'lower' (got {bound!r})")
    if not isinstance(loss, PLD):
        raise ValueError(f"loss must be a pld.PLD (got {type(loss).__name__})")
    pld_pmf, privacy_loss_distribution = _dp_accounting_modules()
    exported = []
    for direction in loss._directions:
        pmf = getattr(direction, bound)
        offset, masses, infinity_mass = _exported_masses(pmf, bound)
        if masses.size == 0:
            masses, offset = np.zeros(1), 0
        exported.append(
            pld_pmf.DensePLDPmf(
                discretization=pmf.step,
                lower_loss=int(offset),
                probs=masses,
                infinity_mass=float(infinity_mass),
                pessimistic_estimate=bound == "upper",
            )
        )
    if loss.symmetric:
        return privacy_loss_distribution.PrivacyLossDistribution(exported[0])
    return privacy_loss_distribution.PrivacyLossDistribution(exported[0], exported[1])


def _grid_pmfs(obj: Any, name: str) -> tuple[list[_GridPmf], bool]:
    """The REMOVE and ADD pmfs of a dp_accounting PLD (one if symmetric) and its symmetry."""
    _, privacy_loss_distribution = _dp_accounting_modules()
    if not isinstance(obj, privacy_loss_distribution.PrivacyLossDistribution):
        raise ValueError(
            f"{name} must be a dp_accounting PrivacyLossDistribution (got {type(obj).__name__})"
        )
    try:
        symmetric = bool(obj._symmetric)
        sources = [obj._pmf_remove] if symmetric else [obj._pmf_remove, obj._pmf_add]
        pmfs = []
        for source in sources:
            dense = source.to_dense_pmf()
            pmfs.append(
                _GridPmf(
                    step=float(dense._discretization),
                    lower_loss=int(dense._lower_loss),
                    masses=np.asarray(dense._probs, dtype=np.float64),
                    infinity_mass=float(dense._infinity_mass),
                    pessimistic=bool(dense._pessimistic_estimate),
                )
            )
    except AttributeError as error:
        raise ValueError(
            f"{name}: this dp_accounting version stores its PLDs differently ({error}); "
            "pld reads dp_accounting 0.4 to 0.6"
        ) from error
    return pmfs, symmetric


def _trim_q_excess(log_p: np.ndarray, log_q: np.ndarray, excess: float) -> np.ndarray:
    """P log-masses after removing Q-mass ``excess`` from the lowest-loss atoms.

    Atoms are sorted by loss. Dropping P-mass (with its Q-mass) lowers every
    hockey stick, so a lower bound stays one; an atom at loss ``l`` adds nothing
    to delta(eps) for eps >= l, so delta is unchanged at and above the loss of
    the last atom touched (for every eps >= 0 when that loss is negative, the
    usual case: Q-mass at negative losses exceeds its P-mass).
    """
    q_masses = np.exp(log_q)
    reached = np.cumsum(q_masses)
    last = int(np.searchsorted(reached, excess))
    removed_before = float(reached[last - 1]) if last > 0 else 0.0
    fraction_left = 1.0 - (excess - removed_before) / q_masses[last]
    trimmed = log_p.copy()
    trimmed[:last] = -np.inf
    trimmed[last] = trimmed[last] + math.log(fraction_left) if fraction_left > 0 else -np.inf
    return trimmed


def _raise_lowest_losses(losses: np.ndarray, log_p: np.ndarray, q_total: float) -> np.ndarray:
    """Losses after the lowest atoms are moved up, with their P-mass, until Q sums to 1.

    Atoms are sorted by loss. With atoms ``0..i-1`` moved to one loss ``l*`` in
    ``[l_{i-1}, l_i]``, Q sums to ``cum_p[i-1] e^{-l*} + q_total - cum_q[i-1]``;
    ``i`` is the first index where ``l* = l_i`` already gives at most 1, and
    ``l*`` solves the sum = 1. A larger loss with the same P-mass raises every
    hockey stick, also after composition (the composed loss grows
    stochastically), so an upper bound stays one; one round's delta(eps) is
    unchanged for eps >= l*.
    """
    p_masses = np.exp(log_p)
    q_masses = np.exp(log_p - losses)
    cum_p, cum_q = np.cumsum(p_masses), np.cumsum(q_masses)
    after = cum_p * np.exp(-losses) + (q_total - cum_q)
    first = int(np.argmax(after <= 1.0)) if np.any(after <= 1.0) else losses.size
    if first == 0:
        return losses
    room = 1.0 - (q_total - cum_q[first - 1])
    raised = math.log(cum_p[first - 1] / room)
    if first < losses.size:
        raised = min(raised, float(losses[first]))
    result = losses.copy()
    result[:first] = max(raised, float(losses[first - 1]))
    return result


def _through_pair(grid: _GridPmf, step: float, side: str) -> _Direction:
    """One pld direction from a grid pmf, through the pair of the module docstring."""
    keep = grid.masses > 0
    losses = (grid.lower_loss + np.flatnonzero(keep)) * grid.step
    log_p = np.log(grid.masses[keep])
    log_q = log_p - losses
    q_total = math.fsum(np.exp(log_q))
    if side == "upper" and q_total > 1.0:
        losses = _raise_lowest_losses(losses, log_p, q_total)
        log_q = log_p - losses
        q_total = math.fsum(np.exp(log_q))
    if side == "lower" and q_total > 1.0:
        log_p = _trim_q_excess(log_p, log_q, q_total - 1.0)
        log_q = np.where(np.isfinite(log_p), log_p - losses, -np.inf)
        q_total = math.fsum(np.exp(log_q))
    q_rest = max(0.0, 1.0 - q_total)
    p_total = math.fsum(np.exp(log_p)) + grid.infinity_mass
    extra_p = [math.log(grid.infinity_mass)] if grid.infinity_mass > 0 else []
    extra_q = [math.log(q_rest)] if q_rest > 0 else []
    all_log_p = np.concatenate((log_p, extra_p, np.full(len(extra_q), -np.inf)))
    all_log_q = np.concatenate((log_q, np.full(len(extra_p), -np.inf), extra_q))
    loss = from_pmfs(
        all_log_p,
        all_log_q,
        symmetric=True,
        _symmetric_by_construction=True,  # only this direction is kept
        loss_grid_step=step,
        truncated_mass_p=min(max(0.0, 1.0 - p_total), 1.0 - 1e-12),
    )
    return loss._directions[0]


def _lower_on_nested_grid(grid: _GridPmf, step: float) -> LossPmf | None:
    """An optimistic pmf as pld's lower side, exactly, if ``step`` is ``grid.step / 2^j``.

    Every atom is then a point of pld's grid (``LossPmf.refined``); ``None`` otherwise.
    """
    ratio = grid.step / step
    factor = round(ratio)
    if factor < 1 or factor & (factor - 1) or abs(ratio - factor) > 1e-9 * ratio:
        return None
    nonzero = np.flatnonzero(grid.masses > 0)
    first, last = (int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (0, -1)
    own = LossPmf(
        grid.step,
        grid.lower_loss + first,
        np.ascontiguousarray(np.maximum(grid.masses[first : last + 1], 0.0)),
        grid.infinity_mass,
        "lower",
        mass_error=DEFAULT_MASS_RELATIVE_ERROR,
    ).refined(factor)
    return LossPmf(
        step, own.offset, own.masses, own.infinity_mass, "lower", mass_error=own.mass_error
    )


def _grids(obj: Any, name: str, pessimistic: bool) -> tuple[list[_GridPmf], bool]:
    pmfs, symmetric = _grid_pmfs(obj, name)
    for grid in pmfs:
        if grid.pessimistic != pessimistic:
            kind = "pessimistic" if pessimistic else "optimistic"
            raise ValueError(
                f"{name} must be {'a' if pessimistic else 'an'} {kind} dp_accounting PLD "
                f"(pessimistic_estimate={pessimistic}); got the other kind"
            )
    return pmfs, symmetric


def from_dp_accounting(
    pessimistic: Any, optimistic: Any | None = None, *, loss_grid_step: float | None = None
) -> PLD:
    """Import a ``dp_accounting`` ``PrivacyLossDistribution`` as a :class:`pld.PLD`.

    Parameters
    ----------
    pessimistic : PrivacyLossDistribution
        Built with ``pessimistic_estimate=True``: it becomes pld's upper side
        (and, without ``optimistic``, its lower side too).
    optimistic : PrivacyLossDistribution, optional
        The same mechanism with ``pessimistic_estimate=False``: it becomes pld's
        lower side, so the bracket covers the mechanism itself (module docstring).
    loss_grid_step : float, optional
        pld's grid step in nats, in (0, 1]; default the pessimistic PLD's
        ``value_discretization_interval``, which places every atom exactly. Any
        other step re-discretises (connect-the-dots above, contraction below).
        PLDs compose in pld only on grids whose steps differ by powers of two:
        pass ``loss_grid_step=other.loss_grid_step`` to compose with ``other``.

    Returns
    -------
    PLD
        Symmetric when both inputs are.
    """
    upper_grids, upper_symmetric = _grids(pessimistic, "pessimistic", True)
    step = upper_grids[0].step if loss_grid_step is None else loss_grid_step
    upper = [_through_pair(grid, step, "upper") for grid in upper_grids]
    if optimistic is None:
        return PLD(upper, symmetric=upper_symmetric)
    lower_grids, lower_symmetric = _grids(optimistic, "optimistic", False)
    lower = []
    for grid in lower_grids:
        nested = _lower_on_nested_grid(grid, step)
        if nested is None:
            nested = _through_pair(grid, step, "lower").lower
        lower.append(nested)
    symmetric = upper_symmetric and lower_symmetric
    if not symmetric:  # a symmetric side stands for both directions
        upper = upper if len(upper) == 2 else upper * 2
        lower = lower if len(lower) == 2 else lower * 2
    directions = [_Direction(u.upper, v) for u, v in zip(upper, lower, strict=True)]
    return PLD(directions, symmetric=symmetric)
