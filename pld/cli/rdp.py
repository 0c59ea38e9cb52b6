"""The ``pld rdp`` subcommand: RDP of a mechanism, composed over rounds, converted to eps.

``pld rdp MECHANISM [options] --rounds T --delta D [--orders ...] [--json]`` returns
``{"eps": x, "order": lam*, "orders": [...], "rdp": [...]}`` where ``rdp`` is the
composed curve (``T`` times the per-round RDP) and ``eps`` its conversion at ``D``
(Liew and Takahashi 2022, Lemma 2). Library modules are imported inside :func:`run` so that the CLI
starts without numba or scipy.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pld.cli.spec import integer

DEFAULT_ORDERS = "2:64"

_MECHANISMS: dict[str, str] = {
    "gaussian": "Gaussian mechanism (exact RDP)",
    "poisson-gaussian": "Poisson-subsampled Gaussian, DP-SGD step, add/remove "
    "(Mironov et al. 2019): an upper bound",
    "shuffle-gaussian": "shuffle Gaussian, canonical pair (Liew and Takahashi 2022, Thm 1): "
    "a LOWER bound "
    "on the mechanism's RDP (Liew et al. 2022, Thm 3)",
    "subsampled-shuffle-gaussian": "m of n users, shuffle Gaussian "
    "(Liew and Takahashi 2022, eq. 16); "
    "canonical pair only",
    "shuffled-checkin-gaussian": "shuffled check-in, shuffle Gaussian (Liew et al. 2022, eq. 5 / "
    "Liew and Takahashi (2022), eq. 17, or eq. 18 with --eq18); canonical pair only",
    "distributed-checkin-gaussian": "distributed check-in, sum + Gaussian noise, "
    "replacement DP (Liew et al. 2022, Thm 4): an upper bound",
    "distributed-checkin-gaussian-removal": "distributed check-in, mean aggregate, removal "
    "DP (Liew et al. 2022, suppl. Thm 5): NOT certified",
    "girgis": "subsampled shuffle of eps0-LDP reports (Girgis et al. 2021, Thm 2)",
    "checkin-ldp": "shuffled check-in with an (eps0, delta0)-LDP randomiser (Liew et al. 2022, "
    "baseline / approach 1 / approach 2): NOT certified (Liew et al. 2022, Lemma 1)",
}


def parse_orders(tokens: list[str]) -> np.ndarray:
    """Orders from tokens: numbers, or inclusive integer ranges ``a:b``."""
    values: list[float] = []
    for token in tokens:
        if ":" in token:
            first, _, last = token.partition(":")
            try:
                low, high = int(first), int(last)
            except ValueError as error:
                raise ValueError(f"orders: bad range {token!r} (expected a:b)") from error
            if high < low:
                raise ValueError(f"orders: empty range {token!r}")
            values.extend(float(v) for v in range(low, high + 1))
        else:
            try:
                values.append(float(token))
            except ValueError as error:
                raise ValueError(f"orders: {token!r} is not a number") from error
    return np.array(values)


def register(subparsers: Any) -> None:
    """Add the ``rdp`` subcommand to an argparse subparsers object."""
    parser = subparsers.add_parser(
        "rdp",
        help="Rényi-DP cross-check: RDP over T rounds, converted to eps(delta)",
        description="Rényi-DP accounting (the cross-check path, pld.rdp). Several "
        "mechanisms are bounds for one canonical pair of datasets or rest on an invalid "
        "DP->RDP conversion; their help says so.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--rounds", type=integer, default=1, help="number of rounds T (default 1)")
    common.add_argument("--delta", type=float, required=True, help="target delta in (0, 1)")
    common.add_argument(
        "--orders",
        nargs="+",
        default=[DEFAULT_ORDERS],
        help=f"Rényi orders: numbers or ranges a:b (default {DEFAULT_ORDERS})",
    )
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON")
    mechanisms = parser.add_subparsers(
        dest="rdp_mechanism", required=True, metavar="MECHANISM", parser_class=type(parser)
    )
    options: dict[str, Callable[[argparse.ArgumentParser], None]] = {
        "gaussian": _gaussian_options,
        "poisson-gaussian": _poisson_options,
        "shuffle-gaussian": _shuffle_gaussian_options,
        "subsampled-shuffle-gaussian": _subsampled_options,
        "shuffled-checkin-gaussian": _shuffled_checkin_options,
        "distributed-checkin-gaussian": _distributed_options,
        "distributed-checkin-gaussian-removal": _removal_options,
        "girgis": _girgis_options,
        "checkin-ldp": _checkin_ldp_options,
    }
    for name, description in _MECHANISMS.items():
        sub = mechanisms.add_parser(
            name, help=description, description=description, parents=[common]
        )
        options[name](sub)
    parser.set_defaults(handler=run)


def _gaussian_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sigma", type=float, required=True, help="noise standard deviation")
    parser.add_argument("--sensitivity", type=float, default=1.0, help="L2 sensitivity")


def _poisson_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sigma", type=float, required=True, help="noise multiplier")
    parser.add_argument("--rate", type=float, required=True, help="sampling probability q")


def _shuffle_gaussian_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="number of shuffled users")
    parser.add_argument("--sigma", type=float, required=True, help="noise std per user")
    parser.add_argument(
        "--direction",
        default="mixture||gaussian",
        choices=("mixture||gaussian", "gaussian||mixture", "max"),
        help="divergence direction (default: Liew and Takahashi (2022), eq. 1)",
    )


def _subsampled_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="population size")
    parser.add_argument("--m", type=integer, required=True, help="users sampled per round")
    parser.add_argument("--sigma", type=float, required=True, help="noise std per user")


def _shuffled_checkin_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="number of users")
    parser.add_argument("--gamma", type=float, required=True, help="check-in probability")
    parser.add_argument("--sigma", type=float, required=True, help="noise std per report")
    parser.add_argument(
        "--eq18",
        action="store_true",
        help="Liew and Takahashi (2022), eq. 18 (fixed rate gamma; not a bound on eq. 5) "
        "instead of the sum",
    )


def _distributed_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="number of users")
    parser.add_argument("--gamma", type=float, required=True, help="check-in probability")
    parser.add_argument("--sigma", type=float, required=True, help="noise std per participant")
    parser.add_argument(
        "--sensitivity", type=float, default=2.0, help="replacement sensitivity (default 2)"
    )


def _removal_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="users including the target")
    parser.add_argument("--gamma", type=float, required=True, help="check-in probability")
    parser.add_argument("--sigma", type=float, required=True, help="noise std per participant")
    parser.add_argument("--method", default="exact", choices=("exact", "chernoff"))
    parser.add_argument("--chernoff-delta", type=float, default=0.5, help="Delta of eq. 14-15")


def _girgis_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="population size")
    parser.add_argument("--k", type=integer, required=True, help="users sampled per round")
    parser.add_argument("--eps0", type=float, required=True, help="local epsilon (nats)")


def _checkin_ldp_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n", type=integer, required=True, help="number of users")
    parser.add_argument("--gamma", type=float, required=True, help="check-in probability")
    parser.add_argument("--eps0", type=float, required=True, help="local epsilon (nats)")
    parser.add_argument("--delta0", type=float, required=True, help="local delta")
    parser.add_argument(
        "--approach",
        default="2",
        choices=("baseline", "1", "2"),
        help="Liew et al. (2022), §3.1/§3.3",
    )
    parser.add_argument(
        "--delta1", type=float, default=None, help="delta of the shuffling bound (default 1/n)"
    )
    parser.add_argument(
        "--beta", type=float, default=None, help="baseline: P(count >= l) (default 1/n)"
    )


def _per_round_rdp(args: argparse.Namespace, orders: np.ndarray) -> np.ndarray:
    import pld.rdp as rdp

    name = args.rdp_mechanism
    if name == "gaussian":
        return rdp.gaussian(args.sigma, orders, sensitivity=args.sensitivity)
    if name == "poisson-gaussian":
        return rdp.poisson_subsampled_gaussian(args.sigma, args.rate, orders)
    if name == "shuffle-gaussian":
        return rdp.shuffle_gaussian(args.n, args.sigma, orders, direction=args.direction)
    if name == "subsampled-shuffle-gaussian":
        return rdp.subsampled_shuffle_gaussian(args.n, args.m, args.sigma, orders)
    if name == "shuffled-checkin-gaussian":
        if args.eq18:
            return rdp.shuffled_checkin_gaussian_conjectured(args.n, args.gamma, args.sigma, orders)
        return rdp.shuffled_checkin_gaussian(args.n, args.gamma, args.sigma, orders)
    if name == "distributed-checkin-gaussian":
        return rdp.distributed_checkin_gaussian(
            args.n, args.gamma, args.sigma, orders, sensitivity=args.sensitivity
        )
    if name == "distributed-checkin-gaussian-removal":
        return rdp.distributed_checkin_gaussian_removal(
            args.n,
            args.gamma,
            args.sigma,
            orders,
            method=args.method,
            chernoff_delta=args.chernoff_delta,
        )
    if name == "girgis":
        return rdp.girgis_subsampled_shuffle(args.n, args.k, args.eps0, orders)
    if name == "checkin-ldp":
        delta1 = args.delta1 if args.delta1 is not None else 1.0 / args.n
        if args.approach == "baseline":
            beta = args.beta if args.beta is not None else 1.0 / args.n
            return rdp.checkin_baseline(
                args.n, args.gamma, args.eps0, args.delta0, orders, delta1=delta1, beta=beta
            )
        approach = rdp.checkin_approach1 if args.approach == "1" else rdp.checkin_approach2
        return approach(args.n, args.gamma, args.eps0, args.delta0, orders, delta1=delta1)
    raise ValueError(f"unknown rdp mechanism {name!r}")


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Evaluate ``pld rdp``: per-round RDP, times ``--rounds``, converted at ``--delta``."""
    from pld.rdp import to_epsilon
    from pld.validation import integer_at_least

    orders = parse_orders(list(args.orders))
    rounds = integer_at_least("rounds", args.rounds, 1)
    composed = rounds * _per_round_rdp(args, orders)
    eps, order = to_epsilon(composed, orders, args.delta)
    return {
        "eps": eps,
        "order": order if math.isfinite(order) else math.nan,
        "orders": [float(v) for v in orders],
        "rdp": [float(v) for v in composed],
    }
