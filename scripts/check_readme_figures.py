#!/usr/bin/env python3
"""Checks that every figure in the README's simulator result tables is what its stated
command produces today, to the precision the README prints.

The figures are described in `scripts/readme-figures.toml`: for each table, the command the
README states and how it is run; for each row, for each checked column, one expression per
number in that cell, in order. An expression computes the figure from the run's
`summary.json` (or is a literal, for a published figure or a tolerance the text repeats).
A number in the README passes when the expression's value, formatted with as many decimals
as the README prints, gives the same text.

Every row of a described table must be described (or marked unchecked with a reason), and
every described row must exist, so a new row or a new number cannot slip in unchecked. A row
may also state claims, conditions the text beside the figures asserts ("all within 10 %",
an ordering), each of which must hold.

A table marked `slow` (its command takes tens of minutes, e.g. the full E6 reproduction) is
checked for its shape (stated command, every row described) always and for its figures only
with `--slow`; `--keep DIR --reuse` reads results already in DIR instead of running again.

Left out on purpose: the performance tables and the kernel-backend paragraph. Their figures
are measurements of time or of a real kernel through a real-time emulator, which differ from
run to run; their commands are stated beside them.

Usage: scripts/check_readme_figures.py [--binary PATH] [--keep DIR [--reuse]] [--slow]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SPEC = ROOT / "scripts" / "readme-figures.toml"
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


@dataclass
class TableRow:
    line: int
    cells: dict[str, str]


@dataclass
class Table:
    header: list[str]
    rows: list[TableRow] = field(default_factory=list)


def split_cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def read_tables(text: str) -> list[Table]:
    """Every Markdown table in the text, with the line number of each row."""
    tables: list[Table] = []
    current: Table | None = None
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if not line.startswith("|"):
            current = None
            continue
        if current is None:
            current = Table(header=split_cells(line))
            tables.append(current)
            continue
        cells = split_cells(line)
        if all(set(cell) <= set("-: ") for cell in cells):
            continue  # the separator under the header
        current.rows.append(TableRow(line=index + 1, cells=dict(zip(current.header, cells))))
    return tables


class Results:
    """Runs each scenario once with the table's command and reads its summary."""

    def __init__(self, binary: Path, out: Path, run_args: list[str], reuse: bool):
        self.binary = binary
        self.out = out
        self.run_args = run_args
        self.reuse = reuse
        self.cache: dict[str, dict[str, dict]] = {}

    def variants(self, scenario: str) -> dict[str, dict]:
        if scenario not in self.cache:
            folder = self.out / scenario
            if not (self.reuse and (folder / "summary.json").exists()):
                args = [a.replace("{scenario}", scenario) for a in self.run_args]
                command = [str(self.binary), *args, "--out", str(folder)]
                done = subprocess.run(
                    command, check=False, cwd=ROOT, capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise RuntimeError(f"`{' '.join(command)}` failed:\n{done.stderr}")
            summary = json.loads((folder / "summary.json").read_text())
            self.cache[scenario] = {v["name"]: v["metrics"] for v in summary["variants"]}
        return self.cache[scenario]

    def metric(self, scenario: str, variant: str, name: str) -> dict:
        variants = self.variants(scenario)
        if variant not in variants:
            raise KeyError(f"{scenario} has no variant {variant!r} (it has {sorted(variants)})")
        metrics = variants[variant]
        if name not in metrics:
            raise KeyError(f"{scenario} {variant} has no metric {name!r}")
        return metrics[name]


def helpers(results: Results, scenario: str | None) -> dict:
    """The functions an expression may call. `scenario` is the row's default scenario."""

    def pick(args: tuple) -> tuple[str, str, str]:
        if len(args) == 3:
            return args
        if len(args) == 2 and scenario:
            return (scenario, *args)
        raise TypeError(
            "m(variant, metric) needs the row's scenario; else m(scenario, variant, metric)"
        )

    def m(*args: str) -> float:
        """Mean over seeds of a metric."""
        return results.metric(*pick(args))["mean"]

    def std(*args: str) -> float:
        """Standard deviation over seeds of a metric."""
        return results.metric(*pick(args))["std"]

    def runs(*args: str) -> list[float]:
        """The metric's value in each seed's run."""
        return results.metric(*pick(args))["runs"]

    def has(*args: str) -> bool:
        """Whether the metric is in the runs (a convergence time is not where the window
        did not converge)."""
        try:
            results.metric(*pick(args))
        except KeyError:
            return False
        return True

    def pct_above(value: float, reference: float) -> float:
        return (value / reference - 1.0) * 100.0

    def mathis_mbps(mss_bytes: float, rtt_s: float, loss: float) -> float:
        """Mathis et al. 1997: throughput = MSS / RTT * sqrt(3/2) / sqrt(p)."""
        return mss_bytes * 8 / rtt_s * math.sqrt(1.5) / math.sqrt(loss) / 1e6

    return {
        "m": m,
        "runs": runs,
        "std": std,
        "has": has,
        "pct_above": pct_above,
        "mathis_mbps": mathis_mbps,
        "min": min,
        "max": max,
        "abs": abs,
        "all": all,
        "sum": sum,
        "len": len,
        "zip": zip,
        "float": float,
    }


def decimals(token: str) -> int:
    return len(token.split(".")[1]) if "." in token else 0


def evaluate(expression: str, env: dict):
    """An expression from the repository's own description file (never from a user)."""
    # The names go in as globals: a comprehension inside the expression sees only those.
    return eval(expression, {**env, "__builtins__": {}})


def check_cell(row: TableRow, column: str, expressions: list[str], env: dict) -> list[str]:
    """Problems with one cell: a count mismatch, or figures that differ from the run."""
    where = f"README.md:{row.line}: column {column!r}"
    text = row.cells.get(column)
    if text is None:
        return [f"{where}: the table has no such column"]
    tokens = NUMBER.findall(text)
    if len(tokens) != len(expressions):
        count = f"{len(tokens)} numbers ({', '.join(tokens)})"
        return [f"{where}: the README has {count}, the description {len(expressions)}"]
    problems = []
    for position, (token, expression) in enumerate(zip(tokens, expressions), start=1):
        try:
            value = float(evaluate(expression, env))
        except Exception as error:  # noqa: BLE001 (every failure is reported, all at once)
            problems.append(f"{where}, number {position} ({token}): `{expression}`: {error}")
            continue
        produced = f"{value:.{decimals(token)}f}"
        if float(produced) == 0:
            produced = produced.lstrip("-")  # "-0.00" prints as "0.00"
        if produced != token:
            problems.append(
                f"{where}, number {position}: the README says {token}, the run gives "
                f"{produced} ({value:.6g}, from `{expression}`)"
            )
    return problems


@dataclass
class Options:
    binary: Path
    out: Path
    reuse: bool
    slow: bool


def check(spec: dict, readme_text: str, options: Options) -> tuple[int, list[str]]:
    tables = read_tables(readme_text)
    problems: list[str] = []
    checked = 0
    for table_spec in spec["table"]:
        if table_spec["stated"] not in readme_text:
            problems.append(
                f"README.md: the stated command `{table_spec['stated']}` is not in the README"
            )
        header = table_spec["header"]
        matches = [t for t in tables if t.header == header]
        if len(matches) != 1:
            problems.append(f"README.md: {len(matches)} tables with the header {header} (want 1)")
            continue
        table = matches[0]
        folder = options.out / table_spec["name"]
        results = Results(options.binary, folder, table_spec["run"], options.reuse)
        figures = options.slow or "slow" not in table_spec
        described = {row_spec["row"]: row_spec for row_spec in table_spec["row"]}
        first = header[0]
        seen = set()
        for row in table.rows:
            key = next((k for k in described if row.cells[first].startswith(k)), None)
            if key is None:
                problems.append(
                    f"README.md:{row.line}: row {row.cells[first]!r} is not described in {SPEC.name}"
                )
                continue
            if key in seen:
                problems.append(f"README.md:{row.line}: a second row starting {key!r}")
                continue
            seen.add(key)
            row_spec = described[key]
            if "unchecked" in row_spec or not figures:
                continue
            env = helpers(results, row_spec.get("scenario"))
            where = f"README.md:{row.line}"
            try:
                for name, expression in row_spec.get("let", {}).items():
                    env[name] = evaluate(expression, env)
            except Exception as error:  # noqa: BLE001 (every failure is reported, all at once)
                problems.append(f"{where}: `{name} = {expression}`: {error}")
                continue
            for claim in row_spec.get("claims", []):
                try:
                    holds = evaluate(claim, env)
                except Exception as error:  # noqa: BLE001
                    holds, claim = False, f"{claim} ({error})"
                if not holds:
                    problems.append(f"{where}: the text's claim `{claim}` does not hold")
            for column, expressions in row_spec["columns"].items():
                checked += len(expressions)
                problems += check_cell(row, column, expressions, env)
        for key in described.keys() - seen:
            problems.append(f"{SPEC.name}: row {key!r} is not in the README's table {header}")
    return checked, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=Path, default=ROOT / "target" / "release" / "mptcp-lab")
    parser.add_argument("--keep", type=Path, help="write the runs' results here (kept)")
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep: read results already there"
    )
    parser.add_argument(
        "--slow", action="store_true", help="also the figures of tables marked slow"
    )
    args = parser.parse_args()
    if args.reuse and not args.keep:
        parser.error("--reuse reads the results of --keep DIR: give it")
    if not args.binary.exists():
        print(
            f"check-readme-figures: no binary at {args.binary} (cargo build --release)",
            file=sys.stderr,
        )
        return 2
    spec = tomllib.loads(SPEC.read_text())
    readme_text = README.read_text()
    with tempfile.TemporaryDirectory(prefix="readme-figures-") as scratch:
        options = Options(args.binary, args.keep or Path(scratch), args.reuse, args.slow)
        checked, problems = check(spec, readme_text, options)
    skipped = [t["name"] for t in spec["table"] if "slow" in t and not args.slow]
    for problem in problems:
        print(problem)
    verdict = "all match" if not problems else f"{len(problems)} problems"
    also = f" (figures of slow tables not checked: {', '.join(skipped)}; --slow)" if skipped else ""
    print(f"readme figures: {checked} checked, {verdict}{also}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
