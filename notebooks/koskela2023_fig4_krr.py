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
# # Koskela et al. (2023), Figure 4: shuffled k-RR, strong and weak adversary vs clones
#
# n = 1000 users, k = 4, each answers uniformly at random with probability γ = 0.25.
# Tight PLDs of the shuffled k-RR against the strong adversary of Balle et al. (2019)
# (Koskela et al. (2023), Thm 13, `pld.krr(..., adversary="strong")`) and the weaker
# adversary A_w (Thm 15–16, `adversary="weak"`), against the clones bound (`pld.clones`)
# for the same randomiser seen as ε0-LDP with ε0 = log(((1 − γ)k + γ)/γ) = log 13.
#
# The paper says the strong-adversary and clones curves cross. **We do not reproduce a
# crossing** at δ = 10⁻⁶ for T from 1 to 100: the strong adversary stays above the clones
# bound (tests/shuffling/test_krr.py records the same). The paper says it "increased the parameters
# of FA so that the discretisation error is negligible"; our brackets are narrow (see the
# table), so the difference is not discretisation on our side.

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

from pld.shuffling.krr import ldp_epsilon

n, k, gamma = 1000, 4, 0.25
eps0 = ldp_epsilon(k, gamma)
start = time.perf_counter()
one_round = {
    "strong adversary (Balle et al.)": pld.krr(n, k, gamma, adversary="strong"),
    "weak adversary (A_w)": pld.krr(n, k, gamma, adversary="weak"),
    f"clones, eps0 = {eps0:.4f}": pld.clones(n, eps0, variant="stronger"),  # proven for k-RR
}
print(f"three one-round PLDs built in {time.perf_counter() - start:.2f} s")
all_rounds = np.array([1, 10, 100] if QUICK else [1, 2, 5, 10, 20, 50, 100])
delta = 1e-6
curves = {name: [] for name in one_round}
for rounds in all_rounds:
    for name, one in one_round.items():
        curves[name].append(one.self_compose(rounds).epsilon_bounds(delta))
print(f"eps(delta = {delta:g}) as [lower, upper]")
print(f"{'T':>4} " + " ".join(f"{name[:24]:>26}" for name in one_round))
for i, rounds in enumerate(all_rounds):
    print(
        f"{rounds:4d} "
        + " ".join(
            f"[{curves[name][i][0]:.4f}, {curves[name][i][1]:.4f}]".rjust(26) for name in one_round
        )
    )

# %%
names = list(one_round)
print("relative to the clones bound (upper values):")
for i, rounds in enumerate(all_rounds):
    clones_eps = curves[names[2]][i][1]
    print(
        f"T = {rounds:3d}: strong {100 * (curves[names[0]][i][1] / clones_eps - 1):+6.1f} %, "
        f"weak {100 * (curves[names[1]][i][1] / clones_eps - 1):+6.1f} %"
    )

fig, ax = plt.subplots(figsize=(6, 4))
for name, style in zip(names, ("C3o-", "C2s-", "k^--"), strict=True):
    ax.loglog(all_rounds, [c[1] for c in curves[name]], style, label=name)
ax.set_xlabel("rounds T")
ax.set_ylabel(f"eps(delta = {delta:g})")
ax.set_title(f"shuffled k-RR: n = {n}, k = {k}, gamma = {gamma}")
ax.grid(alpha=0.3)
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(FIGURES / "koskela2023_fig4.png", dpi=100)
