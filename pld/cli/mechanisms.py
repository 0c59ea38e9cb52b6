"""Every mechanism the command line knows: its name, options and builder.

The specs of a family are made by one function that imports the family's
mechanisms when it is called, so a command imports only the mechanism it runs
(``pld epsilon --mechanism clones ...`` loads no numba); help texts that list every
mechanism's options call them all.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pld import validation
from pld.cli.spec import MechanismSpec, Option, integer

#: Options several mechanisms share.
N_OPTION = Option("--n", "n", integer, "number of users (>= 1)")
EPS0_OPTION = Option("--eps0", "eps0", float, "local privacy parameter (nats, in (0, 50])")
M_OPTION = Option("--m", "m", integer, "users sampled per round, in [1, n]")
K_OPTION = Option("--k", "k", integer, "domain size (>= 2)")
GAMMA_OPTION = Option(
    "--gamma", "gamma", float, "probability of a uniformly random answer, in (0, 1]"
)
ADVERSARY_OPTION = Option(
    "--adversary",
    "adversary",
    str,
    "strong: knows every blanket bit (Koskela et al. 2023, Def. 12); "
    "weak: all but the target's (Def. 14)",
    required=False,
    default="strong",
    choices=("strong", "weak"),
)
P_OPTION = Option("--p", "p", float, "check-in probability, in (0, 1]")

#: The randomizers ``--randomizer`` takes (:data:`pld.randomizers.NAMES`, without importing
#: the randomizers).
RANDOMIZER_NAMES = (
    "krr",
    "rr",
    "olh",
    "hadamard",
    "unary",
    "gaussian",
    "laplace",
    "vector-gaussian",
    "matrix",
)

if TYPE_CHECKING:
    from pld.distribution import PLD
    from pld.randomizers import Randomizer


def _sampled_users(n: object, m: object) -> tuple[int, int]:
    """Validated population size ``n`` and users sampled per round ``m`` in [1, n]."""
    n = validation.integer_at_least("n", n, 1, validation.MAX_USERS)
    m = validation.integer_at_least("m", m, 1)
    if m > n:
        raise ValueError(f"m must be an integer in [1, n] (got m={m}, n={n})")
    return n, m


def _subsampled_clones(
    n: int,
    m: int,
    eps0: float,
    variant: str | None = None,
    loss_grid_step: float | None = None,
) -> PLD:
    """``m`` of ``n`` users sampled per round, their eps0-LDP reports shuffled."""
    from pld.shuffling.clones import clones
    from pld.subsampling import subsample

    n, m = _sampled_users(n, m)
    base = clones(m, eps0, variant=variant, loss_grid_step=loss_grid_step)
    return subsample(base, m / n, loss_grid_step=loss_grid_step)


def _subsampled_krr(
    n: int,
    m: int,
    k: int,
    gamma: float,
    adversary: str = "strong",
    loss_grid_step: float | None = None,
) -> PLD:
    """``m`` of ``n`` users sampled per round, their k-RR reports shuffled."""
    from pld.shuffling.krr import krr
    from pld.subsampling import subsample

    n, m = _sampled_users(n, m)
    base = krr(m, k, gamma, adversary, loss_grid_step=loss_grid_step)
    return subsample(base, m / n, loss_grid_step=loss_grid_step)


def _load_matrix(path: str) -> np.ndarray:
    file = Path(path)
    if not file.exists():
        raise ValueError(f"--matrix: no such file {path!r}")
    if file.suffix == ".npy":
        return np.load(file, allow_pickle=False)
    if file.suffix == ".csv":
        return np.loadtxt(file, delimiter=",", ndmin=2)
    raise ValueError(f"--matrix must be a .csv or .npy file (got {path!r})")


def build_randomizer(
    randomizer: str, *, matrix: str | None = None, **options: object
) -> Randomizer:
    """A randomizer from command-line options (:func:`pld.randomizers.from_options`).

    ``--matrix`` names a .csv or .npy file holding the row-stochastic matrix.
    """
    from pld.randomizers import from_options

    if matrix is not None:
        options["probs"] = _load_matrix(matrix)
    try:
        return from_options(randomizer, **options)
    except ValueError as error:
        # The library names options as keywords; the command line as flags.
        message = str(error).replace("option probs", "option matrix")
        for keyword, flag in (
            ("randomizer '", "--randomizer "),
            ("' needs the option ", " needs --"),
        ):
            message = message.replace(keyword, flag)
        message = message.replace("' does not take the option ", " does not take --")
        raise ValueError(message) from None


def _group(text: str) -> tuple[Randomizer, int]:
    """``NAME[,key=value...]:COUNT`` (``--group krr,k=4,eps0=1:1000``) as (randomizer, count)."""
    spec, colon, count = text.rpartition(":")
    if not colon or not spec:
        raise ValueError(f"--group must look like NAME[,key=value...]:COUNT (got {text!r})")
    try:
        users = int(count)
    except ValueError:
        raise ValueError(f"--group {text!r}: COUNT must be a positive integer") from None
    name, *pairs = spec.split(",")
    types = {option.dest: option.type for option in (*RANDOMIZER_OPTIONS, EPS0_OPTION)}
    options: dict[str, object] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or key not in types:
            raise ValueError(
                f"--group {text!r}: options are key=value with key one of {sorted(types)}"
            )
        try:
            options[key] = types[key](value)
        except ValueError:
            raise ValueError(f"--group {text!r}: {key}={value!r} is not a valid value") from None
    return build_randomizer(name, **options), users


def _cli_shuffle(
    n: int | None = None,
    randomizer: str | None = None,
    analysis: str = "best",
    loss_grid_step: float | None = None,
    group: list[str] | None = None,
    messages: int = 1,
    **options: object,
) -> PLD:
    from pld.shuffling import shuffle

    if group:
        given = [flag for flag, value in (("--n", n), ("--randomizer", randomizer)) if value]
        given += [f"--{key}" for key, value in options.items() if value is not None]
        if given:
            raise ValueError(f"--group describes each group in full; drop {given[0]}")
        groups = [_group(text) for text in group]
        return shuffle(groups, analysis=analysis, loss_grid_step=loss_grid_step)
    if n is None or randomizer is None:
        raise ValueError("give --n and --randomizer, or --group NAME[,key=value...]:COUNT")
    built = build_randomizer(randomizer, **options)
    return shuffle(built, n, analysis=analysis, loss_grid_step=loss_grid_step, messages=messages)


#: CLI options that describe a local randomizer (besides ``--randomizer`` and ``--eps0``),
#: shared by every mechanism that takes one.
RANDOMIZER_OPTIONS = (
    Option("--k", "k", integer, "krr: domain size (>= 2)", required=False),
    Option("--gamma", "gamma", float, "krr/rr: uniform-answer probability", required=False),
    Option("--domain", "domain", integer, "olh/hadamard/unary: inputs", required=False),
    Option("--buckets", "buckets", integer, "olh: hash buckets g", required=False),
    Option("--sigma", "sigma", float, "gaussian/vector-gaussian: noise std", required=False),
    Option("--scale", "scale", float, "laplace: noise scale", required=False),
    Option("--low", "low", float, "gaussian/laplace: input low end", required=False),
    Option("--high", "high", float, "gaussian/laplace: input high end", required=False),
    Option("--matrix", "matrix", str, "matrix: a .csv or .npy file", required=False),
    Option("--dim", "dim", integer, "vector-gaussian: dimension (>= 1)", required=False),
    Option("--clip", "clip", float, "vector-gaussian: L2 norm bound (default 1)", required=False),
)


def _cli_checkin(
    n: int,
    p: float,
    eps0: float | None = None,
    randomizer: str | None = None,
    analysis: str = "best",
    variant: str | None = None,
    adjacency: str = "replace",
    max_base_count: int | None = None,
    loss_grid_step: float | None = None,
    **options: object,
) -> PLD:
    """The CLI's builder: ``--randomizer`` and its options, or ``--eps0`` alone."""
    from pld.shuffling.checkin import checkin

    given = sorted(name for name, value in options.items() if value is not None)
    common = {
        "adjacency": adjacency,
        "max_base_count": max_base_count,
        "loss_grid_step": loss_grid_step,
    }
    if randomizer is None:
        if given:
            raise ValueError(f"--{given[0]} needs --randomizer")
        return checkin(n, p, eps0, variant=variant, **common)
    if variant is not None:
        raise ValueError("--variant needs --eps0 without --randomizer")
    built = build_randomizer(randomizer, eps0=eps0, **options)
    return checkin(n, p, randomizer=built, analysis=analysis, **common)


_cli_checkin.calibration_names = {"participation": "p"}


def _randomized_response() -> tuple[MechanismSpec, ...]:
    from pld.central import randomized_response

    return (
        MechanismSpec(
            name="rr",
            help="binary randomised response",
            options=(Option("--eps0", "eps0", float, "local privacy parameter (nats)"),),
            build=randomized_response,
        ),
    )


def _gaussian() -> tuple[MechanismSpec, ...]:
    from pld.central import gaussian

    return (
        MechanismSpec(
            name="gaussian",
            help="Gaussian mechanism with sensitivity 1",
            options=(Option("--sigma", "sigma", float, "noise standard deviation"),),
            build=gaussian,
        ),
    )


def _subsampled_gaussian() -> tuple[MechanismSpec, ...]:
    from pld.subsampling import subsampled_gaussian

    return (
        MechanismSpec(
            name="subsampled-gaussian",
            help="Poisson-subsampled Gaussian mechanism (DP-SGD step), sensitivity 1",
            options=(
                Option("--sigma", "sigma", float, "noise standard deviation"),
                Option("--rate", "rate", float, "sampling probability q in (0, 1]"),
            ),
            build=subsampled_gaussian,
        ),
    )


def _variant_option(context: str = "") -> Option:
    """``--variant``: which clones pair (docs/clones-validity.md)."""
    from pld.shuffling.clones import VARIANTS

    return Option(
        "--variant",
        "variant",
        str,
        f"{context}the clones pair: standard (default; every eps0-LDP randomizer) or "
        "stronger (only k-RR-like randomizers, docs/clones-validity.md)",
        required=False,
        default=None,
        choices=VARIANTS,
    )


def _clones() -> tuple[MechanismSpec, ...]:
    from pld.shuffling.clones import clones

    return (
        MechanismSpec(
            name="clones",
            help="shuffle of n users' eps0-LDP randomisers (clones pair, Feldman et al.)",
            options=(
                N_OPTION,
                EPS0_OPTION,
                _variant_option(),
                Option(
                    "--p",
                    "p",
                    float,
                    "per-side clone probability in (0, 1/(e^eps0 + 1)], instead of --variant "
                    "(valid for randomizers with R(x) >= p (R(x0) + R(x1)))",
                    required=False,
                    default=None,
                ),
            ),
            build=clones,
        ),
    )


def _krr() -> tuple[MechanismSpec, ...]:
    from pld.shuffling.krr import krr

    return (
        MechanismSpec(
            name="krr",
            help="shuffled k-ary randomised response (Balle et al. 2019) against the strong or "
            "the weak adversary",
            options=(
                N_OPTION,
                K_OPTION,
                GAMMA_OPTION,
                ADVERSARY_OPTION,
            ),
            build=krr,
        ),
    )


def _subsampled_shufflers() -> tuple[MechanismSpec, ...]:
    return (
        MechanismSpec(
            name="subsampled-clones",
            help="m of n users sampled per round, eps0-LDP reports shuffled "
            "(Koskela et al. 2023, §3.4)",
            options=(
                N_OPTION,
                M_OPTION,
                EPS0_OPTION,
                _variant_option(),
            ),
            build=_subsampled_clones,
        ),
        MechanismSpec(
            name="subsampled-krr",
            help="m of n users sampled per round, k-RR reports shuffled "
            "(Koskela et al. 2023, §3.4 and §4)",
            options=(
                N_OPTION,
                M_OPTION,
                K_OPTION,
                GAMMA_OPTION,
                ADVERSARY_OPTION,
            ),
            build=_subsampled_krr,
        ),
    )


def _laplace() -> tuple[MechanismSpec, ...]:
    from pld.central import laplace

    return (
        MechanismSpec(
            name="laplace",
            help="Laplace mechanism Lap(scale), l1 sensitivity 1",
            options=(Option("--scale", "scale", float, "Laplace scale b > 0"),),
            build=laplace,
        ),
    )


def _discrete_laplace() -> tuple[MechanismSpec, ...]:
    from pld.central import discrete_laplace

    return (
        MechanismSpec(
            name="discrete-laplace",
            help="discrete Laplace mechanism P(k) ∝ exp(-a |k|), sensitivity 1",
            options=(Option("--parameter", "parameter", float, "decay a > 0 (nats)"),),
            build=discrete_laplace,
        ),
    )


def _discrete_gaussian() -> tuple[MechanismSpec, ...]:
    from pld.central import discrete_gaussian

    return (
        MechanismSpec(
            name="discrete-gaussian",
            help="discrete Gaussian mechanism N_Z(0, sigma^2), sensitivity 1",
            options=(Option("--sigma", "sigma", float, "scale sigma > 0"),),
            build=discrete_gaussian,
        ),
    )


def _generic_dp() -> tuple[MechanismSpec, ...]:
    from pld.central import approximate_dp, pure_dp

    return (
        MechanismSpec(
            name="pure-dp",
            help="any pure eps-DP mechanism (its worst case, eps-randomised response)",
            options=(
                Option("--eps0", "eps", float, "epsilon of the mechanism (nats, in [0, 50])"),
            ),
            build=pure_dp,
        ),
        MechanismSpec(
            name="approximate-dp",
            help="any (eps, delta)-DP mechanism (its worst-case four-outcome pair)",
            options=(
                Option("--eps0", "eps", float, "epsilon of the mechanism (nats, in [0, 50])"),
                Option("--delta0", "delta", float, "delta of the mechanism, in [0, 1)"),
            ),
            build=approximate_dp,
        ),
    )


def _shuffle() -> tuple[MechanismSpec, ...]:
    from pld.shuffling import ANALYSES

    return (
        MechanismSpec(
            name="shuffle",
            help="n users' local randomizer reports shuffled: blanket bound, clones pair or the "
            "best of both",
            options=(
                Option("--n", "n", integer, "number of users (>= 1)", required=False),
                Option(
                    "--randomizer",
                    "randomizer",
                    str,
                    "the local randomizer",
                    required=False,
                    choices=RANDOMIZER_NAMES,
                ),
                Option(
                    "--group",
                    "group",
                    str,
                    "a group of users instead of --n/--randomizer, repeated: "
                    "NAME[,key=value...]:COUNT, e.g. krr,k=4,eps0=1:1000",
                    required=False,
                    repeat=True,
                ),
                Option(
                    "--messages",
                    "messages",
                    integer,
                    "reports per user, all shuffled together (default 1)",
                    required=False,
                    default=1,
                ),
                Option(
                    "--analysis",
                    "analysis",
                    str,
                    "best (default), blanket or clones",
                    required=False,
                    default="best",
                    choices=ANALYSES,
                ),
                Option("--eps0", "eps0", float, "local epsilon (nats)", required=False),
                *RANDOMIZER_OPTIONS,
            ),
            build=_cli_shuffle,
        ),
    )


def _checkin() -> tuple[MechanismSpec, ...]:
    from pld.shuffling import ANALYSES
    from pld.shuffling.checkin import ADJACENCIES, distributed_checkin

    return (
        MechanismSpec(
            name="checkin",
            help="shuffled check-in: each of n users reports w.p. p, an eps0-LDP randomizer "
            "(clones) or --randomizer (Liew et al. 2022)",
            options=(
                N_OPTION,
                P_OPTION,
                Option(
                    "--eps0",
                    "eps0",
                    float,
                    "local privacy parameter (nats, in (0, 50]); with --randomizer, its eps0",
                    required=False,
                ),
                Option(
                    "--adjacency",
                    "adjacency",
                    str,
                    "replace one user's data, or add/remove one user",
                    required=False,
                    default="replace",
                    choices=ADJACENCIES,
                ),
                Option(
                    "--randomizer",
                    "randomizer",
                    str,
                    "a specific local randomizer (options as for --mechanism shuffle)",
                    required=False,
                    choices=RANDOMIZER_NAMES,
                ),
                Option(
                    "--analysis",
                    "analysis",
                    str,
                    "with --randomizer: best (default), blanket or clones",
                    required=False,
                    default="best",
                    choices=ANALYSES,
                ),
                _variant_option("with --eps0, "),
                Option(
                    "--max-base-count",
                    "max_base_count",
                    integer,
                    "counts of reports above it are bounded with the base of that many "
                    "(valid, looser; default: none, huge bulks are refused)",
                    required=False,
                ),
                *RANDOMIZER_OPTIONS,
            ),
            build=_cli_checkin,
        ),
        MechanismSpec(
            name="distributed-checkin",
            help="distributed check-in: Gaussian-noised reports of checked-in users summed "
            "(Liew et al. 2022, §4)",
            options=(
                N_OPTION,
                P_OPTION,
                Option("--sigma", "sigma", float, "noise standard deviation per client (> 0)"),
                Option(
                    "--sensitivity",
                    "sensitivity",
                    float,
                    "largest l2 distance between two clients' vectors "
                    "(> 0; default 2, the unit ball)",
                    required=False,
                    default=2.0,
                ),
                Option(
                    "--adjacency",
                    "adjacency",
                    str,
                    "replace one user's data, or add/remove one user",
                    required=False,
                    default="replace",
                    choices=ADJACENCIES,
                ),
            ),
            build=distributed_checkin,
        ),
    )


#: Each mechanism the CLI knows, by name, and the function that makes its family's specs.
FAMILIES: dict[str, Callable[[], tuple[MechanismSpec, ...]]] = {
    "rr": _randomized_response,
    "gaussian": _gaussian,
    "subsampled-gaussian": _subsampled_gaussian,
    "clones": _clones,
    "krr": _krr,
    "subsampled-clones": _subsampled_shufflers,
    "subsampled-krr": _subsampled_shufflers,
    "laplace": _laplace,
    "discrete-laplace": _discrete_laplace,
    "discrete-gaussian": _discrete_gaussian,
    "pure-dp": _generic_dp,
    "approximate-dp": _generic_dp,
    "shuffle": _shuffle,
    "checkin": _checkin,
    "distributed-checkin": _checkin,
}
