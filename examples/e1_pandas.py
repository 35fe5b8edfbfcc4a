# %% [markdown]
# # E1 (Khalili's scenario) with pandas
#
# Type1 users upgrade from single-path TCP to MPTCP (LIA, OLIA, Balia); what does it cost the
# type2 users who share a bottleneck with type1's second path? The Balia draft
# (draft-walid-mptcp-congestion-control-04, section 5.1, Table 1) reports the goodputs per
# user type. This notebook runs the scenario on the simulator (or loads results that
# `mptcp-lab run scenarios/e1-khalili.toml --seeds 3` wrote), and puts it in a table and a
# figure with pandas.
#
# Open it as a notebook (Jupyter with jupytext, VS Code's "Run Cell") or run it as a script:
# `.venv/bin/python examples/e1_pandas.py` (from the repository's root).

# %%
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files, not windows: the script also runs where there is no display
import matplotlib.pyplot as plt
import mptcp_lab

out = Path(os.environ.get("E1_RESULTS", "results/e1-khalili"))
figures = Path(os.environ.get("E1_FIGURES", "examples/figures"))

# Runs only the tasks not yet in `out` (none, when the command line made them already).
res = mptcp_lab.run("scenarios/e1-khalili.toml", seeds=3, out=out)
print(res, f"({res.ran} tasks run now)")

# %% [markdown]
# `res.summary` is tidy: one row per variant x seed x metric, the variant's parameters as
# columns (`case` and `type1` by name, and their fields, e.g. `case.n1`).

# %%
goodput = res.summary[
    res.summary.metric.isin(["group.type1.goodput_mbps", "group.type2.goodput_mbps"])
]
goodput = goodput.assign(users=goodput.metric.str.extract(r"group\.(type\d)\.")[0])
print(goodput[["case", "type1", "users", "seed", "value"]].head(8).to_string(index=False))

# %% [markdown]
# Table 1's layout: rows are the cases and user types, columns the type1 algorithm; the
# mean over seeds, in Mbit/s, with the spread over seeds beside it.

# %%
order = ["single-path", "lia", "olia", "balia"]
cases = goodput.sort_values("case.n1").case.unique()
table = goodput.pivot_table(
    index=["case", "users"], columns="type1", values="value", aggfunc="mean"
)
spread = goodput.pivot_table(
    index=["case", "users"], columns="type1", values="value", aggfunc="std"
)
table, spread = table.reindex(cases, level="case"), spread.reindex(cases, level="case")
print(table[order].round(2).to_string())
print("\nstd over seeds:")
print(spread[order].round(3).to_string())

# %% [markdown]
# Ours beside the published figures: `res.checks` has a row per check of the scenario file,
# with the published value and the tolerance the check allows.

# %%
checks = res.checks.assign(users=res.checks.metric.str.extract(r"group\.(type\d)\.")[0])
beside = checks.pivot_table(
    index=["case", "users"], columns="type1", values=["ours", "published"], aggfunc="first"
).reindex(cases, level="case")
print(beside.swaplevel(axis=1)[order].round(2).to_string())

# %% [markdown]
# What upgrading type1 costs type2: type2's goodput with each algorithm relative to
# type1 on single-path TCP.

# %%
type2 = table.xs("type2", level="users")[order]
cost = type2.div(type2["single-path"], axis=0).sub(1).mul(100).round(1)
print("type2's goodput change (%) when type1 upgrades:")
print(cost.to_string())

# %%
figures.mkdir(parents=True, exist_ok=True)
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, case in zip(axes, cases):
    table.xs(case, level="case")[order].T.plot.bar(
        ax=ax, yerr=spread.xs(case, level="case")[order].T, capsize=3, rot=0
    )
    ax.set_title(f"E1, {case}")
    ax.set_xlabel("type1's algorithm")
    ax.set_ylabel("goodput per user type (Mbit/s)")
fig.tight_layout()
fig.savefig(figures / "e1-goodput.png", dpi=120)
print(f"figure in {figures / 'e1-goodput.png'}")

# %% [markdown]
# The goodput of type2 over time, per algorithm, from `res.series` (the n1=15 case, seed
# by seed as thin lines).

# %%
series = res.series
type2_series = series[
    (series.series == "goodput_mbps") & (series.entity == "group.type2") & (series.case == "n1=15")
]
fig, ax = plt.subplots(figsize=(8, 4))
for (algorithm, seed), frame in type2_series.groupby(["type1", "seed"]):
    ax.plot(frame.time_s, frame.value, lw=0.8, label=algorithm if seed == res.seeds[0] else None)
ax.set_xlabel("time (s)")
ax.set_ylabel("type2 goodput (Mbit/s)")
ax.set_title("E1, n1=15: type2's goodput as type1 upgrades")
ax.legend()
fig.tight_layout()
fig.savefig(figures / "e1-type2-series.png", dpi=120)
print(f"figure in {figures / 'e1-type2-series.png'}")
