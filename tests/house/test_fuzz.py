"""Fuzzing the whole public API and the command line with arbitrary arguments.

Property of every call: it returns a valid result (0 <= lower <= upper <= 1 for
delta, lower <= upper for eps, delta non-increasing in eps, and the reported eps
meeting its delta) within the time budget, or raises ``ValueError``/``TypeError``
whose message names one of its parameters. Nothing else escapes and no warning
from numpy (``RuntimeWarning``, ...) reaches the user; the library's own
``UserWarning`` explanations are allowed.

To fuzz a new public constructor, add one :class:`Entry` to ``CONSTRUCTORS``:
the callable, a strategy of plausible values per parameter (wild values are
mixed in automatically), and any other words its messages may use to name them.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pld

#: Longest a single call may take (the default work budget keeps every call below it).
TIME_LIMIT = 10.0

#: Examples per table entry: the default run, and the long profile under ``slow``.
DEFAULT_EXAMPLES = 12
LONG_EXAMPLES = int(os.environ.get("PLD_FUZZ_EXAMPLES", "300"))

EPS = np.array([-1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 5.0, 50.0])
DELTAS = (0.5, 1e-3, 1e-9)

# -- values -------------------------------------------------------------------------

_ODD_ARRAYS = [
    np.zeros((2, 2)),
    np.array([]),
    [1, "a"],
    [[0.1], [0.2, 0.3]],
    np.array([np.nan]),
    [math.inf],
    (0.1, 0.2),
    np.array([True, False]),
    np.array(["0.5"]),
    [None],
]

#: Arbitrary values: floats (NaN, +-inf, subnormals, 1e+-300), ints up to 2^64,
#: strings, None, bools and arrays of mixed shapes.
WILD = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [math.nan, math.inf, -math.inf, 5e-324, -5e-324, 1e-300, 1e300, -1e300, -0.0, 2.0**-1070]
    ),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([2**63, 2**64, 2**53 + 1, -1, 0, 1, 2]),
    st.text(max_size=4),
    st.sampled_from(["1", "nan", "", "inf", "0.5"]),
    st.none(),
    st.booleans(),
    st.sampled_from(_ODD_ARRAYS),
)


def mixed(valid: st.SearchStrategy) -> st.SearchStrategy:
    """Plausible values two times in three, wild ones otherwise."""
    return st.one_of(valid, valid, WILD)


def reals(low: float, high: float) -> st.SearchStrategy:
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def steps() -> st.SearchStrategy:
    return st.one_of(st.none(), reals(1e-5, 0.1))


def log_pmfs(size: int = 3) -> st.SearchStrategy:
    """Log-probabilities of ``size`` outcomes, some of them zero."""
    weights = st.lists(
        st.sampled_from([0.0, 1e-300, 1e-12, 0.1, 0.3, 1.0, 5.0]), min_size=size, max_size=size
    )

    def normalised(values: list[float]) -> np.ndarray:
        total = sum(values)
        if total == 0:
            values = [1.0] + values[1:]
            total = sum(values)
        with np.errstate(divide="ignore"):
            return np.log(np.array(values) / total)

    return weights.map(normalised)


def eps_grids() -> st.SearchStrategy:
    return st.lists(reals(-3.0, 3.0), min_size=1, max_size=12, unique=True).map(sorted)


# -- small PLDs to query and compose ---------------------------------------------------


@cache
def small_plds() -> tuple[pld.PLD, ...]:
    return (
        pld.randomized_response(1.0),
        pld.gaussian(2.0),
        pld.clones(200, 1.0),
        pld.subsampled_gaussian(1.0, 0.05),
        pld.gaussian(1.0).self_compose(10),
    )


def plds() -> st.SearchStrategy:
    return st.integers(0, 4).map(lambda i: small_plds()[i])


def _gaussian_profile(eps: np.ndarray) -> np.ndarray:
    from pld.central.gaussian_mechanism import gaussian_delta

    return gaussian_delta(eps, 1.0)


_PROFILES = [
    _gaussian_profile,
    lambda eps: np.maximum(0.0, -np.expm1(np.minimum(eps, 0.0))) + 0.0 * eps,
    lambda eps: [0.1],
    lambda eps: math.nan,
    lambda eps: 2.0,
    lambda eps: "x",
    0.5,
    None,
]


# -- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One public callable: its required and optional arguments, with plausible values."""

    call: Callable[..., Any]
    required: dict[str, st.SearchStrategy]
    optional: dict[str, st.SearchStrategy] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    positional: bool = False  # pass the required arguments positionally
    exact: tuple[str, ...] = ()  # arguments never replaced by wild values (e.g. self)
    check: Callable[[Any], None] | None = None  # property of a result that is not a PLD


CONSTRUCTORS: dict[str, Entry] = {
    "randomized_response": Entry(
        pld.randomized_response, {"eps0": reals(1e-3, 10.0)}, {"loss_grid_step": steps()}
    ),
    "gaussian": Entry(
        pld.gaussian,
        {"sigma": reals(0.05, 100.0)},
        {"sensitivity": reals(0.01, 10.0), "loss_grid_step": steps()},
    ),
    "subsampled_gaussian": Entry(
        pld.subsampled_gaussian,
        {"sigma": reals(0.3, 50.0), "rate": reals(1e-4, 1.0)},
        {"loss_grid_step": steps()},
    ),
    "clones": Entry(
        pld.clones,
        {"n": st.integers(1, 3000), "eps0": reals(1e-3, 8.0)},
        {
            "p": st.one_of(st.none(), reals(1e-6, 0.2)),
            "truncation": st.sampled_from(["quantile", "hoeffding", "exact"]),
            "tail_mass": reals(1e-15, 1e-3),
            "loss_grid_step": steps(),
        },
    ),
    "krr": Entry(
        pld.krr,
        {"n": st.integers(1, 2000), "k": st.integers(2, 8), "gamma": reals(0.05, 1.0)},
        {
            "adversary": st.sampled_from(["strong", "weak"]),
            "tail_mass": reals(1e-15, 1e-3),
            "loss_grid_step": steps(),
            "max_atoms": st.integers(1, 10**6),
        },
    ),
    "from_pmfs": Entry(
        pld.from_pmfs,
        {"log_p": log_pmfs(), "log_q": log_pmfs()},
        {
            "symmetric": st.booleans(),
            "loss_grid_step": steps(),
            "truncated_mass_p": reals(0.0, 0.5),
            "truncated_mass_q": reals(0.0, 0.5),
            "max_loss": st.one_of(st.none(), reals(0.0, 50.0)),
            "mass_relative_error": reals(0.0, 1e-3),
        },
        aliases=("P", "Q", "log_p and log_q"),
        positional=True,
    ),
    "from_privacy_profile": Entry(
        pld.from_privacy_profile,
        {"delta_of_eps": st.sampled_from(_PROFILES), "eps_grid": eps_grids()},
        {"loss_grid_step": steps()},
        positional=True,
    ),
    "subsample": Entry(
        pld.subsample,
        {"base": plds(), "rate": reals(1e-3, 1.0)},
        {
            "eps_grid": st.one_of(st.none(), eps_grids()),
            "num_points": st.one_of(st.none(), st.integers(3, 300)),
            "tolerance": st.one_of(st.none(), reals(1e-6, 0.5)),
            "loss_grid_step": steps(),
        },
        aliases=("eps_grid or num_points",),
        positional=True,
    ),
    "laplace": Entry(
        pld.laplace,
        {},
        {"scale": reals(0.05, 20.0), "sensitivity": reals(0.01, 5.0), "loss_grid_step": steps()},
    ),
    "discrete_laplace": Entry(
        pld.discrete_laplace,
        {},
        {
            "parameter": reals(0.01, 5.0),
            "sensitivity": st.integers(1, 50),
            "loss_grid_step": steps(),
        },
        aliases=("parameter * sensitivity",),
    ),
    "discrete_gaussian": Entry(
        pld.discrete_gaussian,
        {},
        {"sigma": reals(0.2, 20.0), "sensitivity": st.integers(1, 20), "loss_grid_step": steps()},
    ),
    "pure_dp": Entry(pld.pure_dp, {}, {"eps": reals(0.0, 10.0), "loss_grid_step": steps()}),
    "approximate_dp": Entry(
        pld.approximate_dp,
        {},
        {"eps": reals(0.0, 10.0), "delta": reals(0.0, 0.5), "loss_grid_step": steps()},
    ),
    "poisson_subsample": Entry(
        pld.poisson_subsample,
        {"base": plds()},
        {
            "rate": reals(1e-3, 1.0),
            "adjacency": st.sampled_from(["add-remove", "replace"]),
            "loss_grid_step": steps(),
        },
    ),
    "random_allocation": Entry(
        pld.random_allocation,
        {"mechanism": plds(), "rounds": st.integers(1, 300)},
        {
            "participations": st.integers(1, 4),
            "adjacency": st.sampled_from(["add-remove", "replace"]),
            "tail_mass": reals(1e-15, 1e-3),
            "loss_grid_step": steps(),
        },
        aliases=("base",),
    ),
    "subsample_without_replacement": Entry(
        pld.subsample_without_replacement,
        {"base": plds()},
        {
            "rate": reals(1e-3, 1.0),
            "adjacency": st.sampled_from(["add-remove", "replace"]),
            "loss_grid_step": steps(),
        },
    ),
    "compose": Entry(
        lambda first, second, rounds=1, tail_mass=1e-15: pld.compose(
            first, second, rounds=rounds, tail_mass=tail_mass
        ),
        {"first": plds(), "second": plds()},
        {"rounds": st.integers(1, 300), "tail_mass": reals(1e-30, 1e-3)},
        aliases=("PLD", "compose", "loss_grid_step"),
        positional=True,
    ),
    "self_compose": Entry(
        lambda base, rounds, tail_mass=1e-15: base.self_compose(rounds, tail_mass=tail_mass),
        {"base": plds(), "rounds": st.integers(1, 3000)},
        {"tail_mass": reals(1e-30, 1e-3)},
        aliases=("loss_grid_step",),
        positional=True,
        exact=("base",),
    ),
}


def _check_calibration(result: Any) -> None:
    """The calibrated value meets its target with the upper bound."""
    assert result.delta_upper <= result.target_delta
    assert result.eps_upper <= result.target_eps


CONSTRUCTORS["calibrate"] = Entry(
    lambda param, target_eps, target_delta, **options: pld.calibrate(
        pld.gaussian, param, target_eps=target_eps, target_delta=target_delta, **options
    ),
    {
        "param": st.sampled_from(["sigma"]),
        "target_eps": reals(0.2, 5.0),
        "target_delta": reals(1e-10, 0.1),
    },
    {"rounds": st.integers(1, 50), "tolerance": reals(1e-3, 0.1)},
    positional=True,
    check=_check_calibration,
)


def _check_randomizer(result: Any) -> None:
    """A local randomizer: eps0 >= 0 and a blanket mass in [0, 1]."""
    assert result.eps0 >= 0.0
    assert 0.0 <= result.blanket_mass <= 1.0


@cache
def small_randomizers() -> tuple[Any, ...]:
    return (
        pld.randomizers.krr(k=4, gamma=0.25),
        pld.randomizers.krr(k=2, eps0=1.0),
        pld.randomizers.local_hashing(eps0=2.0, domain=20),
        pld.randomizers.matrix([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]),
    )


CONSTRUCTORS.update(
    {
        "randomizers.krr": Entry(
            pld.randomizers.krr,
            {"k": st.integers(2, 100)},
            {"gamma": reals(0.0, 1.0), "eps0": reals(0.0, 10.0)},
            check=_check_randomizer,
        ),
        "randomizers.local_hashing": Entry(
            pld.randomizers.local_hashing,
            {"eps0": reals(0.01, 10.0), "domain": st.integers(2, 1000)},
            {"buckets": st.integers(2, 100)},
            check=_check_randomizer,
        ),
        "randomizers.hadamard": Entry(
            pld.randomizers.hadamard,
            {"eps0": reals(0.01, 10.0), "domain": st.integers(2, 1000)},
            check=_check_randomizer,
        ),
        "randomizers.unary": Entry(
            pld.randomizers.unary,
            {"eps0": reals(0.01, 10.0), "domain": st.integers(2, 1000)},
            {"optimized": st.booleans()},
            check=_check_randomizer,
        ),
        "randomizers.gaussian": Entry(
            pld.randomizers.gaussian,
            {"sigma": reals(0.01, 100.0)},
            {"low": reals(-10.0, 0.0), "high": reals(0.5, 10.0)},
            check=_check_randomizer,
        ),
        "randomizers.laplace": Entry(
            pld.randomizers.laplace,
            {"scale": reals(0.01, 100.0)},
            {"low": reals(-10.0, 0.0), "high": reals(0.5, 10.0)},
            check=_check_randomizer,
        ),
        "shuffle": Entry(
            pld.shuffle,
            {
                "randomizer": st.integers(0, 3).map(lambda i: small_randomizers()[i]),
                "n": st.integers(1, 12),
            },
            {"analysis": st.sampled_from(["best", "blanket", "clones"])},
            exact=("randomizer",),
        ),
        "checkin": Entry(
            pld.checkin,
            {"n": st.integers(1, 2000), "p": reals(1e-3, 1.0)},
            {"eps0": reals(0.01, 5.0), "adjacency": st.sampled_from(["replace", "add-remove"])},
        ),
        "shuffle_observer": Entry(
            pld.shuffle_observer,
            {
                "randomizer": st.integers(0, 3).map(lambda i: small_randomizers()[i]),
                "n": st.integers(1, 200),
            },
            exact=("randomizer",),
        ),
    }
)


QUERIES: dict[str, Entry] = {
    "delta_bounds": Entry(
        lambda loss, eps: loss.delta_bounds(eps),
        {"loss": plds(), "eps": st.one_of(reals(-5.0, 60.0), st.lists(reals(-5.0, 60.0)))},
        positional=True,
        exact=("loss",),
    ),
    "epsilon_bounds": Entry(
        lambda loss, delta: loss.epsilon_bounds(delta),
        {"loss": plds(), "delta": reals(1e-15, 1.0)},
        positional=True,
        exact=("loss",),
    ),
    "curve": Entry(
        lambda loss, eps: loss.curve(eps),
        {"loss": plds(), "eps": st.lists(reals(-5.0, 60.0), min_size=1)},
        positional=True,
        exact=("loss",),
    ),
    "atoms": Entry(
        lambda loss, bound: loss.atoms(bound),
        {"loss": plds(), "bound": st.sampled_from(["upper", "lower"])},
        positional=True,
        exact=("loss",),
    ),
}


# -- the property ---------------------------------------------------------------------------


def _names(entry: Entry) -> tuple[str, ...]:
    return (*entry.required, *entry.optional, *entry.aliases)


def _checked_call(call: Callable[[], Any], names: tuple[str, ...]) -> Any:
    """Run ``call``: a result, or ``None`` after an allowed refusal; fail on anything else."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            result = call()
        except (ValueError, TypeError) as error:
            message = str(error)
            assert any(re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", message) for n in names), (
                f"{type(error).__name__} names none of {names}: {message}"
            )
            result = None
        elapsed = time.perf_counter() - start
    assert elapsed < TIME_LIMIT, f"took {elapsed:.1f} s"
    leaked = [w for w in caught if not issubclass(w.category, UserWarning)]
    assert not leaked, [f"{w.category.__name__}: {w.message}" for w in leaked]
    return result


def _check_pld(loss: pld.PLD) -> None:
    """Queries on a valid PLD give valid, monotone, self-consistent answers."""
    assert isinstance(loss, pld.PLD)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", UserWarning)
        lower, upper = loss.delta_bounds(EPS)
        assert np.all(0.0 <= lower) and np.all(lower <= upper) and np.all(upper <= 1.0)
        assert np.all(np.diff(upper) <= 0.0) and np.all(np.diff(lower) <= 0.0)
        previous = 0.0
        for delta in DELTAS:
            eps_lower, eps_upper = loss.epsilon_bounds(delta)
            assert 0.0 <= eps_lower <= eps_upper
            # eps(delta) is non-increasing in delta. Each query may refine the grid and
            # answer from a finer PLD than the previous one, so the two upper bounds
            # need not be ordered; the previous (larger delta) lower bound must lie below.
            assert eps_upper >= previous
            previous = eps_lower
            if math.isfinite(eps_upper):
                assert loss.delta_bounds(eps_upper)[1] <= delta


def _draw_arguments(data: st.DataObject, entry: Entry) -> tuple[list, dict]:
    values = {
        name: data.draw(strategy if name in entry.exact else mixed(strategy), label=name)
        for name, strategy in entry.required.items()
    }
    for name, strategy in entry.optional.items():
        if data.draw(st.booleans(), label=f"give {name}"):
            values[name] = data.draw(mixed(strategy), label=name)
    if entry.positional:
        args = [values.pop(name) for name in entry.required]
        return args, values
    return [], values


def _fuzz(data: st.DataObject, entry: Entry) -> None:
    args, kwargs = _draw_arguments(data, entry)
    result = _checked_call(lambda: entry.call(*args, **kwargs), _names(entry))
    if entry.check is not None and result is not None:
        entry.check(result)
    elif isinstance(result, pld.PLD):
        _check_pld(result)
    elif isinstance(result, tuple) and len(result) == 2:
        lower, upper = (np.asarray(v, dtype=float) for v in result)
        assert np.all(lower <= upper)


_SETTINGS = {
    "deadline": None,
    "database": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
_TABLE = {**CONSTRUCTORS, **QUERIES}


@pytest.mark.parametrize("name", sorted(_TABLE))
@settings(max_examples=DEFAULT_EXAMPLES, **_SETTINGS)
@given(data=st.data())
def test_public_api_returns_valid_results_or_names_a_parameter(name, data):
    _fuzz(data, _TABLE[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_TABLE))
@settings(max_examples=LONG_EXAMPLES, **{**_SETTINGS, "derandomize": False})
@given(data=st.data())
def test_public_api_long_profile(name, data):
    _fuzz(data, _TABLE[name])


# -- the command line ---------------------------------------------------------------------------

_MECHANISM_OPTIONS = {
    "rr": {"--eps0": ["1", "0.5"]},
    "gaussian": {"--sigma": ["1", "3"]},
    "subsampled-gaussian": {"--sigma": ["1"], "--rate": ["0.01", "1"]},
    "clones": {"--n": ["100", "1000"], "--eps0": ["1"], "--p": ["0.1"]},
    "krr": {"--n": ["100"], "--k": ["4"], "--gamma": ["0.25"], "--adversary": ["weak"]},
}
_COMMANDS = {
    "delta": {"--eps": ["1", "0.5"], "--rounds": ["1", "10"]},
    "epsilon": {"--delta": ["1e-6"], "--rounds": ["1", "10"]},
    "curve": {"--rounds": ["1", "5"], "--points": ["5"], "--eps-range": ["0", "2"]},
    "calibrate": {
        "--param": ["sigma", "eps0", "rounds"],
        "--target-eps": ["1"],
        "--target-delta": ["1e-5"],
    },
}
_TOKENS = st.one_of(
    st.text(max_size=6),
    WILD.map(str),
    st.sampled_from(["--json", "--quiet", "--loss-grid-step", "1e-3", "--eps", "nan", "-1"]),
)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(_COMMANDS)))
    mechanism = draw(st.sampled_from(sorted(_MECHANISM_OPTIONS)))
    argv = [command, "--mechanism", mechanism]
    options = {**_COMMANDS[command], **_MECHANISM_OPTIONS[mechanism]}
    for flag, plausible in options.items():
        if draw(st.integers(0, 3)):
            value = draw(st.one_of(st.sampled_from(plausible), st.sampled_from(plausible), _TOKENS))
            argv += [flag, value]
    argv += draw(st.lists(_TOKENS, max_size=2))
    return argv


def _check_cli(argv: list[str]) -> None:
    from pld.cli.commands import main

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as leave:  # --help / -h, printed by argparse
                code = leave.code
                assert code == 0, f"argparse exit {code}: {err.getvalue()}"
                return
    assert time.perf_counter() - start < TIME_LIMIT
    leaked = [w for w in caught if not issubclass(w.category, UserWarning)]
    assert not leaked, [f"{w.category.__name__}: {w.message}" for w in leaked]
    lines = err.getvalue().strip().splitlines()
    if code == 0:
        assert out.getvalue().strip(), "no output"
        assert all(line.startswith("pld: warning:") for line in lines), err.getvalue()
    else:
        assert code == 2, (code, err.getvalue())
        errors = [line for line in lines if not line.startswith("pld: warning:")]
        assert len(errors) == 1 and errors[0].startswith("pld: error: "), err.getvalue()


@settings(max_examples=4 * DEFAULT_EXAMPLES, **_SETTINGS)
@given(argv=command_lines())
def test_command_line_answers_or_prints_one_error_line(argv):
    _check_cli(argv)


@pytest.mark.slow
@settings(max_examples=LONG_EXAMPLES, **{**_SETTINGS, "derandomize": False})
@given(argv=command_lines())
def test_command_line_long_profile(argv):
    _check_cli(argv)
