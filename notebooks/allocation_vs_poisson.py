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
# # Random allocation against Poisson subsampling, central and shuffled
#
# Most pipelines do not sample each round independently (Poisson): they shuffle the data
# and use every example in exactly k of the T steps of an epoch (random allocation,
# "balls and bins" batches; Chua et al. 2024, Feldman and Shenfeld 2026), or let each
# device check in to k of the T rounds of a window (random check-ins, Balle et al. 2020).
# This notebook compares them at **equal expected participation** (Poisson rate k/T per
# step), as ε at δ = 10⁻⁶ after 1 to 50 epochs, with T = 100 steps per epoch:
#
# 1. central: the Gaussian mechanism with noise multiplier σ = 1 —
#    `pld.subsampled_gaussian(σ, k/T)` composed kT times per epoch against
#    `pld.random_allocation(pld.gaussian(σ), rounds=T, participations=k)` once per epoch;
# 2. shuffled: n = 10⁴ users, any ε0 = 1 local randomizer, replace-one —
#    Poisson check-ins `pld.checkin(n, p=k/T, eps0=1)` composed T times per window against
#    random check-ins `pld.checkin(n, eps0=1, schedule="random", window=T,
#    participations=k)` once per window.
#
# Every number is pld's certified upper bound; the brackets' widths are printed too.

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
import time

from scipy.optimize import brentq

from pld.central.gaussian_mechanism import gaussian_delta

T, sigma, delta, n, eps0 = 100, 1.0, 1e-6, 10_000, 1.0
all_k = [1] if QUICK else [1, 4]
all_epochs = np.array([1, 10] if QUICK else [1, 2, 5, 10, 20, 50])

start = time.perf_counter()
per_epoch = {}  # (panel, scheme, k) -> (PLD, repetitions per epoch)
for k in all_k:
    per_epoch["central", "Poisson", k] = (pld.subsampled_gaussian(sigma, k / T), T)
    per_epoch["central", "allocation", k] = (
        pld.random_allocation(pld.gaussian(sigma), rounds=T, participations=k),
        1,
    )
    per_epoch["shuffled", "Poisson", k] = (pld.checkin(n, p=k / T, eps0=eps0), T)
    per_epoch["shuffled", "allocation", k] = (
        pld.checkin(n, eps0=eps0, schedule="random", window=T, participations=k),
        1,
    )
print(f"{len(per_epoch)} one-epoch PLDs built in {time.perf_counter() - start:.1f} s")

brackets = {key: [] for key in per_epoch}
for key, (one, repeats) in per_epoch.items():
    for epochs in all_epochs:
        brackets[key].append(one.self_compose(int(epochs) * repeats).epsilon_bounds(delta))
print(f"eps(delta = {delta:g}) upper bounds [relative bracket width]")
for key, values in brackets.items():
    cells = "  ".join(f"{u:.4f} [{(u - lo) / u:.0e}]" for lo, u in values)
    print(f"{key[0]:8s} {key[1]:10s} k = {key[2]}: {cells}")


def gaussian_epsilon(noise: float) -> float:
    """The Gaussian mechanism's exact eps at delta (Balle and Wang 2018, Thm 8)."""
    return brentq(lambda e: gaussian_delta(e, noise) - delta, 0.0, 200.0, xtol=1e-12)


# Independent truth: every epoch of random allocation is no worse than k full Gaussian
# rounds (closed form); and each bracket is ordered.
for k in all_k:
    for epochs, (_, upper) in zip(all_epochs, brackets["central", "allocation", k], strict=True):
        assert upper <= gaussian_epsilon(sigma / math.sqrt(k * epochs))
for values in brackets.values():
    assert all(0 <= lo <= u for lo, u in values)

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
titles = {
    "central": f"Gaussian, σ = {sigma:g}, T = {T} steps/epoch",
    "shuffled": f"shuffled ε0 = {eps0:g}-LDP, n = {n:,}, T = {T} rounds/window",
}
names = {
    ("central", "allocation"): "random allocation",
    ("central", "Poisson"): "Poisson subsampling",
    ("shuffled", "allocation"): "random check-ins",
    ("shuffled", "Poisson"): "Poisson check-ins",
}
for axis, panel in zip(axes, ("central", "shuffled"), strict=True):
    for (where, scheme, k), values in brackets.items():
        if where != panel:
            continue
        axis.plot(
            all_epochs,
            [u for _, u in values],
            marker="o" if scheme == "allocation" else "s",
            linestyle="-" if k == 1 else "--",
            color="C0" if scheme == "allocation" else "C1",
            label=f"{names[panel, scheme]}, k = {k}",
        )
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("epochs")
    axis.set_title(titles[panel], fontsize=10)
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
axes[0].set_ylabel(f"ε at δ = {delta:g} (upper bound)")
fig.tight_layout()
fig.savefig(FIGURES / "allocation_vs_poisson.png", dpi=120)
plt.show()

# %%
for k in all_k:
    for panel in ("central", "shuffled"):
        ours = brackets[panel, "allocation", k][-1][1]
        theirs = brackets[panel, "Poisson", k][-1][1]
        print(
            f"{panel:8s} k = {k}, {all_epochs[-1]} epochs: allocation {ours:.4f}, "
            f"Poisson {theirs:.4f} (ratio {ours / theirs:.3f})"
        )

# %% [markdown]
# ## Conclusion (full run)
#
# Measured ε upper bounds at δ = 10⁻⁶, T = 100, after 1 and 50 epochs (relative bracket
# widths at most 2·10⁻⁴, 5·10⁻³ for Poisson check-ins):
#
# | | k = 1, 1 epoch | k = 1, 50 epochs | k = 4, 1 epoch | k = 4, 50 epochs |
# |---|---|---|---|---|
# | Gaussian σ = 1, Poisson (rate k/T) | 0.954 | 4.735 | 3.326 | 24.07 |
# | Gaussian σ = 1, random allocation | **0.858** | **4.559** | **2.835** | **23.44** |
# | shuffled ε0 = 1, n = 10⁴, Poisson check-ins | 0.0572 | 0.4614 | **0.1155** | **0.935** |
# | shuffled ε0 = 1, n = 10⁴, random check-ins | **0.0530** | **0.4299** | 0.6009 | 4.947 |
#
# * **Central Gaussian**: random allocation certifies a smaller ε than Poisson subsampling at
#   the same expected participation — 10 % (k = 1) and 15 % (k = 4) smaller after one epoch,
#   4 % and 3 % after 50. Accounting shuffled ("balls and bins") batches as Poisson would
#   over-state ε in this regime; every allocation point also lies below k full Gaussian rounds
#   per epoch (closed form, asserted above).
# * **Shuffled check-ins, k = 1**: a random check-in window is exactly one shuffle of all n
#   reports, and beats T Poisson check-in rounds at p = 1/T by 7 % (0.0530 against 0.0572
#   after one window, 0.4299 against 0.4614 after 50).
# * **Shuffled check-ins, k = 4**: the random schedule is 5.2× (one window) to 5.3× (50 windows)
#   *worse*: pld bounds a window by one shuffle of the 4-fold product randomizer, which is
#   only 4·ε0-LDP in general, while Poisson check-ins amplify each ε0 report separately. For
#   k > 1 with a generic ε0-LDP randomizer, Poisson check-ins are the better-accounted design.
