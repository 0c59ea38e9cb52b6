"""The blanket bound of a population: groups of finite randomizers against one common blanket.

docs/shuffle-groups.md derives and proves what is computed here. For a common
blanket law ``omega`` on the outputs, group h's blanket mass is
``gamma_h = min_y min_x R_h(x)(y) / omega(y)``; for a target in group g with inputs
(x, x'), ``Z = r_x(Y) - e^eps r_x'(Y)``, ``r = R_g / omega``, ``Y ~ omega`` and the
multiset O of the other users' blanket masses (Theorem 1)

    delta_{x,x'}(eps) <= D_O(eps) + out(eps),    D_O = sum_m P(M_O = m) phi(m + 1),
    phi(k) = (1/k) E[(Z_1 + ... + Z_k)_+],       M_O ~ Poisson-binomial(O),

``out`` the exact term of the outputs outside ``supp omega``. Two evaluations:

* exact (small populations): the atoms ``(U, V)`` of ``Z_1 + ... + Z_k`` for every
  k, weighted by ``P(M_O = k - 1) / k`` (multinomial masses in log space), one dot
  product per eps;
* the population form (Theorem 3): ``D_O <= E[(sum_{i in Pi} B_i Z_i)_+] / sum_Pi gamma``,
  ``Pi = O + {min O}``, evaluated by :func:`pld.shuffling.blanket.smooth.positive_sum_bounds`
  (one law per distinct blanket mass), with Chernoff's bound where it is negligible.

Candidate blanket laws (any is valid, the smallest bound is kept per pair): each
group's own ``m_h / sum m_h`` and the pooled ``min_h m_h`` normalised.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from pld.shuffling.blanket.finite import (
    ATOM_MASS_ERROR,
    NEGLIGIBLE,
    POSITION_ERROR,
    compositions,
    count_compositions,
    merge_classes,
    outside_delta,
)
from pld.shuffling.blanket.smooth import (
    SmoothingError,
    chernoff_log_bound,
    positive_sum_bounds,
    saddle_tilt,
)

#: Largest number of atoms (all sums of k = 1 .. |O| + 1 terms together) the exact
#: evaluation of D_O enumerates; beyond it the population form is evaluated.
EXACT_ATOMS = 400_000

#: Blanket masses of the other users: ``(gamma, count)`` per group.
Others = list[tuple[float, int]]


def common_blankets(matrices: list[np.ndarray]) -> list[np.ndarray]:
    """Candidate common blanket laws: each group's own and the pooled one (distinct only)."""
    lows = [m.min(axis=0) for m in matrices]
    candidates = [low / low.sum() for low in lows if low.sum() > 0]
    pooled = np.min(lows, axis=0)
    if pooled.sum() > 0:
        candidates.append(pooled / pooled.sum())
    distinct: list[np.ndarray] = []
    for omega in candidates:
        if not any(np.array_equal(omega, seen) for seen in distinct):
            distinct.append(omega)
    return distinct


def blanket_masses(matrices: list[np.ndarray], omega: np.ndarray) -> np.ndarray:
    """``gamma_h = min_{y in supp omega} min_x R_h(x)(y) / omega(y)`` for every group."""
    support = omega > 0
    return np.array([float(np.min(m.min(axis=0)[support] / omega[support])) for m in matrices])


def pair_classes(
    matrix: np.ndarray, x: int, other: int, omega: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """``(r_x, r_x', omega-mass)`` per class of outputs on ``supp omega``, and the outside rows."""
    support = omega > 0
    r_x = matrix[x, support] / omega[support]
    r_y = matrix[other, support] / omega[support]
    # A zero ratio (the target's row vanishes where omega does not) is its own class.
    with np.errstate(divide="ignore"):
        ratio_x, ratio_y, mass = merge_classes(r_x, r_y, omega[support])
    return ratio_x, ratio_y, mass, (matrix[x, ~support], matrix[other, ~support])


def poisson_binomial(others: Others) -> np.ndarray:
    """pmf of ``sum_h Bin(count_h, gamma_h)`` on 0..sum count_h (direct, small counts)."""
    pmf = np.array([1.0])
    for gamma, count in others:
        k = np.arange(count + 1)
        if gamma >= 1.0:
            part = (k == count).astype(np.float64)
        else:
            log = (
                gammaln(count + 1.0)
                - gammaln(k + 1.0)
                - gammaln(count - k + 1.0)
                + k * math.log(gamma)
                + (count - k) * math.log1p(-gamma)
            )
            part = np.exp(log)
        pmf = np.convolve(pmf, part)
    return pmf


def exact_atoms(mass_size: int, others: Others, budget: int = EXACT_ATOMS) -> int:
    """Atoms the exact evaluation would enumerate (counted up to just past ``budget``)."""
    total, atoms = sum(count for _, count in others), 0
    for k in range(1, total + 2):
        atoms += count_compositions(k, mass_size)
        if atoms > budget:
            break
    return atoms


class _ExactPopulation:
    """D_O as one weighted atom list: ``(U, V, w)`` with ``sum_k Z_k = U - e^eps V``."""

    def __init__(self, r_x: np.ndarray, r_y: np.ndarray, mass: np.ndarray, others: Others):
        weights = poisson_binomial(others)
        log_mass = np.log(mass)
        us, vs, ws = [], [], []
        for m, weight in enumerate(weights):
            if weight <= 0:
                continue
            k = m + 1
            counts = compositions(k, mass.size)
            log_w = gammaln(k + 1.0) - gammaln(counts + 1.0).sum(axis=1) + counts @ log_mass
            us.append(counts @ r_x)
            vs.append(counts @ r_y)
            ws.append(np.exp(log_w) * (weight / k))
        self.u, self.v, self.w = (np.concatenate(parts) for parts in (us, vs, ws))
        # gammaln sums as one atom of one block, and the Poisson-binomial convolution.
        self.mass_error = ATOM_MASS_ERROR + 8 * math.ulp(1.0) * (len(weights) + 4)

    def bounds(self, eps: float) -> tuple[float, float]:
        scale = math.exp(eps)
        values = self.u - scale * self.v
        error = POSITION_ERROR * (np.abs(self.u) + scale * np.abs(self.v))
        upper = float(np.dot(self.w, np.maximum(values + error, 0.0)))
        lower = float(np.dot(self.w, np.maximum(values - error, 0.0)))
        return lower * (1 - self.mass_error), upper * (1 + self.mass_error)


def _population(others: Others) -> tuple[dict[float, int], float]:
    """The population Pi = O + {min O} as counts per blanket mass, and its total mass."""
    laws: dict[float, int] = {}
    for gamma, count in others:
        if count > 0:
            laws[gamma] = laws.get(gamma, 0) + count
    star = min(laws, default=1.0)
    laws[star] = laws.get(star, 0) + 1
    return laws, sum(gamma * count for gamma, count in laws.items())


def _laws(
    r_x: np.ndarray, r_y: np.ndarray, mass: np.ndarray, population: dict[float, int], eps: float
) -> tuple[list, list[np.ndarray]] | None:
    """One law per blanket mass, ``B Z`` with mass ``gamma omega`` per class and ``1 - gamma``
    at 0, as ``(values, log_mass, count)``, and each law's position errors; None where
    every value of Z is <= 0 (then ``D = 0``)."""
    scale = math.exp(eps)
    z = r_x - scale * r_y
    if float(z.max()) <= 0.0:
        return None
    size = np.append(POSITION_ERROR * (np.abs(r_x) + scale * np.abs(r_y)), 0.0)
    laws, errors = [], []
    for gamma, count in population.items():
        values, masses = np.append(z, 0.0), np.append(gamma * mass, 1.0 - gamma)
        keep = masses > 0
        laws.append((values[keep], np.log(masses[keep]), count))
        errors.append(size[keep])
    return laws, errors


def _mean(laws: list) -> float:
    return sum(c * float(np.dot(np.exp(lm), v)) for v, lm, c in laws)


def _chernoff_log(laws: list, errors: list[np.ndarray], total_gamma: float) -> float | None:
    """``log`` of Chernoff's bound ``M(theta) / (e theta sum gamma)`` on the population form,
    ``M`` of the law that dominates every law within the errors
    (:func:`pld.shuffling.blanket.smooth.chernoff_log_bound`, law by law); None where
    the mean is >= 0 (no saddle point with theta > 0)."""
    if _mean(laws) >= 0:
        return None
    theta = saddle_tilt(laws)
    log_mgf = sum(
        chernoff_log_bound(v, np.exp(lm), e, ATOM_MASS_ERROR, theta, c)
        for (v, lm, c), e in zip(laws, errors, strict=True)
    )
    return log_mgf - math.log(math.e * theta * total_gamma)


def population_form(
    r_x: np.ndarray,
    r_y: np.ndarray,
    mass: np.ndarray,
    others: Others,
    eps: np.ndarray,
    *,
    lower_side: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) on ``E[(sum_Pi B_i Z_i)_+] / sum_Pi gamma`` at each eps (Theorem 3)."""
    population, total_gamma = _population(others)
    lower, upper = np.zeros(eps.size), np.zeros(eps.size)
    for i, value in enumerate(eps):
        built = _laws(r_x, r_y, mass, population, float(value))
        if built is None:
            continue
        laws, errors = built
        flip = _mean(laws) > 0
        log_chernoff = None if flip else _chernoff_log(laws, errors, total_gamma)
        if log_chernoff is not None and log_chernoff < math.log(NEGLIGIBLE):
            upper[i] = math.exp(log_chernoff) * (1 + 1e-12)
            continue
        # E[S_+] = E[S] + E[(-S)_+] where the mean is positive (as for one randomizer).
        used = [(-v, lm, c) for v, lm, c in laws] if flip else laws
        try:
            log_lo, log_up = positive_sum_bounds(
                used, mass_error=ATOM_MASS_ERROR, position_errors=errors, upper_only=not lower_side
            )
            lo, up = math.exp(log_lo), math.exp(log_up)
        except SmoothingError:
            lo, up = 0.0, math.inf
        if flip:
            weights = [(np.exp(lm), v, c, e) for (v, lm, c), e in zip(laws, errors, strict=True)]
            spread = sum(c * float(np.dot(w, np.abs(v) + e)) for w, v, c, e in weights)
            slack = spread * (ATOM_MASS_ERROR + 16 * math.ulp(1.0))
            lo += sum(c * float(np.dot(w, v - e)) for w, v, c, e in weights) - slack
            up += sum(c * float(np.dot(w, v + e)) for w, v, c, e in weights) + slack
        lower[i] = lo / total_gamma
        upper[i] = up / total_gamma
        if log_chernoff is not None:
            # Chernoff's bound is valid too (and better where the evaluation degenerates).
            upper[i] = min(upper[i], math.exp(min(log_chernoff, 0.0)) * (1 + 1e-12))
    return np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def population_chernoff(
    r_x: np.ndarray, r_y: np.ndarray, mass: np.ndarray, others: Others, eps: np.ndarray
) -> np.ndarray:
    """Chernoff upper bound on the population form (hence on D_O) at each eps; no enumeration."""
    population, total_gamma = _population(others)
    out = np.ones(eps.size)
    for i, value in enumerate(eps):
        built = _laws(r_x, r_y, mass, population, float(value))
        if built is None:
            out[i] = 0.0
            continue
        log_bound = _chernoff_log(*built, total_gamma)
        if log_bound is not None:
            out[i] = min(1.0, math.exp(min(log_bound, 0.0)) * (1 + 1e-12))
    return out


class PairBound:
    """One target pair (x, x') of one group against one common blanket law."""

    def __init__(self, matrix: np.ndarray, x: int, other: int, omega: np.ndarray, others: Others):
        self.r_x, self.r_y, self.mass, self.out = pair_classes(matrix, x, other, omega)
        self.others = [(gamma, count) for gamma, count in others if count > 0]
        self._exact = None
        if exact_atoms(self.mass.size, self.others) <= EXACT_ATOMS:
            self._exact = _ExactPopulation(self.r_x, self.r_y, self.mass, self.others)

    def key(self) -> bytes:
        """Identical classes, outside rows and other users give identical bounds."""
        parts = (self.r_x, self.r_y, self.mass, *self.out, np.array(self.others).ravel())
        return b"".join(np.asarray(p, dtype=np.float64).tobytes() for p in parts)

    def bounds(self, eps: np.ndarray, lower_side: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) on ``D_O + out`` at each eps (exact, or the population form)."""
        if self._exact is not None:
            values = np.array([self._exact.bounds(float(e)) for e in eps]).reshape(-1, 2)
            lower, upper = values[:, 0], values[:, 1]
        else:
            lower, upper = population_form(
                self.r_x, self.r_y, self.mass, self.others, eps, lower_side=lower_side
            )
        extra = outside_delta(*self.out, eps)
        return (
            np.clip(lower + extra * (1 - 1e-12), 0.0, 1.0),
            np.clip(upper + extra * (1 + 1e-12), 0.0, 1.0),
        )

    def cheap_upper(self, eps: np.ndarray) -> np.ndarray:
        """A Chernoff upper bound on :meth:`bounds`' upper values."""
        extra = outside_delta(*self.out, eps)
        base = population_chernoff(self.r_x, self.r_y, self.mass, self.others, eps)
        return np.clip(base + extra * (1 + 1e-12), 0.0, 1.0)


class GroupBlanket:
    """The blanket bound for a target in one group: max over pairs of min over blanket laws."""

    def __init__(self, matrices: list[np.ndarray], counts: list[int], group: int):
        matrix = matrices[group]
        self.pairs: dict[tuple[int, int], list[PairBound]] = {}
        seen: set[bytes] = set()
        for omega in common_blankets(matrices):
            gammas = blanket_masses(matrices, omega)
            if not np.all(gammas > 0):
                continue  # some group has no blanket under this law
            others = [(float(gammas[h]), counts[h] - (h == group)) for h in range(len(counts))]
            for x in range(matrix.shape[0]):
                for other in range(matrix.shape[0]):
                    if x == other:
                        continue
                    bound = PairBound(matrix, x, other, omega, others)
                    key = bound.key()
                    if key in seen:
                        continue
                    seen.add(key)
                    self.pairs.setdefault((x, other), []).append(bound)
        # A pair whose bounds all equal an earlier pair's was skipped entirely.
        self.pairs = {pair: bounds for pair, bounds in self.pairs.items() if bounds}

    @property
    def available(self) -> bool:
        return bool(self.pairs)

    def bounds(self, eps: np.ndarray, lower_side: bool = True) -> tuple[np.ndarray, np.ndarray]:
        lower, upper = np.zeros(eps.size), np.zeros(eps.size)
        for bounds in self.pairs.values():
            pair_lower, pair_upper = np.ones(eps.size), np.ones(eps.size)
            # Candidates by their cheap bound: a blanket law whose Chernoff bound is above
            # the best evaluated upper value cannot lower it.
            cheap = [bound.cheap_upper(eps) for bound in bounds]
            done = np.zeros(eps.size, dtype=bool)
            for index in np.argsort([float(np.sum(c)) for c in cheap]):
                needed = ~done | (cheap[index] < pair_upper)
                if not np.any(needed):
                    continue
                lo, up = bounds[index].bounds(eps[needed], lower_side)
                pair_lower[needed] = np.where(done[needed], np.minimum(pair_lower[needed], lo), lo)
                pair_upper[needed] = np.minimum(pair_upper[needed], up)
                done |= needed
            lower = np.maximum(lower, pair_lower)
            upper = np.maximum(upper, pair_upper)
        return lower, upper

    def cheap_upper(self, eps: np.ndarray) -> np.ndarray:
        out = np.zeros(eps.size)
        for bounds in self.pairs.values():
            out = np.maximum(out, np.minimum.reduce([b.cheap_upper(eps) for b in bounds]))
        return out
