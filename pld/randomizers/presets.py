"""The common finite randomizers, in closed form: k-RR, local hashing, Hadamard, unary.

Each preset computes its blanket classes and observer groups from closed forms (no
m x K matrix is built), so that domains of 10^6 values and unary encoding's 2^d
outputs cost nothing; its ``matrix`` (small sizes only) is the same randomizer written
out, which the tests compare against.
"""

from __future__ import annotations

import math

import numpy as np

from pld import validation
from pld.engine import BudgetError
from pld.numerics import MAX_EPS0
from pld.randomizers.base import Randomizer
from pld.randomizers.finite import Classes, FiniteRandomizer, Groups
from pld.shuffling.blanket import merge_classes

#: Largest number of entries that :attr:`FiniteRandomizer.matrix` writes out for a preset.
MAX_MATRIX_ENTRIES = 10_000_000


def _three(high: float, low: float) -> np.ndarray:
    return np.array([high, low, 1.0 - high - low])


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
            raise BudgetError(
                f"the {self._name} matrix has {self._m} x {self._k} entries, more than "
                f"{MAX_MATRIX_ENTRIES}; the analyses do not need it"
            )
        return self._build_matrix()

    def _build_matrix(self) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def admits_stronger_clones(self) -> bool:
        """Whether the preset is in the stronger pair's class (k-RR and Hadamard override).

        Every randomizer with two inputs is (docs/clones-validity.md). With three or
        more, local hashing and unary encoding are not: they have an output that x0 and
        x1 both favour and a third input x does not (a hash with h(x0) = h(x1) != h(x);
        bits x0, x1 set and bit x clear), where ``R(x) = R(x0) / e^eps0 = R(x1) / e^eps0``
        and ``(e^eps0 + 1) / e^eps0 < 2``.
        """
        return self._m == 2

    @property
    def clone_probability(self) -> float | None:
        """``1/(e^eps0 + 1)`` in the class, else the standard ``e^-eps0 / 2``: outside it,
        the output above makes the standard value the largest allowed."""
        standard = Randomizer.clone_probability.fget(self)
        if standard is not None and self.admits_stronger_clones:
            return 1.0 / (math.exp(self._eps0) + 1.0)
        return standard

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
    def admits_stronger_clones(self) -> bool:
        """True: ``(e^eps0 + 1) R(x) >= R(x0) + R(x1)`` for every k (docs/clones-validity.md).

        At y = x0: ``R(x)(x0) = gamma / k`` and ``R(x0)(x0) + R(x1)(x0) = (e^eps0 + 1)
        gamma / k`` (equality); at y outside {x0, x1}: ``(e^eps0 + 1) gamma / k >= 2 gamma / k``.
        """
        return True

    @property
    def clone_probability(self) -> float:
        """``1/(e^eps0 + 1)``: the stronger pair (:attr:`admits_stronger_clones`).

        Not ``gamma / k``: the pair with that p and a third component (Koskela et al.
        (2023), eq 3.2) is the case withdrawn by the erratum of Feldman, McMillan and
        Talwar (2023), and exact enumeration puts shuffled k-RR above it for k >= 3
        (docs/clones-validity.md).
        """
        return 1.0 / (math.exp(self._eps0) + 1.0)

    @property
    def clones_alone(self) -> bool:
        """Binary randomised response (k = 2): its stronger clones pair is below the blanket
        profile (measured: eps(1e-6) after 100 rounds, n = 1000, gamma = 0.25: 4.6096
        against 4.6126) and meets the exact shuffled view at n <= 2, so ``pld.shuffle``
        returns that pair's PLD, with no profile grid. For k >= 3 the blanket profile
        is the tighter one (docs/clones-validity.md)."""
        return self.k == 2

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
    (Balle et al. 2019; Koskela et al. 2023, §4); binary randomised response is k = 2.
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
        return [merge_classes(ratio_x, ratio_y, mass)]

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

    @property
    def admits_stronger_clones(self) -> bool:
        """Domains 2 and 3 only: from 4 inputs on, two inputs share an output (of their
        K/4 common ones) off a third input's set, where ``R(x) = R(x0) / e^eps0``."""
        return self.domain <= 3

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
        return [merge_classes(ratio_x, ratio_y, mass)]

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
        return [merge_classes(ratio_x, ratio_y, np.array([same, both, single, single]))]

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
