# ---
# jupyter:
#   jupytext:
#     notebook_metadata_filter: kernelspec,jupytext,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The shuffled d-dimensional Gaussian in the seed FL setting: certified ε for every d
#
# Each of n = 60 000 clients clips its d-dimensional update to L2 norm C and reports it
# plus N(0, σ² I_d), with σ / (2C) = 9.48 (Liew and Takahashi 2022, Table 1); a shuffler
# releases the multiset; δ = 1/n. For d ∈ {1, 10³, 10⁶}, side by side:
#
# * **certified** (`pld.shuffle(pld.randomizers.vector_gaussian(σ, d, C), n)`): for d = 1
#   the interval's end-point blanket bound; for every d ≥ 2 bound B of
#   docs/vector-gaussian.md §2 (the pairwise blanket with every shortfall charged), which
#   does not depend on d;
# * **protocol lower bound** (`pld.shuffle_observer`): the sum of the reports, the same
#   for every d;
# * **RDP (seed)**: Liew and Takahashi's Rényi divergence of one pair of datasets
#   ("without loss of generality one-dimensional"), converted with their Lemma 2: the
#   divergence of one pair, not a guarantee;
# * **local**: the Gaussian mechanism with sensitivity 2C (no shuffling).
#
# Then T rounds of the shuffled round, composed. (`pld.checkin(n, p, randomizer=...)`
# accepts this randomizer too, but builds one `pld.shuffle` per block of counts, each as
# costly as the round below: at n = 60 000 that takes longer than this notebook should.)

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import pld

# QUICK: a reduced workload for CI (set PLD_NOTEBOOK_QUICK=1); False for the published run.
QUICK = os.environ.get("PLD_NOTEBOOK_QUICK", "0") == "1"
FIGURES = Path(os.environ.get("PLD_FIGURE_DIR", Path.cwd().parent / "docs" / "figures"))
FIGURES.mkdir(parents=True, exist_ok=True)
print(f"QUICK = {QUICK}; figures go to {FIGURES}")

# %%
import time

n = 60_000
clip = 0.5
sigma = 9.48 * 2 * clip
delta = 1.0 / n
dims = [10**6] if QUICK else [1, 10**3, 10**6]
rounds = [1, 10] if QUICK else [1, 3, 10, 30, 100]

built, seconds = {}, {}
for dim in dims:
    randomizer = pld.randomizers.vector_gaussian(sigma, dim, clip)
    start = time.perf_counter()
    built[dim] = pld.shuffle(randomizer, n)
    seconds[dim] = time.perf_counter() - start
randomizer = pld.randomizers.vector_gaussian(sigma, dims[-1], clip)
observer = pld.shuffle_observer(randomizer, n)
local = randomizer.local_mechanism()

orders = np.arange(2, 257)
rdp_round = pld.rdp.shuffle_gaussian(n, sigma / (2 * clip), orders)


def rdp_eps(t: int) -> float:
    return pld.rdp.to_epsilon(t * rdp_round, orders, delta)[0]


print(f"one round, delta = 1/n = {delta:.3g}")
print(f"{'d':>9} {'certified':>22} {'observer':>10} {'RDP (seed)':>11} {'local':>8} {'build':>7}")
for dim in dims:
    low, up = built[dim].epsilon_bounds(delta)
    print(
        f"{dim:>9} [{low:.6f}, {up:.6f}] {observer.epsilon_bounds(delta)[0]:>10.6f} "
        f"{rdp_eps(1):>11.5f} {local.epsilon_bounds(delta)[0]:>8.4f} {seconds[dim]:>6.1f}s"
    )

# %% [markdown]
# Checks (assertions): the certified upper bound lies above the protocol's lower bound and
# at least 10× below the local mechanism, for every d; bound B is the same for every
# d ≥ 2 (checked on the profiles at a few eps, which is what `pld.shuffle` composes).

# %%
for dim in dims:
    low, up = built[dim].epsilon_bounds(delta)
    assert observer.epsilon_bounds(delta)[0] <= low <= up <= local.epsilon_bounds(delta)[0] / 10
probe = np.array([0.0, 5e-4, 1e-3, 2e-3])
profiles = [
    pld.randomizers.vector_gaussian(sigma, dim, clip).shuffle_profiles(n, probe, "best")[0]
    for dim in (2, 10**6)
]
uppers = [np.minimum.reduce([up for _, up in p]) for p in profiles]
assert np.array_equal(uppers[0], uppers[1])

# %% [markdown]
# ## T rounds
#
# Every round shuffles all n clients; the rounds are composed (`PLD.self_compose`).

# %%
table = {}
for dim in dims:
    table[dim] = [built[dim].self_compose(t).epsilon_bounds(delta)[1] for t in rounds]
table["observer"] = [observer.self_compose(t).epsilon_bounds(delta)[0] for t in rounds]
table["rdp"] = [rdp_eps(t) for t in rounds]
table["local"] = [local.self_compose(t).epsilon_bounds(delta)[0] for t in rounds]
for key, values in table.items():
    print(f"{key!s:>9}: " + "  ".join(f"{v:.5f}" for v in values))
for dim in dims:
    for certified, lower in zip(table[dim], table["observer"], strict=True):
        assert lower <= certified

# %%
fig, ax = plt.subplots(figsize=(6.5, 4.2))
styles = {
    1: ("d = 1 (interval blanket)", "-o"),
    10**3: ("d = 10³", "-s"),
    10**6: ("d = 10⁶", "--^"),
}
for dim in dims:
    label, style = styles[dim]
    ax.plot(rounds, table[dim], style, label=f"certified, {label}")
ax.plot(rounds, table["observer"], "k:", label="protocol lower bound (sum of reports)")
ax.plot(rounds, table["rdp"], "-.", label="RDP of one pair (seed, λ ≤ 256)")
ax.plot(rounds, table["local"], "-", color="grey", label="local Gaussian mechanism")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("rounds T")
ax.set_ylabel(f"ε at δ = 1/n (n = {n})")
ax.set_title("Shuffled clipped Gaussian, σ/(2C) = 9.48")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(FIGURES / "vector_gaussian_fl.png", dpi=120)
plt.show()
