"""Trade-off curves (f-DP) against mu-GDP, randomised response and Neyman-Pearson."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import norm

import pld
from pld.cli.commands import main
from pld.distribution.tradeoff import tradeoff_table

FPR = np.linspace(0.0, 1.0, 201)


@pytest.mark.parametrize(("sigma", "rounds"), [(1.0, 1), (2.0, 1), (1.0, 10), (5.0, 100)])
def test_gaussian_tradeoff_brackets_mu_gdp(sigma: float, rounds: int) -> None:
    loss = pld.gaussian(sigma)
    if rounds > 1:
        loss = loss.self_compose(rounds)
    lower, upper = loss.tradeoff(FPR)
    mu = math.sqrt(rounds) / sigma
    exact = norm.cdf(norm.ppf(1 - FPR) - mu)  # Dong, Roth & Su, eq. 2.2
    # 1e-12: float evaluation of the exact curve and of the lines.
    assert np.all(lower <= exact + 1e-12)
    assert np.all(upper >= exact - 1e-12)
    # Measured: the lower side within 2.4e-6 of the truth, the bracket within 5.1e-5.
    assert np.max(exact - lower) <= 1e-5
    assert np.max(upper - lower) <= 1e-4


def test_randomised_response_tradeoff_is_exact_on_the_lower_side() -> None:
    eps0 = 1.0
    lower, upper = pld.randomized_response(eps0).tradeoff(FPR)
    exact = np.maximum.reduce(
        [np.zeros_like(FPR), 1 - math.exp(eps0) * FPR, math.exp(-eps0) * (1 - FPR)]
    )
    np.testing.assert_allclose(lower, exact, atol=1e-12)
    assert np.all(upper >= exact - 1e-12)
    # First order in the spacing of the eps points (loss_grid_step / 8): measured 9e-5.
    assert np.max(upper - exact) <= 2e-4


def _neyman_pearson(p: np.ndarray, q: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """T(P, Q)(alpha): most powerful tests reject P where Q/P is largest (randomised at ties)."""
    order = np.argsort(-(q / np.where(p > 0, p, 1e-300)))
    size = np.concatenate([[0.0], np.cumsum(p[order])])
    power = np.concatenate([[0.0], np.cumsum(q[order])])
    return 1 - np.interp(alpha, size, power)


def _convex_minorant(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Greatest convex minorant of points (x, y) (x increasing), evaluated at x."""
    hull: list[int] = []
    for k in range(x.size):
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            if (x[a] - x[o]) * (y[k] - y[o]) - (y[a] - y[o]) * (x[k] - x[o]) <= 0:
                hull.pop()
            else:
                break
        hull.append(k)
    return np.interp(x, x[hull], y[hull])


def test_asymmetric_pair_brackets_the_symmetrised_neyman_pearson_curve() -> None:
    p = np.array([0.55, 0.25, 0.15, 0.05])
    q = np.array([0.1, 0.2, 0.3, 0.4])
    loss = pld.from_pmfs(np.log(p), np.log(q), loss_grid_step=1e-4)
    alpha = np.linspace(0, 1, 2001)
    # The profile max(H(P||Q), H(Q||P)) is the profile of the convex hull of
    # min(T(P,Q), T(Q,P)) (Dong et al. 2022, Prop. 2.12 and the symmetrisation).
    exact = _convex_minorant(
        alpha, np.minimum(_neyman_pearson(p, q, alpha), _neyman_pearson(q, p, alpha))
    )
    lower, upper = loss.tradeoff(alpha)
    assert np.all(lower <= exact + 1e-9)
    assert np.all(upper >= exact - 1e-9)
    # Isolated atoms off the grid: the bracket is first order in the step; measured 3e-4.
    assert np.max(upper - lower) <= 1e-3


def test_scalar_and_tpr_view() -> None:
    loss = pld.gaussian(1.0)
    lower, upper = loss.tradeoff(0.05)
    assert isinstance(lower, float) and isinstance(upper, float)
    exact = norm.cdf(norm.ppf(0.95) - 1.0)
    assert lower <= exact <= upper
    table = tradeoff_table(loss, [0.05])
    assert table.tolist() == [[0.05, lower, upper]]


@pytest.mark.parametrize("fpr", [-0.1, 1.5, math.nan, [0.2, 2.0]])
def test_bad_fpr(fpr) -> None:
    with pytest.raises(ValueError, match="fpr"):
        pld.gaussian(1.0).tradeoff(fpr)


def test_cli_tradeoff_equals_the_library(capsys) -> None:
    code = main(
        ["curve", "--mechanism", "laplace", "--scale", "2", "--tradeoff", "--points", "5"]
        + ["--json"]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    lower, upper = pld.laplace(2.0).tradeoff(np.linspace(0, 1, 5))
    assert result["fpr"] == np.linspace(0, 1, 5).tolist()
    assert result["series"][0]["fnr_lower"] == lower.tolist()
    assert result["series"][0]["fnr_upper"] == upper.tolist()


def test_cli_tradeoff_refuses_eps(capsys) -> None:
    code = main(["curve", "--mechanism", "rr", "--eps0", "1", "--tradeoff", "--eps", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("pld: error:") and "--tradeoff" in err and err.count("\n") == 1


def test_plot_tradeoff(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from pld.plot import plot_tradeoff

    table = tradeoff_table(pld.gaussian(1.0), np.linspace(0, 1, 11))
    figure = plot_tradeoff({"gaussian": table}, path=tmp_path / "tradeoff.png")
    axes = figure.axes[0]
    assert np.array_equal(axes.get_lines()[1].get_ydata(), table[:, 1])
    assert (tmp_path / "tradeoff.png").stat().st_size > 0
    with pytest.raises(ValueError, match="fpr, fnr_lower, fnr_upper"):
        plot_tradeoff({"bad": np.zeros((3, 2))})
