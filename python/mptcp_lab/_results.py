"""Reading a results folder (what `mptcp-lab run` or `mptcp_lab.run` wrote) as tidy pandas
DataFrames: one row per observation, parameters as columns, as pandas and seaborn expect."""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Union

import pandas as pd

PathLike = Union[str, "os.PathLike[str]"]

# Columns every frame has; a scenario parameter of the same name is prefixed with "param.".
_FIXED = {"scenario", "backend", "variant", "seed", "metric", "value", "time_s", "series", "entity"}


def _cell(value: Any) -> Any:
    """A value every cell can hold and groupby can hash: lists and tables as JSON text."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def _param_columns(params: dict[str, Any]) -> dict[str, Any]:
    """A variant's parameters as columns. A table-valued parameter (`type1 = {name = "lia",
    protocol = "mptcp", cc = "lia"}`) gives a column of its name (`type1`: "lia", as the
    variant is named) and one per field (`type1.protocol`, `type1.cc`)."""
    columns = {}
    for name, value in params.items():
        column = f"param.{name}" if name in _FIXED else name
        if isinstance(value, dict):
            columns[column] = _cell(value.get("name", value))
            for field, inner in value.items():
                if field != "name":
                    columns[f"{column}.{field}"] = _cell(inner)
        else:
            columns[column] = _cell(value)
    return columns


class Results:
    """A results folder: `summary` (metrics per variant x seed), `series` (time series),
    `checks` (against the published figures) and `orders` (orderings of the scenario), each a
    DataFrame built on first use; `raw` is summary.json as a dict."""

    def __init__(self, path: PathLike, *, ran: int | None = None) -> None:
        self.path = Path(path)
        summary = self.path / "summary.json"
        try:
            with open(summary, encoding="utf-8") as f:
                self.raw: dict[str, Any] = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{summary}: no summary here; is {self.path} a results folder of mptcp-lab "
                "(or a campaign whose tasks are not all done: `mptcp-lab run --gather`)?"
            ) from None
        #: How many tasks the call that made this ran (None for `load`).
        self.ran = ran

    def __repr__(self) -> str:
        return (
            f"<mptcp_lab.Results {self.scenario!r} ({self.backend}) in {str(self.path)!r}: "
            f"{len(self.raw['variants'])} variant(s) x {len(self.seeds)} seed(s)>"
        )

    @property
    def scenario(self) -> str:
        return self.raw["scenario"]

    @property
    def backend(self) -> str:
        return self.raw["backend"]

    @property
    def seeds(self) -> list[int]:
        return list(self.raw["seeds"])

    def _variant_columns(self, variant: dict[str, Any]) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "backend": self.backend,
            "variant": variant["name"],
            **_param_columns(variant["params"]),
        }

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per variant x seed x metric: scenario, backend, variant, the variant's
        parameters, seed, metric, value (NaN where a run has no value)."""
        rows = []
        for variant in self.raw["variants"]:
            columns = self._variant_columns(variant)
            for metric, stats in variant["metrics"].items():
                seeds = stats.get("seeds") or self.seeds
                for seed, value in zip(seeds, stats["runs"]):
                    rows.append({**columns, "seed": seed, "metric": metric, "value": value})
        frame = pd.DataFrame(rows)
        if not frame.empty:
            frame["value"] = frame["value"].astype("float64")
        return frame

    @cached_property
    def means(self) -> pd.DataFrame:
        """One row per variant x metric: mean, std (sample, over seeds), min, max, runs."""
        rows = []
        for variant in self.raw["variants"]:
            columns = self._variant_columns(variant)
            for metric, stats in variant["metrics"].items():
                rows.append(
                    {
                        **columns,
                        "metric": metric,
                        "mean": stats["mean"],
                        "std": stats["std"],
                        "min": stats["min"],
                        "max": stats["max"],
                        "runs": len(stats["runs"]),
                    }
                )
        return pd.DataFrame(rows)

    @cached_property
    def series(self) -> pd.DataFrame:
        """One row per variant x seed x sample: scenario, backend, variant, parameters, seed,
        time_s, series (goodput_mbps, cwnd_pkts, ...), entity (group.x, link.y, ...), value."""
        frames = []
        for variant in self.raw["variants"]:
            columns = self._variant_columns(variant)
            for seed in self.seeds:
                csv = self.path / variant["dir"] / f"series-seed{seed}.csv"
                if not csv.exists():
                    continue
                frame = pd.read_csv(csv, dtype={"series": "string", "entity": "string"})
                for name, value in columns.items():
                    frame[name] = value
                frame["seed"] = seed
                frames.append(frame)
        if not frames:
            return pd.DataFrame(
                columns=[
                    "scenario",
                    "backend",
                    "variant",
                    "seed",
                    "time_s",
                    "series",
                    "entity",
                    "value",
                ]
            )
        frame = pd.concat(frames, ignore_index=True)
        leading = [c for c in frame.columns if c not in ("time_s", "series", "entity", "value")]
        return frame[leading + ["time_s", "series", "entity", "value"]]

    @cached_property
    def checks(self) -> pd.DataFrame:
        """One row per variant x check: metric, ours, published, tolerance, min, max, pass."""
        rows = []
        for variant in self.raw["variants"]:
            columns = self._variant_columns(variant)
            for check in variant["checks"]:
                rows.append({**columns, **check})
        return pd.DataFrame(rows)

    @cached_property
    def orders(self) -> pd.DataFrame:
        """One row per ordering of the scenario: statement, metric, context, pass, and the
        compared values as a dict."""
        rows = [{**order, "values": dict(order["values"])} for order in self.raw.get("orders", [])]
        return pd.DataFrame(rows)

    def report(self) -> Path:
        """Writes report.md with its plots, and report.html beside it, into the folder; returns
        the path of report.md."""
        from mptcp_lab._core import write_report

        return Path(write_report(self.path))


def load(path: PathLike) -> Results:
    """The results folder at `path`, as `mptcp-lab run` or `mptcp_lab.run` wrote it."""
    return Results(path)
