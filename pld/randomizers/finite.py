"""Finite local randomizers: a row-stochastic matrix and the common presets.

A finite randomizer maps an input x in {0..m-1} to a distribution ``R(x)`` on the
outputs {0..K-1}: row x of an m x K row-stochastic matrix. The blanket
decomposition (Balle, Bell, Gascón and Nissim 2019, Balle et al. (2019), §5; Koskela et al. (2023),
§4) uses ``omega_min(y) = min_x R(x)(y)``, ``gamma = sum_y omega_min(y)`` and, for an
ordered pair of inputs (x, x'), the ratios ``R(x)(y) / omega_min(y)``.

What the shuffle accountants read (:mod:`pld.shuffling.shuffler`):

* :meth:`FiniteRandomizer.blanket_classes`: for every ordered pair of distinct
  inputs, the outputs grouped into classes with equal ratios
  ``(R(x)(y) / omega_min(y), R(x')(y) / omega_min(y))`` and the class's blanket mass
  ``sum_y omega_min(y)``; duplicate pairs (same classes) are listed once.
* :meth:`FiniteRandomizer.observer_groups`: concrete neighbouring datasets (the
  target holds x or x', every other user one fixed value) as the probabilities of
  the three groups of outputs where ``R(x)(y) / R(x')(y)`` is > 1, < 1 and = 1.

The presets compute both from closed forms (no m x K matrix is built), so that
domains of 10^6 values and unary encoding's 2^d outputs cost nothing; their
``matrix`` (small sizes only) is the same randomizer written out, which the tests
compare against.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.randomizers.base import Randomizer

#: Rows of a user-given matrix must sum to 1 within this absolute tolerance.
ROW_SUM_TOLERANCE = 1e-9

#: Largest number of entries that :attr:`FiniteRandomizer.matrix` writes out for a preset.
MAX_MATRIX_ENTRIES = 10_000_000

#: Largest eps0 accepted by the presets (nats), as in ``pld.clones``.
MAX_EPS0 = 50.0

Classes = tuple[np.ndarray, np.ndarray, np.ndarray]
Groups = tuple[np.ndarray, np.ndarray, np.ndarray]


def _classes(ratio_x: np.ndarray, ratio_y: np.ndarray, mass: np.ndarray) -> Classes:
    """Merge outputs with equal (ratio_x, ratio_y); drop outputs of zero blanket mass.

    Ratios equal up to float round-off (log-ratios within ~1e-12) are merged and
    take the first member's values: the analyses cover a relative displacement of
    1e-11 of every position (``pld.shuffling.blanket.finite.POSITION_ERROR``).
    """
    keep = mass > 0
    ratio_x, ratio_y, mass = ratio_x[keep], ratio_y[keep], mass[keep]
    keys = np.column_stack((np.rint(np.log(ratio_x) * 1e12), np.rint(np.log(ratio_y) * 1e12)))
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    merged = np.bincount(inverse.ravel(), weights=mass, minlength=first.size)
    return ratio_x[first].copy(), ratio_y[first].copy(), merged


class FiniteRandomizer(Randomizer):
    """A local randomizer with finitely many inputs and outputs (row-stochastic matrix).

    Build one with :func:`matrix` or a preset (:func:`krr`, :func:`local_hashing`,
    :func:`hadamard`, :func:`unary`).
    """

    def __init__(self, probs: np.ndarray, name: str = "matrix") -> None:
        self._probs = probs
        self._name = name
        column_min = probs.min(axis=0)
        self._omega_min = column_min
        self._gamma = float(math.fsum(column_min))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log(probs.max(axis=0)) - np.log(column_min)
        used = probs.max(axis=0) > 0
        self._eps0 = float(np.max(ratio[used])) if np.any(used) else 0.0

    def __repr__(self) -> str:
        return f"{self._name}(inputs={self.num_inputs}, outputs={self.num_outputs})"

    @property
    def name(self) -> str:
        """Short name of the randomizer (``"matrix"``, ``"krr"``, ...)."""
        return self._name

    @property
    def num_inputs(self) -> int:
        """Number of inputs m."""
        return int(self._probs.shape[0])

    @property
    def num_outputs(self) -> int:
        """Number of outputs K."""
        return int(self._probs.shape[1])

    @property
    def matrix(self) -> np.ndarray:
        """The m x K matrix: ``matrix[x, y] = R(x)(y)`` (a copy)."""
        return self._probs.copy()

    @property
    def eps0(self) -> float:
        """Local epsilon ``max_y log(max_x R(x)(y) / min_x R(x)(y))``, nats (may be ``inf``)."""
        return self._eps0

    @property
    def blanket_mass(self) -> float:
        """gamma = ``sum_y min_x R(x)(y)``, in [0, 1]."""
        return self._gamma

    @property
    def clone_probability(self) -> float | None:
        """A clone parameter p for which ``pld.clones(n, eps0, p)`` dominates the shuffle.

        None unless the randomizer is known to satisfy the condition of Feldman,
        McMillan and Talwar (2021, Thm 3.2; Koskela et al. (2023), §3.1): for every pair (x0, x1)
        there are laws Q0, Q1, Q* with ``R(x) >= p Q0 + p Q1`` for every x,
        ``R(x0) = e^eps0 p Q0 + p Q1 + (1 - p - e^eps0 p) Q*`` and the same with
        Q0, Q1 swapped for x1.
        """
        return None

    def blanket_classes(self) -> list[Classes]:
        """Distinct ordered pairs (x, x') as classes ``(ratio_x, ratio_x', blanket mass)``.

        ``ratio_x = R(x)(y) / omega_min(y)`` (>= 1) on the outputs of a class, whose
        ``omega_min`` masses sum to ``blanket mass``; the masses of a pair sum to gamma.
        Outputs with ``omega_min(y) = 0`` are not in any class: see :meth:`outside`.
        """
        return [classes for classes, _ in self._pairs()]

    def outside(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per pair of :meth:`blanket_classes` (same order): ``(R(x)(y), R(x')(y))`` on the
        outputs with ``omega_min(y) = 0``.

        A target report there cannot be hidden by any blanket report: the view shows
        it, and it adds ``sum_y (R(x)(y) - e^eps R(x')(y))_+`` to the pair's delta.
        """
        return [out for _, out in self._pairs()]

    def _pairs(self) -> list[tuple[Classes, tuple[np.ndarray, np.ndarray]]]:
        probs, low = self._probs, self._omega_min
        positive = low > 0
        ratios = np.ones_like(probs)
        ratios[:, positive] = probs[:, positive] / low[positive]
        seen: dict[bytes, tuple[Classes, tuple[np.ndarray, np.ndarray]]] = {}
        for x in range(self.num_inputs):
            for other in range(self.num_inputs):
                if x == other:
                    continue
                classes = _classes(ratios[x], ratios[other], low)
                out = (probs[x, ~positive], probs[other, ~positive])
                key = np.concatenate((*classes, *out)).tobytes()
                seen.setdefault(key, (classes, out))
        return list(seen.values())

    def observer_groups(self) -> list[Groups]:
        """Concrete neighbouring datasets as group probabilities ``(pi_x, pi_x', pi_others)``.

        For the pair (x, x') with the largest total-variation distance between its
        rows, the outputs are grouped by ``R(x)(y) / R(x')(y)`` above 1, below 1 and
        equal to 1 (in this order); every other user holds one value: x' or, for up
        to two candidates, another input z. ``pi_others`` is that value's law on the
        groups. For each z a second grouping also sends the outputs more likely under
        z than under x or x' to the last group (the reports that betray the other
        users, as the blanket analysis reveals non-blanket reports); the presets'
        closed forms follow the same rule.
        """
        probs = self._probs
        distance = 0.5 * np.abs(probs[:, None, :] - probs[None, :, :]).sum(axis=2)
        x, other = np.unravel_index(int(np.argmax(distance)), distance.shape)
        thirds = [v for v in range(self.num_inputs) if v not in (x, other)][:2]
        candidates = [_group(probs[x], probs[other], probs[v]) for v in [other, *thirds]]
        for v in thirds:
            betraying = probs[v] > np.minimum(probs[x], probs[other])
            candidates.append(_group(probs[x], probs[other], probs[v], betraying))
        return candidates


def _group(
    first: np.ndarray,
    second: np.ndarray,
    others: np.ndarray,
    discard: np.ndarray | None = None,
) -> Groups:
    # Any grouping is a post-processing of the view; ratios within round-off of 1
    # go to the "equal" group, and so do the ``discard`` outputs.
    above, below = first > second * (1 + 1e-12), first < second * (1 - 1e-12)
    if discard is not None:
        above, below = above & ~discard, below & ~discard
    same = ~(above | below)
    groups = [above, below, same]
    return tuple(np.array([math.fsum(row[g]) for g in groups]) for row in (first, second, others))


def _three(high: float, low: float) -> np.ndarray:
    return np.array([high, low, 1.0 - high - low])


def matrix(probs: object, *, tolerance: float = ROW_SUM_TOLERANCE) -> FiniteRandomizer:
    """A finite randomizer from its row-stochastic matrix.

    Parameters
    ----------
    probs : array_like
        ``probs[x, y] = R(x)(y)``: rows are inputs (at least 2), columns outputs.
        Entries must be finite and non-negative; each row must sum to 1 within
        ``tolerance`` (rows are then divided by their sums).
    tolerance : float
        Allowed absolute deviation of a row sum from 1, in [0, 1e-3].

    Returns
    -------
    FiniteRandomizer
    """
    tolerance = validation.in_interval("tolerance", tolerance, 0.0, 1e-3)
    try:
        array = np.array(probs, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError("probs must be a 2-d array of probabilities") from error
    if array.ndim != 2 or array.shape[1] < 1:
        raise ValueError(f"probs must be a 2-d array (inputs x outputs) (got shape {array.shape})")
    if array.shape[0] < 2:
        raise ValueError(
            f"probs must have at least 2 rows (inputs); got {array.shape[0]}: "
            "with one input there is nothing to protect"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError("probs must contain only finite numbers (no NaN or inf)")
    if np.any(array < 0):
        raise ValueError("probs must be non-negative")
    sums = array.sum(axis=1)
    worst = float(np.max(np.abs(sums - 1.0)))
    if worst > tolerance:
        row = int(np.argmax(np.abs(sums - 1.0)))
        raise ValueError(
            f"probs must be row-stochastic: every row must sum to 1 within {tolerance:g} "
            f"(row {row} sums to {sums[row]!r})"
        )
    return FiniteRandomizer(array / sums[:, None])


class _Preset(FiniteRandomizer):
    """A preset: classes and groups in closed form; the matrix only on request."""

    def __init__(self, name: str, num_inputs: int, num_outputs: int, eps0: float, gamma: float):
        self._name = name
        self._m = num_inputs
        self._k = num_outputs
        self._eps0 = eps0
        self._gamma = gamma

    @property
    def num_inputs(self) -> int:
        return self._m

    @property
    def num_outputs(self) -> int:
        return self._k

    @property
    def matrix(self) -> np.ndarray:
        if self._m * self._k > MAX_MATRIX_ENTRIES:
            raise ValueError(
                f"the {self._name} matrix has {self._m} x {self._k} entries, more than "
                f"{MAX_MATRIX_ENTRIES}; the analyses do not need it"
            )
        return self._build_matrix()

    def _build_matrix(self) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def outside(self) -> list[tuple[np.ndarray, np.ndarray]]:
        # Every output of a preset is possible under every input.
        return [(np.zeros(0), np.zeros(0))] * len(self.blanket_classes())


def _check_eps0(eps0: object) -> float:
    return validation.in_interval("eps0", eps0, 0.0, MAX_EPS0, low_open=True)


class _KRR(_Preset):
    def __init__(self, k: int, gamma: float):
        self.k = k
        self.gamma = gamma
        super().__init__("krr", k, k, math.log1p((1.0 - gamma) * k / gamma), gamma)

    def __repr__(self) -> str:
        return f"krr(k={self.k}, gamma={self.gamma!r})"

    def _build_matrix(self) -> np.ndarray:
        k, gamma = self.k, self.gamma
        return np.full((k, k), gamma / k) + np.eye(k) * (1.0 - gamma)

    @property
    def clone_probability(self) -> float:
        """``gamma / k = 1 / (e^eps0 + k - 1)``: Q0, Q1 the point masses at x0, x1.

        Every input reports x0 and x1 with probability at least gamma / k;
        ``R(x0)`` puts ``e^eps0 p`` on x0, ``p`` on x1 and ``(k - 2) p`` (Q*: uniform
        on the other outputs) elsewhere. For k = 2 this is the default p of
        ``pld.clones``.
        """
        return self.gamma / self.k

    def blanket_classes(self) -> list[Classes]:
        k, gamma = self.k, self.gamma
        top = math.exp(self._eps0)
        ratio_x, ratio_y, mass = [top, 1.0], [1.0, top], [gamma / k, gamma / k]
        if k > 2:
            ratio_x.append(1.0)
            ratio_y.append(1.0)
            mass.append(gamma * (k - 2) / k)
        return [(np.array(ratio_x), np.array(ratio_y), np.array(mass))]

    def observer_groups(self) -> list[Groups]:
        k, gamma = self.k, self.gamma
        high, low = 1.0 - gamma + gamma / k, gamma / k
        candidates = [(_three(high, low), _three(low, high), _three(low, high))]
        if k > 2:
            candidates.append((_three(high, low), _three(low, high), _three(low, low)))
        return candidates


def krr(k: int, gamma: float | None = None, eps0: float | None = None) -> FiniteRandomizer:
    """k-ary randomised response: the truth with probability 1 - gamma, else uniform on [k].

    ``R(x)(x) = 1 - gamma + gamma / k`` and ``R(x)(y) = gamma / k`` otherwise
    (Balle et al. 2019; Koskela et al. (2023), §4); binary randomised response is k = 2.
    ``eps0 = log(1 + k (1 - gamma) / gamma)`` (Koskela et al. 2023, caption of Fig. 4).

    Parameters
    ----------
    k : int
        Domain size, >= 2.
    gamma : float, optional
        Probability of a uniform answer, in (0, 1]. Give gamma or eps0.
    eps0 : float, optional
        Local epsilon in nats, in (0, 50]; then ``gamma = k / (e^eps0 + k - 1)``.
    """
    k = validation.integer_at_least("k", k, 2)
    if (gamma is None) == (eps0 is None):
        raise ValueError("give exactly one of gamma and eps0")
    if gamma is not None:
        gamma = validation.finite_real("gamma", gamma)
        if gamma == 0:
            raise ValueError(
                "gamma must lie in (0, 1] (got 0): with gamma = 0 every user reports the "
                "truth, no report is a uniform 'blanket' draw, and shuffling gives no "
                "amplification"
            )
        gamma = validation.in_interval("gamma", gamma, 0.0, 1.0, low_open=True)
    else:
        eps0 = _check_eps0(eps0)
        gamma = k / (math.expm1(eps0) + k)
    return _KRR(k, gamma)


class _LocalHashing(_Preset):
    def __init__(self, eps0: float, domain: int, buckets: int):
        self.domain, self.buckets = domain, buckets
        g = buckets
        denominator = math.exp(eps0) + g - 1
        self._p, self._q = math.exp(eps0) / denominator, 1.0 / denominator
        constant = self._p * g ** (1.0 - domain)
        both = self._q * (1.0 / g - g ** (1.0 - domain))
        single = self._q * (g - 1) / g
        neither = self._q * (g - 1) ** 2 / g
        self._masses = (constant, both, single, neither)
        super().__init__(
            "local_hashing",
            domain,
            g**domain * g if domain * math.log(g) < 60 else 2**62,
            eps0,
            min(1.0, constant + both + 2 * single + neither),  # a sum of 1 rounded up
        )

    def __repr__(self) -> str:
        return f"local_hashing(eps0={self._eps0!r}, domain={self.domain}, buckets={self.buckets})"

    def _build_matrix(self) -> np.ndarray:
        d, g = self.domain, self.buckets
        functions = np.array(list(np.ndindex(*([g] * d))), dtype=np.int64)  # h[x] per row
        probs = np.empty((d, functions.shape[0] * g))
        for x in range(d):
            hit = functions[:, x][:, None] == np.arange(g)[None, :]
            probs[x] = np.where(hit, self._p, self._q).ravel() / functions.shape[0]
        return probs

    def blanket_classes(self) -> list[Classes]:
        constant, both, single, neither = self._masses
        ratio = self._p / self._q
        ratio_x = np.array([1.0, ratio, ratio, 1.0, 1.0])
        ratio_y = np.array([1.0, ratio, 1.0, ratio, 1.0])
        mass = np.array([constant, both, single, single, neither])
        return [_classes(ratio_x, ratio_y, mass)]

    def observer_groups(self) -> list[Groups]:
        g = self.buckets
        miss = 1.0 - 1.0 / g
        high, low = self._p * miss, self._q * miss
        candidates = [(_three(high, low), _three(low, high), _three(low, high))]
        if self.domain > 2:
            # A third input's hash is independent of both: it hits h(x) w.p. 1/g.
            third = miss * (self._p / g + self._q * miss)
            candidates.append((_three(high, low), _three(low, high), _three(third, third)))
            # The same, with the reports whose bucket is h(z) set aside: for x, h(z) is
            # independent of h(x) and h(x'), so each group keeps a factor 1 - 1/g.
            high, low = high * miss, low * miss
            candidates.append((_three(high, low), _three(low, high), _three(low, low)))
        return candidates


def local_hashing(eps0: float, domain: int, buckets: int | None = None) -> FiniteRandomizer:
    """Local hashing (OLH/BLH; Wang, Blocki, Li and Jha 2017) with an ideal hash family.

    Each user draws a hash function h uniformly from all functions [domain] -> [g]
    (an exactly pairwise-independent family: two inputs collide with probability
    1/g) and reports (h, b) with ``b = h(x)`` w.p. ``e^eps0 / (e^eps0 + g - 1)``,
    else each other bucket w.p. ``1 / (e^eps0 + g - 1)``. The classes are those of
    that family in closed form; ``matrix`` writes it out for tiny domains.

    Parameters
    ----------
    eps0 : float
        Local epsilon, nats, in (0, 50].
    domain : int
        Number of inputs, >= 2.
    buckets : int, optional
        g in [2, 2^40]; default the optimal ``round(e^eps0 + 1)`` of OLH (g = 2 is BLH).
    """
    eps0 = _check_eps0(eps0)
    domain = validation.integer_at_least("domain", domain, 2)
    if buckets is None:
        buckets = max(2, int(round(math.exp(eps0) + 1)))
    buckets = validation.integer_at_least("buckets", buckets, 2, validation.MAX_USERS)
    return _LocalHashing(eps0, domain, buckets)


class _Hadamard(_Preset):
    def __init__(self, eps0: float, domain: int):
        self.domain = domain
        size = 1 << domain.bit_length()  # smallest power of 2 >= domain + 1
        self.size = size
        self._high = 2.0 * math.exp(eps0) / (size * (1.0 + math.exp(eps0)))
        self._low = 2.0 / (size * (1.0 + math.exp(eps0)))
        super().__init__("hadamard", domain, size, eps0, self._high + (size - 1) * self._low)

    def __repr__(self) -> str:
        return f"hadamard(eps0={self._eps0!r}, domain={self.domain})"

    def _build_matrix(self) -> np.ndarray:
        rows = np.arange(1, self.domain + 1)[:, None]
        cols = np.arange(self.size)[None, :]
        parity = np.vectorize(lambda v: bin(v).count("1") % 2)(rows & cols)
        return np.where(parity == 0, self._high, self._low)

    def blanket_classes(self) -> list[Classes]:
        quarter = self.size // 4
        ratio = self._high / self._low
        ratio_x = np.array([1.0, ratio, ratio, 1.0])
        ratio_y = np.array([1.0, ratio, 1.0, ratio])
        mass = self._low * np.array([quarter, quarter - 1, quarter, quarter]) + np.array(
            [self._high, 0.0, 0.0, 0.0]
        )
        return [_classes(ratio_x, ratio_y, mass)]

    def observer_groups(self) -> list[Groups]:
        quarter = self.size // 4
        high, low = self._high * quarter, self._low * quarter
        candidates = [(_three(high, low), _three(low, high), _three(low, high))]
        if self.domain > 2:
            # Input 2 owns row 3 = row 1 * row 2 of H: C_2 misses C_0 xor C_1, so its
            # users put only the low probability on both groups (blanket-like).
            candidates.append((_three(high, low), _three(low, high), _three(low, low)))
        if self.domain > 3:
            # Inputs 0, 1 and 3 own rows 1, 2 and 4 of H: independent rows, so input 3
            # owns half of C_0 minus C_1 (K/8 outputs) and half of C_1 minus C_0.
            third = (self._high + self._low) * self.size / 8
            candidates.append((_three(high, low), _three(low, high), _three(third, third)))
            # The same, with the outputs in C_3 set aside: K/8 outputs per group remain,
            # all off C_3.
            high, low = high / 2, low / 2
            candidates.append((_three(high, low), _three(low, high), _three(low, low)))
        return candidates


def hadamard(eps0: float, domain: int) -> FiniteRandomizer:
    """Hadamard response (Acharya, Sun and Zhang 2019).

    With K the smallest power of 2 above ``domain`` and H the K x K Sylvester
    Hadamard matrix, input x (0-based) owns the outputs ``C_x = {j : H[x + 1, j] = 1}``
    (K/2 of them; row 0, all ones, is skipped) and reports j with probability
    ``2 e^eps0 / (K (1 + e^eps0))`` on ``C_x`` and ``2 / (K (1 + e^eps0))`` off it.
    Two inputs share K/4 outputs, output 0 among them.

    Parameters
    ----------
    eps0 : float
        Local epsilon, nats, in (0, 50].
    domain : int
        Number of inputs, >= 2.
    """
    eps0 = _check_eps0(eps0)
    domain = validation.integer_at_least("domain", domain, 2)
    return _Hadamard(eps0, domain)


class _Unary(_Preset):
    def __init__(self, eps0: float, domain: int, optimized: bool):
        self.domain, self.optimized = domain, optimized
        if optimized:
            p, q = 0.5, 1.0 / (math.exp(eps0) + 1.0)
        else:
            p = math.exp(eps0 / 2) / (math.exp(eps0 / 2) + 1.0)
            q = 1.0 - p
        self._p, self._q = p, q
        rest_all_ones = q ** (domain - 2)
        self._masses = (
            p * q ** (domain - 1) + (1 - q) * (1 - p),  # ratios (1, 1)
            q * q * (1 - rest_all_ones) * (1 - p) / (1 - q),  # ratios (c, c)
            q * (1 - p),  # ratios (c, 1) and (1, c)
        )
        size = 2**domain if domain < 62 else 2**62
        same, both, single = self._masses
        super().__init__("unary", domain, size, eps0, same + both + 2 * single)

    def __repr__(self) -> str:
        return f"unary(eps0={self._eps0!r}, domain={self.domain}, optimized={self.optimized})"

    def _build_matrix(self) -> np.ndarray:
        d, p, q = self.domain, self._p, self._q
        bits = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1  # outputs x bits
        base = np.prod(np.where(bits == 1, q, 1 - q), axis=1)
        probs = np.empty((d, 2**d))
        for x in range(d):
            factor = np.where(bits[:, x] == 1, p / q, (1 - p) / (1 - q))
            probs[x] = base * factor
        return probs

    def blanket_classes(self) -> list[Classes]:
        same, both, single = self._masses
        ratio = (self._p * (1 - self._q)) / (self._q * (1 - self._p))
        ratio_x = np.array([1.0, ratio, ratio, 1.0])
        ratio_y = np.array([1.0, ratio, 1.0, ratio])
        return [_classes(ratio_x, ratio_y, np.array([same, both, single, single]))]

    def observer_groups(self) -> list[Groups]:
        p, q = self._p, self._q
        high, low = p * (1 - q), q * (1 - p)
        candidates = [(_three(high, low), _three(low, high), _three(low, high))]
        if self.domain > 2:
            third = q * (1 - q)
            candidates.append((_three(high, low), _three(low, high), _three(third, third)))
            # The same, with the reports whose bit z is set aside (bit z is 1 w.p. q for
            # x and x', p for z).
            high, low, third = high * (1 - q), low * (1 - q), third * (1 - p)
            candidates.append((_three(high, low), _three(low, high), _three(third, third)))
        return candidates


def unary(eps0: float, domain: int, optimized: bool = True) -> FiniteRandomizer:
    """Unary encoding: a d-bit one-hot vector with independently flipped bits.

    Bit x is 1 with probability p, every other bit with probability q:
    optimized (OUE, Wang et al. 2017) ``p = 1/2, q = 1/(e^eps0 + 1)``; symmetric
    (SUE, RAPPOR) ``p = e^(eps0/2) / (e^(eps0/2) + 1) = 1 - q``. The 2^d outputs are
    never enumerated: for inputs (x, x') the ratio ``R(x)(y) / min_z R(z)(y)`` depends
    only on the bits y_x, y_x' and on whether all other bits are 1.

    Parameters
    ----------
    eps0 : float
        Local epsilon, nats, in (0, 50].
    domain : int
        Number of inputs d >= 2 (bits of the report).
    optimized : bool
        OUE (default) or SUE.
    """
    eps0 = _check_eps0(eps0)
    domain = validation.integer_at_least("domain", domain, 2)
    return _Unary(eps0, domain, bool(optimized))
