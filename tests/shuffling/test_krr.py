"""Shuffled k-RR (pld.krr) against independent truths.

Truths used here:

* brute force (tests/oracles/krr_views.py): every outcome of every user enumerated
  with exact fractions, the adversary's whole view (blanket bits + histogram), and
  delta(eps) as a hockey-stick sum over views;
* the exact pmf pair of :func:`krr_view_pmfs`, itself checked against brute force,
  for truncation and blocking at moderate n;
* closed forms for n = 1 and gamma = 1;
* Google's dp_accounting on the same pmfs for compositions;
* the clones pair (pld.clones, written independently), which for k = 2 must
  coincide with the weak adversary's pair.

Tolerances: 1e-12 where both sides are sums of the same O(10^3) float64 terms;
1e-10 for the PLD at grid values of eps, where the engine adds only float
round-off terms (the connect-the-dots split is exact at grid points); the
truncation tests allow the charged tail mass on top.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.stats import binom

import pld
from pld.engine import DEFAULT_LOSS_GRID_STEP, choose_loss_grid_step
from pld.shuffling.krr import cells as _krr_cells
from pld.shuffling.krr import components as _krr_components
from pld.shuffling.krr.mechanism import krr, krr_tail_delta, krr_view_pmfs, ldp_epsilon
from tests.oracles import krr_views

ADVERSARIES = ("strong", "weak")
STEP = 1e-3
GRID_EPS = np.array([0, 10, 50, 100, 200, 400, 700, 1000, 1500, 2500]) * STEP


@functools.cache
def _oracle_laws(n, k, gamma, adversary):
    return krr_views.view_laws(n, k, gamma, adversary)


def _oracle_delta(n, k, gamma, adversary, eps):
    p_law, q_law = _oracle_laws(n, k, gamma, adversary)
    return np.array(
        [
            max(krr_views.hockey_stick(p_law, q_law, e), krr_views.hockey_stick(q_law, p_law, e))
            for e in eps
        ]
    )


def _pmf_delta(log_p, log_q, eps):
    p, q = np.exp(log_p), np.exp(log_q)
    forward = [np.sum(np.clip(p - math.exp(e) * q, 0, None)) for e in eps]
    backward = [np.sum(np.clip(q - math.exp(e) * p, 0, None)) for e in eps]
    return np.maximum(forward, backward)


def _statistic_labels(n, adversary):
    """Labels of krr_view_pmfs' outcomes, in its documented order."""
    if adversary == "strong":
        labels = [("random",)]
        labels += [(h1, s - h1) for s in range(1, n + 1) for h1 in range(s + 1)]
        return labels
    return [(b, h1, s - h1) for b in range(n) for s in range(b + 2) for h1 in range(s + 1)]


TINY = [(n, k, gamma) for n in (1, 2, 3, 4, 5, 6) for k in (2, 3) for gamma in (0.25, 0.5)]


# -- the pmfs against brute force ---------------------------------------------------


@pytest.mark.parametrize("adversary", ADVERSARIES)
@pytest.mark.parametrize("n, k, gamma", [(1, 3, 0.5), (3, 2, 0.25), (4, 3, 0.5), (6, 3, 0.25)])
def test_statistic_law_is_the_papers_formula(adversary, n, k, gamma):
    """The law of (b, h1, h2) (weak: Koskela et al. (2023), eq. C.2/C.3) and of (h1, h2) (strong).

    Enumerated with exact fractions; every outcome's probability must agree, and no
    outcome of the enumeration may be missing from the formula.
    """
    p_law, q_law = krr_views.statistic_law(n, k, gamma, adversary)
    log_p, log_q = krr_view_pmfs(n, k, gamma, adversary)
    labels = _statistic_labels(n, adversary)
    assert len(labels) == log_p.size
    formula_p = dict(zip(labels, np.exp(log_p), strict=True))
    formula_q = dict(zip(labels, np.exp(log_q), strict=True))
    assert set(p_law) <= {label for label, value in formula_p.items() if value > 0}
    for label in labels:
        assert formula_p[label] == pytest.approx(float(p_law.get(label, 0)), abs=1e-15)
        assert formula_q[label] == pytest.approx(float(q_law.get(label, 0)), abs=1e-15)


@pytest.mark.parametrize("adversary", ADVERSARIES)
@pytest.mark.parametrize("n, k, gamma", TINY)
def test_view_pmfs_have_the_delta_of_the_full_view(adversary, n, k, gamma):
    """Reducing the view to the counts keeps delta(eps) (sufficiency), both directions."""
    eps = np.array([0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 3.0])
    truth = _oracle_delta(n, k, gamma, adversary, eps)
    ours = _pmf_delta(*krr_view_pmfs(n, k, gamma, adversary), eps)
    np.testing.assert_allclose(ours, truth, rtol=0, atol=1e-12)


@pytest.mark.parametrize("adversary", ADVERSARIES)
@pytest.mark.parametrize("n, k, gamma", [(3, 3, 0.25), (6, 2, 0.5), (6, 3, 0.5)])
def test_view_is_symmetric(adversary, n, k, gamma):
    """symmetric=True is justified: both directions of the full view have one delta curve."""
    p_law, q_law = _oracle_laws(n, k, gamma, adversary)
    for e in (0.0, 0.1, 0.5, 1.5):
        forward = krr_views.hockey_stick(p_law, q_law, e)
        backward = krr_views.hockey_stick(q_law, p_law, e)
        assert forward == pytest.approx(backward, abs=1e-15)


# -- the PLD against brute force ----------------------------------------------------


@pytest.mark.parametrize("adversary", ADVERSARIES)
@pytest.mark.parametrize("n, k, gamma", TINY)
def test_one_round_delta_matches_brute_force(adversary, n, k, gamma):
    """At grid values of eps the upper delta is the exact one (connect-the-dots is exact there)."""
    one_round = krr(n, k, gamma, adversary)
    truth = _oracle_delta(n, k, gamma, adversary, GRID_EPS)
    lower, upper = one_round.delta_bounds(GRID_EPS)
    np.testing.assert_allclose(upper, truth, rtol=0, atol=1e-10)
    assert np.all(upper >= truth - 1e-15)
    assert np.all(lower <= truth + 1e-15)


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_off_grid_eps_is_bracketed(adversary):
    eps = np.array([0.0123, 0.3337, 0.77777, 1.2345])
    truth = _oracle_delta(6, 3, 0.25, adversary, eps)
    lower, upper = krr(6, 3, 0.25, adversary).delta_bounds(eps)
    assert np.all(lower <= truth + 1e-15)
    assert np.all(upper >= truth - 1e-15)
    # The bracket of one round is of first order in the grid step (1e-3 here).
    assert np.all(upper - lower <= 2e-3 * np.maximum(truth, 1e-3))


def test_n_equals_one_closed_forms():
    """n = 1: strong sees the target's report and bit (delta = 1 - gamma for every eps);
    weak sees one k-RR report: delta = (1 - gamma + gamma/k - e^eps gamma/k)_+."""
    k, gamma = 5, 0.3
    eps = GRID_EPS
    strong = krr(1, k, gamma, "strong").delta(eps)
    np.testing.assert_allclose(strong, 1 - gamma, rtol=0, atol=1e-12)
    weak = krr(1, k, gamma, "weak").delta(eps)
    expected = np.clip(1 - gamma + gamma / k - np.exp(eps) * gamma / k, 0, None)
    np.testing.assert_allclose(weak, expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_everyone_random_is_perfectly_private(adversary):
    """gamma = 1: both views have one law, delta = 0 up to the engine's round-off slack."""
    assert np.all(krr(50, 4, 1.0, adversary).delta(np.array([0.0, 0.5])) <= 1e-15)
    assert np.all(krr_tail_delta(50, 4, 1.0, adversary, [0.01, 0.5]) <= 1e-15)


def test_weak_loss_is_bounded_by_eps0():
    """The weak adversary's loss is at most eps0 (passed to the engine as max_loss)."""
    k, gamma = 3, 0.2
    eps0 = ldp_epsilon(k, gamma)
    log_p, log_q = krr_view_pmfs(7, k, gamma, "weak")
    loss = log_p - log_q
    assert np.max(np.abs(loss[np.isfinite(loss)])) == pytest.approx(eps0, abs=1e-12)
    for atoms in krr(200, k, gamma, "weak", tail_mass=1e-3).atoms("upper"):
        assert atoms.infinity_mass < 1e-12
        assert atoms.loss.max() <= eps0 + STEP


# -- truncation, merging and blocking at moderate n ---------------------------------


MODERATE = [("strong", 400, 4, 0.25), ("weak", 120, 3, 0.25), ("weak", 60, 2, 0.5)]


@pytest.mark.parametrize("adversary, n, k, gamma", MODERATE)
def test_merged_cells_equal_the_exact_pmfs(adversary, n, k, gamma):
    """krr (atoms merged per grid cell) gives the PLD of the exact pmfs, both bounds,
    one round and ten (docs/architecture.md, "Merged atoms")."""
    merged = krr(n, k, gamma, adversary, tail_mass=1e-100)
    log_p, log_q = krr_view_pmfs(n, k, gamma, adversary)
    # Outcomes below 1e-300 (the same ones krr's windows leave out) are passed as
    # truncated mass: subnormal masses crash the engine's lower-bound contraction
    # (ZeroDivisionError, reported to the engine).
    tiny = np.maximum(log_p, log_q) < -690
    exact = pld.from_pmfs(
        log_p[~tiny],
        log_q[~tiny],
        symmetric=True,
        truncated_mass_p=float(np.exp(log_p[tiny]).sum()),
        truncated_mass_q=float(np.exp(log_q[tiny]).sum()),
    )
    eps = np.linspace(0, 2, 21)
    for mine, reference in zip(merged.delta_bounds(eps), exact.delta_bounds(eps), strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-14)
    ours = merged.self_compose(10).delta_bounds(eps)
    theirs = exact.self_compose(10).delta_bounds(eps)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, atol=1e-14)
    # The engine's lower contraction sweeps from the far tails to the mode, so atoms
    # below 1e-100 (which krr's windows drop and the exact pmfs keep) move the composed
    # lower bound slightly (measured 5e-7 relative).
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-14)


@pytest.mark.parametrize("adversary, n, k, gamma", MODERATE)
@pytest.mark.parametrize("tail_mass", [1e-12, 1e-4])
def test_truncation_charges_at_most_tail_mass(adversary, n, k, gamma, tail_mass):
    exact = _pmf_delta(*krr_view_pmfs(n, k, gamma, adversary), GRID_EPS)
    lower, upper = krr(n, k, gamma, adversary, tail_mass=tail_mass).delta_bounds(
        GRID_EPS, rel_accuracy=1
    )
    assert np.all(upper >= exact - 1e-15)
    assert np.all(upper <= exact + tail_mass + 1e-10)
    assert np.all(lower <= exact + 1e-15)
    if tail_mass == 1e-4:
        # Something was dropped and charged (the window is not the whole support).
        assert np.max(upper - exact) > 1e-7


@pytest.mark.parametrize(
    "adversary, n, k, gamma, max_atoms",
    [("strong", 400, 4, 0.25, 3000), ("weak", 120, 3, 0.25, 3000), ("weak", 60, 2, 0.5, 300)],
)
def test_blocking_keeps_a_rigorous_bracket(adversary, n, k, gamma, max_atoms):
    """With a small atom budget the components are grouped: the upper side dominates
    the exact pair and the lower side is dominated by it, for one and ten rounds."""
    blocked = krr(n, k, gamma, adversary, max_atoms=max_atoms)
    unblocked = krr(n, k, gamma, adversary)
    exact_one = _pmf_delta(*krr_view_pmfs(n, k, gamma, adversary), GRID_EPS)
    lower, upper = blocked.delta_bounds(GRID_EPS)
    assert np.all(upper >= exact_one - 1e-15)
    assert np.all(lower <= exact_one + 1e-15)
    # The budget did force blocking: both sides moved away from the unblocked ones.
    unblocked_lower, unblocked_upper = unblocked.delta_bounds(GRID_EPS)
    assert np.max(upper - unblocked_upper) > 1e-4
    assert np.max(unblocked_lower - lower) > 1e-4
    ref_lower, ref_upper = unblocked.self_compose(10).delta_bounds(GRID_EPS * 3)
    lower, upper = blocked.self_compose(10).delta_bounds(GRID_EPS * 3)
    assert np.all(upper >= ref_lower - 1e-12)
    assert np.all(lower <= ref_upper + 1e-12)


def test_blocking_at_large_n_costs_little():
    """n = 10^4, weak: the blocked bracket (default budget) and the exact one agree to 0.1 %
    in eps(1e-6) after 100 rounds (measured: 1.8828 to 1.8836 against 1.8832 exact)."""
    exact = krr(10_000, 4, 0.25, "weak", max_atoms=10**9, loss_grid_step=1e-4)
    blocked = krr(10_000, 4, 0.25, "weak", loss_grid_step=1e-4)
    exact_lower, exact_upper = exact.self_compose(100).epsilon_bounds(1e-6)
    lower, upper = blocked.self_compose(100).epsilon_bounds(1e-6)
    assert lower <= exact_upper and upper >= exact_lower
    assert upper <= exact_upper * 1.001
    assert upper > exact_upper  # blocked, hence (slightly) looser


def _same_cells(a, b):
    assert a.first_cell == b.first_cell
    np.testing.assert_array_equal(a.p, b.p)
    np.testing.assert_array_equal(a.q, b.q)
    assert (a.p_infinite, a.q_infinite, a.dropped, a.mass_error) == (
        b.p_infinite,
        b.q_infinite,
        b.dropped,
        b.mass_error,
    )


@pytest.mark.parametrize(
    "adversary, n, k, gamma", [("strong", 30, 3, 0.5), ("weak", 300, 4, 0.25), ("weak", 40, 2, 0.9)]
)
def test_one_walk_on_several_grids_equals_one_walk_per_grid(adversary, n, k, gamma):
    """The merge on several grids in one walk gives, bit for bit, the cells of one walk
    per grid (the probe of the default step and the scatter share the walk)."""
    components, _ = _krr_components._components(n, k, gamma, adversary, 1e-12, 10**8)
    windows = _krr_cells._windows(components, 1e-12)
    steps = (1e-3, 1e-3 / 8, 0.0137)
    together = _krr_cells._scatter(components, windows, steps)
    for step, cells in zip(steps, together, strict=True):
        _same_cells(cells, _krr_cells._scatter(components, windows, (step,))[0])
    values = np.array([7, 3, 3, 12, 7, 0, 12])
    distinct, index = _krr_cells._distinct(values)
    expected = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected[0])
    np.testing.assert_array_equal(index, expected[1])


@pytest.mark.parametrize(
    "adversary, n, gamma, refined",
    [("strong", 10_000, 0.25, True), ("weak", 300, 0.9, True), ("strong", 60, 0.25, False)],
)
def test_default_grid_does_not_depend_on_the_guess(adversary, n, gamma, refined, monkeypatch):
    """The default step is chosen on the coarse cells whatever the guess of it was, and
    the guess is right where it saves a walk (a refined default grid)."""
    components, _ = _krr_components._components(n, 4, gamma, adversary, 1e-12, 10**8)
    windows = _krr_cells._windows(components, 1e-12)
    cells, step = _krr_cells._merge_on_default_grid(components, None, 1e-12)
    coarse = _krr_cells._scatter(components, windows, (DEFAULT_LOSS_GRID_STEP,))[0]
    assert step == choose_loss_grid_step(_krr_cells._loss_std(coarse))
    assert (step < DEFAULT_LOSS_GRID_STEP) == refined
    assert _krr_cells._guess_step(components, windows) == step
    for wrong in (DEFAULT_LOSS_GRID_STEP, step / 2, step * 4):
        monkeypatch.setattr(_krr_cells, "_guess_step", lambda *_, wrong=wrong: wrong)
        cells_again, step_again = _krr_cells._merge_on_default_grid(components, None, 1e-12)
        assert step_again == step
        _same_cells(cells_again, cells)


# -- orderings: weak <= strong, and the clones bound ------------------------------------


@pytest.mark.parametrize("n, k, gamma", [(6, 3, 0.25), (5, 2, 0.5), (4, 3, 0.5)])
def test_weak_never_exceeds_strong_exactly(n, k, gamma):
    """The weak view is the strong one without the target's bit (post-processing)."""
    eps = np.linspace(0, 3, 31)
    strong = _oracle_delta(n, k, gamma, "strong", eps)
    weak = _oracle_delta(n, k, gamma, "weak", eps)
    assert np.all(weak <= strong + 1e-15)
    assert np.any(weak < strong - 1e-3)


@pytest.mark.parametrize("rounds", [1, 10])
def test_weak_never_exceeds_strong_in_the_figure_setting(rounds):
    """Upper against upper, with 1e-12 of slack for the engine's FFT round-off terms
    (the true values fall below 1e-16 at large eps; at eps = 0 both are the same
    total-variation distance, 0.0534768). Where delta is not negligible the two
    brackets are separated."""
    eps = np.linspace(0, 4, 81)
    strong = krr(1000, 4, 0.25, "strong")
    weak = krr(1000, 4, 0.25, "weak")
    if rounds > 1:
        strong, weak = strong.self_compose(rounds), weak.self_compose(rounds)
    strong_lower, strong_upper = strong.delta_bounds(eps)
    weak_lower, weak_upper = weak.delta_bounds(eps)
    assert np.all(weak_lower <= strong_upper)
    assert np.all(weak_upper <= strong_upper * (1 + 1e-9) + 1e-12)
    separated = (eps >= 0.1) & (strong_lower > 1e-9)
    assert np.all(weak_upper[separated] < strong_lower[separated])


# Koskela et al. (2023), Fig. 4 (n = 1000, gamma = 0.25, k = 4): eps at delta = 1e-6, measured
# brackets (grid 1e-3). What we find: the weak adversary lies below the clones bound
# and the strong one above it for every T from 1 to 100 (and at delta from 1e-2 to
# 1e-10), so in this setting the strong curve and the clones curve do not cross;
# the gap shrinks in relative terms (27 % at T = 1, 11 % at T = 100).
FIGURE_4 = {
    1: {"strong": 0.7706, "weak": 0.5570, "clones": 0.6050},
    10: {"strong": 2.3674, "weak": 1.8920, "clones": 2.0395},
    100: {"strong": 8.2549, "weak": 6.8698, "clones": 7.4340},
}


def _figure_4_plds():
    eps0 = ldp_epsilon(4, 0.25)
    assert eps0 == pytest.approx(math.log(13))
    return {
        "strong": krr(1000, 4, 0.25, "strong"),
        "weak": krr(1000, 4, 0.25, "weak"),
        "clones": pld.clones(1000, eps0, variant="stronger"),
    }


@pytest.mark.parametrize("rounds", sorted(FIGURE_4))
def test_figure_4_against_clones(rounds):
    plds = _figure_4_plds()
    brackets = {}
    for name, one_round in plds.items():
        composed = one_round.self_compose(rounds) if rounds > 1 else one_round
        brackets[name] = composed.epsilon_bounds(1e-6)
        # Regression on the measured values (upper side), 0.5 % either way.
        assert brackets[name][1] == pytest.approx(FIGURE_4[rounds][name], rel=5e-3)
    assert brackets["weak"][1] < brackets["clones"][0]
    assert brackets["strong"][0] > brackets["clones"][1]


@pytest.mark.parametrize("n, gamma", [(7, 0.5), (50, 0.25), (1000, 0.5)])
def test_binary_weak_adversary_is_the_clones_pair(n, gamma):
    """For k = 2, k-RR is eps0-randomised response and the clones pair is exactly the
    weak adversary's view: two independent implementations must agree."""
    eps = np.linspace(0, 2.5, 26)
    weak = krr(n, 2, gamma, "weak").delta(eps)
    clones = pld.clones(n, ldp_epsilon(2, gamma), variant="stronger").delta(eps)
    np.testing.assert_allclose(weak, clones, rtol=1e-9, atol=1e-12)


# -- compositions against dp_accounting ---------------------------------------------------


def _dp_accounting(log_p, log_q, rounds, pessimistic):
    module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    finite_p, finite_q = np.isfinite(log_p), np.isfinite(log_q)
    built = module.from_two_probability_mass_functions(
        log_probability_mass_function_lower={i: v for i, v in enumerate(log_q) if finite_q[i]},
        log_probability_mass_function_upper={i: v for i, v in enumerate(log_p) if finite_p[i]},
        pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4,
        symmetric=False,
    )
    return built.self_compose(rounds)


@pytest.mark.parametrize("adversary, n, k, gamma", [("strong", 30, 3, 0.5), ("weak", 12, 3, 0.5)])
@pytest.mark.parametrize("rounds", [10, 100])
def test_compositions_agree_with_dp_accounting(adversary, n, k, gamma, rounds):
    """Same exact pmfs, same grid (1e-4): our bracket and dp_accounting's
    [optimistic, pessimistic] interval overlap, and its pessimistic value exceeds our
    upper bound by no more than its own width (first-order rounding)."""
    log_p, log_q = krr_view_pmfs(n, k, gamma, adversary)
    ours = krr(n, k, gamma, adversary, loss_grid_step=1e-4).self_compose(rounds)
    pessimistic = _dp_accounting(log_p, log_q, rounds, True)
    optimistic = _dp_accounting(log_p, log_q, rounds, False)
    scale = math.sqrt(rounds)
    for eps in (0.5 * scale, 1.0 * scale, 2.0 * scale):
        lower, upper = ours.delta_bounds(eps)
        theirs_up = pessimistic.get_delta_for_epsilon(eps)
        theirs_low = optimistic.get_delta_for_epsilon(eps)
        width = max(theirs_up - theirs_low, 1e-15)
        assert theirs_up >= lower - 1e-12
        assert theirs_low <= upper + 1e-12
        assert theirs_up <= upper + width
        assert upper - lower <= width + 1e-8 * upper


# -- the paper's tail form ---------------------------------------------------------------


@pytest.mark.parametrize("adversary, n, k, gamma", [("strong", 30, 3, 0.5), ("weak", 12, 3, 0.25)])
def test_tail_form_matches_enumeration(adversary, n, k, gamma):
    """P(Z >= eps) and P(Z1 + Z2 >= eps) by enumerating the exact pmfs (grid 1e-4:
    rounding losses up can only add the mass within one grid step below eps)."""
    log_p, log_q = krr_view_pmfs(n, k, gamma, adversary)
    mass = np.exp(log_p)
    with np.errstate(invalid="ignore"):
        loss = np.where(np.isfinite(log_q), log_p - log_q, np.inf)
    keep = mass > 0
    mass, loss = mass[keep], loss[keep]
    eps = np.array([0.0, 0.1, 0.3, 0.7, 1.5])
    for rounds in (1, 2):
        if rounds == 1:
            total, weight = loss, mass
        else:
            total = (loss[:, None] + loss[None, :]).ravel()
            weight = np.outer(mass, mass).ravel()
        truth = np.array([weight[total >= e - 1e-12].sum() for e in eps])
        near = np.array([weight[(total >= e - 2e-4) & (total < e)].sum() for e in eps])
        ours = krr_tail_delta(n, k, gamma, adversary, eps, rounds, loss_grid_step=1e-4)
        assert np.all(ours >= truth - 1e-12)
        assert np.all(ours <= truth + near + 1e-10)


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_tail_form_is_looser_than_the_tight_delta(adversary):
    """Fig. 4 setting: the tail is an upper bound on delta, 4x to 1000x looser here."""
    eps = np.array([0.1, 0.3, 0.5, 0.8])
    tight_lower, tight_upper = krr(1000, 4, 0.25, adversary).delta_bounds(eps)
    tail = krr_tail_delta(1000, 4, 0.25, adversary, eps)
    assert np.all(tail >= 4 * tight_upper)


def test_independent_counts_are_not_an_upper_bound():
    """Eq. 4.3 read with independent N1, N2 (n = 300, k = 2, gamma = 0.8): at eps = 0.6
    its tail (rigorous upper bound on it) is below the exact tight delta."""
    n, k, gamma, eps = 300, 2, 0.8, 0.6
    tight = _pmf_delta(*krr_view_pmfs(n, k, gamma, "strong"), [eps])[0]
    counts = np.arange(n)
    pmf = binom.pmf(counts, n - 1, gamma / k)
    with np.errstate(divide="ignore"):
        ratio_loss = np.log(counts[:, None] + 1.0) - np.log(counts[None, :] * 1.0)
    independent_exact = np.outer(pmf, pmf)[ratio_loss >= eps].sum()
    just_below = np.outer(pmf, pmf)[(ratio_loss >= eps - 2e-4) & (ratio_loss < eps)].sum()
    independent = krr_tail_delta(
        n, k, gamma, "strong", eps, counts="independent", loss_grid_step=1e-4
    )[0]
    assert independent_exact - 1e-15 <= independent <= independent_exact + just_below + 1e-15
    assert independent < 0.5 * tight
    assert tight == pytest.approx(2.12e-8, rel=0.01)


# -- large n ------------------------------------------------------------------------------


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_large_n_builds_and_the_bracket_is_narrow(adversary):
    """n = 10^5 with the defaults (strong view exact, weak view blocked): ten rounds
    give eps(1e-6) within a 1 % bracket (measured 0.007 % and 0.07 %)."""
    one_round = krr(100_000, 4, 0.25, adversary)
    lower, upper = one_round.self_compose(10).epsilon_bounds(1e-6)
    assert 0 < lower <= upper <= lower * 1.01


@pytest.mark.slow
@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_a_million_users(adversary):
    """n = 10^6: built in seconds (measured 0.3 s strong, 2.5 s weak on a loaded
    machine); eps(1e-6) of one round, measured brackets (0.01775, 0.01775) strong and
    (0.01330, 0.01331) weak (default grid 6.3e-5; the weak one blocked)."""
    import time

    start = time.perf_counter()
    one_round = krr(1_000_000, 4, 0.25, adversary)
    assert time.perf_counter() - start < 20
    lower, upper = one_round.epsilon_bounds(1e-6)
    expected = {"strong": 0.01775, "weak": 0.01330}[adversary]
    assert lower <= expected * 1.002 and upper >= expected * 0.998
    assert upper <= lower * 1.002


def test_binomial_runs_are_as_accurate_as_declared():
    """The component weights at n = 10^6 (ratio recurrences from scipy's pmf at the
    mode) against mpmath, at the window edges and inside: within the relative error
    passed to the engine (scipy's logpmf would be off by ~1e-9 here)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    n, k, gamma = 1_000_000, 4, 0.25

    def exact(trials, x, prob):
        prob = mpmath.mpf(prob)
        return mpmath.binomial(trials, x) * prob**x * (1 - prob) ** (trials - x)

    strong = _krr_components._strong_components(n, k, gamma, 1e-12)
    rows = _krr_components._weak_rows(n, k, gamma, 1e-12)
    for components, scale, trials, prob, first, error in (
        (strong.weight, 1 - gamma, n - 1, 2 * gamma / k, strong.size[0] - 1, strong.weight_error),
        (rows.row_weight, 1.0, n - 1, gamma, rows.blankets[0], rows.weight_error),
    ):
        for index in (0, 1, components.size // 3, components.size // 2, components.size - 1):
            truth = scale * exact(trials, int(first + index), prob)
            relative = abs(float(mpmath.mpf(components[index]) / truth - 1))
            assert relative <= error
    assert strong.weight_error < 1e-11 and rows.weight_error < 1e-11


# -- validation and CLI spec ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"n": 0}, "n"),
        ({"n": 2.5}, "n"),
        ({"k": 1}, "k"),
        ({"gamma": 0.0}, "gamma"),
        ({"gamma": 1.5}, "gamma"),
        ({"gamma": float("nan")}, "gamma"),
        ({"adversary": "medium"}, "adversary"),
        ({"tail_mass": 0.0}, "tail_mass"),
        ({"tail_mass": 0.5}, "tail_mass"),
        ({"max_atoms": 0}, "max_atoms"),
        ({"loss_grid_step": -1.0}, "loss_grid_step"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, name):
    arguments = {"n": 10, "k": 3, "gamma": 0.5, "adversary": "strong", **kwargs}
    with pytest.raises(ValueError, match=name):
        krr(**arguments)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"k": 1}, "k"),
        ({"gamma": 0.0}, "gamma"),
        ({"n": 0}, "n"),
        ({"adversary": "x"}, "adversary"),
    ],
)
def test_bad_input_of_the_exact_pmfs_and_the_tail(kwargs, name):
    arguments = {"n": 4, "k": 3, "gamma": 0.5, "adversary": "weak", **kwargs}
    with pytest.raises(ValueError, match=name):
        krr_view_pmfs(**arguments)
    with pytest.raises(ValueError, match=name):
        krr_tail_delta(eps=0.5, **arguments)


def test_exact_pmfs_refuse_large_n():
    with pytest.raises(ValueError, match="n = 1000"):
        krr_view_pmfs(1000, 4, 0.25, "weak")


def test_independent_counts_only_for_the_strong_adversary():
    with pytest.raises(ValueError, match="counts"):
        krr_tail_delta(10, 3, 0.5, "weak", 0.5, counts="independent")
    with pytest.raises(ValueError, match="counts"):
        krr_tail_delta(10, 3, 0.5, "strong", 0.5, counts="both")


def test_cli_spec():
    from pld.cli.mechanisms import FAMILIES

    (spec,) = FAMILIES["krr"]()
    assert spec.name == "krr"
    flags = {option.flag: option for option in spec.options}
    assert set(flags) == {"--n", "--k", "--gamma", "--adversary"}
    assert flags["--adversary"].choices == ("strong", "weak")
    assert flags["--adversary"].default == "strong" and not flags["--adversary"].required
    built = spec.build(n=6, k=3, gamma=0.25, adversary="weak", loss_grid_step=None)
    truth = _oracle_delta(6, 3, 0.25, "weak", GRID_EPS)
    np.testing.assert_allclose(built.delta(GRID_EPS), truth, rtol=0, atol=1e-10)
