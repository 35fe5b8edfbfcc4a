"""mptcp-lab from Python: run scenarios on the simulator (in this process, GIL released) or
on the kernel backend, sweep them over a Dask cluster, and read any results folder as pandas
DataFrames.

    >>> import mptcp_lab
    >>> res = mptcp_lab.run("scenarios/e1-khalili.toml", seeds=3, set={"cc": "lia"})
    >>> res.summary.head()          # one row per variant x seed x metric
    >>> res = mptcp_lab.load("results/e1-khalili")
    >>> mptcp_lab.check("scenarios/e3-aggregation.toml")["variants"]  # resolved, not run

A run is a campaign in its results folder, exactly as `mptcp-lab run` makes it: one result
per (variant, seed) task, kept as it finishes; running the same thing again runs only what is
missing.
"""

from mptcp_lab._check import check
from mptcp_lab._core import VERSION, RunError, ScenarioError
from mptcp_lab._results import Results, load
from mptcp_lab._run import run
from mptcp_lab._sweep import sweep

__all__ = ["VERSION", "Results", "RunError", "ScenarioError", "check", "load", "run", "sweep"]
