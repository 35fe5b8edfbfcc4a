"""Shared fixtures: a small scenario with four variants and the command-line binary."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]

# Four variants (two rates x two algorithms) of two MPTCP paths, each run a few tenths of a
# second: long enough that a kill lands between tasks (the command line's campaign tests run
# the same file).
SCENARIO = (REPO / "crates" / "cli" / "tests" / "data" / "campaign.toml").read_text()


def two_host_scenario(name: str, duration: str, link: str, flow: str = "") -> str:
    """A scenario of one bulk flow from host a to host b over one link: `link` and `flow`
    are the lines the link and the flow add (rate, delay, queue; cc)."""
    return f"""\
[scenario]
name = "{name}"
duration = "{duration}"
[measure]
warmup = "1s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
a = "a"
b = "b"
{link.strip()}
[[flow]]
name = "bulk"
from = "a"
to = "b"
{flow.strip()}
"""


def require(why: str | None) -> None:
    """Lets a test that needs this machine's kernel (or a tool) run, or skips it saying why
    it cannot; with MPTCP_LAB_REQUIRE_KERNEL=1 (as CI sets) fails it instead."""
    if why is None:
        return
    if os.environ.get("MPTCP_LAB_REQUIRE_KERNEL") == "1":
        pytest.fail(f"MPTCP_LAB_REQUIRE_KERNEL=1 but {why}")
    pytest.skip(why)


def kernel_missing() -> str | None:
    """Why the kernel backend cannot run here (root and MPTCP), or None."""
    if os.geteuid() != 0:
        return "not root"
    try:
        if Path("/proc/sys/net/mptcp/enabled").read_text().strip() != "1":
            return "MPTCP is disabled (net.mptcp.enabled)"
    except FileNotFoundError:
        return "this kernel has no MPTCP"
    return None


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "camp.toml"
    path.write_text(SCENARIO)
    return path


@pytest.fixture(scope="session")
def cli() -> Path:
    """The mptcp-lab binary of this build (`MPTCP_LAB_BIN`, else target/release)."""
    path = Path(os.environ.get("MPTCP_LAB_BIN", REPO / "target" / "release" / "mptcp-lab"))
    if not path.exists():
        pytest.fail(
            f"{path}: no mptcp-lab binary; build it (cargo build --release) or set MPTCP_LAB_BIN"
        )
    return path


def comparable_summary(folder: Path) -> dict:
    """summary.json without the runs' wall-clock times and the provenance (the command that
    wrote it), the things that differ between two runs of the same tasks."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("wall_s", "provenance")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads((folder / "summary.json").read_text()))


def series_files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.glob("*/series-seed*.csv"))
    }


def assert_same_results(a: Path, b: Path) -> None:
    assert comparable_summary(a) == comparable_summary(b)
    files = series_files(a)
    assert files, f"no series in {a}"
    assert files == series_files(b)


def task_files(folder: Path) -> int:
    tasks = folder / "tasks"
    return len(list(tasks.glob("*.msgpack"))) if tasks.exists() else 0


def load_script(name: str) -> ModuleType:
    """One of scripts/ (no .py suffix) as a module, to test its functions."""
    path = REPO / "scripts" / name
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
