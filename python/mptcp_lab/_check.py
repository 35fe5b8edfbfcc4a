"""`mptcp_lab.check`: a scenario file as the loader resolves it, as `mptcp-lab check --json`
gives it, without running anything."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from mptcp_lab import _core
from mptcp_lab._results import PathLike
from mptcp_lab._run import set_arguments


def check(scenario: PathLike, set: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Validates `scenario` with `set` applied (as `run` takes it) and returns it resolved:
    a dict with `file`, `memory_bytes_per_run` and `variants`, each variant with its
    `params`, `nodes`, `links` (rates in bit/s, delays in seconds) and `flows`, in the
    format of `mptcp-lab check --json` (docs/scenario-format.md). Raises ScenarioError, with
    every problem placed, when the file does not validate.

        >>> sc = mptcp_lab.check("scenarios/rfc6356-no-harm.toml", set={"cc": "lia"})
        >>> sc["variants"][0]["links"][2]["ab"]["rate_bps"]
        20000000
    """
    return json.loads(_core.check(os.fspath(scenario), set_arguments(set)))
