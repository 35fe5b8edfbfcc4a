"""Scaling of campaigns through Dask, against local execution, measured side by side.

    .venv/bin/python scripts/bench_dask.py [--rounds 3] [--seeds 3] [--tiny-tasks 200]

1. The E-suite (the nine E1 to E5 and RFC 6356 scenario files, `--seeds` each, the summaries
   built): wall time with `mptcp_lab.run` at 1 and 2 jobs, and with `mptcp_lab.sweep` on a
   Dask LocalCluster of 1 and 2 worker processes (cluster start-up timed apart).
2. The cost of going through Dask per task: `--tiny-tasks` runs of a scenario so short that
   the simulation is almost nothing (1 s of one TCP flow at 1 Mbit/s), by local execution and
   by Dask, both with 2 workers; (Dask - local) / tasks.

Modes alternate within each round, every run writes into a fresh folder; median and minimum
over the rounds are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

import mptcp_lab
from dask.distributed import Client, LocalCluster

REPO = Path(__file__).resolve().parents[1]

TINY = """\
[scenario]
name = "tiny"
duration = "1s"
[measure]
warmup = "0s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
rate = "1Mbps"
delay = "5ms"
[[flow]]
name = "f"
from = "a"
to = "b"
"""


def suite() -> list[Path]:
    files = sorted(REPO.glob("scenarios/e[1-5]*.toml")) + sorted(
        REPO.glob("scenarios/rfc6356*.toml")
    )
    assert len(files) == 9, files
    return files


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tiny-tasks", type=int, default=200)
    args = parser.parse_args()
    logging.getLogger("distributed").setLevel(logging.WARNING)

    work = Path(tempfile.mkdtemp(prefix="mptcp-lab-bench-dask-"))
    tiny = work / "tiny.toml"
    tiny.write_text(TINY)
    files = suite()
    counter = iter(range(1_000_000))

    def fresh() -> Path:
        return work / f"out{next(counter)}"

    tasks: dict[str, int] = {}

    def count(name: str, results: list[mptcp_lab.Results]) -> None:
        tasks[name] = sum(r.ran or 0 for r in results)

    def local(name: str, jobs: int, scenario_files: list[Path], seeds: int):
        return lambda: count(
            name, [mptcp_lab.run(f, seeds=seeds, out=fresh(), jobs=jobs) for f in scenario_files]
        )

    def on_dask(name: str, client: Client, scenario_files: list[Path], seeds: int):
        return lambda: count(
            name,
            [mptcp_lab.sweep(f, seeds=seeds, client=client, out=fresh()) for f in scenario_files],
        )

    startup: dict[int, list[float]] = {1: [], 2: []}
    times: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        clusters = {}
        for workers in (1, 2):
            start = time.perf_counter()
            cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = Client(cluster)
            client.wait_for_workers(workers)
            startup[workers].append(time.perf_counter() - start)
            clusters[workers] = (cluster, client)
        specs = {
            "E-suite, run, 1 job": (local, (1, files, args.seeds)),
            "E-suite, sweep, 1 Dask worker": (on_dask, (clusters[1][1], files, args.seeds)),
            "E-suite, run, 2 jobs": (local, (2, files, args.seeds)),
            "E-suite, sweep, 2 Dask workers": (on_dask, (clusters[2][1], files, args.seeds)),
            "tiny tasks, run, 2 jobs": (local, (2, [tiny], args.tiny_tasks)),
            "tiny tasks, sweep, 2 Dask workers": (
                on_dask,
                (clusters[2][1], [tiny], args.tiny_tasks),
            ),
        }
        modes = {name: make(name, *arguments) for name, (make, arguments) in specs.items()}
        names = list(modes)
        if round_ % 2:
            names.reverse()
        for name in names:
            times.setdefault(name, []).append(timed(modes[name]))
            print(f"round {round_ + 1}: {name}: {times[name][-1]:.2f} s", flush=True)
        for cluster, client in clusters.values():
            client.close()
            cluster.close()

    print(f"\n{os.cpu_count()} cores, {args.rounds} rounds, mptcp-lab {mptcp_lab.VERSION}\n")
    print("| what | tasks | wall s, median (min) |")
    print("| --- | --- | --- |")
    for name, ts in times.items():
        print(f"| {name} | {tasks[name]} | {statistics.median(ts):.2f} ({min(ts):.2f}) |")
    for workers, ts in startup.items():
        print(
            f"| LocalCluster start, {workers} worker(s) | - | {statistics.median(ts):.2f} ({min(ts):.2f}) |"
        )
    local_tiny = statistics.median(times["tiny tasks, run, 2 jobs"])
    dask_tiny = statistics.median(times["tiny tasks, sweep, 2 Dask workers"])
    print(
        f"\nDask's cost per task: {(dask_tiny - local_tiny) / args.tiny_tasks * 1e3:.2f} ms "
        f"(({dask_tiny:.2f} - {local_tiny:.2f}) s / {args.tiny_tasks} tasks, medians)"
    )
    for jobs in (1, 2):
        run_s = statistics.median(times[f"E-suite, run, {jobs} job{'s' if jobs > 1 else ''}"])
        word = "worker" if jobs == 1 else "workers"
        sweep_s = statistics.median(times[f"E-suite, sweep, {jobs} Dask {word}"])
        print(f"E-suite on {jobs} Dask {word}: {sweep_s / run_s:.2f} x the local run's time")


if __name__ == "__main__":
    main()
