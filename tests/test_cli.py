"""The command-line interface end to end (subprocess), including its failures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.exact import rr_delta


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "pld", *args], capture_output=True, text=True, timeout=120
    )


def test_delta_json_matches_the_exact_binomial_sum():
    result = _run(
        "delta", "--mechanism", "rr", "--eps0", "0.5", "--rounds", "20", "--eps", "1", "2", "--json"
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["eps"] == [1.0, 2.0]
    truth = rr_delta(0.5, 20, [1.0, 2.0])
    for low, up, exact in zip(payload["delta_lower"], payload["delta_upper"], truth, strict=True):
        assert low <= exact * (1 + 1e-12) and up >= exact * (1 - 1e-12)
        assert up - low < 1e-9


def test_epsilon_json_and_table():
    result = _run(
        "epsilon",
        "--mechanism",
        "gaussian",
        "--sigma",
        "2",
        "--rounds",
        "10",
        "--delta",
        "1e-5",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) == {"delta", "eps_lower", "eps_upper"}
    assert payload["eps_lower"] <= payload["eps_upper"] < payload["eps_lower"] * 1.001
    table = _run(
        "epsilon", "--mechanism", "gaussian", "--sigma", "2", "--rounds", "10", "--delta", "1e-5"
    )
    assert "eps_upper:" in table.stdout


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["delta", "--mechanism", "rr", "--eps0", "nan", "--eps", "1"], "eps0"),
        (["delta", "--mechanism", "rr", "--eps0", "-1", "--eps", "1"], "eps0"),
        (["delta", "--mechanism", "rr", "--eps0", "1", "--rounds", "0", "--eps", "1"], "rounds"),
        (["delta", "--mechanism", "rr", "--eps", "1"], "--eps0"),
        (["delta", "--mechanism", "nope", "--eps", "1"], "mechanism"),
        (["epsilon", "--mechanism", "gaussian", "--sigma", "1", "--delta", "2"], "delta"),
        (
            [
                "delta",
                "--mechanism",
                "gaussian",
                "--sigma",
                "0.01",
                "--loss-grid-step",
                "1e-5",
                "--rounds",
                "100000",
                "--eps",
                "1",
            ],
            "loss_grid_step",
        ),
    ],
)
def test_bad_input_gives_one_line_and_exit_code_2(args, fragment):
    result = _run(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pld: error:") and fragment in lines[0]
