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
# # Seed 000, Table 2: shuffled check-in with a generic (ε0, δ0)-LDP randomiser
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
# **Our PLD column** is a rigorous upper bound for a *pure* ε0-LDP randomiser (δ0 = 0):
# the round is a Bin(n, γ)-mixture over the number c of participants of
# "sample c of n and shuffle", each dominated by `pld.subsample(pld.clones(c, ε0), c/n)`
# (derivation in the next cell). It is not a bound for δ0 > 0, and the clones pair is
# a worst case over all ε0-LDP randomisers, so a particular randomiser may do better.

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


def checkin_pld(n, gamma, eps0, tail=1e-14, step=1e-3):
    """Upper PLD of one round of shuffled check-in with a pure eps0-LDP randomiser.

    Given the number c ~ Bin(n, gamma) of participants (which the output reveals and which
    has the same law on both datasets), the target is among them with probability c/n and
    the round is "sample c of n, shuffle": dominated by pld.subsample(pld.clones(c, eps0), c/n)
    (seed 004 Lemma 7). Revealing c only helps the adversary, so the c-labelled mixture of
    these pairs dominates the round; its PLD is the Bin(n, gamma) mixture of their upper atoms.
    Counts outside the binomial's [tail, 1 - tail] quantiles are charged to +inf.
    """
    low = max(1, int(stats.binom.ppf(tail, n, gamma)))
    high = int(stats.binom.isf(tail, n, gamma))
    charged = float(
        stats.binom.cdf(low - 1, n, gamma)
        - stats.binom.pmf(0, n, gamma)
        + stats.binom.sf(high, n, gamma)
    )
    log_p = [np.array([stats.binom.logpmf(0, n, gamma)])]  # nobody checks in: loss 0
    log_q = [log_p[0]]
    for c in range(low, high + 1):
        weight = stats.binom.logpmf(c, n, gamma)
        atoms = pld.subsample(
            pld.clones(c, eps0, loss_grid_step=step), c / n, loss_grid_step=step
        ).atoms("upper")[0]
        log_p.append(np.log(atoms.mass) + weight)
        log_q.append(np.log(atoms.mass) + weight - atoms.loss)
        charged += np.exp(weight) * atoms.infinity_mass
    log_p, log_q = np.concatenate(log_p), np.concatenate(log_q)
    rest_q = max(0.0, 1.0 - float(np.exp(log_q).sum()))
    return pld.from_pmfs(
        log_p,
        log_q,
        symmetric=True,
        loss_grid_step=step,
        truncated_mass_p=charged,
        truncated_mass_q=rest_q,
    )


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
    rdp_seconds = time.perf_counter() - start
    start = time.perf_counter()
    composed = checkin_pld(n, gamma, eps0).self_compose(rounds)
    values.append(composed.epsilon_bounds(delta))
    ours[eps0, gamma] = values
    print(
        f"eps0 = {eps0}, gamma = {gamma:g}: RDP {rdp_seconds:.1f} s, "
        f"PLD {time.perf_counter() - start:.1f} s"
    )

# %%
print(
    f"{'eps0':>4} {'gamma':>6} | {'baseline':>26} | {'approach 1':>22} "
    f"| {'approach 2':>22} | {'PLD, delta0 = 0':>18}"
)
print(
    f"{'':>11} | {'paper':>6} {'b=1/n':>7} {'b=1e-5':>7} {'diff':>5} "
    f"| {'paper':>6} {'ours':>7} {'diff':>7}"
    f" | {'paper':>6} {'ours':>7} {'diff':>7} | {'[lower, upper]':>18}"
)
for (eps0, gamma), (base_n, base_5, a1, a2, (low, up)) in ours.items():
    p_base, p_a1, p_a2 = printed[eps0, gamma]
    closest = base_n if abs(base_n - p_base) < abs(base_5 - p_base) else base_5
    print(
        f"{eps0:4g} {gamma:6g} | {p_base:6.3g} {base_n:7.4f} {base_5:7.4f} "
        f"{100 * (closest / p_base - 1):+4.0f}% | "
        f"{p_a1:6.3g} {a1:7.4f} {100 * (a1 / p_a1 - 1):+6.0f}% | "
        f"{p_a2:6.3g} {a2:7.4f} {100 * (a2 / p_a2 - 1):+6.0f}% | "
        f"[{low:.4f}, {up:.4f}]"
    )

# %% [markdown]
# Reading the PLD column. It is a rigorous upper bound for every pure ε0-LDP randomiser
# (the clones pair is a worst case over randomisers), so a particular randomiser, or an
# analysis that uses more about it, may do better; numbers below it are not refuted by it.
# Where it is below the paper: ε0 = 2, γ = 10⁻² (0.089 against the baseline's 0.096).
# Where it is above: γ = 10⁻³ (about 10 participants a round, too few for shuffling to
# amplify, so each round is close to a subsampled ε0-randomised response) and ε0 = 8 (with
# m ≈ γn ≤ 100 and e^ε0 ≈ 3000 shuffling amplifies little; each round costs up to
# log(1 + γ(e^ε0 − 1)) ≈ 3.4 nats with probability ≈ γ). The paper's numbers rest on
# Lemma 1, which is not a valid DP → RDP conversion (`pld.rdp.from_dp`), and on δ0 > 0;
# we flag the cells where they fall below a valid pure-ε0 bound as unverified.

# %%
fig, ax = plt.subplots(figsize=(7, 4))
labels = [f"eps0={e:g}\ngamma={g:g}" for e, g in ours]
x = np.arange(len(labels))
width = 0.14
series = [
    ("baseline, paper", [printed[c][0] for c in ours]),
    ("approach 1, paper", [printed[c][1] for c in ours]),
    ("approach 2, paper", [printed[c][2] for c in ours]),
    ("approach 1, ours", [v[2] for v in ours.values()]),
    ("approach 2, ours", [v[3] for v in ours.values()]),
    ("PLD (delta0 = 0)", [v[4][1] for v in ours.values()]),
]
for i, (name, values) in enumerate(series):
    ax.bar(x + (i - 2.5) * width, values, width, label=name)
ax.set_xticks(x, labels)
ax.set_yscale("log")
ax.set_ylabel(f"eps after T = {rounds} at delta = 1/n")
ax.legend(fontsize=7)
ax.grid(alpha=0.3, axis="y")
fig.tight_layout()
fig.savefig(FIGURES / "seed000_table2.png", dpi=100)
