"""mptcp_lab.run and load against the command line, resumption, and what a run depends on."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import mptcp_lab
import pandas as pd
import pytest
from conftest import assert_same_results, comparable_summary, task_files


def test_python_gives_what_the_command_line_gives(
    scenario: Path, tmp_path: Path, cli: Path
) -> None:
    by_cli = tmp_path / "cli"
    subprocess.run(
        [cli, "run", scenario, "--seeds", "2", "--out", by_cli], check=True, capture_output=True
    )
    by_python = mptcp_lab.run(scenario, seeds=2, out=tmp_path / "python")
    assert by_python.ran == 8
    assert_same_results(by_cli, by_python.path)
    loaded = mptcp_lab.load(by_cli)
    pd.testing.assert_frame_equal(loaded.summary, by_python.summary)
    pd.testing.assert_frame_equal(loaded.series, by_python.series)


def test_summary_is_tidy_with_parameters_as_columns(scenario: Path, tmp_path: Path) -> None:
    res = mptcp_lab.run(scenario, seeds=2, out=tmp_path / "out")
    frame = res.summary
    assert {"scenario", "backend", "variant", "seed", "rate", "cc", "metric", "value"} <= set(
        frame.columns
    )
    # One row per variant x seed x metric.
    assert not frame.duplicated(["variant", "seed", "metric"]).any()
    goodput = frame[frame.metric == "group.m.goodput_mbps"]
    assert len(goodput) == 4 * 2
    assert sorted(goodput.seed.unique()) == res.seeds
    # The frame's values are the summary's per-seed runs.
    raw = {v["name"]: v["metrics"]["group.m.goodput_mbps"]["runs"] for v in res.raw["variants"]}
    for variant, runs in raw.items():
        assert list(goodput[goodput.variant == variant].sort_values("seed").value) == runs
    mean = goodput.groupby(["rate", "cc"]).value.mean()
    assert mean.loc[("60Mbps", "reno")] > mean.loc[("40Mbps", "reno")]
    series = res.series
    assert {"time_s", "series", "entity", "value", "rate", "cc", "seed"} <= set(series.columns)
    assert (series.series == "goodput_mbps").any()
    assert res.checks["pass"].all()


def test_set_fixes_a_parameter(scenario: Path, tmp_path: Path) -> None:
    res = mptcp_lab.run(scenario, seeds=1, set={"cc": "lia"}, out=tmp_path / "out")
    assert res.ran == 2
    assert set(res.summary.cc) == {"lia"}


def test_a_killed_campaign_resumes_with_only_the_missing_tasks(
    scenario: Path, tmp_path: Path
) -> None:
    whole = mptcp_lab.run(scenario, seeds=3, out=tmp_path / "whole", jobs=2)
    assert whole.ran == 12
    killed = tmp_path / "killed"
    program = textwrap.dedent(
        f"""
        import mptcp_lab
        mptcp_lab.run({str(scenario)!r}, seeds=3, out={str(killed)!r}, jobs=1)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", program], stderr=subprocess.DEVNULL)
    started = time.monotonic()
    while task_files(killed) < 2 and time.monotonic() - started < 60:
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    kept = task_files(killed)
    assert 2 <= kept < 12, f"{kept} tasks done when killed: make the runs longer"
    assert not (killed / "summary.json").exists()

    resumed = mptcp_lab.run(scenario, seeds=3, out=killed, jobs=1)
    assert resumed.ran == 12 - kept
    assert comparable_summary(killed) == comparable_summary(whole.path)
    assert all(p.suffix == ".msgpack" for p in (killed / "tasks").iterdir())
    assert mptcp_lab.run(scenario, seeds=3, out=killed).ran == 0


def test_a_changed_scenario_does_not_reuse_stale_tasks(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    text = scenario.read_text()
    assert mptcp_lab.run(scenario, seeds=2, out=out).ran == 8
    # A check is not something a run depends on: every result is reused.
    scenario.write_text(text.replace("min = 1.0", "min = 2.0"))
    assert mptcp_lab.run(scenario, seeds=2, out=out).ran == 0
    # A link's delay is: every task runs again, and the results are the new ones.
    scenario.write_text(text.replace('delay = "20ms"', 'delay = "60ms"'))
    changed = mptcp_lab.run(scenario, seeds=2, out=out)
    assert changed.ran == 8
    fresh = mptcp_lab.run(scenario, seeds=2, out=tmp_path / "fresh")
    assert comparable_summary(out) == comparable_summary(fresh.path)
    # More seeds: only the new ones run.
    assert mptcp_lab.run(scenario, seeds=3, out=out).ran == 4


def test_the_simulator_runs_with_the_gil_released(scenario: Path, tmp_path: Path) -> None:
    ticks: list[float] = []
    done = threading.Event()
    spans: list[tuple[float, float]] = []

    def simulate() -> None:
        start = time.monotonic()
        mptcp_lab.run(scenario, seeds=2, out=tmp_path / "out", jobs=1)
        spans.append((start, time.monotonic()))
        done.set()

    worker = threading.Thread(target=simulate)
    worker.start()
    while not done.is_set():
        ticks.append(time.monotonic())
        time.sleep(0.001)
    worker.join()
    start, end = spans[0]
    during = [t for t in ticks if start <= t <= end]
    assert end - start > 0.5, "the run was too short to tell"
    # This thread kept running all along: no gap of more than a tenth of the run.
    gaps = [b - a for a, b in zip([start, *during], [*during, end])]
    assert max(gaps) < 0.1 * (end - start), (
        f"longest pause {max(gaps):.3f} s of {end - start:.3f} s"
    )


def test_results_of_another_folder_kind_are_refused(tmp_path: Path, scenario: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(mptcp_lab.RunError, match="foreign"):
        mptcp_lab.run(scenario, out=foreign)
    assert (foreign / "notes.txt").read_text() == "mine"


def test_load_of_a_folder_without_results_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no summary here"):
        mptcp_lab.load(tmp_path)
