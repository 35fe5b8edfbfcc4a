"""`mptcp_lab.sweep`: a scenario's tasks spread over the workers of a Dask cluster and
gathered into one campaign folder on the client, the same folder `run` makes."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from mptcp_lab import _core
from mptcp_lab._results import PathLike, Results
from mptcp_lab._run import campaign


def run_task(spec: _core.TaskSpec, index: int, key: str) -> bytes:
    """On a worker: runs one task and returns its result for the client to save. A module
    function, so Dask sends it by name: every worker needs this package, of the same build."""
    return _core.run_task(spec, index, key)


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        end = "\n" if done == total else ""
        print(f"\rmptcp-lab: {done} of {total} tasks done", end=end, file=sys.stderr, flush=True)


def sweep(
    scenario: PathLike,
    seeds: int = 1,
    set: Mapping[str, Any] | None = None,
    *,
    client: Any = None,
    out: PathLike | None = None,
    duration: str | None = None,
    other_versions: str = "refuse",
    summarize: bool = True,
) -> Results | None:
    """Like `run`, but each task (variant x seed) runs on a worker of the Dask `client`
    (a `dask.distributed.Client`: `Client("tcp://scheduler:8786")`, or one of a
    dask-jobqueue `SLURMCluster`); with no client, on a `LocalCluster` of one worker process
    per core, closed afterwards. Results are saved on the client, into `out`, as each task
    finishes: a sweep that is interrupted keeps them and, run again, runs only what is
    missing. Workers need no shared file system (they get the scenario's text), but each must
    have this package of the same build (`mptcp_lab.VERSION`).

    The simulator only: kernel runs are real time and use the host's namespaces.
    With `summarize=False` only the tasks are saved and None is returned (`mptcp-lab run
    --gather`, or `run` again, builds the summary).
    """
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        raise ImportError("sweep needs dask.distributed: pip install 'mptcp-lab[dask]'") from e

    camp = campaign(scenario, seeds, set, "sim", duration, out)
    camp.check(1)
    todo = camp.missing(other_versions)
    own_cluster = None
    if todo and client is None:
        own_cluster = LocalCluster(
            n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True
        )
        client = Client(own_cluster)
    try:
        failures = _run_on(client, camp, todo, as_completed) if todo else []
    finally:
        if own_cluster is not None:
            client.close()
            own_cluster.close()
    if failures:
        index, error = failures[0]
        raise _core.RunError(
            f"{len(failures)} of {len(todo)} tasks failed (the others are saved in {camp.out}); "
            f"task {index}: {error}"
        ) from error
    if not summarize:
        return None
    camp.summarize(other_versions)
    return Results(camp.out, ran=len(todo))


def _run_on(
    client: Any, camp: _core.Campaign, todo: list[int], as_completed: Any
) -> list[tuple[int, BaseException]]:
    """Submits the tasks `todo`, saves each result as it arrives; returns the failures (a
    failed task does not stop the others)."""
    spec = camp.spec()
    # The scenario once to every worker, not with every task: one object (a dict given to
    # scatter would be scattered value by value, under its keys' names, which every sweep on
    # the client would share) under a key of its own (hash=False).
    [spec_future] = client.scatter([spec], broadcast=True, hash=False)
    keys = {index: key for index, key, _variant, _seed in camp.tasks()}
    futures = {}
    for index in todo:
        future = client.submit(
            run_task, spec_future, index, keys[index], key=f"mptcp-lab-{keys[index]}", pure=False
        )
        futures[future] = index
    failures = []
    for done, future in enumerate(as_completed(futures), start=1):
        try:
            camp.save(future.result())
        # Every failure is reported at the end; the other tasks go on.
        except Exception as error:  # noqa: BLE001
            failures.append((futures[future], error))
        _progress(done, len(futures))
    return failures
