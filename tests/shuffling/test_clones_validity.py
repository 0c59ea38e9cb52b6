"""What the clones pairs are proven for (docs/clones-validity.md), against exact truths.

Truths (tests/oracles/shuffled_histogram.py, exact fractions, shares no code with pld):
the shuffled histogram of a finite randomizer for every multiset of the other users'
inputs; the homogeneous identity (H); both clones pairs as shuffled histograms of a
3-output matrix. Each bound is compared with the truth plus 1e-12 (relative) + 1e-15:
the library's lattice masses carry a relative error of a few 1e-16 (gammaln sums),
the exact values none.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

import pld
from pld.shuffling.clones import clones_delta_bounds, clones_pmfs
from tests.oracles import shuffled_histogram as oracle

VARIANTS = ("standard", "stronger")

#: Slack of a library value against an exact one (see the module docstring).
RELATIVE, ABSOLUTE = 1e-12, 1e-15


def lattice_delta(n: int, eps0: float, eps, variant: str) -> np.ndarray:
    """max(H(P || Q), H(Q || P)) of the library's exact lattice of the pair."""
    log_p, log_q = clones_pmfs(n, eps0, variant=variant)
    p, q = np.exp(log_p), np.exp(log_q)
    return np.array(
        [
            max(
                math.fsum(np.maximum(p - math.exp(e) * q, 0)),
                math.fsum(np.maximum(q - math.exp(e) * p, 0)),
            )
            for e in eps
        ]
    )


def rational_randomizer(rng: random.Random, inputs: int, outputs: int, top: int):
    rows = [[Fraction(rng.randint(1, top)) for _ in range(outputs)] for _ in range(inputs)]
    return [[v / sum(row) for v in row] for row in rows]


def subset_selection(domain: int, size: int, ratio: Fraction):
    """Each input reports a size-subset of [domain], weight ratio if it contains the input."""
    subsets = list(itertools.combinations(range(domain), size))
    rows = [[ratio if x in s else Fraction(1) for s in subsets] for x in range(domain)]
    return [[v / sum(row) for v in row] for row in rows]


def unary(domain: int, p: Fraction, q: Fraction):
    """Unary encoding: bit x set w.p. p, every other bit w.p. q (all 2^d outputs)."""
    outputs = list(itertools.product((0, 1), repeat=domain))
    return [
        [
            math.prod(
                ((p if j == x else q) if bit else (1 - p if j == x else 1 - q))
                for j, bit in enumerate(y)
            )
            for y in outputs
        ]
        for x in range(domain)
    ]


def lattice_deltas(n: int, eps0: float, eps) -> dict[str, np.ndarray]:
    return {variant: lattice_delta(n, eps0, eps, variant) for variant in VARIANTS}


def assert_dominated(truth, bound) -> None:
    truth = np.array([float(t) for t in truth])
    assert np.all(truth <= bound * (1 + RELATIVE) + ABSOLUTE), (truth, bound)


# -- the oracle's own consistency --------------------------------------------------


def test_homogeneous_identity_matches_the_view():
    # docs/clones-validity.md, eq. (H): delta = E[(X_1 + ... + X_n)_+] / n, exactly.
    rng = random.Random(7)
    for _ in range(12):
        probs = rational_randomizer(rng, rng.randint(2, 4), rng.randint(2, 4), 9)
        n, z = rng.randint(1, 4), rng.randrange(len(probs))
        eps = [0.0, 0.3, 1.0]
        view = oracle.target_deltas(probs, [z] * (n - 1), 0, 1, eps)
        assert view == oracle.homogeneous_deltas(probs, n, z, 0, 1, eps)


@pytest.mark.parametrize("variant", VARIANTS)
def test_clone_matrices_are_the_library_pairs(variant):
    # Both pairs are shuffled histograms of a 3-output matrix (oracle) and lattices (pld).
    for eps0 in (0.3, 1.0, 2.5):
        ratio = Fraction(math.exp(eps0))
        eps = np.linspace(0.0, eps0, 5)
        for n in range(1, 6):
            exact = [float(v) for v in oracle.clone_deltas(n, ratio, variant, eps)]
            np.testing.assert_allclose(
                lattice_delta(n, eps0, eps, variant), exact, rtol=1e-12, atol=ABSOLUTE
            )


# -- the standard pair is never below the stronger one -----------------------------


def test_standard_pair_is_above_the_stronger_pair_at_every_eps():
    for eps0 in (0.3, 1.0, 3.0):
        ratio = Fraction(math.exp(eps0))
        eps = np.linspace(0.0, eps0, 7)
        for n in (2, 4, 6):
            standard = oracle.clone_deltas(n, ratio, "standard", eps)
            stronger = oracle.clone_deltas(n, ratio, "stronger", eps)
            assert all(s >= t for s, t in zip(standard, stronger, strict=True))
    for n, eps0 in ((10**4, 1.0), (10**5, 4.0), (300, 0.1)):
        eps = np.linspace(0.0, eps0, 25)
        standard_lower, _ = clones_delta_bounds(n, eps0, eps, variant="standard")
        _, stronger_upper = clones_delta_bounds(n, eps0, eps, variant="stronger")
        # Brackets of 1e-10 relative width: the order holds wherever the gap exceeds them.
        assert np.all(standard_lower >= stronger_upper * (1 - 1e-9) - 1e-17)
    many = {v: pld.clones(10**4, 1.0, variant=v).self_compose(100) for v in VARIANTS}
    assert many["standard"].epsilon_bounds(1e-6)[0] > many["stronger"].epsilon_bounds(1e-6)[1]


# -- both pairs above the exact shuffled view ----------------------------------------


def _random_sweep(seed: int, count: int, largest_n: int) -> int:
    """Random rational randomizers: both pairs above the exact view; returns how many
    were outside the stronger pair's class (where only the evidence speaks for it)."""
    rng = random.Random(seed)
    outside = 0
    for _ in range(count):
        probs = rational_randomizer(rng, rng.randint(2, 4), rng.randint(2, 5), 9)
        ratio = oracle.local_ratio(probs)
        if ratio == 1:
            continue
        eps0 = oracle.local_eps0(probs)
        n = rng.randint(2, largest_n if len(probs) <= 3 else min(largest_n, 4))
        eps = [eps0 * f for f in (0.05, 0.25, 0.5)]
        truth = oracle.worst_deltas(probs, n, eps)
        bounds = lattice_deltas(n, eps0, eps)
        assert_dominated(truth, bounds["standard"])
        assert_dominated(truth, bounds["stronger"])
        pairs = itertools.permutations(range(len(probs)), 2)
        outside += not all(oracle.admits_stronger_clones(probs, a, b, ratio) for a, b in pairs)
    return outside


def test_both_pairs_dominate_random_randomizers():
    # 40 randomizers, 2-4 inputs, 2-5 outputs, n <= 4, every multiset of the others.
    assert _random_sweep(seed=11, count=40, largest_n=4) > 10


@pytest.mark.slow
def test_both_pairs_dominate_random_randomizers_exhaustive():
    # Measured while writing docs/clones-validity.md: 16 000 such randomizers (n <= 6,
    # 11 000 outside the class), no violation of either pair.
    assert _random_sweep(seed=12, count=600, largest_n=6) > 100


STRUCTURED = {
    "binary RR": lambda: [[Fraction(3, 4), Fraction(1, 4)], [Fraction(1, 4), Fraction(3, 4)]],
    "3-RR": lambda: [
        [Fraction(1, 2) if x == y else Fraction(1, 4) for y in range(3)] for x in range(3)
    ],
    "2-of-3 subset selection": lambda: subset_selection(3, 2, Fraction(3)),
    "2-of-4 subset selection": lambda: subset_selection(4, 2, Fraction(2)),
    "unary encoding (OUE, d = 3)": lambda: unary(3, Fraction(1, 2), Fraction(1, 4)),
    "null output": lambda: [
        [Fraction(1, 2), Fraction(1, 6), Fraction(1, 3)],
        [Fraction(1, 6), Fraction(1, 2), Fraction(1, 3)],
        [Fraction(1, 6), Fraction(1, 6), Fraction(2, 3)],
    ],
}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_both_pairs_dominate_structured_randomizers(name):
    probs = STRUCTURED[name]()
    eps0 = oracle.local_eps0(probs)
    eps = np.linspace(0.0, eps0, 6)[:-1]
    for n in range(1, 4 if len(probs[0]) > 4 else 5):
        truth = oracle.worst_deltas(probs, n, eps)
        bounds = lattice_deltas(n, eps0, eps)
        assert_dominated(truth, bounds["stronger"])
        assert_dominated(truth, bounds["standard"])


# -- Theorem B: other users sharing one input ---------------------------------------


def hexagon_extreme_laws(ratio: Fraction) -> list[dict]:
    """Laws with positive weights on <= 3 vertices of the hexagon H, mean (1, 1)."""
    a = 1 / ratio
    one = Fraction(1)
    vertices = [(a, a), (a, one), (one, ratio), (ratio, ratio), (ratio, one), (one, a)]
    laws = []
    for size in (2, 3):
        for chosen in itertools.combinations(vertices, size):
            rows = [[one] * size, [u for u, _ in chosen], [v for _, v in chosen]]
            weights = _solve(rows)
            if weights is not None and all(w > 0 for w in weights):
                laws.append(dict(zip(chosen, weights, strict=True)))
    return laws


def _solve(rows):
    """The unique w with rows · w = (1, 1, 1), or None (Cramer's rule on a square subsystem)."""
    size = len(rows[0])
    for chosen in itertools.combinations(range(3), size):
        square = [rows[i] for i in chosen]
        det = _det(square)
        if det == 0:
            continue
        weights = []
        for column in range(size):
            replaced = [[1 if c == column else row[c] for c in range(size)] for row in square]
            weights.append(_det(replaced) / det)
        consistent = all(sum(r * w for r, w in zip(row, weights, strict=True)) == 1 for row in rows)
        return weights if consistent else None
    return None


def _det(m):
    if len(m) == 2:
        return m[0][0] * m[1][1] - m[0][1] * m[1][0]
    return sum((-1) ** j * m[0][j] * _det([r[:j] + r[j + 1 :] for r in m[1:]]) for j in range(3))


@pytest.mark.parametrize("ratio", [Fraction(11, 10), Fraction(3, 2), Fraction(3), Fraction(20)])
def test_hexagon_has_five_extreme_laws_each_below_the_stronger_pair_in_convex_order(ratio):
    laws = hexagon_extreme_laws(ratio)
    p = 1 / (ratio + 1)
    # The five of docs/clones-validity.md, Theorem B: trivial, binary RR with the others
    # at x0 or at x1, 3-RR, 2-of-3 subset selection.
    assert sorted(sorted(law.values()) for law in laws) == sorted(
        [
            sorted([p, 1 - p]),
            sorted([p, 1 - p]),
            sorted([p, 1 - p]),
            sorted([1 / (ratio + 2)] * 2 + [ratio / (ratio + 2)]),
            sorted([ratio / (2 * ratio + 1)] * 2 + [1 / (2 * ratio + 1)]),
        ]
    )
    clone = {
        (ratio, Fraction(1)): p,
        (Fraction(1), ratio): p,
        (Fraction(0), Fraction(0)): 1 - 2 * p,
    }
    for beta in (Fraction(1), Fraction(21, 20), (ratio + 1) / 2, ratio, ratio + 1, 3 * ratio + 2):
        atoms = sorted({u - beta * v for u, v in clone})

        def stop_loss(law, t, beta=beta):
            return sum(w * max(u - beta * v - t, 0) for (u, v), w in law.items())

        for law in laws:
            values = [u - beta * v for u, v in law]
            assert atoms[0] <= min(values) and max(values) <= atoms[-1]
            for t in atoms + values:
                assert stop_loss(law, t) <= stop_loss(clone, t)


def test_homogeneous_datasets_are_dominated_by_the_stronger_pair_outside_its_class():
    # Theorem B for randomizers that fail (C): every common input of the other users.
    cases = [STRUCTURED["2-of-3 subset selection"](), STRUCTURED["unary encoding (OUE, d = 3)"]()]
    rng = random.Random(3)
    cases += [rational_randomizer(rng, 3, 4, 20) for _ in range(6)]
    for probs in cases:
        ratio = oracle.local_ratio(probs)
        eps = [0.0, 0.1, 0.4, 0.8]
        for n in (2, 5):
            stronger = oracle.clone_deltas(n, ratio, "stronger", eps)
            for z, x0, x1 in itertools.product(range(len(probs)), repeat=3):
                if x0 != x1:
                    truth = oracle.homogeneous_deltas(probs, n, z, x0, x1, eps)
                    assert all(t <= s for t, s in zip(truth, stronger, strict=True))


# -- the class condition on hand-made matrices ---------------------------------------

CLASS_CASES = [
    # (matrix, in the class, why)
    ([[0.75, 0.25], [0.25, 0.75]], True, "binary RR: every two-input randomizer"),
    ([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]], True, "two inputs, three outputs"),
    ([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]], True, "3-RR"),
    ([[0.4, 0.4, 0.2], [0.4, 0.2, 0.4], [0.2, 0.4, 0.4]], False, "2-of-3 subset selection"),
    ([[0.5, 0.3, 0.2], [0.3, 0.5, 0.2], [0.2, 0.2, 0.6]], True, "null-like third output"),
    ([[0.45, 0.45, 0.1], [0.45, 0.1, 0.45], [0.1, 0.45, 0.45]], False, "ratio 4.5, 2 favoured"),
]


@pytest.mark.parametrize("probs, inside, why", CLASS_CASES)
def test_class_check_against_hand_made_matrices(probs, inside, why):
    randomizer = pld.randomizers.matrix(probs)
    exact = oracle.exact_matrix(probs)
    ratio = oracle.local_ratio(exact)
    pairs = itertools.permutations(range(len(probs)), 2)
    assert all(oracle.admits_stronger_clones(exact, a, b, ratio) for a, b in pairs) == inside
    assert randomizer.admits_stronger_clones == inside, why
    p_max = 1 / (math.exp(randomizer.eps0) + 1)
    standard = math.exp(-randomizer.eps0) / 2
    if inside:
        assert randomizer.clone_probability == p_max
    else:
        # The largest p of (C_p): min over outputs of the column minimum over the sum of
        # its two largest entries (exact), lowered by a relative 1e-12.
        largest = min(
            min(col) / (sorted(col)[-1] + sorted(col)[-2]) for col in zip(*exact, strict=True)
        )
        # (The standard value comes from the float eps0: within 1e-15 of the exact one.)
        assert standard <= randomizer.clone_probability <= float(largest) * (1 + 1e-15)
        assert randomizer.clone_probability >= min(float(largest), p_max) * (1 - 2e-12)


def test_presets_carry_their_proven_pair():
    krr = pld.randomizers.krr(4, gamma=0.25)
    assert krr.admits_stronger_clones
    assert krr.clone_probability == pytest.approx(1 / (math.exp(krr.eps0) + 1), rel=1e-15)
    for randomizer in (
        pld.randomizers.local_hashing(2.0, 10),
        pld.randomizers.hadamard(2.0, 7),
        pld.randomizers.unary(2.0, 5),
        pld.randomizers.unary(2.0, 5, optimized=False),
        pld.randomizers.laplace(1.0),
    ):
        assert not randomizer.admits_stronger_clones
        assert randomizer.clone_probability == pytest.approx(math.exp(-randomizer.eps0) / 2)
    # The presets' closed forms agree with their matrices' exact check (two inputs and
    # Hadamard's three are in the class).
    presets = [pld.randomizers.hadamard(1.0, d) for d in (2, 3, 4, 5)]
    presets += [pld.randomizers.unary(1.0, d) for d in (2, 3, 4)]
    presets += [pld.randomizers.local_hashing(1.0, d, 2) for d in (2, 3)]
    for preset in presets:
        from_matrix = pld.randomizers.matrix(preset.matrix)
        assert from_matrix.admits_stronger_clones == preset.admits_stronger_clones, preset
        assert from_matrix.clone_probability == pytest.approx(preset.clone_probability, rel=1e-9)
    assert pld.randomizers.gaussian(1.0).clone_probability is None


# -- the withdrawn third-component pair, and pld.shuffle on k-RR ----------------------


def third_component_matrix(ratio: Fraction, p: Fraction):
    """The pair of Koskela et al. (2023), eq. 3.2 with p < 1/(e^eps0 + 1) as a histogram:
    the target reports 0 w.p. e^eps0 p, 1 w.p. p, else a null output."""
    rest = 1 - p - ratio * p
    return [[p, p, 1 - 2 * p], [ratio * p, p, rest], [p, ratio * p, rest]]


def test_the_withdrawn_third_component_pair_is_below_shuffled_krr():
    # k-RR's "own" pair p = gamma / k (used by pld before): exact k-RR exceeds it (k = 3).
    k, gamma, n = 3, Fraction(1, 2), 2
    probs = [[1 - gamma + gamma / k if x == y else gamma / k for y in range(k)] for x in range(k)]
    ratio = oracle.local_ratio(probs)
    eps = [math.log(ratio) * f for f in (0.75, 0.9)]  # exact: 0.130 and 0.058
    truth = oracle.worst_deltas(probs, n, eps)
    withdrawn = third_component_matrix(ratio, gamma / k)
    forward = oracle.target_deltas(withdrawn, [0] * (n - 1), 1, 2, eps)
    assert all(t > w + Fraction(1, 100) for t, w in zip(truth, forward, strict=True))
    # The stronger pair, which Theorem A proves for k-RR, is above it.
    assert all(
        t <= s for t, s in zip(truth, oracle.clone_deltas(n, ratio, "stronger", eps), strict=True)
    )


@pytest.mark.parametrize("k, gamma", [(3, 0.5), (4, 0.25), (2, 0.4)])
def test_shuffle_of_krr_is_above_the_exact_protocol(k, gamma):
    randomizer = pld.randomizers.krr(k, gamma=gamma)
    probs = oracle.exact_matrix(randomizer.matrix)
    eps = [0.0, 0.2, 0.5, 1.0]
    for n in (2, 3):
        truth = oracle.worst_deltas(probs, n, eps)
        upper = pld.shuffle(randomizer, n).delta_bounds(eps)[1]
        assert_dominated(truth, upper)


def test_checkin_with_eps0_takes_the_variant():
    standard = pld.checkin(200, 0.5, 1.0).delta_bounds(0.3)[1]
    assert standard == pld.checkin(200, 0.5, 1.0, variant="standard").delta_bounds(0.3)[1]
    stronger = pld.checkin(200, 0.5, 1.0, variant="stronger").delta_bounds(0.3)[1]
    assert stronger < standard
    with pytest.raises(ValueError, match="variant"):
        pld.checkin(200, 0.5, randomizer=pld.randomizers.krr(3, gamma=0.5), variant="stronger")
