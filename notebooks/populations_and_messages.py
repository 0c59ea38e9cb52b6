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
# # Mixed populations, several messages, sampled attributes: pld against the papers
#
# 1. **Personalized privacy** (Liu et al. 2024, "HPS", arXiv 2407.18157; Chen et al. 2024,
#    arXiv 2312.14388): their "Step" setting, half the users at ε0 = 0.05 and half at
#    ε0 = 1, δ = 10⁻⁵, n ∈ {10³, 10⁴, 10⁵}. Their numbers were computed with the HPS code
#    (github yixuanLL/HPS at ddd02eb: `UniS` = the uniform stronger-clone bound at the
#    largest ε0, `PerS` = Liu et al. 2023, `General_GDP` = Chen et al.'s μ-GDP bound,
#    `HP_fDP` = HPS for the Laplace mechanism); they are constants here. pld:
#    `pld.shuffle` of two groups of binary randomised response (a specific randomizer,
#    certified with nothing assumed) and `pld.clones` with groups of ε0 values (any
#    mutually LDP randomizers, docs/shuffle-groups.md §4.3).
# 2. **Multi-message binary summation with coin messages** (Balcer and Cheu 2020) at
#    Wang et al.'s (VLDB 2024) setting n = 10⁶, δ = 0.01/n: their variation-ratio bound
#    (computed with github wangsw/PrivacyAmplification at 34ca048, `amplificationUB`
#    with p = 10⁵ for +∞, β = 1, q = max(1/p, 1/(1−p))) against pld's exact PLD.
# 3. **Sampling one of d attributes** (Wang et al.'s parallel composition): k-RR
#    (k = 4, ε0 = 2) on one of d attributes, records differing in one attribute.

# %%
import os
import time
from pathlib import Path

import matplotlib.pyplot as plt

import pld

# QUICK: a reduced workload for CI (set PLD_NOTEBOOK_QUICK=1); False for the published run.
QUICK = os.environ.get("PLD_NOTEBOOK_QUICK", "0") == "1"
FIGURES = Path(os.environ.get("PLD_FIGURE_DIR", Path.cwd().parent / "docs" / "figures"))
FIGURES.mkdir(parents=True, exist_ok=True)
print(f"QUICK = {QUICK}; figures go to {FIGURES}")

# %%
DELTA = 1e-5
published = {  # eps(delta) of the HPS code's bounds for the Step setting, by n
    "UniS (FV'23, max eps0)": {1000: 0.13434, 10_000: 0.035385, 100_000: 0.010505},
    "PerS (Liu et al. 2023)": {1000: 0.13506, 10_000: 0.035753, 100_000: 0.0097470},
    "Chen et al. (mu-GDP)": {1000: 0.16510, 10_000: 0.046666, 100_000: 0.012915},
    "HPS (Laplace)": {1000: 0.14091, 10_000: 0.036575, 100_000: 0.0098372},
}
sizes = [1000] if QUICK else [1000, 10_000, 100_000]
ours = {"pld: binary RR groups": {}, "pld.clones groups (mutually LDP)": {}}
for n in sizes:
    half = n // 2
    start = time.perf_counter()
    groups = [
        (pld.randomizers.krr(2, eps0=0.05), half),
        (pld.randomizers.krr(2, eps0=1.0), n - half),
    ]
    ours["pld: binary RR groups"][n] = pld.shuffle(groups).epsilon_bounds(DELTA)
    ours["pld.clones groups (mutually LDP)"][n] = pld.clones(
        [(0.05, half), (1.0, n - half)]
    ).epsilon_bounds(DELTA)
    worst = pld.shuffling.worst_group(groups, 0.5 * ours["pld: binary RR groups"][n][1])[0]
    print(f"n = {n}: built in {time.perf_counter() - start:.1f} s; worst target group {worst}")
print(f"eps(delta = {DELTA:g})")
for name, values in published.items():
    print(f"{name:36s}", "  ".join(f"{values[n]:.5f}" for n in sizes))
for name, values in ours.items():
    print(f"{name:36s}", "  ".join(f"[{values[n][0]:.5f}, {values[n][1]:.5f}]" for n in sizes))

# %% [markdown]
# Reading: the specific randomizer (binary randomised response in two groups) is certified
# below every published number, 20 % below HPS at n = 10⁴; its bracket is the width of
# pld's own evaluation. The generic `pld.clones` groups bound uses the Feldman et al.
# (2021) clone probability, proven for any ε0-LDP randomizer; the published "UniS"
# uses the stronger clone probability 1/(e^ε0 + 1), which the 2023 errata restricts to a
# class of randomizers, and HPS/PerS rely on clone probabilities across different users'
# randomizers that hold only for particular families. With only ε0 values known, the users
# of the low-ε0 group cannot be shown to hide a high-ε0 target any better than users at
# the target's own ε0 (docs/shuffle-groups.md §4.3).

# %%
fig, ax = plt.subplots(figsize=(6, 4))
for name, values in published.items():
    ax.plot(sizes, [values[n] for n in sizes], "--o", label=name)
for name, values in ours.items():
    ax.plot(sizes, [values[n][1] for n in sizes], "-s", label=name)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("n")
ax.set_ylabel(f"ε(δ = {DELTA:g})")
ax.set_title("Half the users at ε0 = 0.05, half at ε0 = 1")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(FIGURES / "populations_hps_step.png", dpi=120)

# %%
N_COINS = 10**6
DELTA_COINS = 0.01 / N_COINS
wang = {0.5: 0.0082127, 0.1: 0.019148, 0.01: 0.064011}  # Wang et al.'s code, upper bounds
coins = [0.5] if QUICK else [0.5, 0.1, 0.01]
print(f"binary summation with coin messages, n = {N_COINS}, delta = {DELTA_COINS:g}")
for p in coins:
    exact = pld.shuffle(pld.randomizers.binary_sum_coins(p), N_COINS).epsilon_bounds(
        DELTA_COINS, rel_accuracy=1e-3
    )
    saving = max(0.0, 1 - exact[1] / wang[p])
    print(
        f"coin p = {p:5}: Wang et al. {wang[p]:.5f}, pld exact [{exact[0]:.5f}, "
        f"{exact[1]:.5f}] ({100 * saving:.0f} % below)"
    )

# %% [markdown]
# The pair (1 + U, U), U ~ Bin(n, p), is the protocol's exact view for an adversary who
# knows every other bit, so pld's bracket contains the true ε; Wang et al.'s
# parameterisation treats the coin's two values alike (ratio bound max(1/p, 1/(1−p))) and
# is tight only for the uniform coin.

# %%
base = pld.randomizers.krr(4, eps0=2.0)
n_sampled = 10_000 if QUICK else 100_000
attributes = [1, 4] if QUICK else [1, 2, 4, 8, 16]
print(
    f"k-RR (k = 4, eps0 = 2) on one of d attributes, n = {n_sampled}, records differing "
    "in one attribute"
)
for d in attributes:
    randomizer = pld.randomizers.sampled(base, d, differing=1)
    low, high = pld.shuffle(randomizer, n_sampled).epsilon_bounds(1e-6)
    print(f"d = {d:2d}: eps(1e-6) in [{low:.5f}, {high:.5f}]")
whole = pld.shuffle(pld.randomizers.sampled(base, 4), n_sampled).epsilon_bounds(1e-6)
print(
    f"d = 4, records replaced (every attribute may differ): [{whole[0]:.5f}, {whole[1]:.5f}]"
    " = k-RR itself"
)
