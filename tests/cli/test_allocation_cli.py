"""``--allocation T:k``: the CLI's random allocation equals pld.random_allocation."""

from __future__ import annotations

import json

import pytest

import pld
from pld.cli.commands import main


def _run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_epsilon_with_allocation_and_epochs(capsys):
    code, out, _ = _run(
        capsys, "epsilon", "--mechanism", "gaussian", "--sigma", "1", "--allocation", "20:2",
        "--rounds", "3", "--delta", "1e-5", "--json", "--quiet",
    )  # fmt: skip
    assert code == 0
    answer = json.loads(out)
    expected = pld.random_allocation(pld.gaussian(1.0), rounds=20, participations=2)
    lower, upper = expected.self_compose(3).epsilon_bounds(1e-5)
    assert answer["eps_lower"] == pytest.approx(lower, rel=1e-9)
    assert answer["eps_upper"] == pytest.approx(upper, rel=1e-9)


@pytest.mark.parametrize("value", ["5:6", "0:0", "x", "3:1:1", "2.5:1"])
def test_bad_allocation_is_one_line_and_exit_code_2(capsys, value):
    code, _, err = _run(
        capsys, "epsilon", "--mechanism", "gaussian", "--sigma", "1", "--allocation", value,
        "--delta", "1e-5",
    )  # fmt: skip
    assert code == 2
    assert err.startswith("pld: error: --allocation") and err.count("\n") == 1


def test_calibrate_sigma_under_allocation(capsys):
    code, out, _ = _run(
        capsys, "calibrate", "--mechanism", "gaussian", "--param", "sigma", "--allocation",
        "10:1", "--target-eps", "1", "--target-delta", "1e-5", "--tolerance", "1e-2", "--json",
        "--quiet",
    )  # fmt: skip
    assert code == 0
    sigma = json.loads(out)["value"]
    allocated = pld.random_allocation(pld.gaussian(sigma), rounds=10)
    assert allocated.epsilon_bounds(1e-5)[1] <= 1.0
    looser = pld.random_allocation(pld.gaussian(sigma / 1.02), rounds=10)
    assert looser.epsilon_bounds(1e-5)[1] > 1.0
