"""Bad scenarios and arguments raise errors that say where and what."""

from __future__ import annotations

from pathlib import Path

import mptcp_lab
import pytest


def test_a_bad_scenario_raises_the_located_error(scenario: Path) -> None:
    text = scenario.read_text()
    scenario.write_text(
        text.replace('rate = "${rate}"\ndelay = "20ms"', 'rate = "fast"\ndelay = "20ms"')
    )
    with pytest.raises(mptcp_lab.ScenarioError) as caught:
        mptcp_lab.run(scenario)
    error = caught.value
    assert error.file == str(scenario)
    lines = scenario.read_text().splitlines()
    assert lines[error.line - 1].strip() == 'rate = "fast"'
    assert error.column == lines[error.line - 1].index('"fast"') + 1
    assert error.field == "link[1].rate"
    assert "fast" in error.message
    assert f"{scenario}:{error.line}:{error.column}: link[1].rate" in str(error)
    assert error.errors[0] == (error.file, error.line, error.column, error.field, error.message)
    assert isinstance(error, ValueError)


def test_every_problem_is_listed(scenario: Path) -> None:
    text = scenario.read_text().replace('from = "a"', 'from = "x"').replace('to = "b"', 'to = "y"')
    scenario.write_text(text)
    with pytest.raises(mptcp_lab.ScenarioError) as caught:
        mptcp_lab.run(scenario)
    assert [e[3] for e in caught.value.errors] == ["flow[0].from", "flow[0].to"]
    assert "did you mean `a`" in caught.value.errors[1][4]


def test_a_syntax_error_has_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('[scenario]\nname = "x"\nduration = \n')
    with pytest.raises(mptcp_lab.ScenarioError) as caught:
        mptcp_lab.run(path)
    assert (caught.value.file, caught.value.line) == (str(path), 3)


def test_a_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(mptcp_lab.ScenarioError, match="cannot read the file"):
        mptcp_lab.run(tmp_path / "nope.toml")


def test_an_unknown_parameter_in_set_gets_did_you_mean(scenario: Path, tmp_path: Path) -> None:
    with pytest.raises(mptcp_lab.ScenarioError, match="cc"):
        mptcp_lab.run(scenario, set={"ccc": "lia"}, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"seeds": 0}, "seeds=0"),
        ({"jobs": 0}, "jobs=0"),
        ({"other_versions": "maybe"}, "other_versions"),
        ({"backend": "ns3"}, "backend"),
        ({"duration": "forever"}, "--duration forever"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(
    scenario: Path, tmp_path: Path, arguments, message
) -> None:
    with pytest.raises((ValueError, mptcp_lab.RunError), match=message):
        mptcp_lab.run(scenario, out=tmp_path / "out", **arguments)
    assert not (tmp_path / "out").exists()


def test_a_worker_of_another_build_or_scenario_is_refused(scenario: Path, tmp_path: Path) -> None:
    from mptcp_lab import _core

    camp = _core.Campaign(str(scenario), 1, [], "sim", None, str(tmp_path / "out"))
    spec = camp.spec()
    with pytest.raises(mptcp_lab.RunError, match="same build"):
        _core.run_task(spec, 0, "0" * 32)
    result = _core.run_task(spec, 0, camp.tasks()[0][1])
    other = _core.Campaign(str(scenario), 1, ["cc=lia"], "sim", None, str(tmp_path / "other"))
    with pytest.raises(mptcp_lab.RunError, match="not a task of this run"):
        other.save(result)
    assert camp.save(result) == 0
