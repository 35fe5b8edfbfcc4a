"""`python -m mptcp_lab sweep SCENARIO --scheduler tcp://HOST:8786 ...`: a sweep on a Dask
cluster from the shell. `mptcp-lab run SCENARIO --dask ADDRESS` calls this, then builds the
summary itself."""

from __future__ import annotations

import argparse
import sys

from mptcp_lab import RunError, ScenarioError, sweep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mptcp_lab")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("sweep", help="run a scenario's missing tasks on a Dask cluster")
    p.add_argument("scenario")
    p.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster here)")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out")
    p.add_argument("--duration")
    p.add_argument("--other-versions", choices=["refuse", "rerun", "reuse"], default="refuse")
    p.add_argument("--no-summary", action="store_true", help="save the tasks only")
    args = parser.parse_args(argv)

    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set {item}: expected KEY=VALUE")
        overrides[key.strip()] = value.strip()
    client = None
    if args.scheduler:
        from dask.distributed import Client

        client = Client(args.scheduler)
    try:
        sweep(
            args.scenario,
            args.seeds,
            overrides,
            client=client,
            out=args.out,
            duration=args.duration,
            other_versions=args.other_versions,
            summarize=not args.no_summary,
        )
    except (ScenarioError, RunError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
