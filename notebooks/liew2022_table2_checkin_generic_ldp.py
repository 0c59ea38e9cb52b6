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
# # Liew et al. (2022), Table 2: shuffled check-in with a generic (ε0, δ0)-LDP randomiser
#
# n = 10⁴ users, T = 100 rounds, δ = δ1 = 1/n; each user checks in with probability γ. The
# paper compares its first-cut baseline (Thm 1, converted to RDP with Lemma 1) with
# Approach 1 (shuffling conversion) and Approach 2 (subsampled-shuffling conversion),
# `pld.rdp.checkin_baseline`, `checkin_approach1`, `checkin_approach2`, orders 2…256.
#
# **Ambiguous parameters.** "δ0 = 1/δ²" cannot be meant literally (it exceeds 1): we read
# δ0 = δ² = 10⁻⁸. The baseline's cut-off β (P(Bin(n, γ) ≥ l) ≤ β) is not given: β = 1/n,
# and β = 10⁻⁵ where it matches better. With this reading we reproduce Approach 1 at
# (2, 10⁻²) and the ε0 = 8 baselines; the other cells differ, the ε0 = 8 approaches by a
# factor ≈ 5 (table below). The RDP module's docstring explains why Lemma 1 (DP → RDP)
# is not an upper bound, so the Approach 1/2 values are reproductions, not guarantees.
#
# **Our PLD column** is `pld.checkin(n, γ, ε0)` composed T times: a rigorous (lower,
# upper) bracket for every *pure* ε0-LDP randomiser (δ0 = 0). One round is a
# Bin(n, γ)-mixture over the public number k of reports of "sample k of n and shuffle",
# each bounded by Koskela et al. (2023), Lemma 7 on the clones pair of k users (`pld.checkin`
# derives it and tests it against brute-force enumeration of the protocol). It is not a
# bound for δ0 > 0, and the clones pair is a worst case over all ε0-LDP randomisers, so a
# particular randomiser may do better.
#
# **Certified RDP column.** None of the three RDP columns above is a guarantee (Lemma 1).
# For a certified RDP number on the same footing as the PLD column (δ0 = 0) we take, per
# count k, the RDP of the clones pair of k users (`pld.rdp.from_pld`), subsample it at
# rate k/n (Wang, Balle and Kasiviswanathan (2019), Thm 9, `pld.rdp.subsampled`), and mix
# over k ~ Bin(n, γ) by Liew et al. (2022), eq. 5; counts outside the binomial bulk are
# charged at the ε0-DP moment e^((λ−1)ε0). The PLD bracket must lie below it in every cell.

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
from scipy import stats
from scipy.special import logsumexp


def certified_checkin_rdp(n, gamma, eps0, orders, tail=1e-15):
    """Per-round RDP upper bound of shuffled check-in with a pure eps0-LDP randomiser.

    Liew et al. (2022), eq. 5 over the counts k of the binomial bulk, each the clones pair
    of k users subsampled at rate k/n (Wang et al. 2019, Thm 9); the tails at the eps0-DP
    moment.
    """
    low = max(1, int(stats.binom.ppf(tail, n, gamma)))
    high = int(stats.binom.isf(tail, n, gamma))
    terms = [np.full(orders.size, stats.binom.logpmf(0, n, gamma))]
    for k in range(low, high + 1):
        base = pld.clones(k, eps0, variant="stronger")  # the seed's pair (docs/clones-validity.md)
        rdp = pld.rdp.subsampled(
            lambda lams, base=base: pld.rdp.from_pld(base, lams), k / n, orders, eps_infinity=eps0
        )
        terms.append(stats.binom.logpmf(k, n, gamma) + (orders - 1) * rdp)
    outside = stats.binom.cdf(low - 1, n, gamma) - stats.binom.pmf(0, n, gamma)
    outside += stats.binom.sf(high, n, gamma)
    terms.append(np.log(outside * (1 + 1e-10)) + (orders - 1) * eps0)
    return logsumexp(np.array(terms), axis=0) / (orders - 1)


# %%
import time

n, rounds = 10_000, 100
delta = 1.0 / n
delta0 = delta**2
orders = np.arange(2, 65) if QUICK else np.arange(2, 257)
printed = {
    (2.0, 1e-2): (0.096, 0.17, 0.049),
    (2.0, 1e-3): (0.013, 0.012, 0.024),
    (8.0, 1e-2): (9.52, 8.57, 8.18),
    (8.0, 1e-3): (3.86, 1.78, 1.58),
}
cells = list(printed) if not QUICK else [(2.0, 1e-2), (2.0, 1e-3), (8.0, 1e-3)]
ours = {}
for eps0, gamma in cells:
    start = time.perf_counter()
    values = []
    for beta in (delta, 1e-5):
        rdp = pld.rdp.checkin_baseline(n, gamma, eps0, delta0, orders, delta1=delta, beta=beta)
        values.append(pld.rdp.to_epsilon(rounds * rdp, orders, delta)[0])
    for approach in (pld.rdp.checkin_approach1, pld.rdp.checkin_approach2):
        rdp = approach(n, gamma, eps0, delta0, orders, delta1=delta)
        values.append(pld.rdp.to_epsilon(rounds * rdp, orders, delta)[0])
    certified = certified_checkin_rdp(n, gamma, eps0, orders)
    values.append(pld.rdp.to_epsilon(rounds * certified, orders, delta)[0])
    rdp_seconds = time.perf_counter() - start
    start = time.perf_counter()
    composed = pld.checkin(n, gamma, eps0).self_compose(rounds)
    values.append(composed.epsilon_bounds(delta))
    ours[eps0, gamma] = values
    print(
        f"eps0 = {eps0}, gamma = {gamma:g}: RDP {rdp_seconds:.1f} s, "
        f"PLD {time.perf_counter() - start:.1f} s"
    )

# %%
print(
    f"{'eps0':>4} {'gamma':>6} | {'baseline':>26} | {'approach 1':>22} "
    f"| {'approach 2':>22} | {'delta0 = 0: RDP cert.':>21} {'PLD [lower, upper]':>20}"
)
print(
    f"{'':>11} | {'paper':>6} {'b=1/n':>7} {'b=1e-5':>7} {'diff':>5} "
    f"| {'paper':>6} {'ours':>7} {'diff':>7}"
    f" | {'paper':>6} {'ours':>7} {'diff':>7} |"
)
for (eps0, gamma), (base_n, base_5, a1, a2, cert, (low, up)) in ours.items():
    p_base, p_a1, p_a2 = printed[eps0, gamma]
    closest = base_n if abs(base_n - p_base) < abs(base_5 - p_base) else base_5
    print(
        f"{eps0:4g} {gamma:6g} | {p_base:6.3g} {base_n:7.4f} {base_5:7.4f} "
        f"{100 * (closest / p_base - 1):+4.0f}% | "
        f"{p_a1:6.3g} {a1:7.4f} {100 * (a1 / p_a1 - 1):+6.0f}% | "
        f"{p_a2:6.3g} {a2:7.4f} {100 * (a2 / p_a2 - 1):+6.0f}% | "
        f"{cert:21.4f} [{low:.4f}, {up:.4f}]"
    )
    assert up <= cert, "the PLD bound must be below the certified RDP bound"

# %% [markdown]
# Reading the table, cell by cell (full run; ε after T = 100 rounds at δ = 10⁻⁴).
#
# * **PLD against the certified RDP bound** (both δ0 = 0, same count mixture): the PLD
#   bracket is below it in every cell, by 5× (ε0 = 2, γ = 10⁻²: 0.088 against 0.45),
#   10× (ε0 = 2, γ = 10⁻³: 0.040 against 0.40), 2.6× (ε0 = 8, γ = 10⁻²: 20.6 against 54)
#   and 1.5× (ε0 = 8, γ = 10⁻³: 3.90 against 5.74). The bracket is 0.3 % wide or less.
# * **PLD against the paper's columns** (which assume δ0 = 10⁻⁸ and rest on Lemma 1):
#   ε0 = 2, γ = 10⁻²: below the paper's baseline (0.096) and Approach 1 (0.17), above its
#   Approach 2 (0.049); ε0 = 2, γ = 10⁻³: above all three (0.013, 0.012, 0.024) — about 10
#   participants a round are too few for shuffling to amplify, and every round is close
#   to a subsampled ε0-randomised response; ε0 = 8: above all of them (9.5, 8.6, 8.2 and
#   3.9, 1.8, 1.6) — with k ≈ γn ≤ 100 reports and e^ε0 ≈ 3000 shuffling amplifies
#   little, and a round costs up to log(1 + γ(e^ε0 − 1)) ≈ 3.4 nats with probability ≈ γ.
#   Where the paper is lower, its number is not refuted by ours (a specific randomiser
#   may do better than the clones worst case), but it is not a certified bound either:
#   Lemma 1 is not a valid DP → RDP conversion (`pld.rdp.from_dp`), and our own
#   reproductions of Approaches 1 and 2 fall far below the certified value (e.g. 1.7
#   against 54 at ε0 = 8, γ = 10⁻²).

# %%
fig, ax = plt.subplots(figsize=(7, 4))
labels = [f"eps0={e:g}\ngamma={g:g}" for e, g in ours]
x = np.arange(len(labels))
series = [
    ("baseline, paper", [printed[c][0] for c in ours]),
    ("approach 1, paper", [printed[c][1] for c in ours]),
    ("approach 2, paper", [printed[c][2] for c in ours]),
    ("approach 1, ours", [v[2] for v in ours.values()]),
    ("approach 2, ours", [v[3] for v in ours.values()]),
    ("RDP certified (delta0 = 0)", [v[4] for v in ours.values()]),
    ("PLD (delta0 = 0)", [v[5][1] for v in ours.values()]),
]
width = 0.8 / len(series)
for i, (name, values) in enumerate(series):
    ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=name)
ax.set_xticks(x, labels)
ax.set_yscale("log")
ax.set_ylabel(f"eps after T = {rounds} at delta = 1/n")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, axis="y")
fig.tight_layout()
fig.savefig(FIGURES / "liew2022_table2.png", dpi=100)
