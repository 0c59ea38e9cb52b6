"""Shuffled and distributed check-in (pld.shuffling.checkin.mechanism) against independent truths.

Truths: brute-force enumeration of the real protocol with k-RR reports in exact
fractions (tests/oracles/checkin_protocol.py); the count mixture of Lemma 7 on the
exact clones pair, built as measures; closed forms for p = 1 (pld.clones' grid-free
bracket, the Gaussian mechanism) and n = 1 (randomised response with probability-p
participation).
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np
import pytest

import pld
from pld.central.gaussian_mechanism import gaussian_delta
from pld.shuffling.clones.mechanism import clones_delta_bounds
from tests.oracles import checkin_protocol as oracle

# k-RR with k = 4, gamma = 1/2 is eps0-LDP with e^eps0 = 1 + k (1 - gamma) / gamma = 5.
K, GAMMA = 4, Fraction(1, 2)
EXP_EPS0 = 1 + K * (1 - GAMMA) / GAMMA
EPS0 = math.log(EXP_EPS0)
STEP = 1e-3
# Multiples of STEP: grid points of the connect-the-dots pair, where its curve is the profile.
GRID_EPS = np.array([0.0, 0.05, 0.2, 0.5, 0.9, 1.4])
ADJACENCIES = ("replace", "add-remove")


def _others(n: int, adjacency: str) -> list[tuple[int, ...]]:
    size = n - 1 if adjacency == "replace" else n
    return [
        tuple([0] * size),
        tuple([1] * size),
        tuple(i % K for i in range(size)),
        tuple(2 + i % 2 for i in range(size)),
    ]


def _alpha(eps: float) -> Fraction:
    return Fraction(math.exp(eps))


@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize(
    ("n", "p"), [(1, Fraction(1, 3)), (3, Fraction(1, 2)), (5, Fraction(1, 5))]
)
def test_upper_bound_holds_for_the_real_protocol(n, p, adjacency):
    # Every dataset pair enumerated: the eps0-LDP (clones) bound must be above each.
    loss = pld.checkin(n, float(p), EPS0, adjacency=adjacency, loss_grid_step=STEP)
    eps = np.array([0.0, 0.03, 0.25, 0.7, 1.2, 1.6])
    _, upper = loss.delta_bounds(eps)
    for others in _others(n, adjacency):
        for value, e in zip(upper, eps, strict=True):
            exact = oracle.protocol_delta(others, K, GAMMA, p, adjacency, _alpha(e))
            assert value >= float(exact) * (1 - 1e-12), (others, e, value, exact)


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_two_rounds_bound_the_real_protocol(adjacency):
    n, p = 3, Fraction(1, 2)
    composed = pld.checkin(n, float(p), EPS0, adjacency=adjacency, loss_grid_step=STEP)
    composed = composed.self_compose(2)
    eps = np.array([0.0, 0.4, 1.0, 2.0])
    _, upper = composed.delta_bounds(eps)
    others = _others(n, adjacency)[2]
    for value, e in zip(upper, eps, strict=True):
        exact = oracle.protocol_delta(others, K, GAMMA, p, adjacency, _alpha(e), rounds=2)
        assert value >= float(exact) * (1 - 1e-12)


@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize(
    ("n", "p"),
    [(1, Fraction(1, 3)), (2, Fraction(9, 10)), (4, Fraction(1, 2)), (6, Fraction(1, 7))],
)
def test_bracket_contains_the_exact_count_mixture(n, p, adjacency):
    # Small n: every count is its own block, so at grid points the bracket holds the
    # exact mixture (eqs. 1-3) and the upper side is within the bases' discretisation
    # (clones on its default grid: < 1e-6 absolute here); the lower side rounds the
    # base's isolated atoms (loss eps0 = log 5, off the grid) down: first order, < 1 %.
    loss = pld.checkin(
        n,
        float(p),
        EPS0,
        variant="stronger",  # the oracle's clones bases
        adjacency=adjacency,
        loss_grid_step=STEP,
        count_tolerance=0.0,
    )
    lower, upper = loss.delta_bounds(GRID_EPS)
    for low, up, e in zip(lower, upper, GRID_EPS, strict=True):
        exact = float(oracle.mixture_profile(n, p, EXP_EPS0, _alpha(e), adjacency))
        assert low <= exact + 1e-12 and up >= exact - 1e-12, (e, low, exact, up)
        assert up - exact <= 1e-6 and exact - low <= 1e-2 * exact + 1e-9


def test_p_one_reproduces_the_plain_shuffler():
    n, eps0 = 200, 1.0
    eps = np.array([0.05, 0.1, 0.2, 0.4])
    clones_low, clones_up = clones_delta_bounds(n, eps0, eps)
    lower, upper = pld.checkin(n, 1.0, eps0).delta_bounds(eps)
    assert np.all(upper >= clones_low * (1 - 1e-9))
    # Same clones pair, seen through Lemma 7 at rate 1 and connect-the-dots: within 0.5 %.
    assert np.all(upper <= clones_up * 1.005 + 1e-12)
    assert np.all(lower <= clones_up * (1 + 1e-9))


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_one_user_is_randomised_response_with_participation(adjacency):
    p, eps0 = 0.3, 1.5
    e0 = math.exp(eps0)
    eps = np.array([0.0, 0.5, 1.0, 1.4])
    lower, upper = pld.checkin(1, p, eps0, adjacency=adjacency, loss_grid_step=STEP).delta_bounds(
        eps
    )
    alpha = np.exp(eps)
    if adjacency == "replace":
        # p H_alpha(RR) + (1 - p) H_alpha(identical): the target's coin hides nothing else.
        truth = p * np.maximum(e0 - alpha, 0) / (e0 + 1)
    else:
        # With n = 1 the dataset with the target has 2 users: the bound of eqs. (2)-(3)
        # is max(sum_k pi'(k) A_k(alpha r_k), sum_k pi(k) B_k(alpha / r_k)).
        truth = np.array(
            [
                float(oracle.mixture_profile(1, Fraction(p), Fraction(e0), Fraction(a), adjacency))
                for a in alpha
            ]
        )
    assert np.all(upper >= truth - 1e-12)
    assert np.all(lower <= truth + 1e-12)
    assert np.all(upper - truth <= 1e-6)


def test_count_blocks_bracket_the_per_count_evaluation():
    n, p, eps0 = 1000, 0.05, 1.0
    eps = np.array([0.0, 0.02, 0.04, 0.08])
    exact_low, exact_up = pld.checkin(n, p, eps0, count_tolerance=0.0).delta_bounds(eps)
    low, up = pld.checkin(n, p, eps0).delta_bounds(eps)
    assert np.all(up >= exact_low * (1 - 1e-9)) and np.all(low <= exact_up * (1 + 1e-9))
    # Default blocks (measured): +0.05 % at delta ~ 4e-3, +1.2 % at 2e-6, +6.6 % at 1e-10;
    # the base's first-order cost grows like log(1/delta) (module docstring).
    assert np.all(up[:3] <= exact_up[:3] * 1.02)
    assert up[3] <= exact_up[3] * 1.10


def test_add_remove_is_not_below_replace_in_the_bulk():
    # Add/remove also leaks the count; at the same n its bound is not smaller at eps = 0.
    replace = pld.checkin(300, 0.05, 1.0).delta(0.0)
    add_remove = pld.checkin(300, 0.05, 1.0, adjacency="add-remove").delta(0.0)
    assert add_remove >= replace * 0.5


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_distributed_checkin_limits(adjacency):
    sigma = 2.0
    eps = np.array([0.0, 0.2, 0.5])
    lower, upper = pld.distributed_checkin(
        1, 0.4, sigma, sensitivity=1.0, adjacency=adjacency, loss_grid_step=STEP
    ).delta_bounds(eps)
    if adjacency == "replace":
        truth = 0.4 * gaussian_delta(eps, sigma)
        assert np.all(upper >= truth * (1 - 1e-9)) and np.all(lower <= truth * (1 + 1e-9))
        assert np.all(upper <= truth * 1.01)
    else:
        assert np.all(upper >= 0.4 * gaussian_delta(eps, sigma) * (1 - 1e-9))
    n = 50
    lower, upper = pld.distributed_checkin(
        n, 1.0, sigma, sensitivity=1.0, loss_grid_step=STEP
    ).delta_bounds(eps)
    truth = gaussian_delta(eps, sigma * math.sqrt(n))
    assert np.all(upper >= truth * (1 - 1e-9)) and np.all(upper <= truth * 1.01 + 1e-12)


def test_distributed_checkin_bounds_its_mixture_at_moderate_n():
    # Independent of the blocks: sum_k Bin(k) p-weighted Lemma 7 on exact Gaussian profiles,
    # evaluated by pld.subsample per count, is inside [lower, upper] (loose check, 2 %).
    n, p, sigma = 12, 0.3, 1.0
    eps = np.array([0.0, 0.1, 0.3])
    lower, upper = pld.distributed_checkin(
        n, p, sigma, sensitivity=1.0, count_tolerance=0.0
    ).delta_bounds(eps)
    from scipy import stats

    total = np.zeros(eps.size)
    for k in range(1, n + 1):
        base = pld.gaussian(sigma * math.sqrt(k))
        total += stats.binom.pmf(k, n, p) * pld.subsample(base, k / n).delta_bounds(eps)[0]
    assert np.all(upper >= total * (1 - 1e-9))
    assert np.all(lower <= total * 1.02 + 1e-12)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"n": 10, "p": 0.0, "eps0": 1.0}, "p must lie in (0, 1]"),
        ({"n": 10, "p": 1.5, "eps0": 1.0}, "p must lie in (0, 1]"),
        ({"n": 0, "p": 0.5, "eps0": 1.0}, "n must be an integer in \\[1, "),
        ({"n": 10, "p": 0.5}, "exactly one of eps0"),
        ({"n": 10, "p": 0.5, "eps0": -1.0}, "eps0 must lie in (0, 50]"),
        ({"n": 10, "p": 0.5, "eps0": 1.0, "adjacency": "swap"}, "adjacency must be"),
        ({"n": 10, "p": 1.0, "eps0": 1.0, "adjacency": "add-remove"}, "p must lie in (0, 1)"),
        ({"n": 10, "p": 0.5, "eps0": 1.0, "count_tolerance": 2.0}, "count_tolerance"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        pld.checkin(**kwargs)


def test_cli_epsilon_and_bad_input():
    run = [sys.executable, "-m", "pld", "epsilon", "--mechanism", "checkin", "--n", "300"]
    result = subprocess.run(
        [*run, "--p", "0.05", "--eps0", "1", "--rounds", "10", "--delta", "1e-6", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    import json

    payload = json.loads(result.stdout)
    direct = pld.checkin(300, 0.05, 1.0).self_compose(10).epsilon_bounds(1e-6)
    assert payload["eps_upper"] == pytest.approx(direct[1], rel=1e-9)
    bad = subprocess.run(
        [*run, "--p", "1.5", "--eps0", "1", "--delta", "1e-6"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["pld: error: p must lie in (0, 1] (got 1.5)"]


def test_calibrate_eps0_meets_the_target():
    result = pld.calibrate(
        pld.checkin,
        "eps0",
        target_eps=0.3,
        target_delta=1e-6,
        rounds=5,
        tolerance=0.02,
        n=300,
        p=0.1,
    )
    assert result.delta_upper <= 1e-6
    assert result.rejected <= result.value * 1.03
    above = pld.checkin(300, 0.1, result.rejected).self_compose(5).delta(0.3)
    assert above > 1e-6


@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize(
    ("n", "p"), [(2, Fraction(1, 2)), (4, Fraction(1, 2)), (5, Fraction(1, 5))]
)
def test_specific_randomizer_bounds_the_real_protocol(n, p, adjacency):
    # k-RR itself (exact enumeration per count, checkin_exact) instead of the clones worst
    # case: above every pair, and at eps = 0 within 6 % of the four pairs checked here.
    loss = pld.checkin(
        n,
        float(p),
        randomizer=pld.randomizers.krr(k=K, gamma=float(GAMMA)),
        adjacency=adjacency,
        loss_grid_step=STEP,
        count_tolerance=0.0,
    )
    eps = np.array([0.0, 0.2, 0.5, 1.0])
    _, upper = loss.delta_bounds(eps)
    worst = np.zeros(eps.size)
    for others in _others(n, adjacency):
        exact = [
            float(oracle.protocol_delta(others, K, GAMMA, p, adjacency, _alpha(e))) for e in eps
        ]
        worst = np.maximum(worst, exact)
    assert np.all(upper >= worst * (1 - 1e-12))
    assert upper[0] <= worst[0] * 1.06


def test_specific_randomizer_with_p_one_is_the_plain_shuffler():
    r = pld.randomizers.krr(k=4, gamma=0.25)
    eps = np.array([0.05, 0.1, 0.2])
    direct_low, direct_up = pld.shuffle(r, 100).delta_bounds(eps)
    lower, upper = pld.checkin(100, 1.0, randomizer=r).delta_bounds(eps)
    assert np.all(upper >= direct_low * (1 - 1e-9))
    assert np.all(upper <= direct_up * 1.01 + 1e-12)


def test_eps0_and_randomizer_are_exclusive_and_checked():
    with pytest.raises(ValueError, match="exactly one of eps0"):
        pld.checkin(10, 0.5, 1.0, randomizer=pld.randomizers.krr(k=4, gamma=0.25))
    with pytest.raises(ValueError, match="randomizer"):
        pld.checkin(10, 0.5, randomizer="krr")


def test_cli_randomizer_options():
    run = [sys.executable, "-m", "pld", "delta", "--mechanism", "checkin", "--n", "200"]
    args = ["--p", "0.1", "--randomizer", "krr", "--k", "4", "--gamma", "0.25", "--eps", "0.1"]
    result = subprocess.run([*run, *args, "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    import json

    r = pld.randomizers.krr(k=4, gamma=0.25)
    direct = pld.checkin(200, 0.1, randomizer=r).delta_bounds([0.1])[1][0]
    assert json.loads(result.stdout)["delta_upper"][0] == pytest.approx(direct, rel=1e-9)
    bad = subprocess.run(
        [*run, "--p", "0.1", "--k", "4", "--eps", "0.1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == "pld: error: --k needs --randomizer"


def _worst_pair(n, kk, gamma, p, adjacency, eps):
    """Brute force over every dataset: the largest exact delta of any neighbouring pair.

    k-RR is symmetric in its values, so target values 0 and 1 and every multiset of the
    others' values cover all pairs.
    """
    size = n - 1 if adjacency == "replace" else n
    worst = np.zeros(len(eps))
    for others in itertools.combinations_with_replacement(range(kk), size):
        first, second = oracle.protocol_laws(others, kk, gamma, p, adjacency)
        for i, e in enumerate(eps):
            alpha = _alpha(e)
            exact = max(
                oracle.hockey_stick(first, second, alpha), oracle.hockey_stick(second, first, alpha)
            )
            worst[i] = max(worst[i], float(exact))
    return worst


# Grid points (multiples of STEP) where the bound is compared with the worst pair.
TIGHT_EPS = np.array([0.0, 0.1, 0.3, 0.5, 0.8, 1.2])


def _tightness(n, kk, eps0, p, adjacency):
    gamma = Fraction(kk / (math.expm1(eps0) + kk))  # exactly the float the library uses
    r = pld.randomizers.krr(k=kk, gamma=float(gamma))
    loss = pld.checkin(n, float(p), randomizer=r, adjacency=adjacency, loss_grid_step=STEP)
    _, upper = loss.delta_bounds(TIGHT_EPS)
    worst = _worst_pair(n, kk, gamma, p, adjacency, TIGHT_EPS)
    # Never below the worst pair (float margins of checkin_exact are ~1e-12 relative).
    assert np.all(upper >= worst), (upper, worst)
    # n <= 5: every count enumerated and every dataset of the others (checkin_exact, E5-E6),
    # so at loss-grid points only the weights' 1e-10 raise and the float margins remain.
    # Measured over the exhaustive grid below: <= 1 + 2.6e-10 times the worst pair; where
    # the worst pair is 0 (eps >= eps0) the engine's float budget leaves up to 1.6e-12.
    assert np.all(upper <= worst * (1 + 1e-6) + 1e-11), (upper / np.maximum(worst, 1e-300), worst)


@pytest.mark.parametrize(
    ("n", "kk", "eps0", "p", "adjacency"),
    [
        (5, 4, 1.0, Fraction(7, 10), "replace"),
        (3, 3, 2.0, Fraction(1), "replace"),
        (4, 2, 0.5, Fraction(3, 10), "add-remove"),
    ],
)
def test_specific_randomizer_is_tight_at_tiny_n(n, kk, eps0, p, adjacency):
    _tightness(n, kk, eps0, p, adjacency)


@pytest.mark.slow
@pytest.mark.parametrize("adjacency", ADJACENCIES)
@pytest.mark.parametrize("p", [Fraction(3, 10), Fraction(7, 10), Fraction(1)])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("kk", [2, 3, 4])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_specific_randomizer_is_tight_at_tiny_n_exhaustive(n, kk, eps0, p, adjacency):
    if adjacency == "add-remove" and p == 1:
        pytest.skip("p = 1 is refused under add/remove")
    _tightness(n, kk, eps0, p, adjacency)


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_enumerated_and_blanket_counts_together_bound_the_protocol(adjacency):
    # Counts 1..2 enumerated, 3..7 through pld.shuffle: still above every pair checked,
    # and not above the bound without enumeration (grid chords: 1e-9 relative).
    n, kk, p = 7, 3, Fraction(1, 2)
    gamma = Fraction(1, 2)
    r = pld.randomizers.krr(k=kk, gamma=float(gamma))
    common = {"adjacency": adjacency, "loss_grid_step": STEP, "count_tolerance": 0.0}
    eps = np.array([0.0, 0.2, 0.5, 1.0])
    _, mixed = pld.checkin(n, float(p), randomizer=r, exact_counts=2, **common).delta_bounds(eps)
    _, blanket = pld.checkin(n, float(p), randomizer=r, exact_counts=0, **common).delta_bounds(eps)
    assert np.all(mixed <= blanket * (1 + 1e-9))
    size = n - 1 if adjacency == "replace" else n
    for others in ([0] * size, [1] * size, [2] * size, [i % kk for i in range(size)]):
        for value, e in zip(mixed, eps, strict=True):
            exact = oracle.protocol_delta(others, kk, gamma, p, adjacency, _alpha(e))
            assert value >= float(exact), (others, e, value, exact)


def test_exact_counts_is_checked():
    r = pld.randomizers.krr(k=4, gamma=0.5)
    with pytest.raises(ValueError, match="exact_counts must be an integer >= 0"):
        pld.checkin(10, 0.5, randomizer=r, exact_counts=-1)
    with pytest.raises(ValueError, match="exact_counts=40 would enumerate"):
        pld.checkin(100, 0.5, randomizer=r, exact_counts=40)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"n": 10**11, "p": 0.5, "eps0": 1.0}, "reports, beyond the work budget"),
        (
            {"n": 10**11, "p": 0.5, "eps0": 1.0, "variant": "stronger"},
            "reports, beyond the work budget",
        ),
        ({"n": 2**40, "p": 0.5, "eps0": 1.0}, "up to 549760670022 reports, beyond the work budget"),
    ],
)
def test_huge_bulk_is_refused_up_front_with_the_estimate_and_the_knob(kwargs, fragment):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"checkin\(n=") as info:
        pld.checkin(**kwargs)
    assert time.perf_counter() - start < 2.0  # the bulk's quantiles only (it ran minutes)
    message = str(info.value)
    assert fragment in message and "max_base_count" in message, message


def test_max_base_count_is_valid_and_costs_little():
    # Counts above the cap use the cap's base: never below the uncapped bound. At
    # n p = 50 a cap at 40 (the bulk's lower part) costs 27 % in eps(1e-6) (measured).
    n, p = 1000, 0.05
    full = pld.checkin(n, p, 1.0).epsilon_bounds(1e-6)
    capped = pld.checkin(n, p, 1.0, max_base_count=40).epsilon_bounds(1e-6)
    assert capped[1] >= full[1] * (1 - 1e-9)
    assert capped[1] <= full[1] * 1.35
    with pytest.raises(ValueError, match="max_base_count must be an integer >= 1"):
        pld.checkin(n, p, 1.0, max_base_count=0)


def test_calibrate_participation_meets_the_target():
    n, eps0 = 20, 1.0
    result = pld.calibrate(
        pld.checkin,
        "participation",
        target_eps=0.3,
        target_delta=1e-3,
        tolerance=0.05,
        n=n,
        eps0=eps0,
    )
    assert result.param == "participation" and result.certified
    assert pld.checkin(n, result.value, eps0).delta(0.3) <= 1e-3
    assert pld.checkin(n, result.rejected, eps0).delta(0.3) > 1e-3
    assert result.rejected <= result.value * 1.11
    # p alone would be pld.clones' clone probability: participation is check-in's only.
    with pytest.raises(ValueError, match="no parameter 'participation'"):
        pld.calibrate(pld.clones, "participation", target_eps=0.3, target_delta=1e-3, n=n, eps0=1)
    with pytest.raises(ValueError, match="p is the calibrated parameter"):
        pld.calibrate(
            pld.checkin, "participation", target_eps=0.3, target_delta=1e-3, n=n, eps0=1, p=0.5
        )


def test_delta_grows_with_participation_where_sampled():
    # The truth does not decrease with p (thinning the multiset is a post-processing);
    # the bound is checked here, not assumed (pld.calibration documents where it is not).
    ps = np.geomspace(0.05, 1.0, 7)
    deltas = [pld.checkin(20, float(p), 1.0).delta(0.3) for p in ps]
    assert np.all(np.diff(deltas) > 0), deltas


def test_cli_calibrates_participation(capsys):
    from pld.cli.commands import main

    args = ["calibrate", "--mechanism", "checkin", "--n", "20", "--eps0", "1"]
    args += ["--target-eps", "0.3", "--target-delta", "1e-3", "--param", "participation"]
    assert main(["--quiet", *args, "--tolerance", "0.2", "--bounds", "0.1", "1", "--json"]) == 0
    import json

    payload = json.loads(capsys.readouterr().out)
    assert payload["param"] == "participation" and payload["delta_upper"] <= 1e-3
    assert main(["--quiet", *args, "--p", "0.5"]) == 2
    assert capsys.readouterr().err.strip() == (
        "pld: error: --p is what --param participation calibrates; do not give it"
    )


def _matrix_laws(rows, p, values):
    """Exact law of the released histogram for users holding ``values`` (any matrix)."""
    law = {(0,) * len(rows[0]): Fraction(1)}
    for value in values:
        new = {}
        for histogram, mass in law.items():
            new[histogram] = new.get(histogram, 0) + mass * (1 - p)
            for y, r in enumerate(rows[value]):
                bumped = list(histogram)
                bumped[y] += 1
                key = tuple(bumped)
                new[key] = new.get(key, 0) + mass * p * r
        law = new
    return law


@pytest.mark.parametrize("adjacency", ADJACENCIES)
def test_asymmetric_matrix_randomizer_is_tight_at_tiny_n(adjacency):
    # Every ordered target pair and every dataset of the others, exact fractions: the
    # general (not k-RR) path of checkin_exact, with inputs of unequal roles.
    rows = [[0.5, 0.25, 0.25], [0.125, 0.625, 0.25], [0.25, 0.25, 0.5]]
    exact_rows = [[Fraction(v) for v in row] for row in rows]
    n, p = 3, Fraction(1, 2)
    r = pld.randomizers.matrix(rows)
    loss = pld.checkin(n, float(p), randomizer=r, adjacency=adjacency, loss_grid_step=STEP)
    eps = np.array([0.0, 0.1, 0.3, 0.6])
    _, upper = loss.delta_bounds(eps)
    worst = np.zeros(eps.size)
    size = n - 1 if adjacency == "replace" else n
    targets = itertools.permutations(range(3), 2) if adjacency == "replace" else range(3)
    for target in targets:
        for others in itertools.combinations_with_replacement(range(3), size):
            if adjacency == "replace":
                first = _matrix_laws(exact_rows, p, [*others, target[0]])
                second = _matrix_laws(exact_rows, p, [*others, target[1]])
            else:
                first = _matrix_laws(exact_rows, p, others)
                second = _matrix_laws(exact_rows, p, [*others, target])
            for i, e in enumerate(eps):
                for a, b in ((first, second), (second, first)):
                    value = float(oracle.hockey_stick(a, b, _alpha(e)))
                    worst[i] = max(worst[i], value)
    assert np.all(upper >= worst), (upper, worst)
    assert np.all(upper <= worst * (1 + 1e-6) + 1e-12), upper / worst


def test_enumerated_sums_skip_counts_below_the_bulk():
    # Weights for counts 3..4 only: the programme (E3-E4) must not ask for counts 1..2,
    # and its sums equal those with zero weights there.
    from pld.shuffling.checkin.exact import MAX_DATASET_PAIRS, add_remove_sums, replace_sum

    rows = pld.randomizers.krr(k=2, eps0=1.0).matrix
    eps = np.linspace(-0.5, 0.5, 11)
    n = MAX_DATASET_PAIRS  # too many datasets: the longest-path programme
    weights, weights_add = {3: 0.3, 4: 0.2}, {3: 0.25, 4: 0.25}
    log_r = {3: 0.01, 4: 0.02}
    full_w = {1: 0.0, 2: 0.0, **weights}
    full_a = {1: 0.0, 2: 0.0, **weights_add}
    full_r = {1: 0.0, 2: 0.0, **log_r}
    got = add_remove_sums(rows, n, weights_add, weights, log_r, eps)
    ref = add_remove_sums(rows, n, full_a, full_w, full_r, eps)
    for side in range(2):
        for bound in range(2):
            np.testing.assert_allclose(got[side][bound], ref[side][bound], rtol=1e-12)
    np.testing.assert_allclose(
        replace_sum(rows, n, weights, eps), replace_sum(rows, n, full_w, eps)
    )


@pytest.mark.slow
def test_enumeration_starts_inside_the_bulk_under_add_remove():
    # Counts below the bulk are charged, not enumerated: the programme skips them.
    r = pld.randomizers.krr(k=2, eps0=1.0)
    eps = np.array([0.0, 0.1])
    common = {"adjacency": "add-remove", "exact_counts": 12}
    upper = pld.checkin(1000, 0.05, randomizer=r, **common).delta_bounds(eps)[1]
    plain = pld.checkin(1000, 0.05, randomizer=r, adjacency="add-remove", exact_counts=0)
    assert np.all(upper <= plain.delta_bounds(eps)[1] * (1 + 1e-9))


@pytest.mark.parametrize("p", [1e-6, 1e-2])
def test_a_billion_users_by_default(p):
    # The bases of up to 10^7 reports come from the clones row recurrence (seconds).
    loss = pld.checkin(10**9, p, eps0=1.0)
    lower, upper = loss.self_compose(10).epsilon_bounds(1e-6)
    assert 0.0 <= lower <= upper
    if p == 1e-2:  # 10 rounds of ~1e7 shuffled reports: a small eps, bracketed tightly
        assert 0.0 < upper < 0.01 and upper - lower <= 0.01 * upper
