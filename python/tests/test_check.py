"""`mptcp_lab.check`: a scenario resolved without running it, as `check --json` gives it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import mptcp_lab
import pytest


def test_every_variant_is_resolved(scenario: Path) -> None:
    resolved = mptcp_lab.check(scenario)
    assert resolved["ok"] is True and resolved["file"] == str(scenario)
    names = [v["name"] for v in resolved["variants"]]
    assert names == [
        "cc=reno,rate=40Mbps",
        "cc=reno,rate=60Mbps",
        "cc=lia,rate=40Mbps",
        "cc=lia,rate=60Mbps",
    ]
    first = resolved["variants"][0]
    assert first["params"] == {"rate": "40Mbps", "cc": "reno"}
    p1, p2 = first["links"]
    assert (p1["ab"]["rate_bps"], p1["ab"]["delay_s"]) == (40_000_000, 0.01)
    assert (p2["ba"]["rate_bps"], p2["ba"]["delay_s"]) == (40_000_000, 0.02)
    assert p1["ab"]["entity"] == "link.p1.ab"
    (flow,) = first["flows"]
    assert (flow["count"], flow["cc"], flow["protocol"]) == (4, "reno", "mptcp")
    assert [p["links"] for p in flow["paths"]] == [["link.p1.ab"], ["link.p2.ab"]]
    assert [p["nodes"] for p in flow["paths"]] == [["a", "b"], ["a", "b"]]
    # Nothing was run or written beside the scenario.
    assert sorted(p.name for p in scenario.parent.iterdir()) == [scenario.name]


def test_set_picks_values_as_run_takes_them(scenario: Path) -> None:
    resolved = mptcp_lab.check(scenario, set={"rate": "55Mbps", "cc": "olia"})
    (variant,) = resolved["variants"]
    assert variant["links"][1]["ab"]["rate_bps"] == 55_000_000
    assert variant["flows"][0]["cc"] == "olia"


def test_the_command_line_gives_the_same(scenario: Path, cli: Path) -> None:
    out = subprocess.run(
        [cli, "check", "--json", "--set", "cc=lia", scenario],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(out.stdout)["files"][0] == mptcp_lab.check(scenario, set={"cc": "lia"})


def test_a_bad_scenario_raises_the_located_error(scenario: Path) -> None:
    scenario.write_text(scenario.read_text().replace('delay = "10ms"', 'delay = "10 parsecs"'))
    with pytest.raises(mptcp_lab.ScenarioError) as caught:
        mptcp_lab.check(scenario)
    assert caught.value.field == "link[0].delay"
    assert caught.value.line > 0
    with pytest.raises(mptcp_lab.ScenarioError):
        mptcp_lab.check(scenario.parent / "missing.toml")
