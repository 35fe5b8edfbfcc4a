"""The E1 example under examples/ runs as a script and draws its figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_the_e1_example_runs_and_draws(tmp_path: Path) -> None:
    env = {**os.environ, "E1_RESULTS": str(tmp_path / "e1"), "E1_FIGURES": str(tmp_path / "fig")}
    done = subprocess.run(
        [sys.executable, "examples/e1_pandas.py"],
        cwd=REPO,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # Table 1's layout: both cases, both user types, every algorithm, ours beside published.
    assert "ours published" in done.stdout
    for figure in ["e1-goodput.png", "e1-type2-series.png"]:
        assert (tmp_path / "fig" / figure).stat().st_size > 10_000
