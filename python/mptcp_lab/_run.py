"""`mptcp_lab.run`: one scenario's campaign, run here, as `mptcp-lab run` runs it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mptcp_lab import _core
from mptcp_lab._results import PathLike, Results


def set_arguments(values: Mapping[str, Any] | None) -> list[str]:
    """`{"cc": "lia", "n": 10}` as the command line's `--set cc=lia --set n=10`."""
    arguments = []
    for key, value in (values or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        arguments.append(f"{key}={value}")
    return arguments


def campaign(
    scenario: PathLike,
    seeds: int,
    set: Mapping[str, Any] | None,
    backend: str,
    duration: str | None,
    out: PathLike | None,
) -> _core.Campaign:
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(
            f"seeds={seeds!r}: expected a whole number of runs per variant, at least 1"
        )
    return _core.Campaign(
        os.fspath(scenario),
        seeds,
        set_arguments(set),
        backend,
        duration,
        None if out is None else os.fspath(out),
    )


def run(
    scenario: PathLike,
    seeds: int = 1,
    set: Mapping[str, Any] | None = None,
    *,
    backend: str = "sim",
    out: PathLike | None = None,
    jobs: int | None = None,
    duration: str | None = None,
    other_versions: str = "refuse",
    report: bool = False,
) -> Results:
    """Runs every variant of `scenario` with `seeds` seeds (base, base + 1, ...) into the
    results folder `out` (default results/<scenario name>, or results/<scenario name>-kernel
    with backend="kernel", as the command line), then reads it back.

    Only tasks (variant x seed) without a result in `out` run; `Results.ran` says how many.
    `set` fixes parameters as `--set` does; `jobs` runs at once (default: one per core; the
    kernel backend runs one at a time); `duration` shortens every run ("60s");
    `other_versions` ("refuse", "rerun" or "reuse") decides about results in `out` made by
    another build. A scenario that does not load raises `ScenarioError` (file, line, column,
    field); a failed run raises `RunError`, keeping the tasks that finished.
    """
    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: expected at least 1")
    camp = campaign(scenario, seeds, set, backend, duration, out)
    camp.check(jobs)
    todo = camp.missing(other_versions)
    camp.run(todo, jobs)
    camp.summarize(other_versions)
    results = Results(camp.out, ran=len(todo))
    if report:
        results.report()
    return results
