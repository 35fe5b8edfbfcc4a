"""The kernel backend from Python: real TCP in network namespaces, run in the interpreter's
process, twice in a row (the second run must be able to install its clean-up on Ctrl-C
again), leaving nothing behind. Root and a kernel with MPTCP; with MPTCP_LAB_REQUIRE_KERNEL=1
(as CI sets) a machine that cannot run it fails the test instead of skipping it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import mptcp_lab
import pytest
from conftest import kernel_missing, require, two_host_scenario

SCENARIO = two_host_scenario(
    "kernel-twice",
    "6s",
    link="""
rate = "10Mbps"
delay = "5ms"
""",
)


@pytest.fixture
def kernel() -> None:
    require(kernel_missing())


def namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


def test_two_kernel_runs_in_one_process_leave_nothing(kernel, tmp_path: Path) -> None:
    path = tmp_path / "twice.toml"
    path.write_text(SCENARIO)
    before = namespaces()
    for attempt in ("first", "second"):
        res = mptcp_lab.run(path, backend="kernel", out=tmp_path / attempt)
        assert res.backend == "kernel"
        assert res.ran == 1
        # Goodput counts what the application read from the warm-up on, which may include
        # data TCP had received before it (a reader that fell behind in the first second
        # read about 140 KB late in a run of 3 s, 10.2 Mbit/s over 2 s): over 5 s that
        # backlog stays below the link's 0.35 Mbit/s of headers, so the bound is the link.
        goodput = res.summary.query("metric == 'group.bulk.goodput_mbps'").value.iloc[0]
        assert 5.0 < goodput <= 10.0, f"{attempt}: {goodput} Mbit/s through a 10 Mbit/s link"
    assert namespaces() == before
