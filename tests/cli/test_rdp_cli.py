"""The ``pld rdp`` subcommand, driven through a throwaway argparse parser."""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pytest

from pld.cli.rdp import parse_orders, register
from pld.rdp import OrderRangeWarning, gaussian, shuffle_gaussian, to_epsilon


def run(argv: list[str]) -> dict:
    parser = argparse.ArgumentParser(prog="pld")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_table1_through_the_cli() -> None:
    argv = "rdp shuffle-gaussian --n 60000 --sigma 9.48 --rounds 7 --orders 2:30".split()
    with pytest.warns(OrderRangeWarning, match=r"largest order supplied \(30\)"):
        result = run([*argv, "--delta", str(1 / 60000)])  # the paper's orders: too few
    assert set(result) == {"eps", "order", "orders", "rdp"}
    assert round(result["eps"], 5) == 0.22822
    assert result["order"] == 30.0
    assert result["orders"] == [float(v) for v in range(2, 31)]
    np.testing.assert_allclose(result["rdp"], 7 * shuffle_gaussian(60000, 9.48, np.arange(2, 31)))
    json.dumps(result)


def test_gaussian_and_order_syntax() -> None:
    result = run("rdp gaussian --sigma 3 --rounds 10 --delta 1e-6 --orders 1.5 2 10:12".split())
    orders = np.array([1.5, 2, 10, 11, 12])
    assert result["orders"] == list(orders)
    eps, order = to_epsilon(10 * gaussian(3.0, orders), orders, 1e-6)
    assert result["eps"] == eps
    assert result["order"] == order


@pytest.mark.parametrize(
    "argv",
    [
        "rdp shuffled-checkin-gaussian --n 2000 --gamma 0.05 --sigma 2 --delta 1e-5 --orders 2:16",
        "rdp shuffled-checkin-gaussian --n 2000 --gamma 0.05 --sigma 2 --delta 1e-5 --eq18",
        "rdp subsampled-shuffle-gaussian --n 2000 --m 100 --sigma 2 --delta 1e-5",
        "rdp distributed-checkin-gaussian --n 2000 --gamma 0.05 --sigma 1 --delta 1e-5",
        "rdp distributed-checkin-gaussian-removal --n 2000 --gamma 0.01 --sigma 1 --delta 1e-5",
        "rdp girgis --n 10000 --k 100 --eps0 1 --delta 1e-5 --rounds 10",
        "rdp checkin-ldp --n 2000 --gamma 0.01 --eps0 8 --delta0 1e-8 --delta 1e-4 "
        "--approach baseline",
        "rdp shuffle-gaussian --n 10 --sigma 2 --delta 1e-5 --orders 2:4 --direction max",
    ],
)
def test_every_mechanism_runs(argv: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(argv.split())
    # A warning only says that the best order is the largest one given.
    at_end = result["order"] == max(result["orders"])
    assert [w.category for w in caught] == [OrderRangeWarning] * at_end
    assert 0 < result["eps"] < 100
    assert len(result["rdp"]) == len(result["orders"])
    json.dumps(result)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("rdp gaussian --sigma -1 --delta 1e-5", "sigma must be > 0"),
        ("rdp gaussian --sigma 1 --delta 2", "delta must lie in"),
        ("rdp gaussian --sigma 1 --delta 1e-5 --rounds 0", "rounds must be an integer >= 1"),
        (
            "rdp shuffle-gaussian --n 5 --sigma 1 --delta 1e-5 --orders 2.5",
            "orders must be an integer",
        ),
        ("rdp gaussian --sigma 1 --delta 1e-5 --orders 5:2", "empty range"),
        ("rdp girgis --n 10 --k 20 --eps0 1 --delta 1e-5", r"k must be an integer in \[1, n\]"),
    ],
)
def test_bad_input_raises_value_error(argv: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run(argv.split())


def test_parse_orders() -> None:
    np.testing.assert_array_equal(parse_orders(["2:4", "7", "1.5"]), [2, 3, 4, 7, 1.5])
    with pytest.raises(ValueError, match="not a number"):
        parse_orders(["two"])
