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
# # Liew et al. (2022), Figure 5: distributed check-in against subsampling without replacement
#
# Each participant adds N(0, σ²), σ = 1, and only the sum is released (distributed
# check-in, Liew et al. (2022), Thm 4, `pld.rdp.distributed_checkin_gaussian`, replacement
# sensitivity 2), against subsampling without replacement of k = nγ users whose sum
# carries N(0, kσ²) (Wang, Balle and Kasiviswanathan (2019), Thm 9 on the Gaussian RDP
# 2λ/(kσ²), `pld.rdp.subsampled`), γ = 0.1, ε at δ = 1/n against T.
#
# **Ambiguous parameter.** n is not given for this figure: we use n = 10⁴ (Table 2's).
#
# **Not reproduced.** The paper finds distributed check-in "much suppressed" compared with
# subsampling without replacement. With the library's RDP of both (the same Gaussian of
# variance kσ², sensitivity 2, subsampled at rate k/n, averaged over k ~ Bin(n, γ) for
# check-in) the two curves coincide for T ≥ 10 and check-in is *larger* at small T (its
# binomial tail envelopes cost at the high orders that set ε there): averaging the moment
# over k cannot beat fixing k at its mean by much. The paper's exact definition of its
# blue curve (ε_k^SG) is not in the text; we may be comparing a different quantity.
#
# **Our addition:** the PLD of the same subsampling-without-replacement mechanism
# (`pld.subsample` of `pld.gaussian(σ√k, sensitivity=2)`, Koskela et al. (2023), Lemma 7),
# a tight accounting of the blue curve: it is 4–20× below both RDP curves, so at these
# parameters the accounting method matters far more than the protocol.

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
import math

n, gamma, sigma = 10_000, 0.1, 1.0
k = round(n * gamma)
delta = 1.0 / n
orders = np.arange(2, 257)
distributed = pld.rdp.distributed_checkin_gaussian(n, gamma, sigma, orders)
without_replacement = pld.rdp.subsampled(
    lambda j: pld.rdp.gaussian(sigma * math.sqrt(k), j, sensitivity=2.0), gamma, orders
)
subsampled_pld = pld.subsample(pld.gaussian(sigma * math.sqrt(k), sensitivity=2.0), gamma)
all_rounds = np.unique(np.round(np.logspace(0, 4, 9 if QUICK else 17)).astype(int))
rows = []
for t in all_rounds:
    composed = subsampled_pld.self_compose(int(t)) if t > 1 else subsampled_pld
    rows.append(
        (
            t,
            pld.rdp.to_epsilon(t * distributed, orders, delta)[0],
            pld.rdp.to_epsilon(t * without_replacement, orders, delta)[0],
            *composed.epsilon_bounds(delta),
        )
    )
print(
    f"{'T':>6} {'distributed RDP':>16} {'w/o repl. RDP':>14} {'w/o repl. PLD [lower, upper]':>30}"
)
for t, dist, wor, low, up in rows:
    print(f"{t:6d} {dist:16.5f} {wor:14.5f} [{low:13.5f}, {up:13.5f}]")

# %%
table = np.array(rows, dtype=float)
fig, ax = plt.subplots(figsize=(6, 4))
ax.loglog(table[:, 0], table[:, 1], "r-", label="distributed check-in, RDP (Thm 4)")
ax.loglog(table[:, 0], table[:, 2], "b-", label="subsampling w/o replacement, RDP")
ax.loglog(table[:, 0], table[:, 4], "k--", label="subsampling w/o replacement, PLD (ours)")
ax.set_xlabel("rounds T")
ax.set_ylabel("eps at delta = 1/n")
ax.set_title(f"n = {n} (assumed), gamma = {gamma}, sigma = {sigma}")
ax.grid(alpha=0.3)
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(FIGURES / "liew2022_fig5.png", dpi=100)
