"""Sweeps on Dask: a LocalCluster of worker processes gives the local run's results bit for
bit, and `mptcp-lab run --dask` gathers into the same campaign folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mptcp_lab
import pytest
from conftest import assert_same_results, task_files
from dask import distributed


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_a_sweep_on_two_worker_processes_equals_the_local_run(
    scenario: Path, tmp_path: Path, client
) -> None:
    local = mptcp_lab.run(scenario, seeds=2, out=tmp_path / "local")
    swept = mptcp_lab.sweep(scenario, seeds=2, client=client, out=tmp_path / "swept")
    assert swept.ran == 8
    # Both workers took part.
    assert len(client.scheduler_info()["workers"]) == 2
    assert_same_results(local.path, swept.path)
    assert mptcp_lab.sweep(scenario, seeds=2, client=client, out=tmp_path / "swept").ran == 0


def test_different_scenarios_in_a_row_on_one_client(scenario: Path, tmp_path: Path, client) -> None:
    # Each sweep's scenario reaches the workers under a key of its own: the second must not
    # run the first one's text.
    other = tmp_path / "other.toml"
    other.write_text(scenario.read_text().replace('delay = "20ms"', 'delay = "30ms"'))
    first = mptcp_lab.sweep(scenario, seeds=1, client=client, out=tmp_path / "first")
    second = mptcp_lab.sweep(other, seeds=1, client=client, out=tmp_path / "second")
    assert (first.ran, second.ran) == (4, 4)
    assert_same_results(second.path, mptcp_lab.run(other, seeds=1, out=tmp_path / "local").path)


def test_a_sweep_resumes_a_campaign_begun_elsewhere(scenario: Path, tmp_path: Path, client) -> None:
    out = tmp_path / "out"
    mptcp_lab.run(scenario, seeds=1, out=out)
    assert task_files(out) == 4
    swept = mptcp_lab.sweep(scenario, seeds=3, client=client, out=out)
    assert swept.ran == 8
    assert_same_results(out, mptcp_lab.run(scenario, seeds=3, out=tmp_path / "local").path)


def test_a_bad_scenario_fails_on_the_client_before_any_task_is_sent(tmp_path: Path, client) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[scenario]\nname = 3\n")
    with pytest.raises(mptcp_lab.ScenarioError) as caught:
        mptcp_lab.sweep(path, client=client, out=tmp_path / "out")
    assert caught.value.line == 2
    assert not (tmp_path / "out").exists()


def test_the_command_line_runs_on_a_dask_scheduler(
    scenario: Path, tmp_path: Path, client, cli: Path
) -> None:
    local = mptcp_lab.run(scenario, seeds=2, out=tmp_path / "local")
    out = tmp_path / "dask"
    done = subprocess.run(
        [cli, "run", scenario, "--seeds", "2", "--out", out, "--dask", client.scheduler.address],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "MPTCP_LAB_PYTHON": sys.executable},
    )
    assert done.returncode == 0, done.stderr
    assert "0 done before, 8 to run" in done.stderr
    assert f"results in {out}" in done.stdout
    assert_same_results(local.path, out)


def test_the_command_line_says_what_dask_needs(scenario: Path, tmp_path: Path, cli: Path) -> None:
    done = subprocess.run(
        [cli, "run", scenario, "--out", tmp_path / "out", "--dask", "tcp://127.0.0.1:1"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "MPTCP_LAB_PYTHON": "/bin/false"},
    )
    assert done.returncode == 2
    assert "--dask needs the Python package mptcp_lab" in done.stderr
    assert not (tmp_path / "out").exists()
